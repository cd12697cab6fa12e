"""The time a question asks about, in the four languages' date shapes: what was said then
comes first among recall's candidates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory import AccessContext, Activity, Memory, Quoted, Role, dm_chat, private_scope
from memory.recall.periods import Period, asked_period
from tests.helpers import HashEmbedder

NOW = datetime(2026, 7, 1, 10, 0, tzinfo=UTC)


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


@pytest.mark.parametrize(("question", "start", "end"), [
    ("What did Anna share on 16 June, 2023?", day(2023, 6, 15), day(2023, 6, 18)),
    ("What did she say June 16th, 2023?", day(2023, 6, 15), day(2023, 6, 18)),
    ("What did Tom say in March?", day(2026, 3, 1), day(2026, 4, 1)),
    ("What did Ellie do in December?", day(2025, 12, 1), day(2026, 1, 1)),  # the last one
    ("Where did we go in March 2023?", day(2023, 3, 1), day(2023, 4, 1)),
    ("Was war am 3. März?", day(2026, 3, 2), day(2026, 3, 5)),
    ("Qu'as-tu dit le 3 mars 2023 ?", day(2023, 3, 2), day(2023, 3, 5)),
    ("¿Qué pasó el 3 de marzo de 2023?", day(2023, 3, 2), day(2023, 3, 5)),
    ("What did we buy in 2025?", day(2025, 1, 1), day(2026, 1, 1)),
    ("What did I say yesterday?", day(2026, 6, 30), day(2026, 7, 1)),
    ("What did we decide last week?", day(2026, 6, 22), day(2026, 6, 29)),
    ("What happened last month?", day(2026, 6, 1), day(2026, 7, 1)),
])
def test_a_question_naming_a_time_asks_about_that_period(question: str, start: datetime,
                                                         end: datetime) -> None:
    period = asked_period(question, NOW)
    assert period == Period(start, end)
    assert period.phrase and period.phrase in question.casefold()  # left out of coverage


@pytest.mark.parametrize("question", [
    "May I ask when the bins go out?",
    "Do we march on Sunday?",
    "What happened on 31 June?",
    "What will we do in 2031?",
    "Where is the spare key?",
    "Was ist hier passiert?",  # German "here", not French "yesterday"
])
def test_a_question_naming_no_time_or_only_maybe_one_asks_about_none(question: str) -> None:
    assert asked_period(question, NOW) is None


async def test_what_was_said_on_the_day_a_question_names_comes_first(tmp_path: Path) -> None:
    now = [NOW - timedelta(days=60)]
    memory = await Memory.open(tmp_path / "hearth.db", embedder=HashEmbedder(), create=True,
                               clock=lambda: now[0])
    try:
        bob = await memory.people.add("Bob", telegram_id=1002)
        said = {}
        for when, text in ((day(2026, 5, 2), "We had a barbecue with the neighbours"),
                           (day(2026, 6, 20), "We had a barbecue in the park")):
            now[0] = when + timedelta(hours=18)
            said[when] = text
            await memory.transcript.append(chat_id=dm_chat(bob), speaker_id=bob.person_id,
                                           role=Role.USER, scope=private_scope(bob.person_id),
                                           text=text)
        now[0] = NOW
        ctx = AccessContext.for_member(bob.person_id, Activity.DM_CONVERSATION, "test")

        async def first(question: str) -> str:
            found = await memory.recall.explain(ctx, question)
            return next(e.item.turn.text for e in found if isinstance(e.item, Quoted))

        assert await first("What did we do at the barbecue?") == said[day(2026, 6, 20)]
        assert await first("What did we do at the barbecue on 2 May?") == said[day(2026, 5, 2)]
        assert await first("What did we do at the barbecue in May?") == said[day(2026, 5, 2)]
    finally:
        await memory.close()
