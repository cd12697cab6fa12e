"""A message that names a past time gets the memory that held then, first, with when it stopped
holding; a message about now gets the newest, and nothing that has stopped holding."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory import AccessContext, Activity, E5Embedder, Memory, Person
from soul.assembler import Intent, assemble
from soul.files import Soul, load_soul
from soul.turn import chat_id_for
from tests.helpers import TestClock

JAN = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)
MAY = datetime(2026, 5, 4, 18, 0, tzinfo=UTC)
JUN = datetime(2026, 6, 20, 8, 0, tzinfo=UTC)

# The newer word is the same thing said again (marked as replacing the older when stored).
BAKERY = ("Bob works as a baker on the early shift at the corner shop on Mill Street near the"
          " old station, five days a week, bakery")
LIBRARY = ("Bob works as a baker on the early shift at the corner shop on Mill Street near the"
           " old station, five days a week, library")


@pytest.fixture(scope="module")
def soul() -> Soul:
    return load_soul()


@pytest.fixture
async def house(tmp_path: Path,
                e5: E5Embedder) -> AsyncIterator[tuple[Memory, Person, TestClock]]:
    clock = TestClock(JAN)
    memory = await Memory.open(tmp_path / "h.db", embedder=e5, create=True, clock=clock)
    try:
        await memory.people.add("Olivia", telegram_id=1, owner=True)
        bob = await memory.people.add("Bob", telegram_id=2)
        yield memory, bob, clock
    finally:
        await memory.close()


def _memories(text: str) -> list[str]:
    """The memories told, in order: under "What you remember", then "Possibly related"."""
    out = []
    for line in text.split("# What you remember", 1)[1].splitlines()[1:]:
        if line.startswith("# ") and not line.startswith("# Possibly related"):
            break
        if line.startswith("- "):
            out.append(line)
    return out


async def _ask(memory: Memory, soul: Soul, bob: Person, text: str) -> list[str]:
    intent = Intent(speaker=bob, chat_id=chat_id_for(bob, group=False), group=False,
                    text=text, now=JUN)
    return _memories((await assemble(memory, soul, intent)).text)


async def test_a_past_job_is_told_first_and_with_when_it_ended_when_the_message_names_then(
    house: tuple[Memory, Person, TestClock], soul: Soul,
) -> None:
    memory, bob, clock = house
    await memory.beliefs.remember(bob.person_id, BAKERY)
    clock.set(MAY)
    await memory.beliefs.remember(bob.person_id, LIBRARY)
    clock.set(JUN)
    then = await _ask(memory, soul, bob, "Where did I work as a baker in March?")
    assert then and BAKERY in then[0] and "true until 4 May" in then[0]
    # Asked about now, the newer word comes first and nothing says it has ended.
    now = await _ask(memory, soul, bob, "Where do I work as a baker?")
    assert now and LIBRARY in now[0] and not any("true until" in line for line in now)


async def test_a_superseded_belief_is_told_only_when_the_message_names_a_time_it_held(
    house: tuple[Memory, Person, TestClock], soul: Soul,
) -> None:
    memory, bob, clock = house
    old = await memory.beliefs.remember(bob.person_id, "Bob works at the bakery")
    clock.set(MAY)
    new = await memory.beliefs.remember(bob.person_id, "Bob works at the library")
    assert old.belief_id is not None and new.belief_id is not None
    ctx = AccessContext.for_member(bob.person_id, Activity.DM_CONVERSATION, "a test")
    assert await memory.beliefs.supersede(ctx, old.belief_id, new.belief_id)
    clock.set(JUN)
    then = await _ask(memory, soul, bob, "Où travaillait Bob en mars ?")
    assert any("Bob works at the bakery" in line and "true until 4 May" in line
               for line in then)
    now = await _ask(memory, soul, bob, "Where does Bob work?")
    assert not any("bakery" in line for line in now)
