"""What was true when: beliefs as they stood on a day, and the history of one thing, through
the gate (the wall, the lens, a receipt), with supersession keeping the older belief."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory import SHARED, AccessContext, Activity, Assertion, Provenance, private_scope
from memory.history import AS_OF_METHOD, HISTORY_METHOD
from tests.helpers import Household, TestClock, make_household

JAN = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)
MAR = datetime(2026, 3, 15, 12, 0, tzinfo=UTC)
MAY = datetime(2026, 5, 4, 18, 0, tzinfo=UTC)
JUN = datetime(2026, 6, 20, 8, 0, tzinfo=UTC)

# Long enough that the test embedder finds the newer word the same thing said again.
BAKERY = ("Bob works as a baker on the early shift at the corner shop on Mill Street near the"
          " old station, five days a week, bakery")
LIBRARY = ("Bob works as a baker on the early shift at the corner shop on Mill Street near the"
           " old station, five days a week, library")


@pytest.fixture
async def house(tmp_path: Path) -> AsyncIterator[tuple[Household, TestClock]]:
    clock = TestClock(JAN)
    household = await make_household(tmp_path / "hearth.db", clock=clock)
    try:
        yield household, clock
    finally:
        await household.memory.close()


def inspecting(house: Household, who: str) -> AccessContext:
    person = {"bob": house.bob, "alice": house.alice}[who]
    return house.dm(person, Activity.MEMBER_INSPECT)


async def _job_change(house: Household, clock: TestClock) -> tuple[int, int]:
    """Bob works at the bakery from January; in May he starts at the library, and the newer
    belief supersedes the older one."""
    m = house.memory
    old = await m.beliefs.remember(house.bob.person_id, "Bob works at the bakery")
    clock.set(MAY)
    new = await m.beliefs.remember(house.bob.person_id, "Bob works at the library")
    assert old.belief_id is not None and new.belief_id is not None
    assert await m.beliefs.supersede(house.dm(house.bob), old.belief_id, new.belief_id)
    clock.set(JUN)
    return old.belief_id, new.belief_id


async def test_beliefs_as_of_a_day_are_the_ones_that_held_then_not_the_newest(
    house: tuple[Household, TestClock],
) -> None:
    home, clock = house
    await _job_change(home, clock)
    ctx = inspecting(home, "bob")
    in_march = await home.memory.history.as_of(ctx, MAR)
    assert [h.belief.proposition for h in in_march] == ["Bob works at the bakery"]
    assert in_march[0].since == JAN.isoformat() and in_march[0].until == MAY.isoformat()
    assert in_march[0].belief.status == "active"  # it was nobody's superseded belief yet
    now = await home.memory.history.as_of(ctx, JUN)
    assert [h.belief.proposition for h in now] == ["Bob works at the library"]
    assert now[0].until is None
    # Before anything was said, nothing held.
    assert await home.memory.history.as_of(ctx, JAN - timedelta(days=1)) == []


async def test_supersession_keeps_the_old_belief_and_the_history_tells_both_in_order(
    house: tuple[Household, TestClock],
) -> None:
    home, clock = house
    old, new = await _job_change(home, clock)
    story = await home.memory.history.history(inspecting(home, "bob"), "where does Bob work")
    assert [(h.belief.belief_id, h.since, h.until) for h in story] == [
        (old, JAN.isoformat(), MAY.isoformat()),
        (new, MAY.isoformat(), None),
    ]


async def test_a_newer_word_on_the_same_thing_ends_the_older_ones_validity(
    house: tuple[Household, TestClock],
) -> None:
    home, clock = house
    m = home.memory
    await m.beliefs.remember(home.bob.person_id, BAKERY)
    clock.set(MAY)
    await m.beliefs.remember(home.bob.person_id, LIBRARY)
    clock.set(JUN)
    ctx = inspecting(home, "bob")
    story = await m.history.history(ctx, "baker early shift")
    assert [(h.belief.proposition, h.until) for h in story] == [
        (BAKERY, MAY.isoformat()), (LIBRARY, None)]
    assert [h.belief.proposition for h in await m.history.as_of(ctx, MAR)] == [BAKERY]
    assert [h.belief.proposition for h in await m.history.as_of(ctx, JUN)] == [LIBRARY]


async def test_the_history_of_a_thing_shows_shared_and_own_notes_but_never_anothers_private(
    house: tuple[Household, TestClock],
) -> None:
    home, clock = house
    m = home.memory
    await m.beliefs.remember(home.owner.person_id, "The plumber is coming on Monday",
                             shared=True)
    clock.set(MAR)
    await m.beliefs.remember(home.bob.person_id, "My plumber is coming on Friday instead")
    await m.beliefs.remember(home.alice.person_id, "Alice's plumber fitted a new boiler")
    clock.set(JUN)
    bob_sees = [h.belief.proposition for h in
                await m.history.history(inspecting(home, "bob"), "plumber")]
    assert bob_sees == ["The plumber is coming on Monday",
                        "My plumber is coming on Friday instead"]
    group = AccessContext.for_group(Activity.GROUP_CONVERSATION, "a test read",
                                    actor=home.bob.person_id)
    in_group = [h.belief.proposition for h in await m.history.history(group, "plumber")]
    assert in_group == ["The plumber is coming on Monday"]
    # Asking about what only another member said in private answers as about nothing.
    assert await m.history.history(inspecting(home, "bob"), "boiler") == []


async def test_asking_the_history_of_something_never_told_finds_nothing(
    house: tuple[Household, TestClock],
) -> None:
    home, _ = house
    await home.memory.beliefs.remember(home.bob.person_id, "Bob works at the bakery")
    assert await home.memory.history.history(inspecting(home, "bob"), "holiday plans") == []
    assert await home.memory.history.history(inspecting(home, "bob"), "  the of  ") == []


async def test_both_reads_are_receipted_with_what_they_returned(
    house: tuple[Household, TestClock],
) -> None:
    home, clock = house
    old, new = await _job_change(home, clock)
    ctx = inspecting(home, "bob")
    await home.memory.history.as_of(ctx, MAR)
    await home.memory.history.history(ctx, "bakery")
    mine = await home.memory.ledger.about(ctx)
    by_method = {r.method: list(r.returned_ids) for r in mine}
    assert by_method[AS_OF_METHOD] == [old]
    assert by_method[HISTORY_METHOD] == [old, new]


async def test_the_dream_keeps_a_contradicted_belief_valid_until_the_newer_one_began(
    house: tuple[Household, TestClock],
) -> None:
    home, clock = house
    m = home.memory
    bob = private_scope(home.bob.person_id)
    old, new = await m.beliefs.assert_all([
        Assertion(proposition="Bob lives in Leeds", scope=bob, provenance=Provenance.TOLD,
                  source="s1", valid_from=JAN.isoformat()),
        Assertion(proposition="Bob lives in York", scope=bob, provenance=Provenance.TOLD,
                  source="s2", valid_from=MAY.isoformat()),
    ])
    assert old.belief_id is not None and new.belief_id is not None
    ctx = inspecting(home, "bob")
    assert await m.beliefs.link_contradiction(ctx, old.belief_id, new.belief_id)
    clock.set(JUN)
    _, counts = await m.dream.run()
    assert counts["reconciled"] == 1
    story = await m.history.history(ctx, "where does Bob live")
    assert [(h.belief.proposition, h.until) for h in story] == [
        ("Bob lives in Leeds", MAY.isoformat()), ("Bob lives in York", None)]
    assert [h.belief.proposition for h in await m.history.as_of(ctx, MAR)] == [
        "Bob lives in Leeds"]


async def test_a_shared_history_is_the_same_for_every_member(
    house: tuple[Household, TestClock],
) -> None:
    home, clock = house
    m = home.memory
    await m.beliefs.remember(home.owner.person_id, "The holiday is in Spain", shared=True)
    clock.set(MAY)
    await m.beliefs.remember(home.owner.person_id, "The holiday is in Italy", shared=True)
    clock.set(JUN)
    seen = {who: [h.belief.scope for h in await m.history.history(inspecting(home, who),
                                                                   "holiday")]
            for who in ("bob", "alice")}
    assert seen == {"bob": [SHARED, SHARED], "alice": [SHARED, SHARED]}


async def test_a_shared_health_note_is_in_a_members_own_history_but_not_the_groups(
    house: tuple[Household, TestClock],
) -> None:
    home, clock = house
    m = home.memory
    await m.beliefs.remember(home.owner.person_id,
                             "Grandad's dentist appointment for his root canal is on Monday",
                             shared=True)
    clock.set(JUN)
    in_dm = await m.history.history(inspecting(home, "bob"), "dentist appointment")
    assert [h.belief.sensitivity for h in in_dm] == ["health"]
    group = AccessContext.for_group(Activity.GROUP_CONVERSATION, "a test read",
                                    actor=home.bob.person_id)
    assert await m.history.history(group, "dentist appointment") == []
    assert await m.history.as_of(group, JUN) == []
    assert [h.belief.sensitivity for h in await m.history.as_of(inspecting(home, "bob"), JUN)
            ] == ["health"]
