"""The time a question asks about: what was said then comes first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory import AccessContext, Activity, Memory, Quoted, Role, dm_chat, private_scope
from memory.periods import Period, asked_period, asks_before, asks_for_a_time, names_a_time
from tests.helpers import HashEmbedder

NOW = datetime(2026, 7, 1, 10, 0, tzinfo=UTC)


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


@pytest.mark.parametrize(("question", "start", "end"), [
    ("What did Maria share on 16 June, 2023?", day(2023, 6, 15), day(2023, 6, 18)),
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
            found = await memory.recall.recollect(ctx, question)
            return next(f.turn.text for f in found if isinstance(f, Quoted))

        assert await first("What did we do at the barbecue?") == said[day(2026, 6, 20)]
        assert await first("What did we do at the barbecue on 2 May?") == said[day(2026, 5, 2)]
        assert await first("What did we do at the barbecue in May?") == said[day(2026, 5, 2)]
    finally:
        await memory.close()


@pytest.mark.parametrize(("question", "before"), [
    ("When did I first book the Lisbon trip?", True),
    ("When does my old passport run out?", True),
    ("Where did I use to work?", True),
    ("Which school did Ellie originally pick?", True),
    ("Wann habe ich zuerst den Flug gebucht?", True),
    ("When is my first day at the new job?", False),  # "first" as an ordinal, not "at first"
    ("How old is Ellie now?", False),
    ("What does Tom use to clean the oven?", False),
    ("When does my passport run out?", False),
    ("Where do I work now?", False),
])
def test_a_question_asking_what_held_before_a_change_is_told_apart(question: str,
                                                                   before: bool) -> None:
    assert asks_before(question) == before


@pytest.mark.parametrize(("question", "asks"), [
    ("When is mum's operation?", True),
    ("When's the plumber coming?", True),
    ("What night is Ellie's netball practice?", True),
    ("Which evening should I put the bins out?", True),
    ("What time does the party start?", True),
    ("Wann ist das Konzert?", True),
    ("Hey hearth, when is the party?", True),
    ("I was wondering when the party is.", False),  # "when" not asking, mid-sentence
    ("When did I pass my theory test?", False),  # when it was said may answer
    ("Which date did my dentist appointment end up on?", False),
    ("What did Ellie score in the final?", False),
])
def test_a_question_asking_when_something_is_or_will_be_is_told_apart(question: str,
                                                                     asks: bool) -> None:
    assert asks_for_a_time(question) == asks


@pytest.mark.parametrize(("text", "names"), [
    ("Netball practice moved to Thursday nights.", True),
    ("Bins go out on Tuesdays now.", True),
    ("My exam is on 28 April.", True),
    ("Dinner at 7pm, don't be late.", True),
    ("We're off to Lisbon next week!", True),
    ("Das Konzert ist am Freitag.", True),
    ("Well done Ellie! Three goals in the netball final!", False),
    ("Don't tell anyone yet, mum will make a big thing of it.", False),
])
def test_words_naming_a_time_are_found_in_any_of_the_languages(text: str, names: bool) -> None:
    assert names_a_time(text) == names
