"""The chat commands: one table feeding the handlers, /help and `set_my_commands`.

Owns: what each command does for a member in a private chat, the owner's extra commands, the
rule that only /help, /privacy, /why and /when (shared memories only) and the owner's
/household work in the household group, and the
inline buttons behind /forget, /persona and /reminders. Must not: hold SQL or policy (every read
goes through the memory facade), or say anything private in a group.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from telegram import (
    BotCommand,
    BotCommandScopeAllGroupChats,
    BotCommandScopeChat,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    Update,
)
from telegram.error import BadRequest, TelegramError
from telegram.ext import CallbackQueryHandler, CommandHandler, filters

from bot import actions, texts
from bot.context import HearthApp, HearthContext, Pending
from bot.handlers import USER_FACING
from bot.proactive import arm
from bot.replies import split_reply
from bot.request import is_transient
from memory import SHARED, Delivery, HearthError, Person, Quoted, dm_chat, group_chat, scope_owner
from soul.when import zone_of

log = logging.getLogger("hearth.bot")

RECEIPTS_SHOWN = 15
AUDIT_SHOWN = 10
PERSONA_SHOWN = 10

Run = Callable[[Update, HearthContext, Message, list[str]], Awaitable[None]]


@dataclass(frozen=True)
class Command:
    name: str
    summary: str
    run: Run
    owner_only: bool = False
    in_group: bool = False  # works in the household group as well as in a private chat


async def _send_long(message: Message, text: str) -> None:
    for chunk in split_reply(text):
        await message.reply_text(chunk)


# --- every member ------------------------------------------------------------------------------


async def start(update: Update, context: HearthContext, message: Message,
                args: list[str]) -> None:
    person = context.member
    await message.reply_text(texts.greeting(person.name, owner=person.is_owner))


async def help_(update: Update, context: HearthContext, message: Message,
                args: list[str]) -> None:
    person = context.member
    member_lines = [f"/{c.name} — {c.summary}" for c in COMMANDS if not c.owner_only]
    owner_lines = (
        [f"/{c.name} — {c.summary}" for c in COMMANDS if c.owner_only] if person.is_owner else []
    )
    await _send_long(message, texts.help_text(member_lines, owner_lines, group=context.group))


async def privacy(update: Update, context: HearthContext, message: Message,
                  args: list[str]) -> None:
    await message.reply_text(texts.PRIVACY)


async def me(update: Update, context: HearthContext, message: Message, args: list[str]) -> None:
    person = context.member
    found = await actions.what_she_knows(context.hearth.memory, person)
    if not found:
        await message.reply_text(texts.ME_EMPTY)
        return
    lines = [texts.ME_HEADER] + [
        texts.me_line(b.proposition, b.confidence, b.status, shared=b.scope == SHARED)
        for b in found
    ]
    await _send_long(message, "\n".join(lines))


async def why(update: Update, context: HearthContext, message: Message,
              args: list[str]) -> None:
    """Which memories her last reply in this chat used, and why; in the group, the shared
    ones only (that reply could use no other)."""
    person, memory = context.member, context.hearth.memory
    chat_id = group_chat(message.chat_id) if context.group else dm_chat(person)
    found = await actions.why(memory, person, chat_id=chat_id, group=context.group)
    if not found:
        await message.reply_text(texts.WHY_NOTHING)
        return
    names = {p.person_id: p.name for p in await memory.people.list()}
    lines = [texts.WHY_HEADER]
    for item in found:
        if isinstance(item, Quoted):
            who = names.get(item.turn.speaker_id or "", "a member")
            lines.append(texts.why_line(item.turn.text, who, texts.when(item.turn.at),
                                        item.why))
        else:
            owner = scope_owner(item.belief.scope)
            who = "the household" if owner is None else names.get(owner, "a member")
            lines.append(texts.why_line(item.belief.proposition, who,
                                        texts.when(item.belief.created_at), item.why))
    await _send_long(message, "\n".join(lines))


async def when(update: Update, context: HearthContext, message: Message,
               args: list[str]) -> None:
    """The history of a thing, newest last, with when each version held in the member's own
    time zone: in their private chat their view; in the group, the shared memories the
    group's conversation may use."""
    person, memory = context.member, context.hearth.memory
    thing = " ".join(args).strip()
    if not thing:
        await message.reply_text(texts.WHEN_USAGE)
        return
    found = await actions.history(memory, person, thing, group=context.group)
    if not found:
        await message.reply_text(texts.WHEN_NOTHING)
        return
    zone_name, _ = await actions.zone_of_member(memory, person, _household_zone(context))
    zone = zone_of(zone_name)
    names = {p.person_id: p.name for p in await memory.people.list()}

    def local(moment: str) -> datetime:
        return datetime.fromisoformat(moment).astimezone(zone)

    lines = [texts.WHEN_HEADER]
    for held in found:
        owner = scope_owner(held.belief.scope)
        who = "the household" if owner is None else names.get(owner, "a member")
        lines.append(texts.when_line(held.belief.proposition, who, local(held.since),
                                     None if held.until is None else local(held.until)))
    await _send_long(message, "\n".join(lines))


def _shared_prefix(args: list[str], person: Person) -> tuple[bool, list[str]] | None:
    """`shared` as the first argument (the owner's way to act on household notes); None when
    someone else tries it."""
    if args and args[0].lower() == "shared":
        if not person.is_owner:
            return None
        return True, args[1:]
    return False, args


async def forget(update: Update, context: HearthContext, message: Message,
                 args: list[str]) -> None:
    person, hearth = context.member, context.hearth
    parsed = _shared_prefix(args, person)
    if parsed is None:
        await message.reply_text(texts.OWNER_ONLY)
        return
    shared, words = parsed
    text = " ".join(words).strip()
    if not text:
        usage = texts.FORGET_USAGE_OWNER if person.is_owner else texts.FORGET_USAGE
        await message.reply_text(usage)
        return
    shelved = await hearth.memory.shelf.droppable(
        actions.inspecting(person, "the member asked to forget a document"), text)
    if shelved:
        await _ask_to_drop(update, context, message, shelved[0].title)
        return
    preview = await actions.preview_forget(hearth.memory, person, text, shared=shared)
    found, mentions = preview.beliefs, preview.mentions
    if preview.empty:
        await message.reply_text(texts.FORGET_NOTHING)
        return
    user_id = message.chat_id if update.effective_user is None else update.effective_user.id
    yes_choice = Pending(action="forget", telegram_id=user_id, person_id=person.person_id,
                         text=text, shared=shared)
    yes, no = hearth.buttons.issue([yes_choice, replace(yes_choice, action="keep")],
                                   hearth.now())
    keyboard = InlineKeyboardMarkup(
        [[InlineKeyboardButton(texts.FORGET_YES, callback_data=yes),
          InlineKeyboardButton(texts.FORGET_NO, callback_data=no)]]
    )
    lines = (
        [texts.FORGET_ASK, *(f"• {b.proposition}" for b in found),
         *([texts.forget_also(mentions)] if mentions else []), texts.FORGET_QUESTION]
        if found
        else [texts.forget_mentions(mentions)]
    )
    chunks = split_reply("\n".join(lines))
    for chunk in chunks[:-1]:
        await message.reply_text(chunk)
    await message.reply_text(chunks[-1], reply_markup=keyboard)


async def _ask_to_drop(update: Update, context: HearthContext, message: Message,
                       title: str) -> None:
    person, hearth = context.member, context.hearth
    user_id = message.chat_id if update.effective_user is None else update.effective_user.id
    yes_choice = Pending(action="drop_document", telegram_id=user_id,
                         person_id=person.person_id, text=title)
    yes, no = hearth.buttons.issue([yes_choice, replace(yes_choice, action="keep")],
                                   hearth.now())
    keyboard = InlineKeyboardMarkup(
        [[InlineKeyboardButton(texts.DROP_YES, callback_data=yes),
          InlineKeyboardButton(texts.DROP_NO, callback_data=no)]]
    )
    await message.reply_text(texts.drop_ask(title), reply_markup=keyboard)


async def docs(update: Update, context: HearthContext, message: Message,
               args: list[str]) -> None:
    person, memory = context.member, context.hearth.memory
    shelf = await memory.shelf.documents(actions.inspecting(person, "the member listed the shelf"))
    if not shelf:
        await message.reply_text(texts.DOCS_EMPTY)
        return
    lines = [texts.DOCS_HEADER] + [
        texts.docs_line(d.title, d.pages, d.passages, shared=d.scope == SHARED) for d in shelf]
    await _send_long(message, "\n".join(lines))


def _grant_request(args: list[str], *, with_days: bool) -> tuple[str, str, float | None] | None:
    """ACTIVITY CLASS [DAYS] from the arguments; None when they do not have that shape."""
    if len(args) not in ((2, 3) if with_days else (2,)):
        return None
    days: float | None = None
    if len(args) == 3:
        try:
            days = float(args[2])
        except ValueError:
            return None
        if not math.isfinite(days) or days <= 0:
            return None
    return args[0].lower(), args[1].lower(), days


@dataclass(frozen=True)
class _GrantArgs:
    shared: bool
    activity: str
    sensitivity: str
    days: float | None
    usage: str


async def _grant_args(message: Message, person: Person, args: list[str], *,
                      granting: bool) -> _GrantArgs | None:
    """`[shared] ACTIVITY CLASS [DAYS]` for /grant (no DAYS for /revoke); None, after telling
    the member why, when the arguments are not usable."""
    parsed = _shared_prefix(args, person)
    if parsed is None:
        await message.reply_text(texts.OWNER_ONLY)
        return None
    shared, rest = parsed
    if granting:
        usage = texts.GRANT_USAGE_OWNER if person.is_owner else texts.GRANT_USAGE
    else:
        usage = texts.REVOKE_USAGE_OWNER if person.is_owner else texts.REVOKE_USAGE
    request = _grant_request(rest, with_days=granting)
    if request is None:
        await message.reply_text(usage)
        return None
    activity, sensitivity, days = request
    return _GrantArgs(shared, activity, sensitivity, days, usage)


async def grant(update: Update, context: HearthContext, message: Message,
                args: list[str]) -> None:
    person, memory = context.member, context.hearth.memory
    asked = await _grant_args(message, person, args, granting=True)
    if asked is None:
        return
    lines = []
    try:
        async for made in actions.grant(memory, person, asked.activity, asked.sensitivity,
                                        days=asked.days, shared=asked.shared,
                                        note="granted in a chat"):
            until = texts.when(made.expires_at) if made.expires_at else None
            # The scope it was made over, which for the owner's group grants is the shared one.
            lines.append(texts.granted(made.activity.value, made.sensitivity.value,
                                       shared=made.scope == SHARED, until=until))
    except HearthError as exc:
        lines.append(f"{texts.could_not(str(exc))}\n{asked.usage}")
    await _send_long(message, "\n".join(lines))


async def revoke(update: Update, context: HearthContext, message: Message,
                 args: list[str]) -> None:
    person, memory = context.member, context.hearth.memory
    asked = await _grant_args(message, person, args, granting=False)
    if asked is None:
        return
    try:
        count = await actions.revoke(memory, person, asked.activity, asked.sensitivity,
                                     shared=asked.shared)
    except HearthError as exc:
        await message.reply_text(f"{texts.could_not(str(exc))}\n{asked.usage}")
        return
    await message.reply_text(texts.revoked(count) if count else texts.REVOKE_NOTHING)


async def grants(update: Update, context: HearthContext, message: Message,
                 args: list[str]) -> None:
    person, hearth = context.member, context.hearth
    found = await actions.my_grants(hearth.memory, person)
    if not found:
        await message.reply_text(texts.GRANTS_EMPTY)
        return
    now = hearth.now().isoformat()
    lines = ["Your grants:"]
    for g in found:
        state = "revoked" if g.revoked_at else ("active" if g.is_active(now) else "expired")
        over = "household notes" if g.scope == SHARED else "your notes"
        until = f"until {texts.when(g.expires_at)}" if g.expires_at else "no end date"
        lines.append(f"• {g.sensitivity} {over}, {texts.activity_words(g.activity)}: "
                     f"{state}, {until}")
    await _send_long(message, "\n".join(lines))


def _who(actor: str, person: Person, names: dict[str, str]) -> str:
    if actor == person.person_id:
        return "you"
    if actor.startswith("hearth:"):
        return "me, in the background"
    if actor.startswith("mind:"):  # another agent acting for them, by the name it was given
        return actor.removeprefix("mind:")
    return names.get(actor, "someone")


async def receipts(update: Update, context: HearthContext, message: Message,
                   args: list[str]) -> None:
    person, memory = context.member, context.hearth.memory
    found = (await actions.who_read_mine(memory, person))[-RECEIPTS_SHOWN:]
    if not found:
        await message.reply_text(texts.RECEIPTS_EMPTY)
        return
    names = {p.person_id: p.name for p in await memory.people.list()}
    lines = [texts.RECEIPTS_HEADER] + [
        f"• {texts.when(r.at)} · {_who(r.actor, person, names)} · "
        f"{texts.activity_words(r.activity)} · {r.purpose}"
        for r in found
    ]
    await _send_long(message, "\n".join(lines))


def _file_name(name: str) -> str:
    safe = re.sub(r"[^\w-]+", "-", name).strip("-_")
    return f"hearth-export-{safe or 'member'}.json"


async def export(update: Update, context: HearthContext, message: Message,
                 args: list[str]) -> None:
    person = context.member
    document = await actions.export(context.hearth.memory, person)
    data = json.dumps(document, indent=2, ensure_ascii=False).encode("utf-8")
    await message.reply_document(
        document=data, filename=_file_name(person.name), caption=texts.EXPORT_CAPTION
    )


# --- reminders, time zones, quiet hours, check-ins --------------------------------------------

REMINDERS_SHOWN = 8
_QUIET = re.compile(
    r"^(\d{1,2})(?:[:.h](\d{2}))?\s*(?:-|\u2013|to|bis|à|a)\s*(\d{1,2})(?:[:.h](\d{2}))?$", re.I
)
_CLOCK = re.compile(r"^(\d{1,2})(?::(\d{2}))?$")


def _minutes(hour: str, minute: str | None) -> int | None:
    h, m = int(hour), int(minute or 0)
    if h == 24 and m == 0:
        h = 0
    return h * 60 + m if 0 <= h < 24 and 0 <= m < 60 else None


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


async def _local_now(context: HearthContext, person: Person) -> tuple[str, datetime]:
    hearth = context.hearth
    zone, _ = await actions.zone_of_member(hearth.memory, person, _household_zone(context))
    return zone, hearth.now().astimezone(zone_of(zone))


def _household_zone(context: HearthContext) -> str:
    desk = context.hearth.desk
    return desk.household_zone if desk is not None else "UTC"


async def reminders(update: Update, context: HearthContext, message: Message,
                    args: list[str]) -> None:
    person, hearth = context.member, context.hearth
    found = (await actions.my_reminders(hearth.memory, person))[:REMINDERS_SHOWN]
    if not found:
        await message.reply_text(texts.REMINDERS_EMPTY)
        return
    _, now = await _local_now(context, person)
    lines = [texts.REMINDERS_HEADER]
    choices: list[Pending] = []
    labels: list[str] = []
    user_id = update.effective_user.id if update.effective_user else message.chat_id
    for n, listed in enumerate(found, start=1):
        reminder = listed.reminder
        due = reminder.next_at.astimezone(zone_of(reminder.zone))
        when = texts.when_words(due, now=now, recurrence=reminder.recurrence)
        fired = reminder.state == "done"
        lines.append(texts.reminder_line(n, listed.text, when, fired=fired))
        snooze = Pending(action="snooze_reminder", telegram_id=user_id,
                         person_id=person.person_id, reminder_id=reminder.reminder_id,
                         text=listed.text)
        if fired:
            choices.append(snooze)
            labels.append(texts.REMINDER_AGAIN.format(n=n))
            continue
        choices += [replace(snooze, action="cancel_reminder"), snooze]
        labels += [texts.REMINDER_CANCEL.format(n=n), texts.REMINDER_SNOOZE.format(n=n)]
    tokens = hearth.buttons.issue(choices, hearth.now())
    buttons = [InlineKeyboardButton(label, callback_data=token)
               for label, token in zip(labels, tokens, strict=True)]
    keyboard = InlineKeyboardMarkup([buttons[i:i + 2] for i in range(0, len(buttons), 2)])
    chunks = split_reply("\n".join(lines))
    for chunk in chunks[:-1]:
        await message.reply_text(chunk)
    await message.reply_text(chunks[-1], reply_markup=keyboard)


async def timezone(update: Update, context: HearthContext, message: Message,
                   args: list[str]) -> None:
    person, hearth = context.member, context.hearth
    if not args:
        zone, own = await actions.zone_of_member(hearth.memory, person, _household_zone(context))
        await message.reply_text(texts.timezone_shown(
            zone, hearth.now().astimezone(zone_of(zone)), own=own))
        return
    name = args[0].strip()
    if len(args) != 1:
        await message.reply_text(texts.TIMEZONE_USAGE)
        return
    try:
        moved = await actions.set_timezone(hearth.memory, person, name, hearth.now())
    except ValueError:
        await message.reply_text(texts.timezone_unknown(name))
        return
    await message.reply_text(texts.timezone_set(name, hearth.now().astimezone(zone_of(name)),
                                                moved))
    await arm(context.app)


async def quiet(update: Update, context: HearthContext, message: Message,
                args: list[str]) -> None:
    person, hearth = context.member, context.hearth
    said = " ".join(args).strip()
    if not said:
        current = await actions.quiet_of(hearth.memory, person)
        await message.reply_text(texts.QUIET_NONE if current is None
                                 else texts.quiet_shown(_hhmm(current[0]), _hhmm(current[1])))
        return
    if said.lower() in ("off", "none", "aus", "non", "no"):
        await actions.set_quiet(hearth.memory, person, None)
        await message.reply_text(texts.QUIET_OFF)
        await arm(context.app)
        return
    match = _QUIET.match(said)
    start = end = None
    if match is not None:
        start, end = _minutes(match[1], match[2]), _minutes(match[3], match[4])
    if start is None or end is None or start == end:
        await message.reply_text(texts.QUIET_USAGE)
        return
    await actions.set_quiet(hearth.memory, person, (start, end))
    await message.reply_text(texts.quiet_set(_hhmm(start), _hhmm(end)))
    await arm(context.app)


async def checkin(update: Update, context: HearthContext, message: Message,
                  args: list[str]) -> None:
    person, hearth = context.member, context.hearth
    words = [a.lower() for a in args]
    if not words:
        at = await actions.checkin_of(hearth.memory, person)
        await message.reply_text(texts.CHECKIN_NONE if at is None else texts.checkin_shown(at))
        return
    if words == ["off"]:
        await actions.set_checkin(hearth.memory, person, None,
                                  household_zone=_household_zone(context), now=hearth.now())
        await message.reply_text(texts.CHECKIN_OFF)
        await arm(context.app)
        return
    if words[0] == "daily":
        words = words[1:]
    match = _CLOCK.match(words[0]) if len(words) == 1 else None
    minutes = None if match is None else _minutes(match[1], match[2])
    if minutes is None:
        await message.reply_text(texts.CHECKIN_USAGE)
        return
    wall = _hhmm(minutes)
    in_quiet = await actions.set_checkin(hearth.memory, person, wall,
                                         household_zone=_household_zone(context),
                                         now=hearth.now())
    await message.reply_text(texts.checkin_set(wall, quiet=in_quiet))
    await arm(context.app)


async def _reminder_button(context: HearthContext, person: Person, pending: Pending) -> str:
    memory = context.hearth.memory
    if pending.action == "cancel_reminder":
        done = await actions.cancel_reminder(memory, person, pending.reminder_id)
        await arm(context.app)
        return texts.reminder_cancelled(pending.text) if done else texts.REMINDER_GONE
    snoozed = await actions.snooze_reminder(memory, person, pending.reminder_id)
    if snoozed is None:
        return texts.REMINDER_GONE
    await arm(context.app)
    _, now = await _local_now(context, person)
    due = snoozed.next_at.astimezone(zone_of(snoozed.zone))
    return texts.reminder_snoozed(texts.when_words(due, now=now, recurrence=None))


# --- the owner ---------------------------------------------------------------------------------


async def invite(update: Update, context: HearthContext, message: Message,
                 args: list[str]) -> None:
    person = context.member
    code, expires = await context.hearth.memory.household.create_invite(person.person_id)
    link = f"https://t.me/{context.bot.username}?start={code}"
    await message.reply_text(texts.invite(link, code, texts.when(expires)))


async def remove(update: Update, context: HearthContext, message: Message,
                 args: list[str]) -> None:
    memory = context.hearth.memory
    name = " ".join(args).strip()
    if not name:
        await message.reply_text(texts.REMOVE_USAGE)
        return
    match = {p.name.casefold(): p for p in await memory.people.list()}.get(name.casefold())
    if match is None:
        await message.reply_text(texts.unknown_member(name))
        return
    if match.is_owner:
        await message.reply_text(texts.REMOVE_OWNER)
        return
    count = await memory.forgetting.remove_person(match.person_id)
    log.info("member %s removed by the owner", match.person_id)
    await message.reply_text(texts.removed(match.name, count))


async def household(update: Update, context: HearthContext, message: Message,
                    args: list[str]) -> None:
    if not context.group:
        await message.reply_text(texts.HOUSEHOLD_IN_GROUP)
        return
    enabled = await context.hearth.memory.household.enable_group(
        str(message.chat_id), context.member.person_id
    )
    await message.reply_text(texts.HOUSEHOLD_ENABLED if enabled else texts.HOUSEHOLD_ALREADY)


async def persona(update: Update, context: HearthContext, message: Message,
                  args: list[str]) -> None:
    person, hearth = context.member, context.hearth
    if args:
        if len(args) != 2 or args[0].lower() not in ("approve", "reject") or not (
            args[1].lstrip("#").isdigit()
        ):
            await message.reply_text(texts.PERSONA_USAGE)
            return
        approve, proposal_id = args[0].lower() == "approve", int(args[1].lstrip("#"))
        done = await hearth.memory.state.decide_persona(proposal_id, approve=approve,
                                                        by=person.person_id)
        await message.reply_text(
            texts.persona_decided(proposal_id, approve=approve) if done
            else texts.persona_missing(proposal_id)
        )
        return
    pending = (await hearth.memory.state.persona_proposals("pending"))[:PERSONA_SHOWN]
    if not pending:
        await message.reply_text(texts.PERSONA_NONE)
        return
    user_id = update.effective_user.id if update.effective_user else message.chat_id
    for proposal in pending:
        approve_choice = Pending(action="approve", telegram_id=user_id,
                                 person_id=person.person_id, proposal_id=proposal.proposal_id)
        yes, no = hearth.buttons.issue(
            [approve_choice, replace(approve_choice, action="reject")], hearth.now()
        )
        keyboard = InlineKeyboardMarkup(
            [[InlineKeyboardButton(texts.PERSONA_APPROVE, callback_data=yes),
              InlineKeyboardButton(texts.PERSONA_REJECT, callback_data=no)]]
        )
        text = texts.persona_proposal(proposal.proposal_id, proposal.text, proposal.reason)
        await message.reply_text(split_reply(text)[0], reply_markup=keyboard)


async def audit(update: Update, context: HearthContext, message: Message,
                args: list[str]) -> None:
    person, memory = context.member, context.hearth.memory
    checked, broken = await memory.ledger.verify()
    stats = await memory.stats()
    recent = await actions.audit(memory, person, limit=AUDIT_SHOWN)
    names = {p.person_id: p.name for p in await memory.people.list()}
    lines = [texts.audit_ledger(checked, broken), texts.audit_counts(stats)]
    if recent:
        lines.append(texts.AUDIT_RECENT)
    for r in recent:
        actor = names.get(r.actor, r.actor)
        lines.append(f"#{r.seq} · {texts.when(r.at)} · {actor} · {r.activity} · {r.method} · "
                     f"{len(r.returned_ids)} id(s)")
    await _send_long(message, "\n".join(lines))


COMMANDS: tuple[Command, ...] = (
    Command("start", "say hello", start),
    Command("help", "what I can do", help_, in_group=True),
    Command("me", "what I know about you", me),
    Command("why", "which memories my last reply used, and why", why, in_group=True),
    Command("when", "what was true when, like /when Tom's job", when, in_group=True),
    Command("forget", "forget something about you, for good", forget),
    Command("docs", "the documents on your shelf", docs),
    Command("grant", "let me use health or money notes for some work", grant),
    Command("revoke", "take a grant back, at once", revoke),
    Command("grants", "the grants you've given", grants),
    Command("receipts", "who read what of yours, when and why", receipts),
    Command("export", "everything I keep about you, as a file", export),
    Command("reminders", "your reminders, to cancel or snooze", reminders),
    Command("timezone", "your time zone, like /timezone Europe/Berlin", timezone),
    Command("quiet", "quiet hours, like /quiet 22-07, or /quiet off", quiet),
    Command("checkin", "a daily check-in, like /checkin daily 19:00, or off", checkin),
    Command("privacy", "what I keep and who can see it", privacy, in_group=True),
    Command("invite", "invite someone into the household", invite, owner_only=True),
    Command("remove", "remove a member and their notes", remove, owner_only=True),
    Command("household", "make this group the household group", household,
            owner_only=True, in_group=True),
    Command("persona", "review proposed changes to how I talk", persona, owner_only=True),
    Command("audit", "check the read ledger (metadata only)", audit, owner_only=True),
)


def _guarded(command: Command) -> Callable[[Update, HearthContext], Coroutine[Any, Any, None]]:
    """The command's rules before its body: private-only in a group, owner-only for members,
    and an expected failure answered with its own message."""

    async def handle(update: Update, context: HearthContext) -> None:
        message = update.message
        if message is None:
            return
        try:
            await run(update, message, context)
        except TelegramError as exc:
            if not is_transient(exc):
                raise
            # Telegram did not take the answer within the request's patience (down, or
            # flooding for longer). The command is not run again (it may have changed
            # something already); the member hears so once Telegram is back, through the
            # outbox, and asks again.
            await _owe(context, Delivery(chat=message.chat_id, reply_to=message.message_id),
                       texts.unsent(command.name), f"the answer to /{command.name}", exc)

    async def run(update: Update, message: Message, context: HearthContext) -> None:
        person = context.member
        if context.group and not command.in_group:
            await message.reply_text(texts.PRIVATE_ONLY)
            return
        if command.owner_only and not person.is_owner:
            await message.reply_text(texts.OWNER_ONLY)
            return
        try:
            await command.run(update, context, message, list(context.args or []))
        except USER_FACING as exc:
            await message.reply_text(texts.could_not(str(exc)))

    return handle


def command_handlers() -> list[CommandHandler[HearthContext, None]]:
    """One handler per command, for new messages only (an edit is answered as an edit)."""
    return [
        CommandHandler(c.name, _guarded(c), filters=filters.UpdateType.MESSAGE)
        for c in COMMANDS
    ]


# --- buttons -----------------------------------------------------------------------------------


async def on_button(update: Update, context: HearthContext) -> None:
    """A press on a /forget, /persona or /reminders button: valid once, for the member it was
    made for."""
    query = update.callback_query
    if query is None:
        return
    person, hearth = context.member, context.hearth
    pending = hearth.buttons.redeem(query.data, query.from_user.id, hearth.now())
    if pending is None or pending.person_id != person.person_id or context.group:
        await query.answer(texts.BUTTON_INVALID)
        return
    try:
        await query.answer()  # the spinner on the button; the press is what matters
    except TelegramError as exc:
        if not is_transient(exc):
            raise
        log.warning("a button press was not acknowledged (%s); it is handled all the same",
                    type(exc).__name__)
    if pending.action == "forget":
        count = await actions.forget(hearth.memory, person, pending.text,
                                     shared=pending.shared)
        log.info("member %s forgot %d belief(s)", person.person_id, count)
        outcome = texts.forgotten(count)
    elif pending.action == "drop_document":
        gone = await hearth.memory.shelf.forget(
            actions.inspecting(person, "the member dropped a document"), pending.text)
        log.info("member %s dropped %d document(s)", person.person_id, len(gone))
        outcome = texts.dropped(gone)
    elif pending.action == "keep":
        outcome = texts.KEPT
    elif pending.action in ("cancel_reminder", "snooze_reminder"):
        outcome = await _reminder_button(context, person, pending)
    elif not person.is_owner:
        outcome = texts.OWNER_ONLY
    else:
        approve = pending.action == "approve"
        done = await hearth.memory.state.decide_persona(
            pending.proposal_id, approve=approve, by=person.person_id
        )
        outcome = (texts.persona_decided(pending.proposal_id, approve=approve) if done
                   else texts.persona_missing(pending.proposal_id))
    chat = None if query.message is None else query.message.chat.id
    try:
        try:
            await query.edit_message_text(outcome)
        except BadRequest:  # the message is too old to edit, or gone: say it anew
            if chat is not None:
                await context.bot.send_message(chat, outcome)
    except TelegramError as exc:
        if not is_transient(exc) or chat is None:
            raise
        # The press was handled (the button is spent): its outcome waits in the outbox.
        await _owe(context, Delivery(chat=chat), outcome, "a button's outcome", exc)


async def _owe(context: HearthContext, delivery: Delivery, text: str, what: str,
               exc: TelegramError) -> None:
    """Telegram did not take `what` within the request's patience: `text` waits in the outbox
    and goes with the next delivery to that chat (the resume job tries every 15 s)."""
    log.warning("%s did not reach Telegram (%s); it waits in the outbox", what,
                type(exc).__name__)
    await context.hearth.memory.outbox.queue(delivery, text)


def button_handler() -> CallbackQueryHandler[HearthContext, None]:
    return CallbackQueryHandler(on_button)


# --- the menu ----------------------------------------------------------------------------------


def _menu(commands: Sequence[Command]) -> list[BotCommand]:
    return [BotCommand(c.name, c.summary) for c in commands]


async def announce_commands(app: HearthApp) -> None:
    """Telegram's command menu: members' commands for everyone, the owner's in the owner's
    chat, the group's in groups. A failure is logged, never fatal."""
    hearth = app.bot_data.hearth
    menus = (
        (_menu([c for c in COMMANDS if not c.owner_only]), None),
        (_menu(COMMANDS), BotCommandScopeChat(hearth.owner_telegram_id)),
        (_menu([c for c in COMMANDS if c.in_group]), BotCommandScopeAllGroupChats()),
    )
    for menu, scope in menus:
        try:
            await app.bot.set_my_commands(menu, scope=scope)
        except TelegramError as exc:
            log.warning("could not set the command menu: %s", type(exc).__name__)
