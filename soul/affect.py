"""Her affective state toward one member (or one group): valence, arousal and named drives.

Owns: the arithmetic — exponential decay toward the persona's baseline with a half-life in
hours, on an injected clock, and bounded changes per event. A small, deterministic appraisal
turns a message into an event. Must not: read the environment or the clock itself, or keep
anything a member said (only numbers are stored).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from datetime import datetime

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
POSITIVE = frozenset(
    [
        "thanks", "thank", "love", "lovely", "great", "good", "glad", "happy",
        "wonderful", "brilliant", "excited", "yay", "nice", "amazing", "fun", "proud",
        "relieved", "fantastic", "cheers",
    ]
)
NEGATIVE = frozenset(
    [
        "sad", "tired", "worried", "upset", "angry", "awful", "terrible", "bad", "sorry",
        "scared", "stressed", "lonely", "hurt", "sick", "exhausted", "anxious",
        "miserable", "frustrated", "hate", "cry",
    ]
)
# How strongly one appraised word moves valence, before the persona's bound is applied.
WORD_WEIGHT = 0.05
EXCLAIM_AROUSAL = 0.04


@dataclass(frozen=True)
class Affect:
    valence: float  # -1 (low) .. 1 (bright)
    arousal: float  # 0 (calm) .. 1 (stirred)
    drives: dict[str, float] = field(default_factory=dict)

    def describe(self) -> str:
        """A short phrase for the prompt; numbers rounded so tiny drifts do not churn text."""
        mood = (
            "bright" if self.valence > 0.35 else "warm" if self.valence > 0.1
            else "subdued" if self.valence < -0.2 else "even"
        )
        energy = "lively" if self.arousal > 0.6 else "calm" if self.arousal < 0.3 else "steady"
        strongest = sorted(self.drives.items(), key=lambda kv: (-kv[1], kv[0]))[:2]
        drives = ", ".join(f"{name} {value:.1f}" for name, value in strongest)
        return f"mood {mood} and {energy} (valence {self.valence:+.2f}, arousal " \
               f"{self.arousal:.2f}); strongest drives: {drives or 'none'}"


def _clamp(value: float, low: float, high: float) -> float:
    return max(low, min(high, value))


def decay(state: Affect, baseline: Affect, half_life_hours: float, elapsed_hours: float) -> Affect:
    """Move each value toward the baseline: half the distance every `half_life_hours`."""
    if elapsed_hours <= 0:
        return state
    keep = math.pow(0.5, elapsed_hours / half_life_hours)

    def toward(value: float, target: float) -> float:
        return target + (value - target) * keep

    drives = {
        name: toward(state.drives.get(name, target), target)
        for name, target in sorted(baseline.drives.items())
    }
    return Affect(toward(state.valence, baseline.valence),
                  toward(state.arousal, baseline.arousal), drives)


def apply_event(state: Affect, d_valence: float, d_arousal: float, max_delta: float) -> Affect:
    """One event's change, each part bounded by the persona's `max_delta`."""
    return replace(
        state,
        valence=_clamp(state.valence + _clamp(d_valence, -max_delta, max_delta), -1.0, 1.0),
        arousal=_clamp(state.arousal + _clamp(d_arousal, -max_delta, max_delta), 0.0, 1.0),
    )


def appraise(text: str) -> tuple[float, float]:
    """A message's pull on valence and arousal, from plain word lists. Deterministic."""
    words = [w.casefold() for w in _WORD.findall(text)]
    score = sum(1 for w in words if w in POSITIVE) - sum(1 for w in words if w in NEGATIVE)
    arousal = EXCLAIM_AROUSAL * min(3, text.count("!"))
    return WORD_WEIGHT * score, arousal + WORD_WEIGHT * 0.5 * abs(score)


def elapsed_hours(since: datetime, now: datetime) -> float:
    return max(0.0, (now - since).total_seconds() / 3600)
