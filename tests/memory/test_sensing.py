"""Sensitivity by meaning: what the word rules miss, the fitted reader of a line's embedding
classes as the more private thing, and the lens then keeps it where it belongs."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from memory import (
    SHARED,
    Activity,
    Assertion,
    E5Embedder,
    Provenance,
    Quoted,
    Recalled,
    Role,
    Sensitivity,
    private_scope,
)
from memory.classifier import classify
from memory.sensing import more_private, senser_for
from tests.helpers import Household, make_household

# Each of these passes the word rules as ordinary: no listed word says what it is.
MISSED_BY_WORDS = [
    ("Bob was treated for chlamydia at the walk-in on Friday", Sensitivity.HEALTH),
    ("Grandpa takes lithium every morning since his last episode", Sensitivity.HEALTH),
    ("Papi prend du lithium tous les matins depuis son dernier épisode", Sensitivity.HEALTH),
]


# Household lines another writer made, never fitted on; Italian, Dutch and Portuguese are
# languages the reader of meaning never saw in training.
PROBES = Path(__file__).resolve().parents[2] / "bench" / "sensitivity" / "held_out"


def _text(recalled: Recalled | Quoted) -> str:
    return (recalled.turn.text if isinstance(recalled, Quoted)
            else recalled.belief.proposition)


@pytest.fixture
def home(e5_home: Household) -> Household:
    return e5_home


def test_the_examples_are_ordinary_to_the_word_rules() -> None:
    assert all(classify(text) is Sensitivity.ORDINARY for text, _ in MISSED_BY_WORDS)


@pytest.mark.parametrize(("text", "expected"), MISSED_BY_WORDS)
async def test_a_line_the_word_rules_miss_is_classed_by_its_meaning_once_stored(
    home: Household, text: str, expected: Sensitivity,
) -> None:
    m = home.memory
    await m.transcript.append(chat_id="group:1", speaker_id=home.bob.person_id, role=Role.USER,
                              scope=SHARED, text=text)
    (line,) = [t for t in await m.transcript.lines(home.dm(home.bob, Activity.MEMBER_INSPECT))
               if t.text == text]
    assert line.sensitivity is expected


async def test_a_health_line_said_in_the_group_is_not_recalled_for_the_group(
    home: Household,
) -> None:
    m = home.memory
    text = "Bob was treated for chlamydia at the walk-in on Friday"
    await m.transcript.append(chat_id="group:1", speaker_id=home.bob.person_id, role=Role.USER,
                              scope=SHARED, text=text)
    await m.transcript.append(chat_id="group:1", speaker_id=home.bob.person_id, role=Role.USER,
                              scope=SHARED, text="Bob was at the walk-in bakery on Friday")
    question = "What happened to Bob at the walk-in on Friday?"
    in_group = await m.recall.recollect(home.group(), question, unrelated=True)
    assert all("chlamydia" not in _text(r) for r in in_group)
    assert any("bakery" in _text(r) for r in in_group)  # the group still recalls
    # Bob, in his own chat, still has his own words (the lens allows health there).
    in_dm = await m.recall.recollect(home.dm(home.bob), question, unrelated=True)
    assert any("chlamydia" in _text(r) for r in in_dm)


async def test_a_belief_classed_by_meaning_says_so_and_a_members_own_class_stands(
    home: Household,
) -> None:
    m = home.memory
    text = "Grandpa takes lithium every morning since his last episode"
    await m.beliefs.remember(home.bob.person_id, text)
    ctx = home.dm(home.bob, Activity.MEMBER_INSPECT)
    (belief,) = await m.beliefs.inspect(ctx)
    assert belief.sensitivity is Sensitivity.HEALTH
    assert belief.sensitivity_by is not None and belief.sensitivity_by.startswith("meaning ")

    assert await m.beliefs.set_sensitivity(ctx, belief.belief_id, Sensitivity.ORDINARY)
    await m.vectors.store([(belief.belief_id, belief.scope, text)])  # embedded again
    (belief,) = await m.beliefs.inspect(ctx)
    assert belief.sensitivity is Sensitivity.ORDINARY
    assert belief.sensitivity_by == "a member"


async def test_without_fitted_weights_for_the_embedder_the_word_rules_alone_decide(
    tmp_path: Path,
) -> None:
    household = await make_household(tmp_path / "hearth.db")  # a hashing embedder
    try:
        assert senser_for(household.memory.vectors.embedder.name) is None  # type: ignore[union-attr]
        text = MISSED_BY_WORDS[0][0]
        await household.memory.transcript.append(
            chat_id="dm:1002", speaker_id=household.bob.person_id, role=Role.USER,
            scope=private_scope(household.bob.person_id), text=text)
        (line,) = await household.memory.transcript.lines(
            household.dm(household.bob, Activity.MEMBER_INSPECT))
        assert line.sensitivity is Sensitivity.ORDINARY
    finally:
        await household.memory.close()


async def test_a_summary_made_from_a_line_classed_by_meaning_is_kept_from_work_without_a_grant(
    home: Household,
) -> None:
    m = home.memory
    scope = private_scope(home.bob.person_id)
    said = ["We talked about the weekend trip to the lake",
            "Grandpa takes lithium every morning since his last episode"]
    for chat, text in (("dm:1002", said[0]), ("dm:1002", said[1]), ("dm:other", said[0])):
        await m.transcript.append(chat_id=chat, speaker_id=home.bob.person_id, role=Role.USER,
                                  scope=scope, text=text)
    inspect = home.dm(home.bob, Activity.MEMBER_INSPECT)
    for chat in ("dm:1002", "dm:other"):
        lines = await m.transcript.lines(inspect, chat_id=chat)
        summary = "Bob spoke of " + " and ".join(t.text.lower() for t in lines) + "."
        assert classify(summary) is Sensitivity.ORDINARY  # no listed word says it
        await m.summaries.write(scope, chat, summary, lines[-1].turn_id,
                                [t.sensitivity for t in lines])

    proactive = home.dm(home.bob, Activity.PROACTIVE)
    assert await m.summaries.get(proactive, "dm:1002") is None
    ordinary = await m.summaries.get(proactive, "dm:other")  # the lens holds back only health
    assert ordinary is not None and ordinary.sensitivity is Sensitivity.ORDINARY
    own = await m.summaries.get(home.dm(home.bob), "dm:1002")  # Bob, talking with her, has it
    assert own is not None and own.sensitivity is Sensitivity.HEALTH


async def test_a_reminder_the_word_rules_miss_is_classed_by_its_meaning_and_so_is_its_line(
    home: Household,
) -> None:
    m = home.memory
    text = "remind Grandpa to take his lithium, since his last episode he must not skip it"
    assert classify(text) is Sensitivity.ORDINARY
    scope = private_scope(home.bob.person_id)
    reminder, _ = await m.reminders.add(
        home.bob.person_id, text, scope=scope, chat_id="dm:1002", telegram_chat=1002,
        zone="Europe/London", due=home.clock() + timedelta(hours=1))
    await m.goals.add(home.bob.person_id, "buy paint for the shed", scope=scope,
                      provenance="requested")

    own = {g.text: g.sensitivity for g in await m.goals.open(home.dm(home.bob))}
    assert own == {text: Sensitivity.HEALTH, "buy paint for the shed": Sensitivity.ORDINARY}
    proactive = await m.goals.open(home.dm(home.bob, Activity.PROACTIVE))
    assert [g.text for g in proactive] == ["buy paint for the shed"]

    said = f"Reminder: {text}"
    assert await m.reminders.fire(reminder, text=said, why="asked", local_day="today",
                                  next_due=None, deliver_to=None)
    (line,) = [t for t in await m.transcript.lines(home.dm(home.bob, Activity.MEMBER_INSPECT))
               if t.text == said]
    assert line.sensitivity is Sensitivity.HEALTH


async def test_a_models_class_raises_a_belief_when_it_is_heard_again_but_not_over_a_members(
    tmp_path: Path,
) -> None:
    home = await make_household(tmp_path / "h.db")  # no fitted reader: words and the model
    m = home.memory
    try:
        scope = private_scope(home.bob.person_id)
        text = "Bob sees Dr Amari on Fridays"
        ctx = home.dm(home.bob, Activity.MEMBER_INSPECT)

        async def heard(source: str, model_class: Sensitivity | None) -> tuple[object, ...]:
            await m.beliefs.assert_all([Assertion(
                proposition=text, scope=scope, provenance=Provenance.EXTRACTED, source=source,
                model_class=model_class)])
            (belief,) = await m.beliefs.inspect(ctx)
            return belief.sensitivity, belief.sensitivity_by

        assert await heard("c1", None) == (Sensitivity.ORDINARY, None)
        assert await heard("c2", Sensitivity.HEALTH) == (Sensitivity.HEALTH, "the model")
        assert await heard("c3", Sensitivity.FINANCE) == (Sensitivity.HEALTH, "the model")
        (belief,) = await m.beliefs.inspect(ctx)
        assert await m.beliefs.set_sensitivity(ctx, belief.belief_id, Sensitivity.ORDINARY)
        assert await heard("c4", Sensitivity.HEALTH) == (Sensitivity.ORDINARY, "a member")
    finally:
        await m.close()


@pytest.mark.parametrize("language", ["de", "en", "es", "fr", "it", "nl", "pt"])
def test_lines_never_fitted_on_are_mostly_kept_private_and_most_ordinary_talk_stays_ordinary(
    e5: E5Embedder, language: str,
) -> None:
    rows = json.loads((PROBES / f"{language}.json").read_text(encoding="utf-8"))
    senser = senser_for(e5.name)
    assert senser is not None
    sensed = senser.read(e5.embed([r["text"] for r in rows]))
    # As memory applies the two readings: the more private class of the words and the meaning.
    got = [more_private(classify(r["text"]),
                        Sensitivity.ORDINARY if s is None else s.sensitivity)
           for r, s in zip(rows, sensed, strict=True)]
    for cls in (Sensitivity.HEALTH, Sensitivity.FINANCE, Sensitivity.CREDENTIALS):
        classed = [g for g, r in zip(got, rows, strict=True) if r["class"] == cls.value]
        kept = sum(g is not Sensitivity.ORDINARY for g in classed) / len(classed)
        assert kept >= 0.75, f"{language}: only {kept:.0%} of {cls.value} lines kept private"
    ordinary = [g for g, r in zip(got, rows, strict=True) if r["class"] == "ordinary"]
    left = sum(g is Sensitivity.ORDINARY for g in ordinary) / len(ordinary)
    assert left >= 0.65, f"{language}: only {left:.0%} of ordinary lines left ordinary"
