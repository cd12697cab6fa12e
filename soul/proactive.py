"""The lane she writes first in: due reminders and check-ins, composed, kept and queued.

Owns: which reminders are due now (their time, held to the end of the member's quiet hours
unless the member asked for that very time), the day's cap on what she starts herself (a
check-in past it is passed over, a promise of hers waits a day), the message itself (the
reminder's own words, back to the member who asked, and a line of hers composed by the
assembler under the `proactive` activity: health and finance facts only with the member's
grant, credentials never, every read receipted), and handing it to memory, which keeps the
occurrence, her line and its outbox entry in one transaction. A reminder missed while she was
not running goes out once, late, saying so; a recurring one then comes next at its next time.

There is one scheduler: the face arms one job at `Lane.next_wakeup` and calls `Lane.run_due`
when it fires; every decision is made again from the database each time, so a restart loses
nothing and repeats nothing.

Must not: send anywhere but the reminder's own chat (a member's DM, or the household group it
was asked in, with the group's shared view only), read memory but through the facade, or
nag (an occurrence is handled once; a member who wants it again asks for it).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from memory import (
    SHARED,
    AccessContext,
    Activity,
    HearthError,
    Memory,
    Person,
    Preferences,
    Reminder,
    StoreBusy,
)
from soul.assembler import Gathered, Intent, Prompt, compose, current_affect
from soul.files import Soul
from soul.reminders import DAILY_CAP, Wording, fires_at, in_quiet, member_zone
from soul.when import localize, next_occurrence, zone_of

log = logging.getLogger("hearth.proactive")

# Later than this after its time, a message says it is late (she was not running).
GRACE = timedelta(minutes=2)
# The lane looks again at least this often, whatever it expects: a reminder made by another
# process (the terminal chat) or a clock that jumped is never waited on for long.
MAX_SLEEP = timedelta(minutes=10)
# A reminder whose handling failed unexpectedly is tried again after this, not at once, so one
# broken row cannot keep the lane busy; the others go on meanwhile.
RETRY_AFTER_FAILURE = timedelta(minutes=1)
# Her own line beside a reminder, or a check-in, is short; a model that does not answer in
# this long is not waited for (the reminder goes without her line, a check-in with a plain one).
MODEL_SECONDS = 20.0
LINE_TOKENS = 80
MAX_LINE_CHARS = 400
RECALL_LIMIT = 5
CHECKIN_LINES = 24
CHECKIN_SINCE = timedelta(days=3)

TEMPLATE_VERSION = "proactive-1"
# What the model is asked, as the last message of a prompt the assembler composed.
INSTRUCTIONS = {
    "reminder": (
        "(You are writing to {name} first: it is time for a reminder they asked you for: "
        "\"{words}\". The reminder itself is sent as it is. Write one short, warm sentence "
        "of your own to go with it. Do not repeat the reminder, do not promise anything.)"
    ),
    "withheld": (
        "(You are writing to {name} first: it is time for a reminder they asked you for. Its "
        "words are not shown to you. Write one short, warm sentence to go with it, without "
        "guessing what it says.)"
    ),
    "checkin": (
        "(You are writing to {name} first: a check-in they asked you for. Write one or two "
        "short sentences that pick up something they told you recently, and ask one gentle "
        "question. If nothing fits, ask how their day is going.)"
    ),
}


class LineModel(Protocol):
    async def reply(
        self, messages: list[dict[str, str]], *, max_tokens: int = ..., temperature: float = ...
    ) -> str: ...


@dataclass(frozen=True)
class Sent:
    """A message the lane kept and queued: where it goes, and her words."""

    reminder_id: int
    person_id: str
    chat_id: str
    telegram_chat: int | None  # the outbox entry's chat; None: for the terminal only
    text: str
    why: str


@dataclass(frozen=True)
class Composed:
    text: str
    used: dict[str, list[int]]
    tokens: dict[str, int]


class Lane:
    """The proactive lane over one memory. `on_telegram`: the bot's lane (reminders that go to
    a Telegram chat, queued in the outbox); otherwise the terminal's (`only` names its member
    and chat, and nothing is queued: the terminal shows it)."""

    def __init__(
        self,
        memory: Memory,
        soul: Soul,
        model: LineModel,
        wording: Wording,
        household_zone: str,
        *,
        on_telegram: bool = True,
        only: tuple[str, str] | None = None,
    ) -> None:
        zone_of(household_zone)
        self.memory = memory
        self.soul = soul
        self.model = model
        self.wording = wording
        self.household_zone = household_zone
        self.on_telegram = on_telegram
        self.only = only
        self._running = asyncio.Lock()
        self._failed: dict[int, datetime] = {}  # reminder id -> not before

    async def _candidates(self) -> list[Reminder]:
        if self.only is not None:
            person_id, chat_id = self.only
            return await self.memory.reminders.scheduled(person_id=person_id, chat_id=chat_id)
        return await self.memory.reminders.scheduled(on_telegram=self.on_telegram)

    async def next_wakeup(self, now: datetime) -> datetime:
        """When the lane should look next: the soonest time a reminder goes out, or
        `MAX_SLEEP` from now, whichever is first (a time already past means now)."""
        preferences = await self.memory.preferences.all()
        soonest = now + MAX_SLEEP
        for reminder in await self._candidates():
            at = fires_at(reminder, preferences.get(reminder.person_id), self.household_zone)
            soonest = min(soonest, max(at, self._failed.get(reminder.reminder_id, at)))
        return max(soonest, now)

    async def run_due(self, now: datetime) -> list[Sent]:
        """Handle every occurrence due by `now`, each once. What fails (the database is
        busy, the model is down) is logged and waits for the next run, or goes without her
        own line; nothing is lost."""
        async with self._running:
            preferences = await self.memory.preferences.all()
            people = {p.person_id: p for p in await self.memory.people.list()}
            sent: list[Sent] = []
            for reminder in await self._candidates():
                person = people.get(reminder.person_id)
                if person is None:
                    continue
                mine = preferences.get(reminder.person_id)
                at = fires_at(reminder, mine, self.household_zone)
                if at > now or self._failed.get(reminder.reminder_id, now) > now:
                    continue
                try:
                    done = await self._handle(reminder, person, mine, at, now)
                except StoreBusy as exc:
                    log.warning("reminder %s waits for the database: %s", reminder.reminder_id,
                                exc)
                    continue
                except HearthError:
                    log.exception("reminder %s could not be handled; it is tried again",
                                  reminder.reminder_id)
                    self._failed[reminder.reminder_id] = now + RETRY_AFTER_FAILURE
                    continue
                self._failed.pop(reminder.reminder_id, None)
                if done is not None:
                    sent.append(done)
            return sent

    async def _handle(self, reminder: Reminder, person: Person,
                      preferences: Preferences | None, at: datetime,
                      now: datetime) -> Sent | None:
        zone = zone_of(member_zone(preferences, self.household_zone))
        due = reminder.next_at
        local_day = now.astimezone(zone).date().isoformat()
        late = now - at > GRACE
        held = at > due
        next_due = None
        if reminder.recurrence is not None and reminder.wall is not None:
            next_due = next_occurrence(reminder.recurrence, reminder.wall, max(now, due),
                                       zone_of(reminder.zone))
        if reminder.kind == "checkin":
            quiet = preferences.quiet if preferences is not None else None
            if in_quiet(due.astimezone(zone), quiet):
                await self.memory.reminders.fire(reminder, text=None, why="quiet",
                                                 local_day=local_day, next_due=next_due,
                                                 deliver_to=None)
                return None
        if reminder.self_started and (
            await self.memory.reminders.started_on(reminder.person_id, local_day) >= DAILY_CAP
        ):
            if reminder.kind == "checkin":
                await self.memory.reminders.fire(reminder, text=None, why="capped",
                                                 local_day=local_day, next_due=next_due,
                                                 deliver_to=None)
            else:
                local = due.astimezone(zone)
                tomorrow = localize(local.date() + timedelta(days=1), local.time(), zone)
                await self.memory.reminders.postpone(reminder, max(tomorrow, now + GRACE))
            return None
        why = ("late" if late else "quiet" if held else "checkin" if reminder.kind == "checkin"
               else "promised" if reminder.self_started else "asked")
        composed = await self._compose(reminder, person, due=due.astimezone(zone), late=late,
                                       held=held, now=now)
        deliver_to = reminder.telegram_chat if self.on_telegram else None
        turn_id = await self.memory.reminders.fire(
            reminder, text=composed.text, why=why, local_day=local_day, next_due=next_due,
            deliver_to=deliver_to, template_version=TEMPLATE_VERSION, used=composed.used,
            tokens=composed.tokens,
        )
        if turn_id is None:
            return None
        log.info("reminder %s sent (%s)", reminder.reminder_id, why)
        return Sent(reminder.reminder_id, reminder.person_id, reminder.chat_id, deliver_to,
                    composed.text, why)

    async def _compose(self, reminder: Reminder, person: Person, *, due: datetime, late: bool,
                       held: bool, now: datetime) -> Composed:
        ctx = _context(reminder, person, due)
        used: dict[str, list[int]] = {}
        if reminder.kind == "checkin":
            prompt, gathered_ids = await self._prompt(ctx, reminder, person, now,
                                                      INSTRUCTIONS["checkin"], checkin=True)
            used.update(gathered_ids)
            line = await self._line(prompt, reminder)
            text = line or self.wording.checkin_fallback(person.name)
            return Composed(text, used, dict(prompt.tokens))
        words = await self.memory.reminders.words(ctx, reminder)
        if reminder.goal_id is not None:
            used["goals"] = [reminder.goal_id]
        instruction = (INSTRUCTIONS["withheld"] if words is None
                       else INSTRUCTIONS["reminder"].replace("{words}", words))
        prompt, gathered_ids = await self._prompt(ctx, reminder, person, now, instruction,
                                                  checkin=False, query=words)
        used.update(gathered_ids)
        line = await self._line(prompt, reminder)
        text = self.wording.reminder(words, due=due, late=late, held=held)
        if line:
            text = f"{text}\n{line}"
        return Composed(text, used, dict(prompt.tokens))

    async def _prompt(self, ctx: AccessContext, reminder: Reminder, person: Person,
                      now: datetime, instruction: str, *, checkin: bool,
                      query: str | None = None) -> tuple[Prompt, dict[str, list[int]]]:
        """The assembler's prompt for this message, from what `ctx` (the `proactive` lane)
        may use: health and finance only with the member's grant, credentials never."""
        group = reminder.scope == SHARED
        memory = self.memory
        # What members said is read as filed (its meaning read), never as it stood unread.
        await memory.vectors.file_waiting()
        names = {p.person_id: p.name for p in await memory.people.list()}
        recent = []
        summary = None
        if checkin:
            since = (now - CHECKIN_SINCE).isoformat()
            recent = [t for t in await memory.transcript.lines(ctx, chat_id=reminder.chat_id,
                                                                 limit=CHECKIN_LINES)
                      if t.at >= since]
            summary = await memory.summaries.get(ctx, reminder.chat_id)
            query = " ".join(t.text for t in recent if t.role == "user")[-500:] or None
        memories = ([m for m in await memory.recall.search(ctx, query, limit=RECALL_LIMIT)
                     if m.sure] if query else [])
        partner = await memory.beliefs.about(ctx, person.person_id, limit=6)
        intent = Intent(speaker=person, chat_id=reminder.chat_id, group=group,
                        text=instruction.replace("{name}", person.name), now=now)
        key = f"group:{reminder.chat_id}" if group else f"person:{person.person_id}"
        gathered = Gathered(
            intent=intent,
            present=tuple(sorted(names.values())) if group else (person.name,),
            names=names,
            memories=tuple(memories),
            related=(),
            partner=tuple(partner),
            summary=summary,
            goals=(),
            recent=tuple(recent),
            affect=await current_affect(memory, self.soul, key, now),
            persona_edits=tuple(await memory.state.approved_persona_edits()),
            introduced=True,
        )
        prompt = compose(self.soul, gathered)
        ids = {
            "beliefs": sorted({*prompt.belief_ids, *(b.belief_id for b in partner)}),
            "lines": [t.turn_id for t in recent],
        }
        return prompt, ids

    async def _line(self, prompt: Prompt, reminder: Reminder) -> str:
        """Her own words from the model, or "" when it does not answer in time."""
        try:
            answer = await asyncio.wait_for(
                self.model.reply(list(prompt.messages), max_tokens=LINE_TOKENS),
                MODEL_SECONDS,
            )
        except (HearthError, TimeoutError) as exc:
            log.warning("reminder %s goes without her own line: %s", reminder.reminder_id,
                        type(exc).__name__)
            return ""
        return _trimmed(answer)


def _context(reminder: Reminder, person: Person, due: datetime) -> AccessContext:
    """The `proactive` lane for this message: for its member (their own view), or for the
    household group it was asked in (the shared view only)."""
    when = due.strftime("%Y-%m-%d %H:%M")
    if reminder.kind == "checkin":
        purpose = f"a check-in {person.name} asked for, at {when}"
    elif reminder.self_started:
        purpose = f"a reminder she promised {person.name}, due {when}"
    else:
        purpose = f"a reminder {person.name} asked for, due {when}"
    if reminder.scope == SHARED:
        return AccessContext.for_group(Activity.PROACTIVE, purpose)
    return AccessContext.for_member(person.person_id, Activity.PROACTIVE, purpose)


def _trimmed(answer: str) -> str:
    text = " ".join(answer.split())
    if len(text) <= MAX_LINE_CHARS:
        return text
    cut = text[:MAX_LINE_CHARS]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    return cut[: end + 1] if end > 0 else cut.rstrip() + "…"

