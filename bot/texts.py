"""Every word hearth says on Telegram that is not composed by the model.

Owns: the wording of refusals, help, privacy, confirmations and usage lines, in plain, kind
English. Must not: hold logic beyond filling in a name or a number, or ever quote remembered
content it was not handed by a gated read; errors and tracebacks never come here, only the
short apology.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

# --- the gate ----------------------------------------------------------------------------------

STRANGER_REFUSAL = (
    "Hello! I'm a companion for one household, and I only talk with its members. "
    "I haven't kept anything you said. If you know the household, ask them for an invite."
)
INVITE_INVALID = (
    "I'm sorry, that invite code didn't work: it may have been used already or expired. "
    "Ask the person who invited you for a new one. I haven't kept anything you said."
)
OWNER_MISMATCH = (
    "Something is off with my set-up: the owner in my records has a different Telegram "
    "account. Check HEARTH_OWNER_TELEGRAM_ID and the database."
)


def stranger_notice(telegram_id: int, name: str, username: str | None) -> str:
    """The owner's heads-up about a stranger; nothing the stranger said is in it."""
    handle = f" (@{username})" if username else ""
    return (
        f"Someone I don't know wrote to me: {name}{handle}, Telegram id {telegram_id}. "
        "I politely said no and kept nothing they wrote. If they belong to the household, "
        "send /invite and pass them the link."
    )


def welcome(name: str) -> str:
    return (
        f"Welcome, {name}! You're part of the household now. Talk to me here any time: "
        "what you tell me in this chat stays between us. /help lists what I can do, and "
        "/privacy says what I keep."
    )


def joined_notice(name: str) -> str:
    return f"{name} joined the household with an invite."


# --- chat --------------------------------------------------------------------------------------

NON_TEXT = "I can only read text messages for now. If you tell me in words, I'm listening."
EDITED = (
    "I saw you edited a message. I keep the original as you first sent it; if you'd like me "
    "to know the new version, just send it again."
)
EMPTY = "That message looks empty to me. Try again with a few words?"
APOLOGY = "I'm sorry, something went wrong on my side just now. Please try again in a moment."
# The database stayed locked (or the disk refused) past the wait bound: what she was told is
# kept in the inbox and answered once saving works again, so there is nothing to resend.
TROUBLE_SAVING = (
    "I'm having trouble saving things just now. I have your message and I'll answer when I can."
)
# To the owner, once per outage, when messages cannot be kept at all.
TROUBLE_SAVING_OWNER = (
    "I can't write anything down right now: the disk of the computer I run on may be full, or "
    "another program is holding my database. Nothing is lost: messages wait with Telegram and "
    "I'll keep trying, then answer everyone. Freeing some disk space usually fixes it."
)


def too_long(limit: int) -> str:
    return (
        f"That's longer than I can take in one go (at most {limit:,} characters). "
        "Could you send it in a few shorter messages?"
    )


def could_not(reason: str) -> str:
    return f"I couldn't do that: {reason.rstrip('.')}."


# --- voice notes and photos ------------------------------------------------------------------

_SENSE = {"voice": ("listen to voice notes", "HEARTH_AUDIO_MODEL", "transcribes audio",
                    "listen to it"),
          "photo": ("see photos", "HEARTH_VISION_MODEL", "takes images", "look at it")}


def cannot_take_in(kind: str, *, able: bool, first: bool, fits: bool) -> str:
    """Why a voice note or photo was not taken in now, and that it waits (when it can)."""
    what, setting, offers, act = _SENSE[kind]
    if not fits:
        return (f"That file is larger than I can fetch (20 MB at most), so I can't {act}. "
                "Could you send a shorter one?")
    if able:
        return (f"I couldn't {act} just now. I've kept it and will try again by myself "
                "later; no need to send it again.")
    if not first:
        return f"I've kept this one too, for when I can {what}."
    return (f"I can't {what} on this setup yet. The owner can turn it on by pointing me at a "
            f"model server that {offers} ({setting} in the configuration; see the README). "
            "I've kept it, and I'll take it in once that's on.")


# --- the shelf: documents sent in chat -------------------------------------------------------

SHELF_FETCH_FAILED = (
    "I couldn't fetch that file from Telegram just now. I'll try again by myself in a little "
    "while; there's no need to send it again."
)


def shelved(title: str, pages: int | None, passages: int, *, shared: bool,
            replaced: bool) -> str:
    size = f"{pages} page{'s' if pages != 1 else ''}" if pages else (
        f"{passages} passage{'s' if passages != 1 else ''}")
    whose = "on the household's shelf" if shared else "on your shelf (only you can see it)"
    again = ", in place of the older copy" if replaced else ""
    return (f"I've read “{title}” ({size}) and put it {whose}{again}. Ask me about it "
            "any time; /docs lists what's there.")


DOCS_EMPTY = "Your shelf is empty. Send me a file (text, markdown, PDF or Word) to put it there."
DOCS_HEADER = "On the shelf (ask me about any of these):"
DROP_YES = "Drop it"
DROP_NO = "Keep it"


def docs_line(title: str, pages: int | None, passages: int, *, shared: bool) -> str:
    size = f"{pages} p." if pages else f"{passages} passage{'s' if passages != 1 else ''}"
    return f"• {title} ({size}, {'household' if shared else 'yours'})"


def drop_ask(title: str) -> str:
    return (f"“{title}” is on the shelf. Shall I drop it, with every passage of it, for good? "
            "(To forget a memory instead, say it in other words.)")


def dropped(titles: list[str]) -> str:
    if not titles:
        return "That document was already gone."
    return f"Dropped “{titles[0]}” from the shelf, for good." if len(titles) == 1 else (
        f"Dropped {len(titles)} copies of “{titles[0]}” from the shelf, for good.")


def unreadable(title: str, reason: str) -> str:
    return f"I couldn't read “{title}”: {reason.rstrip('.')}. Nothing of it was kept."


def document_too_large(title: str, limit_mb: int) -> str:
    return (f"“{title}” is larger than I can take ({limit_mb} MB at most). Could you send a "
            "smaller file, or only the pages that matter?")


# --- commands: who may use what, and where -----------------------------------------------------

OWNER_ONLY = "That one is for the household's owner."
PRIVATE_ONLY = "Let's do that in a private chat."
UNKNOWN_COMMAND = "I don't know that command; /help lists what I can do."


def unsent(command: str) -> str:
    """Telegram would not take a command's answer for a minute: said once it is back."""
    return (f"Telegram was out of reach when I answered /{command}, so my answer didn't get "
            f"to you (or not all of it). Send /{command} again and I'll answer.")

BUTTON_INVALID = "That button is no longer valid"


def greeting(name: str, *, owner: bool) -> str:
    extra = " To bring someone into the household, send /invite." if owner else ""
    return f"Hello, {name}! It's good to hear from you. /help lists what I can do.{extra}"


HELP_INTRO = (
    "I'm the household's companion. Talk to me in this chat like you would to a friend: "
    "what you tell me here stays between us. In the household group I only ever use what "
    "the household shares."
)
HELP_OWNER = "As the household's owner, you can also use:"
HELP_GROUP = "In the household group: /help, /privacy, and /household for the owner."


def help_text(member_lines: Sequence[str], owner_lines: Sequence[str], *, group: bool) -> str:
    parts = [HELP_INTRO, "", *member_lines]
    if owner_lines:
        parts += ["", HELP_OWNER, *owner_lines]
    if group:
        parts += ["", "Most of these work in a private chat with me.", HELP_GROUP]
    return "\n".join(parts)


PRIVACY = "\n".join(
    [
        "What I keep, and who can see it:",
        "",
        "• What you tell me in this private chat is yours. It's kept as notes about what I "
        "learnt, with how sure I am. No one else in the household can see it, the owner "
        "included.",
        "• What's said in the household group is shared with the household's members.",
        "• Health and money matters are used only where you allowed it: in our own chat, "
        "and elsewhere only with a grant from you (/grant, /revoke, /grants). Passwords and "
        "similar secrets are never used outside our own chat, and secret codes like keys "
        "or card numbers are never kept as notes at all.",
        "• /me shows what I know about you. /forget removes it for good, words and all.",
        "• /receipts shows every time something of yours was read, when and why.",
        "• /export sends you everything I keep about you, as a file.",
        "• If someone I don't know writes to me, I keep nothing of what they said.",
    ]
)

# --- /me, /forget ------------------------------------------------------------------------------

ME_EMPTY = (
    "I don't know anything about you yet. Tell me about yourself whenever you like; I "
    "take a little while to turn our chats into notes."
)
ME_HEADER = "This is what I know about you (only you can see your private notes):"
WHY_NOTHING = "My last reply here didn't use anything I remember."
WHY_HEADER = "What my last reply here drew on, and why:"


def why_line(text: str, who: str, day: str, why: str) -> str:
    """One memory her last reply used: what it says, who said it and when, and the judge's
    why (its verdict, how sure, and the signals that weighed most)."""
    return f'• "{text}" ({who}, {day})\n  {why}'

WHEN_USAGE = "Tell me what to look back on, like: /when Tom's job"
WHEN_NOTHING = "I don't know anything about that, then or now."
WHEN_HEADER = "What I knew about that, and when (the newest last):"


def when_line(text: str, who: str, since: datetime, until: datetime | None) -> str:
    """One version of a thing: what it said, who told it, and from when until when it held
    (times already in the member's own time zone)."""
    span = f"from {_date(since)}" + (f" until {_date(until)}" if until else ", still so")
    return f"• {text} ({who}; {span})"


def _date(moment: datetime) -> str:
    return f"{moment.day} {moment:%b %Y}"

FORGET_USAGE = "Tell me what to forget, like: /forget my old address"
FORGET_USAGE_OWNER = (
    "Tell me what to forget, like: /forget my old address, "
    "or /forget shared the old wifi name for household notes."
)
FORGET_NOTHING = "I don't have anything like that to forget."
FORGET_ASK = "This is what I would forget, for good:"


def forget_mentions(count: int) -> str:
    """No note holds the words yet (the tick has not run), but things said mention them."""
    things = "one thing you said mentions" if count == 1 else f"{count} things said here mention"
    return (f"I haven't made a note of that yet, but {things} it. "
            "Shall I forget those words, for good?")


def forget_also(count: int) -> str:
    """Beside the notes listed: the words go from what was said too."""
    things = "one thing you said" if count == 1 else f"{count} things said here"
    return f"…and the same words in {things}."


FORGET_QUESTION = "Shall I?"
FORGET_YES = "Forget these"
FORGET_NO = "Keep them"
KEPT = "All right, I've kept them."


def forgotten(count: int) -> str:
    if count == 0:
        return "Done: what you said about that is gone, for good."
    things = "one thing" if count == 1 else f"{count} things"
    return f"Done: I've forgotten {things}, for good."


def me_line(text: str, confidence: float, status: str, *, shared: bool) -> str:
    notes = [f"{round(confidence * 100)}% sure"]
    if status == "quarantined":
        notes.append("waiting for a second mention")
    elif status == "contradicted":
        notes.append("something else you said disagrees")
    elif status == "superseded":
        notes.append("no longer current")
    elif status == "stale":
        notes.append("not mentioned in a long while")
    if shared:
        notes.append("shared with the household")
    return f"• {text} ({', '.join(notes)})"


# --- grants ------------------------------------------------------------------------------------

GRANT_USAGE = (
    "Usage: /grant ACTIVITY CLASS [DAYS], for example /grant proactive health 30. "
    "ACTIVITY is group_conversation, compaction, dream, proactive or all; CLASS is health, "
    "finance or all."
)
GRANT_USAGE_OWNER = GRANT_USAGE + " Over household notes: /grant shared ACTIVITY CLASS [DAYS]."
REVOKE_USAGE = "Usage: /revoke ACTIVITY CLASS, for example /revoke proactive health."
REVOKE_USAGE_OWNER = REVOKE_USAGE + " Over household notes: /revoke shared ACTIVITY CLASS."
GRANTS_EMPTY = "You haven't granted anything. /privacy explains what a grant does."
REVOKE_NOTHING = "There was no active grant like that to revoke."

_ACTIVITY_WORDS = {
    "dm_conversation": "in our private chat",
    "group_conversation": "in the household group",
    "member_inspect": "when you ask what I know",
    "consolidation": "when I sort my notes",
    "compaction": "in my running summary of our chats",
    "dream": "in my nightly reflection",
    "proactive": "when I write to you first",
    "owner_audit": "in the owner's audit",
    "mind": "for another agent acting for you",
}


def activity_words(activity: str) -> str:
    return _ACTIVITY_WORDS.get(activity, activity.replace("_", " "))


def granted(activity: str, sensitivity: str, *, shared: bool, until: str | None) -> str:
    whose = "the household's" if shared else "your"
    when = f" until {until}" if until else " until you revoke it"
    return f"Done: I may use {whose} {sensitivity} notes {activity_words(activity)}{when}."


def revoked(count: int) -> str:
    return "Revoked, as of now." if count == 1 else f"Revoked {count} grants, as of now."


# --- receipts, export --------------------------------------------------------------------------

RECEIPTS_EMPTY = "No one has read anything of yours yet."
RECEIPTS_HEADER = "The latest reads that used your notes (when, by whom, for what):"
EXPORT_CAPTION = "Everything I keep about you, as JSON."


def when(moment: str | datetime) -> str:
    """An ISO time as a short, readable UTC time."""
    try:
        parsed = moment if isinstance(moment, datetime) else datetime.fromisoformat(moment)
    except ValueError:
        return str(moment)
    return parsed.strftime("%Y-%m-%d %H:%M UTC")


# --- owner commands ----------------------------------------------------------------------------


def invite(link: str, code: str, expires: str) -> str:
    return (
        "Here's a one-time invite. Send this link to the person you'd like to join:\n"
        f"{link}\n"
        f"Or they can send me: /start {code}\n"
        f"It works once and expires {expires}."
    )


REMOVE_USAGE = "Usage: /remove NAME, for example /remove Bob."
REMOVE_OWNER = "I can't remove the household's owner."


def removed(name: str, count: int) -> str:
    things = "one note" if count == 1 else f"{count} notes"
    return f"{name} is no longer part of the household. I forgot the {things} that were theirs."


def unknown_member(name: str) -> str:
    return f"I don't know anyone called {name} in the household."


HOUSEHOLD_ENABLED = (
    "This group is now the household group. I'll talk with household members here, and "
    "I only ever use what the household shares; private things stay private."
)
HOUSEHOLD_ALREADY = "This group is already the household group."
HOUSEHOLD_IN_GROUP = "Send /household in the group chat you'd like me to join."

PERSONA_NONE = "No changes to how I talk are waiting for you."
PERSONA_USAGE = "Usage: /persona, /persona approve N or /persona reject N."
PERSONA_APPROVE = "Approve"
PERSONA_REJECT = "Reject"


def persona_proposal(proposal_id: int, text: str, reason: str) -> str:
    return f"Proposal #{proposal_id}: {text}\nWhy: {reason}"


def persona_decided(proposal_id: int, *, approve: bool) -> str:
    if approve:
        return f"Approved proposal #{proposal_id}: it's part of how I talk from now on."
    return f"Rejected proposal #{proposal_id}."


def persona_missing(proposal_id: int) -> str:
    return f"There's no pending proposal #{proposal_id}."


def audit_ledger(checked: int, broken: tuple[int, str] | None) -> str:
    if broken is None:
        return f"Ledger: intact, {checked} receipt(s) checked from the start."
    return f"Ledger: BROKEN at receipt #{broken[0]}: {broken[1]}"


def audit_counts(stats: dict[str, int]) -> str:
    return (
        f"Members: {stats.get('people', 0)} · notes: {stats.get('beliefs', 0)} · "
        f"transcript lines: {stats.get('turns', 0)} · receipts: {stats.get('receipts', 0)}"
    )


AUDIT_RECENT = "Latest reads (metadata only: never what was read):"


# --- reminders, time zones, quiet hours, check-ins ---------------------------------------------

_WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
ANSWER_EXAMPLE = "like “tomorrow at 9” or “in 2 hours”"


def _day_words(due: datetime, now: datetime) -> str:
    """"today", "tomorrow", "on Friday" within the week, else "on 24 December"."""
    days = (due.date() - now.date()).days
    if days == 0:
        return "today"
    if days == 1:
        return "tomorrow"
    if 1 < days < 7:
        return f"on {due:%A}"
    year = f" {due.year}" if due.year != now.year else ""
    return f"on {due.day} {due:%B}{year}"


def when_words(due: datetime, *, now: datetime, recurrence: str | None) -> str:
    """A local time as she says it back: "tomorrow at 09:00", "every Monday at 08:00"."""
    clock = f"{due:%H:%M}"
    if recurrence == "daily":
        return f"every day at {clock}"
    if recurrence is not None and recurrence.startswith("weekly:"):
        return f"every {_WEEKDAY_NAMES[int(recurrence.split(':')[1])]} at {clock}"
    return f"{_day_words(due, now)} at {clock}"


class ReminderWords:
    """What she says about reminders and check-ins (`soul.reminders.Wording`)."""

    def confirm(self, what: str, due: datetime, *, now: datetime,
                recurrence: str | None) -> str:
        when = when_words(due, now=now, recurrence=recurrence)
        return f"I'll remind you {when}: {what}" if what else f"I'll remind you {when}."

    def ask_when(self, what: str, *, said: str) -> str:
        ask = f"When should I remind you: {what}? Tell me a day and a time, {ANSWER_EXAMPLE}."
        if said:
            return f"I couldn't tell when “{said}” is. {ask}"
        return ask

    def noted(self, due: datetime, *, now: datetime, recurrence: str | None) -> str:
        return f"(I've set that reminder for {when_words(due, now=now, recurrence=recurrence)}.)"

    def reminder(self, words: str | None, *, due: datetime, late: bool, held: bool) -> str:
        said = (f"⏰ Reminder: {words}" if words else
                "⏰ It's time for the reminder you set. It holds a code or password, so I "
                "won't repeat it here.")
        if late:
            return f"Sorry, this one is late: it was due {due:%A} at {due:%H:%M}.\n{said}"
        if held:
            return f"{said}\n(It came due in your quiet hours, so I waited until they ended.)"
        return said

    def checkin_fallback(self, name: str) -> str:
        return f"Hi {name}, how is your day going?"


REMINDER_WORDS = ReminderWords()

REMINDERS_EMPTY = (
    "You have no reminders. Ask me any time, like “remind me tomorrow at 9 to call the "
    "dentist”."
)
REMINDERS_HEADER = "Your reminders:"
REMINDER_CANCEL = "Cancel {n}"
REMINDER_SNOOZE = "Snooze {n}: 1 hour"
REMINDER_AGAIN = "{n}: again in 1 hour"
CHECKIN_LABEL = "Check-in"


def reminder_line(n: int, words: str, when: str, *, fired: bool) -> str:
    state = f"was due {when}" if fired else when
    return f"{n}. {words or CHECKIN_LABEL} ({state})"


def reminder_cancelled(words: str) -> str:
    return f"Cancelled: {words}" if words else "Cancelled."


def reminder_snoozed(when: str) -> str:
    return f"All right, I'll remind you again {when}."


REMINDER_GONE = "That reminder isn't there any more."

TIMEZONE_USAGE = (
    "Usage: /timezone ZONE, for example /timezone Europe/Berlin (a name from the time zone "
    "database: Region/City)."
)


def timezone_shown(zone: str, local: datetime, *, own: bool) -> str:
    whose = "Your time zone is" if own else "You use the household's time zone,"
    return f"{whose} {zone} (it's {local:%H:%M} there now). {TIMEZONE_USAGE}"


def timezone_set(zone: str, local: datetime, moved: int) -> str:
    extra = (f" Your {moved} repeating reminder(s) keep their local time there."
             if moved else "")
    return f"Done: your time zone is {zone} (it's {local:%H:%M} there now).{extra}"


def timezone_unknown(name: str) -> str:
    return f"I don't know a time zone called {name}. {TIMEZONE_USAGE}"


QUIET_USAGE = (
    "Usage: /quiet 22-07 (quiet from 22:00 to 07:00; minutes too, like 22:30-06:45) or "
    "/quiet off. In quiet hours I hold reminders back until they end, unless you asked "
    "for that very time."
)
QUIET_OFF = "Quiet hours are off: reminders come whenever they're due."
QUIET_NONE = "You have no quiet hours. " + QUIET_USAGE


def quiet_set(start: str, end: str) -> str:
    return (f"Done: quiet hours from {start} to {end}. Reminders due then wait until "
            f"{end}, unless you asked for that very time.")


def quiet_shown(start: str, end: str) -> str:
    return f"Your quiet hours are {start} to {end}. {QUIET_USAGE}"


CHECKIN_USAGE = (
    "Usage: /checkin daily 19:00 (a short message from me each day at that time, about what "
    "you've told me lately) or /checkin off."
)
CHECKIN_OFF = "Check-ins are off. I'll only write first when you've asked me to remind you."
CHECKIN_NONE = "Check-ins are off (they are until you turn them on). " + CHECKIN_USAGE


def checkin_set(at: str, *, quiet: bool) -> str:
    extra = (" That's inside your quiet hours, so I'll skip it until you change one of them."
             if quiet else "")
    return f"Done: I'll check in with you every day at {at}.{extra}"


def checkin_shown(at: str) -> str:
    return f"I check in with you every day at {at}. {CHECKIN_USAGE}"
