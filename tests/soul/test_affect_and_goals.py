"""Her mood decays toward the persona's baseline on the injected clock; goals come from words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory import Memory
from soul.affect import Affect, apply_event, appraise, decay
from soul.assembler import Intent, current_affect
from soul.files import load_soul
from soul.goals import promised_goals, requested_goals
from soul.turn import respond
from tests.helpers import HashEmbedder

BASE = Affect(0.35, 0.3, {"care": 0.8})


def test_affect_halves_its_distance_to_baseline_every_half_life() -> None:
    moved = Affect(-0.65, 0.9, {"care": 0.2})
    after = decay(moved, BASE, half_life_hours=6, elapsed_hours=6)
    assert after.valence == pytest.approx(-0.15)
    assert after.arousal == pytest.approx(0.6)
    assert after.drives["care"] == pytest.approx(0.5)
    much_later = decay(moved, BASE, half_life_hours=6, elapsed_hours=240)
    assert much_later.valence == pytest.approx(BASE.valence, abs=1e-6)


def test_no_time_passing_changes_nothing() -> None:
    assert decay(BASE, Affect(0, 0.5, {}), 6, 0) == BASE


def test_one_event_moves_affect_by_at_most_the_bound() -> None:
    after = apply_event(BASE, d_valence=-5.0, d_arousal=5.0, max_delta=0.25)
    assert after.valence == pytest.approx(0.10)
    assert after.arousal == pytest.approx(0.55)
    floor = Affect(-0.95, 0.0, {})
    assert apply_event(floor, -1, -1, 0.25).valence == -1.0


def test_appraisal_reads_warmth_and_distress_deterministically() -> None:
    assert appraise("thanks, that was lovely!")[0] > 0
    assert appraise("I'm so tired and worried")[0] < 0
    assert appraise("the bins go out on Tuesday") == (0.0, 0.0)
    assert appraise("great!") == appraise("great!")


async def test_her_mood_toward_a_member_decays_on_the_injected_clock(tmp_path: Path) -> None:
    soul = load_soul()
    now = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

    class Clock:
        value = now

        def __call__(self) -> datetime:
            return self.value

    memory = await Memory.open(tmp_path / "h.db", embedder=HashEmbedder(), create=True,
                               clock=Clock())
    try:
        bob = await memory.people.add("Bob")

        class Quiet:
            async def reply(self, messages: list[dict[str, str]], *, max_tokens: int = 1,
                            temperature: float = 0.0) -> str:
                return "I'm sorry to hear that."

        await respond(memory, soul, Quiet(), speaker=bob, chat_id="dm:b", group=False,
                      text="I'm sad, tired and worried, awful day", now=now)
        key = f"person:{bob.person_id}"
        low = await current_affect(memory, soul, key, now)
        assert low.valence < soul.temperament.baseline.valence
        half = soul.temperament.half_life_hours
        later = await current_affect(memory, soul, key, now + timedelta(hours=half))
        gap_now = soul.temperament.baseline.valence - low.valence
        gap_later = soul.temperament.baseline.valence - later.valence
        assert gap_later == pytest.approx(gap_now / 2, rel=1e-6)
        intent = Intent(speaker=bob, chat_id="group:x", group=True, text="hi", now=now)
        group = await current_affect(memory, soul, f"group:{intent.chat_id}", now)
        assert group.valence == soul.temperament.baseline.valence  # a DM mood stays in the DM
    finally:
        await memory.close()


@pytest.mark.parametrize(
    ("text", "goals"),
    [
        # The time words become the reminder's due time (soul.when), not part of the goal.
        ("Remind me to call the plumber tomorrow.", ["Call the plumber"]),
        ("can you please remind me to water the plants? and remind me about the bins",
         ["Water the plants", "The bins"]),
        ("remind me to x", []),
        ("I reminded him yesterday", []),
        ("remind me to buy milk. Remind me to buy milk!", ["Buy milk"]),
    ],
)
def test_remind_me_phrasings_become_goals_once(text: str, goals: list[str]) -> None:
    assert requested_goals(text) == goals


def test_her_own_promises_become_goals() -> None:
    reply = "Of course. I'll check in with you on Friday. Sleep well!"
    assert promised_goals(reply) == ["Check in with you on Friday"]
    assert promised_goals("I'd love to.") == []
