"""Each chat's snapshot: made on the tick from the chat's own view, read by a turn in one read,
and gone with what a forget or a member's removal takes."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory import (
    SHARED,
    AccessContext,
    Activity,
    Memory,
    Person,
    Role,
    dm_chat,
    group_chat,
    private_scope,
)
from tests.helpers import Household, TestClock, make_household, raw_bytes

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
GROUP = group_chat()

ALICE_ASKS = "Can you help me pick a ring for the Zephyrine proposal?"
ALICE_REMINDER = "collect the Zephyrine ring from the jeweller"
BOB_ASKS = "Who is taking the car on Saturday?"
SHARED_REMINDER = "put the recycling bins out"


@pytest.fixture
def clock() -> TestClock:
    return TestClock(NOW)


@pytest.fixture
async def house(tmp_path: Path, clock: TestClock) -> AsyncIterator[Household]:
    household = await make_household(tmp_path / "hearth.db", clock=clock)
    try:
        yield household
    finally:
        await household.memory.close()


async def _say(memory: Memory, person: Person, text: str, *, group: bool = False) -> int:
    scope = SHARED if group else private_scope(person.person_id)
    return await memory.transcript.append(
        chat_id=GROUP if group else dm_chat(person), speaker_id=person.person_id,
        role=Role.USER, scope=scope, text=text)


async def _remind(memory: Memory, person: Person, text: str, due: datetime, *,
                  group: bool = False) -> None:
    scope = SHARED if group else private_scope(person.person_id)
    await memory.reminders.add(person.person_id, text, scope=scope,
                               chat_id=GROUP if group else dm_chat(person), telegram_chat=None,
                               zone="UTC", due=due)


async def _seed(house: Household, clock: TestClock) -> None:
    m = house.memory
    await _say(m, house.alice, ALICE_ASKS)
    await _remind(m, house.alice, ALICE_REMINDER, clock() + timedelta(hours=5))
    await _say(m, house.bob, BOB_ASKS, group=True)
    await _remind(m, house.owner, SHARED_REMINDER, clock() + timedelta(hours=20), group=True)


def _words(snapshot: object) -> str:
    return "" if snapshot is None else repr(snapshot)


async def test_the_groups_snapshot_never_holds_a_members_private_line_or_reminder(
    house: Household, clock: TestClock
) -> None:
    m = house.memory
    await _seed(house, clock)
    assert await m.snapshots.refresh(clock()) == 2  # Alice's DM and the group

    group = await m.snapshots.get(house.group(), GROUP)
    assert group is not None
    assert [q.text for q in group.questions] == [BOB_ASKS]
    assert [r.text for r in group.reminders] == [SHARED_REMINDER]
    assert group.around == (house.bob.person_id,)
    # Red team: the private words are in no snapshot anyone but Alice may read, in any chat.
    readers = [house.group(), house.dm(house.bob), house.dm(house.owner),
               house.group(Activity.PROACTIVE)]
    for ctx in readers:
        for chat in (GROUP, dm_chat(house.alice), dm_chat(house.bob)):
            assert "Zephyrine" not in _words(await m.snapshots.get(ctx, chat))

    # Positive control: Alice's own DM snapshot holds her question and her reminder.
    mine = await m.snapshots.get(house.dm(house.alice), dm_chat(house.alice))
    assert mine is not None and mine.scope == private_scope(house.alice.person_id)
    assert [q.text for q in mine.questions] == [ALICE_ASKS]
    assert [r.text for r in mine.reminders] == [ALICE_REMINDER]


async def test_a_question_stays_open_until_another_member_takes_it_up_in_the_group(
    house: Household, clock: TestClock
) -> None:
    m = house.memory
    await _say(m, house.bob, BOB_ASKS, group=True)
    clock.advance(timedelta(minutes=3))
    await _say(m, house.bob, "hello, anybody", group=True)  # a nudge is not an answer
    await m.snapshots.refresh(clock())
    snapshot = await m.snapshots.get(house.group(), GROUP)
    assert snapshot is not None and [q.text for q in snapshot.questions] == [BOB_ASKS]

    clock.advance(timedelta(minutes=3))
    await _say(m, house.alice, "I am, I need it for the market", group=True)
    await m.snapshots.refresh(clock())
    snapshot = await m.snapshots.get(house.group(), GROUP)
    assert snapshot is not None and snapshot.questions == ()
    assert snapshot.around == (house.alice.person_id, house.bob.person_id)  # latest first


async def test_a_reminder_already_due_or_days_away_is_not_in_the_snapshot(
    house: Household, clock: TestClock
) -> None:
    m = house.memory
    await _say(m, house.alice, "morning")
    await _remind(m, house.alice, "renew the passport", clock() + timedelta(days=9))
    await _remind(m, house.alice, "water the ferns", clock() + timedelta(hours=30))
    await m.snapshots.refresh(clock())
    snapshot = await m.snapshots.get(house.dm(house.alice), dm_chat(house.alice))
    assert snapshot is not None
    assert [r.text for r in snapshot.reminders] == ["water the ferns"]


async def test_a_chat_quiet_for_days_loses_its_snapshot(
    house: Household, clock: TestClock
) -> None:
    m = house.memory
    await _seed(house, clock)
    await m.snapshots.refresh(clock())
    clock.advance(timedelta(days=3))
    await m.snapshots.refresh(clock())
    assert await m.snapshots.get(house.group(), GROUP) is None
    assert await m.snapshots.get(house.dm(house.alice), dm_chat(house.alice)) is None


async def test_a_snapshot_with_no_news_is_not_made_again_until_it_is_an_hour_old(
    house: Household, clock: TestClock
) -> None:
    m = house.memory
    await _seed(house, clock)
    assert await m.snapshots.refresh(clock()) == 2
    clock.advance(timedelta(minutes=5))
    assert await m.snapshots.refresh(clock()) == 0  # no receipt, no write: nothing changed
    await _say(m, house.alice, "thanks")
    assert await m.snapshots.refresh(clock()) == 1
    clock.advance(timedelta(hours=1, minutes=1))
    assert await m.snapshots.refresh(clock()) == 2


async def test_a_forget_removes_the_forgotten_words_from_the_snapshot(
    house: Household, clock: TestClock
) -> None:
    m = house.memory
    await _seed(house, clock)
    await m.snapshots.refresh(clock())
    alice = house.dm(house.alice, Activity.MEMBER_INSPECT)
    await m.forgetting.forget(alice, "Zephyrine")
    # The snapshot went with the words, and the next tick makes it from what is left.
    assert await m.snapshots.get(house.dm(house.alice), dm_chat(house.alice)) is None
    await m.snapshots.refresh(clock())
    again = await m.snapshots.get(house.dm(house.alice), dm_chat(house.alice))
    assert "Zephyrine" not in _words(again)
    await m.checkpoint()
    assert b"Zephyrine" not in raw_bytes(m.path)
    # The group's snapshot (nothing of Alice's) was left as it was.
    group = await m.snapshots.get(house.group(), GROUP)
    assert group is not None and [q.text for q in group.questions] == [BOB_ASKS]


async def test_a_shared_forget_also_reaches_a_members_dm_snapshot_holding_shared_words(
    house: Household, clock: TestClock
) -> None:
    m = house.memory
    await _say(m, house.owner, "hi")
    await _remind(m, house.owner, SHARED_REMINDER, clock() + timedelta(hours=20), group=True)
    await m.snapshots.refresh(clock())
    olivia = house.dm(house.owner)
    mine = await m.snapshots.get(olivia, dm_chat(house.owner))
    assert mine is not None and [r.text for r in mine.reminders] == [SHARED_REMINDER]

    owner = house.dm(house.owner, Activity.MEMBER_INSPECT)
    await m.forgetting.forget(owner, "recycling bins", shared=True)
    assert "recycling" not in _words(await m.snapshots.get(olivia, dm_chat(house.owner)))
    await m.snapshots.refresh(clock())
    assert "recycling" not in _words(await m.snapshots.get(olivia, dm_chat(house.owner)))


async def test_a_removed_members_snapshot_goes_with_them(
    house: Household, clock: TestClock
) -> None:
    m = house.memory
    await _seed(house, clock)
    await m.snapshots.refresh(clock())
    await m.forgetting.remove_person(house.alice.person_id)
    with sqlite3.connect(m.path) as conn:
        left = conn.execute("SELECT count(*) FROM snapshots WHERE scope = ?",
                            (private_scope(house.alice.person_id),)).fetchone()[0]
    assert left == 0
    await m.checkpoint()
    assert b"Zephyrine" not in raw_bytes(m.path)


async def test_a_turns_read_of_the_snapshot_is_one_receipted_read(
    house: Household, clock: TestClock
) -> None:
    m = house.memory
    await _seed(house, clock)
    await m.snapshots.refresh(clock())
    ctx = AccessContext.for_group(Activity.GROUP_CONVERSATION, "reply in the group",
                                  actor=house.bob.person_id)
    with sqlite3.connect(m.path) as conn:
        before = conn.execute("SELECT count(*) FROM receipts").fetchone()[0]
    assert await m.snapshots.get(ctx, GROUP) is not None
    with sqlite3.connect(m.path) as conn:
        after = conn.execute("SELECT count(*) FROM receipts WHERE method = 'snapshot'"
                             " AND actor = ?", (house.bob.person_id,)).fetchone()[0]
        total = conn.execute("SELECT count(*) FROM receipts").fetchone()[0]
    assert (after, total - before) == (1, 1)
