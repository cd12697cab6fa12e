"""Reminders in memory (memory/reminders.py): made once, fired once, words only for their own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory import (
    AccessContext,
    Activity,
    InvalidRequest,
    Reminder,
    Role,
    dm_chat,
    private_scope,
)
from tests.helpers import Household, TestClock, make_household

START = datetime(2026, 12, 1, 14, 30, tzinfo=UTC)


@pytest.fixture
async def home(tmp_path: Path) -> AsyncIterator[tuple[Household, TestClock]]:
    clock = TestClock(START)
    household = await make_household(tmp_path / "hearth.db", clock=clock)
    try:
        yield household, clock
    finally:
        await household.memory.close()


async def _remind(h: Household, text: str, due: datetime | None, *, person: str = "bob",
                  source: int | None = None, recurrence: str | None = None,
                  wall: str | None = None) -> Reminder:
    member = getattr(h, person)
    reminder, _ = await h.memory.reminders.add(
        member.person_id, text, scope=private_scope(member.person_id), chat_id=dm_chat(member),
        telegram_chat=member.telegram_id, zone="Europe/Berlin", due=due, recurrence=recurrence,
        wall=wall, source_turn_id=source,
    )
    return reminder


def _lane(h: Household, person: str = "bob") -> AccessContext:
    member = getattr(h, person)
    return AccessContext.for_member(member.person_id, Activity.PROACTIVE, "a test reminder")


def _inspect(h: Household, person: str = "bob") -> AccessContext:
    member = getattr(h, person)
    return AccessContext.for_member(member.person_id, Activity.MEMBER_INSPECT, "a test read")


async def test_a_reminder_is_a_goal_with_a_due_time_made_once_per_line(
    home: tuple[Household, TestClock],
) -> None:
    h, _ = home
    line = await h.memory.transcript.append(
        chat_id=dm_chat(h.bob), speaker_id=h.bob.person_id, role=Role.USER,
        scope=private_scope(h.bob.person_id), text="remind me tomorrow to call the dentist",
    )
    due = START + timedelta(hours=18)
    first = await _remind(h, "Call the dentist", due, source=line)
    again, made = await h.memory.reminders.add(
        h.bob.person_id, "Call the dentist", scope=private_scope(h.bob.person_id),
        chat_id=dm_chat(h.bob), telegram_chat=1002, zone="Europe/Berlin", due=due,
        source_turn_id=line,
    )
    assert not made and again.reminder_id == first.reminder_id
    (goal,) = await h.memory.goals.open(h.dm(h.bob))
    assert (goal.text, goal.due) == ("Call the dentist", due.isoformat())
    assert [r.reminder_id for r in await h.memory.reminders.scheduled()] == [first.reminder_id]


async def test_a_reminder_holding_a_secret_token_is_refused(
    home: tuple[Household, TestClock],
) -> None:
    h, _ = home
    with pytest.raises(InvalidRequest):
        await _remind(h, "Pay with 4111 1111 1111 1111", START + timedelta(hours=1))
    assert await h.memory.reminders.scheduled() == []


async def test_its_words_go_back_to_its_own_member_health_included_credentials_never(
    home: tuple[Household, TestClock],
) -> None:
    h, _ = home
    insulin = await _remind(h, "Take my insulin", START + timedelta(hours=1))
    code = await _remind(h, "Change the alarm code 4512", START + timedelta(hours=2))
    assert await h.memory.reminders.words(_lane(h), insulin) == "Take my insulin"
    assert await h.memory.reminders.words(_lane(h), code) is None
    # Another member's lane cannot read it, even knowing its id.
    assert await h.memory.reminders.words(_lane(h, "alice"), insulin) is None
    audit = AccessContext.for_audit(h.owner.person_id, "a test audit")
    reads = [r for r in await h.memory.ledger.audit(audit) if r.method == "reminder_words"]
    assert [(r.actor, r.activity, len(r.returned_ids), r.suppressed) for r in reads] == [
        (f"hearth:{h.bob.person_id}", "proactive", 1, 0),
        (f"hearth:{h.bob.person_id}", "proactive", 0, 1),
        (f"hearth:{h.alice.person_id}", "proactive", 0, 0),
    ]


async def test_an_occurrence_fires_once_with_its_line_and_outbox_entry_together(
    home: tuple[Household, TestClock],
) -> None:
    h, clock = home
    reminder = await _remind(h, "Stretch", START + timedelta(minutes=2))
    clock.advance(timedelta(minutes=2))
    fired = await h.memory.reminders.fire(
        reminder, text="⏰ Reminder: stretch", why="asked", local_day="2026-12-01",
        next_due=None, deliver_to=1002, used={"goals": [int(reminder.goal_id or 0)]},
    )
    assert fired
    again = await h.memory.reminders.fire(
        reminder, text="⏰ Reminder: stretch", why="asked", local_day="2026-12-01",
        next_due=None, deliver_to=1002,
    )
    assert again is None
    owed = await h.memory.outbox.pending(1002)
    assert [o.text for o in owed] == ["⏰ Reminder: stretch"]
    lines = await h.memory.transcript.lines(h.dm(h.bob), chat_id=dm_chat(h.bob))
    assert [(t.role, t.text) for t in lines] == [("assistant", "⏰ Reminder: stretch")]
    assert await h.memory.reminders.scheduled() == []
    assert await h.memory.goals.open(h.dm(h.bob)) == []  # done
    (trace,) = await h.memory.reminders.firings(h.bob.person_id)
    assert (trace.why, trace.turn_id, trace.reply_id) == ("asked", fired, owed[0].reply_id)
    assert trace.used == {"goals": [reminder.goal_id]}


async def test_a_recurring_reminder_moves_on_and_keeps_its_goal(
    home: tuple[Household, TestClock],
) -> None:
    h, _ = home
    monday = datetime(2026, 12, 7, 7, 0, tzinfo=UTC)
    reminder = await _remind(h, "Take out the bins", monday, recurrence="weekly:0", wall="08:00")
    assert await h.memory.reminders.fire(
        reminder, text="bins", why="asked", local_day="2026-12-07",
        next_due=monday + timedelta(days=7), deliver_to=None,
    ) is not None
    (after,) = await h.memory.reminders.scheduled()
    assert after.next_at == monday + timedelta(days=7)
    assert [g.text for g in await h.memory.goals.open(h.dm(h.bob))] == ["Take out the bins"]


async def test_a_member_cancels_and_snoozes_only_their_own(
    home: tuple[Household, TestClock],
) -> None:
    h, _ = home
    due = START + timedelta(hours=3)
    reminder = await _remind(h, "Call mum", due)
    assert not await h.memory.reminders.cancel(h.alice.person_id, reminder.reminder_id)
    assert await h.memory.reminders.snooze(h.alice.person_id, reminder.reminder_id,
                                           timedelta(hours=1)) is None
    later = await h.memory.reminders.snooze(h.bob.person_id, reminder.reminder_id,
                                            timedelta(hours=1))
    assert later is not None and later.next_at == due + timedelta(hours=1)
    assert await h.memory.reminders.cancel(h.bob.person_id, reminder.reminder_id)
    assert await h.memory.reminders.scheduled() == []
    assert await h.memory.goals.open(h.dm(h.bob)) == []  # dropped with it
    assert not await h.memory.reminders.cancel(h.bob.person_id, reminder.reminder_id)


async def test_a_fired_one_off_may_be_asked_for_once_more_and_no_more(
    home: tuple[Household, TestClock],
) -> None:
    h, clock = home
    reminder = await _remind(h, "Stretch", START + timedelta(minutes=1))
    clock.advance(timedelta(minutes=1))
    await h.memory.reminders.fire(reminder, text="stretch", why="asked", local_day="d",
                                  next_due=None, deliver_to=None)
    again = await h.memory.reminders.snooze(h.bob.person_id, reminder.reminder_id,
                                            timedelta(hours=1))
    assert again is not None and again.next_at == clock() + timedelta(hours=1)
    assert (await h.memory.reminders.mine(_inspect(h)))[0].text == "Stretch"
    clock.advance(timedelta(hours=1))
    await h.memory.reminders.fire(again, text="stretch", why="asked", local_day="d",
                                  next_due=None, deliver_to=None)
    assert await h.memory.reminders.snooze(h.bob.person_id, reminder.reminder_id,
                                           timedelta(hours=1)) is None


async def test_a_question_about_when_waits_an_hour_for_its_answer(
    home: tuple[Household, TestClock],
) -> None:
    h, clock = home
    asking = await _remind(h, "Water the plants", None)
    assert asking.state == "asking"
    waiting = await h.memory.reminders.pending_question(h.bob.person_id, dm_chat(h.bob))
    assert waiting is not None and waiting.reminder_id == asking.reminder_id
    assert await h.memory.reminders.pending_question(h.alice.person_id, dm_chat(h.alice)) is None
    clock.advance(timedelta(minutes=61))
    assert await h.memory.reminders.pending_question(h.bob.person_id, dm_chat(h.bob)) is None


async def test_forgetting_its_words_or_removing_its_member_takes_the_reminder_with_it(
    home: tuple[Household, TestClock],
) -> None:
    h, _ = home
    await _remind(h, "Call the dentist", START + timedelta(hours=2))
    await _remind(h, "Buy flowers", START + timedelta(hours=3), person="alice")
    forgotten = await h.memory.forgetting.forget(_inspect(h), "dentist")
    assert forgotten == 0  # no belief held it; the goal and its reminder went all the same
    remaining = await h.memory.reminders.scheduled()
    assert [r.person_id for r in remaining] == [h.alice.person_id]
    await h.memory.forgetting.remove_person(h.alice.person_id)
    assert await h.memory.reminders.scheduled() == []


async def test_the_same_words_asked_in_the_group_and_in_a_dm_are_two_goals(
    home: tuple[Household, TestClock],
) -> None:
    h, _ = home
    await _remind(h, "Buy milk", START + timedelta(hours=1))
    await h.memory.reminders.add(
        h.bob.person_id, "Buy milk", scope="shared", chat_id="group:-500", telegram_chat=-500,
        zone="Europe/Berlin", due=START + timedelta(hours=2),
    )
    assert len(await h.memory.reminders.scheduled()) == 2
    assert [g.scope for g in await h.memory.goals.open(h.group())] == ["shared"]
