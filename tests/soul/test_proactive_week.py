"""A week of a household of three on a virtual clock (soul/proactive.py): every reminder at its
local time across the autumn clock change, quiet hours, the day's cap, recurrence, a cancel,
and a restart in the middle that loses nothing and sends nothing twice.

The lane is driven as its one scheduler job drives it: ask when to look next, move the clock
there, hand over what fell due. The clock is injected everywhere; nothing here reads the real
one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot import texts
from memory import Memory, Person, Reminder, dm_chat, private_scope
from soul.files import load_soul
from soul.proactive import Lane, Sent
from soul.reminders import Desk
from soul.turn import respond
from soul.when import next_occurrence
from tests.helpers import HashEmbedder, TestClock

SOUL = load_soul(None)
BERLIN, NEW_YORK = ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York")
# Monday 19 October 2026, 07:00 in Berlin. Berlin's clocks go back at 03:00 on Sunday the 25th;
# New York's only on 1 November, so the two are six hours apart, then five.
START = datetime(2026, 10, 19, 5, 0, tzinfo=UTC)
END = datetime(2026, 10, 26, 22, 0, tzinfo=UTC)


@dataclass
class Model:
    """A member's turn gets `turn`; her own line beside a reminder gets nothing (so each
    message is exactly what the lane words), a check-in falls back to its plain question."""

    turn: str = "All right."
    prompts: list[str] = field(default_factory=list)

    async def reply(self, messages: list[dict[str, str]], *, max_tokens: int = 400,
                    temperature: float = 0.7) -> str:
        last = messages[-1]["content"]
        self.prompts.append(last)
        return "" if last.startswith("(You are writing to") else self.turn


@dataclass
class Week:
    db: Path
    clock: TestClock
    model: Model
    memory: Memory
    lane: Lane
    people: dict[str, Person]
    log: list[tuple[str, str, str]] = field(default_factory=list)

    async def say(self, name: str, text: str) -> str:
        person = self.people[name]
        reply = await respond(
            self.memory, SOUL, self.model, speaker=person, chat_id=dm_chat(person),
            group=False, text=text, now=self.clock(),
            desk=Desk(texts.REMINDER_WORDS, "Europe/Berlin"), telegram_chat=person.telegram_id,
        )
        return reply.text

    async def run_until(self, until: datetime) -> None:
        """The scheduler: sleep until the lane's next wakeup, hand over what is due."""
        for _ in range(5_000):
            at = await self.lane.next_wakeup(self.clock())
            if at > until:
                self.clock.set(until)
                return
            self.clock.set(max(at, self.clock()))
            for sent in await self.lane.run_due(self.clock()):
                self._note(sent)
        raise AssertionError("the lane never settled")

    def _note(self, sent: Sent) -> None:
        name = next(n for n, p in self.people.items() if p.person_id == sent.person_id)
        zone = NEW_YORK if name == "Alice" else BERLIN
        local = self.clock().astimezone(zone).strftime("%a %d %H:%M")
        self.log.append((name, local, sent.text.splitlines()[0]))

    async def restart(self, down_for: timedelta) -> None:
        await self.memory.close()
        self.clock.advance(down_for)
        self.memory = await Memory.open(self.db, embedder=HashEmbedder(), clock=self.clock)
        self.lane = _lane(self.memory, self.model)


def _lane(memory: Memory, model: Model) -> Lane:
    return Lane(memory, SOUL, model, texts.REMINDER_WORDS, "Europe/Berlin")


async def _week(tmp_path: Path) -> Week:
    clock = TestClock(START)
    db = tmp_path / "hearth.db"
    memory = await Memory.open(db, embedder=HashEmbedder(), create=True, clock=clock)
    people = {
        "Olivia": await memory.people.add("Olivia", telegram_id=1001, owner=True),
        "Bob": await memory.people.add("Bob", telegram_id=1002),
        "Alice": await memory.people.add("Alice", telegram_id=1003),
    }
    model = Model()
    return Week(db, clock, model, memory, _lane(memory, model), people)


async def test_a_week_of_reminders_for_three(tmp_path: Path) -> None:
    week = await _week(tmp_path)
    olivia, bob, alice = (week.people[n] for n in ("Olivia", "Bob", "Alice"))
    memory = week.memory
    # Alice lives in New York and keeps quiet hours; Olivia opted into a check-in.
    await memory.preferences.set_timezone(alice.person_id, "America/New_York")
    await memory.preferences.set_quiet(alice.person_id, (21 * 60, 9 * 60 + 30))
    await memory.reminders.set_checkin(
        olivia.person_id, scope=private_scope(olivia.person_id), chat_id=dm_chat(olivia),
        telegram_chat=1001, zone="Europe/Berlin", wall="19:00",
        due=next_occurrence("daily", "19:00", START, BERLIN),
    )
    said = [
        await week.say("Bob", "remind me every day at 8:00 to take my pills"),
        await week.say("Bob", "remind me on Thursday at 14:00 to call the bank"),
        await week.say("Alice", "remind me every Monday at 9 to call mum"),
        await week.say("Alice", "remind me on Wednesday to water the plants"),
        await week.say("Alice", "remind me on Tuesday at 23:00 to take the bread out"),
    ]
    assert said == [
        "I'll remind you every day at 08:00: take my pills",
        "I'll remind you on Thursday at 14:00: call the bank",
        "I'll remind you every Monday at 09:00: call mum",
        "I'll remind you on Wednesday at 09:00: water the plants",
        "I'll remind you tomorrow at 23:00: take the bread out",
    ]

    # Wednesday 17:00 in Berlin: four promises of hers, one past the day's cap.
    await week.run_until(datetime(2026, 10, 21, 15, 0, tzinfo=UTC))
    week.model.turn = ("Of course. I'll remind you at 18:00 to water the tulips. I'll remind you "
                       "at 18:10 to feed the cat. I'll remind you at 18:20 to call Dad. I'll "
                       "remind you at 18:30 to lock up.")
    promised = await week.say("Olivia", "can you nudge me this evening?")
    assert promised.endswith("(I've set that reminder for today at 18:30.)")

    # Thursday 12:00 in Berlin she stops, and is down for six hours.
    await week.run_until(datetime(2026, 10, 22, 10, 0, tzinfo=UTC))
    await week.restart(timedelta(hours=6))

    # Sunday 10:00, after the clocks went back: Bob stops his pills.
    await week.run_until(datetime(2026, 10, 25, 9, 0, tzinfo=UTC))
    (pills,) = await week.memory.reminders.scheduled(person_id=bob.person_id)
    assert pills.wall == "08:00"
    assert await week.memory.reminders.cancel(bob.person_id, pills.reminder_id)
    await week.run_until(END)

    checkin = "Hi Olivia, how is your day going?"
    assert week.log == [
        ("Bob", "Mon 19 08:00", "⏰ Reminder: Take my pills"),
        ("Alice", "Mon 19 09:00", "⏰ Reminder: Call mum"),
        ("Olivia", "Mon 19 19:00", checkin),
        ("Bob", "Tue 20 08:00", "⏰ Reminder: Take my pills"),
        ("Olivia", "Tue 20 19:00", checkin),
        ("Alice", "Tue 20 23:00", "⏰ Reminder: Take the bread out"),  # asked for: not held
        ("Bob", "Wed 21 08:00", "⏰ Reminder: Take my pills"),
        ("Alice", "Wed 21 09:30", "⏰ Reminder: Water the plants"),  # held to quiet's end
        ("Olivia", "Wed 21 18:00", "⏰ Reminder: Water the tulips"),
        ("Olivia", "Wed 21 18:10", "⏰ Reminder: Feed the cat"),
        ("Olivia", "Wed 21 18:20", "⏰ Reminder: Call Dad"),
        # 18:30 and the check-in are past the cap of three she starts herself in a day.
        ("Bob", "Thu 22 08:00", "⏰ Reminder: Take my pills"),
        ("Bob", "Thu 22 18:00", "Sorry, this one is late: it was due Thursday at 14:00."),
        ("Olivia", "Thu 22 18:30", "⏰ Reminder: Lock up"),  # the promise, a day later
        ("Olivia", "Thu 22 19:00", checkin),
        ("Bob", "Fri 23 08:00", "⏰ Reminder: Take my pills"),
        ("Olivia", "Fri 23 19:00", checkin),
        ("Bob", "Sat 24 08:00", "⏰ Reminder: Take my pills"),
        ("Olivia", "Sat 24 19:00", checkin),
        ("Bob", "Sun 25 08:00", "⏰ Reminder: Take my pills"),  # the first winter-time morning
        ("Olivia", "Sun 25 19:00", checkin),
        ("Alice", "Mon 26 09:00", "⏰ Reminder: Call mum"),
        ("Olivia", "Mon 26 19:00", checkin),
    ]
    memory = week.memory
    firings = await memory.reminders.firings()
    sent = [f for f in firings if f.turn_id is not None]
    assert len(sent) == len(week.log)  # each once: a firing per message, none twice
    assert len({(f.reminder_id, f.due_at) for f in firings}) == len(firings)
    assert await memory.outbox.count_pending() == len(week.log)  # each queued for Telegram
    assert [f.why for f in firings if f.turn_id is None] == ["capped"]
    whys = {f.why for f in sent}
    assert whys == {"asked", "quiet", "promised", "checkin", "late"}
    # The same local hour, on either side of the change, is an hour apart in UTC.
    pills_utc = [datetime.fromisoformat(f.fired_at).hour for f in sent
                 if f.person_id == bob.person_id and f.why == "asked"]
    assert pills_utc == [6, 6, 6, 6, 6, 6, 7]
    mum = [datetime.fromisoformat(f.fired_at).astimezone(BERLIN).hour for f in sent
           if f.person_id == alice.person_id and f.local_day in ("2026-10-19", "2026-10-26")]
    assert mum == [15, 14]
    await memory.close()


async def test_a_restart_between_composing_and_keeping_sends_it_once(tmp_path: Path) -> None:
    week = await _week(tmp_path)
    await week.say("Bob", "remind me in 5 minutes to stretch")
    week.clock.advance(timedelta(minutes=5))
    # The run composes the message and is cut off before memory keeps it: nothing is kept.
    cut: list[int] = []

    async def power_cut(reminder: Reminder, **_: object) -> int | None:
        cut.append(reminder.reminder_id)
        raise RuntimeError("the power went")

    kept = week.memory.reminders.fire
    week.memory.reminders.fire = power_cut  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        await week.lane.run_due(week.clock())
    week.memory.reminders.fire = kept  # type: ignore[method-assign]
    assert cut and await week.memory.outbox.count_pending() == 0
    await week.restart(timedelta(minutes=1))
    await week.run_until(week.clock() + timedelta(hours=1))
    assert [text for _, _, text in week.log] == ["⏰ Reminder: Stretch"]
    assert await week.memory.outbox.count_pending() == 1
    await week.memory.close()
