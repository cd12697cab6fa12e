"""Reminders in a conversation: "remind me ..." becomes a goal with a due time, confirmed.

Owns: the desk a turn hands a member's message to (`Desk.take`): each request's time read in
the member's time zone, the reminder made (once per line: a replayed turn makes nothing
twice), and her one-line answer, either the time she understood ("I'll remind you tomorrow at
09:00: call the dentist", so a wrong reading shows at once) or, when no time could be placed,
one short question, whose answer the next message may be. Her own "I'll remind you ..." in a
reply becomes a reminder she started herself (`Desk.promise`). Also the rules of time the lane
shares: a member's zone, quiet hours, the day's cap.

Must not: word anything itself (the face hands it a `Wording`), or guess a time.
"""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo

from memory import AccessContext, Activity, Memory, Person, Preferences, Reminder
from soul.goals import Request, promised_reminders, requested
from soul.when import When, localize, split_when, understand, zone_of

# What she starts herself (check-ins, her own promises) is at most this many messages a day
# per member; what a member asked for is never held back by it.
DAILY_CAP = 3
# The answer to "when?" is a time and little else ("tomorrow at 9, please").
_ANSWER_SPARE_WORDS = 2
_FILLER = re.compile(r"(?<!\w)(?:please|ok|okay|bitte|merci|gracias|thanks|maybe|um|uh)(?!\w)",
                     re.I)


class Wording(Protocol):
    """How the face says what the desk and the lane decided (`bot.texts` is the one)."""

    def confirm(self, what: str, due: datetime, *, now: datetime,
                recurrence: str | None) -> str: ...

    def ask_when(self, what: str, *, said: str) -> str: ...

    def noted(self, due: datetime, *, now: datetime, recurrence: str | None) -> str: ...

    def reminder(self, words: str | None, *, due: datetime, late: bool, held: bool) -> str: ...

    def checkin_fallback(self, name: str) -> str: ...


@dataclass(frozen=True)
class Taken:
    """A message the desk answered: her reply, and whether reminders changed."""

    text: str


_executor: ThreadPoolExecutor | None = None


async def read_time(phrase: str, now: datetime, zone: ZoneInfo, lang: str | None) -> When | None:
    """`soul.when.understand` off the event loop, one reading at a time (dateparser loads its
    language tables on first use and keeps caches that are not meant to be shared)."""
    global _executor  # noqa: PLW0603 -- one lazily made worker for the whole process
    if not phrase.strip():
        return None
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hearth-when")
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(
        _executor, lambda: understand(phrase, now, zone, lang=lang)
    )


def member_zone(preferences: Preferences | None, household_zone: str) -> str:
    """A member's own zone, else the household's."""
    if preferences is not None and preferences.timezone:
        return preferences.timezone
    return household_zone


def in_quiet(local: datetime, quiet: tuple[int, int] | None) -> bool:
    """Whether a local time falls in quiet hours (which may wrap past midnight)."""
    if quiet is None:
        return False
    start, end = quiet
    minute = local.hour * 60 + local.minute
    if start < end:
        return start <= minute < end
    return minute >= start or minute < end


def quiet_ends(local: datetime, quiet: tuple[int, int], zone: ZoneInfo) -> datetime:
    """The first end of quiet hours after a local time inside them."""
    end = time(quiet[1] // 60, quiet[1] % 60)
    day = local.date()
    for _ in range(2):
        moment = localize(day, end, zone)
        if moment > local:
            return moment
        day += timedelta(days=1)
    return localize(day, end, zone)


def fires_at(reminder: Reminder, preferences: Preferences | None, household_zone: str) -> datetime:
    """When a reminder's next occurrence goes out: its due time, or, when it falls in the
    member's quiet hours and the member did not ask for that very time, when they end."""
    due = reminder.next_at
    quiet = preferences.quiet if preferences is not None else None
    if reminder.exact or quiet is None:
        return due
    zone = zone_of(member_zone(preferences, household_zone))
    local = due.astimezone(zone)
    if not in_quiet(local, quiet):
        return due
    return quiet_ends(local, quiet, zone).astimezone(due.tzinfo)


def _speaking(person: Person, group: bool) -> AccessContext:
    if group:
        return AccessContext.for_group(Activity.GROUP_CONVERSATION,
                                       "confirm a reminder in the household group",
                                       actor=person.person_id)
    return AccessContext.for_member(person.person_id, Activity.DM_CONVERSATION,
                                    "confirm a reminder in their private chat")


class Desk:
    """Takes reminder requests out of a conversation."""

    def __init__(self, wording: Wording, household_zone: str) -> None:
        zone_of(household_zone)  # a bad zone fails at start, not at the first reminder
        self.wording = wording
        self.household_zone = household_zone

    async def zone(self, memory: Memory, person_id: str) -> str:
        return member_zone(await memory.preferences.get(person_id), self.household_zone)

    async def take(
        self,
        memory: Memory,
        *,
        speaker: Person,
        chat_id: str,
        scope: str,
        group: bool,
        text: str,
        now: datetime,
        source_turn_id: int,
        telegram_chat: int | None,
    ) -> Taken | None:
        """Her answer when the message asks for reminders (or answers her question about
        when); None when it is an ordinary message for the conversation."""
        requests = requested(text)
        if not requests:
            return await self._answer(memory, speaker, chat_id=chat_id, group=group, text=text,
                                      now=now)
        zone_name = await self.zone(memory, speaker.person_id)
        zone = zone_of(zone_name)
        lines: list[str] = []
        asked = False
        for request in requests:
            when = await read_time(request.when, now, zone, request.lang)
            if when is None and asked:
                await memory.goals.add(speaker.person_id, request.what, scope=scope,
                                       provenance="requested", source_turn_id=source_turn_id)
                continue
            reminder, _ = await memory.reminders.add(
                speaker.person_id, request.what, scope=scope, chat_id=chat_id,
                telegram_chat=telegram_chat, zone=zone_name,
                due=None if when is None else when.due,
                recurrence=None if when is None else when.recurrence,
                wall=None if when is None else when.wall,
                exact=when is not None and when.exact, source_turn_id=source_turn_id,
            )
            if reminder.state == "asking":
                asked = True
                lines.append(self.wording.ask_when(_lower_first(request.what),
                                                   said=request.when))
            else:
                lines.append(self._confirmation(request.what, reminder, now))
        return Taken("\n".join(lines))

    async def promise(
        self,
        memory: Memory,
        *,
        speaker: Person,
        chat_id: str,
        scope: str,
        reply: str,
        now: datetime,
        source_turn_id: int,
        telegram_chat: int | None,
    ) -> tuple[list[Request], list[str]]:
        """Her own "I'll remind you ..." with a time she can place becomes a reminder she
        started herself. Returns the promises kept that way and a line noting each time."""
        promises = promised_reminders(reply)
        if not promises:  # most replies promise nothing: no read of the member's zone
            return [], []
        zone_name = await self.zone(memory, speaker.person_id)
        kept: list[Request] = []
        lines: list[str] = []
        for promise in promises:
            when = await read_time(promise.when, now, zone_of(zone_name), "en")
            if when is None:
                continue
            reminder, _ = await memory.reminders.add(
                speaker.person_id, promise.what, scope=scope, chat_id=chat_id,
                telegram_chat=telegram_chat, zone=zone_name, due=when.due,
                recurrence=when.recurrence, wall=when.wall, exact=when.exact,
                self_started=True, source_turn_id=source_turn_id,
            )
            if reminder.due is None:
                continue
            kept.append(promise)
            lines.append(self.wording.noted(reminder.due.astimezone(zone_of(reminder.zone)),
                                            now=now.astimezone(zone_of(reminder.zone)),
                                            recurrence=reminder.recurrence))
        return kept, lines

    def _confirmation(self, what: str, reminder: Reminder, now: datetime) -> str:
        zone = zone_of(reminder.zone)
        return self.wording.confirm(_lower_first(what), reminder.next_at.astimezone(zone),
                                    now=now.astimezone(zone), recurrence=reminder.recurrence)

    async def _answer(self, memory: Memory, speaker: Person, *, chat_id: str, group: bool,
                      text: str, now: datetime) -> Taken | None:
        """The message may answer her question about when; otherwise the question lapses."""
        pending = await memory.reminders.pending_question(speaker.person_id, chat_id)
        if pending is None:
            return None
        zone_name = await self.zone(memory, speaker.person_id)
        found = split_when(text)
        spare = _FILLER.sub(" ", found.what).strip(" ,.!?").split()
        when = None
        if found.when and len(spare) <= _ANSWER_SPARE_WORDS:
            when = await read_time(found.when, now, zone_of(zone_name), None)
        if when is None:
            await memory.reminders.lapse(pending.reminder_id)
            return None
        answered = await memory.reminders.answer(
            pending.reminder_id, due=when.due, zone=zone_name, recurrence=when.recurrence,
            wall=when.wall, exact=when.exact,
        )
        if answered is None:
            return None
        what = await _goal_words(memory, speaker, group, answered)
        return Taken(self._confirmation(what, answered, now))


async def _goal_words(memory: Memory, speaker: Person, group: bool,
                      reminder: Reminder) -> str:
    """The reminder's words as this chat may hear them ("" when its lens holds them back)."""
    goals = await memory.goals.open(_speaking(speaker, group), limit=500)
    return next((g.text for g in goals if g.goal_id == reminder.goal_id), "")


def _lower_first(text: str) -> str:
    """"Call the dentist" as it reads after a colon: "call the dentist" (not "iPhone")."""
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        return text[0].lower() + text[1:]
    return text

