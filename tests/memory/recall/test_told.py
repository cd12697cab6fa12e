"""What she tells, on the default embedder: a plain answer is told, an unrelated question gets
nothing, a question about someone else is not told the asker's own line, and nothing another
member keeps private changes a verdict a reader gets."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory import (
    AccessContext,
    Activity,
    E5Embedder,
    Memory,
    Person,
    Quoted,
    Recalled,
    Role,
    Verdict,
    dm_chat,
    group_chat,
    private_scope,
)
from tests.helpers import TestClock

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@dataclass
class Home:
    memory: Memory
    clock: TestClock
    bob: Person
    anna: Person

    async def say(self, person: Person, text: str, *, group: bool = False,
                  later: bool = True) -> int:
        if later:
            self.clock.advance(timedelta(hours=5))
        return await self.memory.transcript.append(
            chat_id=group_chat() if group else dm_chat(person), speaker_id=person.person_id,
            role=Role.USER, scope="shared" if group else private_scope(person.person_id),
            text=text)

    def dm(self, person: Person) -> AccessContext:
        return AccessContext.for_member(person.person_id, Activity.DM_CONVERSATION, "a test")


@pytest.fixture
async def home(tmp_path: Path, e5: E5Embedder) -> AsyncIterator[Home]:
    clock = TestClock(T0)
    memory = await Memory.open(tmp_path / "h.db", embedder=e5, create=True, clock=clock)
    try:
        anna = await memory.people.add("Anna", telegram_id=3, owner=True)
        bob = await memory.people.add("Bob", telegram_id=2)
        built = Home(memory, clock, bob, anna)
        for text in ("Morning!", "My dentist appointment is on Thursday at 3pm",
                     "haha yes", "I'm allergic to peanuts", "My sister Ruth lives in Leeds",
                     "the car needs new tyres before the trip"):
            await built.say(bob, text)
        await built.say(anna, "The bins go out on Tuesday nights", group=True)
        clock.advance(timedelta(days=2))
        yield built
    finally:
        await memory.close()


def texts(found: list[Recalled | Quoted], verdict: Verdict) -> list[str]:
    return [f.turn.text if isinstance(f, Quoted) else f.belief.proposition
            for f in found if f.verdict is verdict]


@pytest.mark.parametrize(("question", "answer"), [
    ("When is my dentist appointment?", "My dentist appointment is on Thursday at 3pm"),
    ("What am I allergic to?", "I'm allergic to peanuts"),
    ("Where does my sister live?", "My sister Ruth lives in Leeds"),
])
async def test_a_plain_answer_is_told_with_a_why(home: Home, question: str, answer: str) -> None:
    found = await home.memory.recall.recollect(home.dm(home.bob), question)
    assert texts(found, Verdict.ANSWERS)[:1] == [answer]
    assert found[0].why.startswith("answers (")


@pytest.mark.parametrize("question", [
    "rugby final highlights", "quantum chromodynamics lecture notes",
    "What is the capital of Peru?", "zzz", "", "the of and is"])
async def test_an_unrelated_question_gets_nothing_at_all(home: Home, question: str) -> None:
    assert await home.memory.recall.recollect(home.dm(home.bob), question) == []
    assert await home.memory.recall.search(home.dm(home.bob), question) == []


async def test_a_question_about_another_member_is_not_told_the_askers_own_line(
    home: Home,
) -> None:
    found = await home.memory.recall.recollect(home.dm(home.bob),
                                               "When is Anna's dentist appointment?")
    assert "My dentist appointment is on Thursday at 3pm" not in texts(found, Verdict.ANSWERS)


async def test_nothing_another_member_keeps_private_changes_a_verdict(home: Home) -> None:
    questions = ("When is my dentist appointment?", "When do the bins go out?",
                 "What needs doing to the car?")

    async def verdicts() -> list[list[tuple[str, str, float, str]]]:
        out = []
        for question in questions:
            found = await home.memory.recall.explain(home.dm(home.bob), question)
            out.append([(e.item.verdict.value, e.item.why, e.item.chance,
                         e.item.turn.text if isinstance(e.item, Quoted) else "belief")
                        for e in found])
        return out

    before = await verdicts()
    # Anna says much that matches, in her own DM, at the same moment (so no age moves).
    for i in range(30):
        await home.say(home.anna, f"My dentist appointment moved again, now day {i} at 3pm",
                       later=False)
        await home.memory.beliefs.remember(home.anna.person_id,
                                           f"Anna's car needs new tyres, quote {i}")
    assert await verdicts() == before
