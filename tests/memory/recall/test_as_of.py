"""A question that names a past time is answered as of then: of a thing's versions, the one
that held in that time is told first, not the newest; without a time, the newest is."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory import Quoted, Recalled
from tests.helpers import Household, TestClock, make_household

JAN = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)
MAY = datetime(2026, 5, 4, 18, 0, tzinfo=UTC)
JUN = datetime(2026, 6, 20, 8, 0, tzinfo=UTC)

# Long enough that the test embedder finds the newer word the same thing said again (a mark).
BAECKEREI = ("Bob arbeitet als Verkäufer in der Bäckerei an der Mühlenstraße beim alten"
             " Bahnhof, fünf Tage die Woche, Frühschicht")
BIBLIOTHEK = ("Bob arbeitet als Verkäufer in der Bibliothek an der Mühlenstraße beim alten"
              " Bahnhof, fünf Tage die Woche, Frühschicht")


@pytest.fixture
async def house(tmp_path: Path) -> AsyncIterator[tuple[Household, TestClock]]:
    clock = TestClock(JAN)
    household = await make_household(tmp_path / "hearth.db", clock=clock)
    try:
        yield household, clock
    finally:
        await household.memory.close()


def told(found: list[Recalled | Quoted]) -> list[str]:
    return [m.belief.proposition for m in found if isinstance(m, Recalled)]


async def test_where_someone_worked_in_a_past_month_is_the_job_then_not_the_newest(
    house: tuple[Household, TestClock],
) -> None:
    home, clock = house
    m = home.memory
    old = await m.beliefs.remember(home.bob.person_id, "Bob works at the bakery")
    clock.set(MAY)
    new = await m.beliefs.remember(home.bob.person_id, "Bob works at the library")
    assert old.belief_id is not None and new.belief_id is not None
    assert await m.beliefs.supersede(home.dm(home.bob), old.belief_id, new.belief_id)
    clock.set(JUN)
    ctx = home.dm(home.bob)
    then = told(await m.recall.recollect(ctx, "Where did Bob work in March?"))
    assert then[:1] == ["Bob works at the bakery"]
    # Asked about now, the superseded job is not told at all.
    now = told(await m.recall.recollect(ctx, "Where does Bob work?"))
    assert now[:1] == ["Bob works at the library"] and "Bob works at the bakery" not in now


async def test_a_newer_word_said_after_the_month_asked_about_does_not_replace_the_older_then(
    house: tuple[Household, TestClock],
) -> None:
    home, clock = house
    m = home.memory
    await m.beliefs.remember(home.bob.person_id, BAECKEREI)
    clock.set(MAY)
    await m.beliefs.remember(home.bob.person_id, BIBLIOTHEK)
    clock.set(JUN)
    ctx = home.dm(home.bob)
    explained = {e.item.belief.proposition: e.signals  # type: ignore[union-attr]
                 for e in await m.recall.explain(ctx, "Wo arbeitete Bob im März?")}
    assert explained[BAECKEREI]["replaced"] == 0.0 and explained[BAECKEREI]["said_then"] == 1.0
    assert explained[BIBLIOTHEK]["replaces"] == 0.0
    found = await m.recall.recollect(ctx, "Wo arbeitete Bob im März?", unrelated=True)
    then = told(found)
    assert then.index(BAECKEREI) < then.index(BIBLIOTHEK)
    # What is told says when the older word stopped holding: when the newer one began.
    ends = {r.belief.proposition: r.belief.valid_to for r in found if isinstance(r, Recalled)}
    assert ends == {BAECKEREI: MAY.isoformat(), BIBLIOTHEK: None}
    # Without a time, the newer word is the answer and comes first.
    now = told(await m.recall.recollect(ctx, "Wo arbeitet Bob?", unrelated=True))
    assert now.index(BIBLIOTHEK) < now.index(BAECKEREI)


async def test_a_time_before_either_version_began_leaves_the_newest_first(
    house: tuple[Household, TestClock],
) -> None:
    home, clock = house
    m = home.memory
    await m.beliefs.remember(home.bob.person_id, BAECKEREI)
    clock.set(MAY)
    await m.beliefs.remember(home.bob.person_id, BIBLIOTHEK)
    clock.set(JUN)
    ctx = home.dm(home.bob)
    explained = {e.item.belief.proposition: e.signals  # type: ignore[union-attr]
                 for e in await m.recall.explain(ctx, "Wo arbeitete Bob im Dezember?")}
    assert explained[BAECKEREI]["replaced"] == 1.0
    found = told(await m.recall.recollect(ctx, "Wo arbeitete Bob im Dezember?",
                                          unrelated=True))
    assert found.index(BIBLIOTHEK) < found.index(BAECKEREI)


async def test_a_past_version_in_another_members_private_notes_is_never_told(
    house: tuple[Household, TestClock],
) -> None:
    home, clock = house
    m = home.memory
    old = await m.beliefs.remember(home.bob.person_id, "Bob works at the bakery")
    clock.set(MAY)
    new = await m.beliefs.remember(home.bob.person_id, "Bob works at the library")
    assert old.belief_id is not None and new.belief_id is not None
    assert await m.beliefs.supersede(home.dm(home.bob), old.belief_id, new.belief_id)
    clock.set(JUN)
    for ctx in (home.dm(home.alice), home.group()):
        assert told(await m.recall.recollect(ctx, "Where did Bob work in March?",
                                             unrelated=True)) == []

