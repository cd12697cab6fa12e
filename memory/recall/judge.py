"""Recall's judge: each candidate's verdict (`answers`, `related`, `unrelated`) and its why.

The judge is a logistic regression over the signals of `memory.recall.signals`, its weights
fitted on the project's own synthetic households in several languages (`python -m
bench.fit_judge` refits them and writes `weights/<embedder>.json`). "Answers" means the fitted
probability that the candidate answers the question is at least the file's `answers` bar;
"related", at least its `related` bar. The bars are chosen when fitting, on the fitted data, so
that a question with no answer is told nothing in at least nine cases of ten.

Each verdict carries its `why`: the signals that weighed most for and against it, in words a
person can read, made from numbers only (never a word of the question or of the row).

Owns: loading the weights, the probability, the verdict and the why. Must not: read a row,
or know a language.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memory.models import Verdict
from memory.recall.signals import FEATURES

WEIGHTS = Path(__file__).resolve().with_name("weights")
DEFAULT_WEIGHTS = "multilingual-e5-small-q4"
KEYWORD_ONLY = "none"
WHY_REASONS = 3  # the most signals a why names

# How each signal reads when it is above its fitted mean, and when it is below (None: not
# worth saying). `{value}` is the signal's own value.
_SAYS: dict[str, tuple[str | None, str | None]] = {
    "lead": ("close in meaning ({value:.1f} deviations above the rest of what is seen)",
             "not close in meaning"),
    "gap": ("closer in meaning than any other memory", "another memory is closer in meaning"),
    "runner_up": ("other memories are about as close", "no other memory comes close"),
    "semantic_top": ("among the nearest in meaning", None),
    "coverage": ("shares {value:.0%} of the question's keyword weight",
                 "shares few of the question's words"),
    "keyword_top": ("among the best keyword matches", None),
    "fused_top": ("ranked near the top", "ranked low"),
    "lead_covered": ("its meaning and its words both match", None),
    "line": ("a line as it was said", "something she concluded"),
    "asking": ("it mostly asks a question", None),
    "reply": ("the reply to a line that matched", None),
    "by_asker": ("said by whoever asks", "said by someone else"),
    "about_asker": ("about whoever asks", None),
    "names_someone": ("the question names someone", None),
    "named_match": ("about the person the question names",
                    "not about the person the question names"),
    "other_voice": ("said by another member", None),
    "about_other": ("about another member", None),
    "shared": ("said to the whole household", "said in private"),
    "said_then": ("said in the time the question names", None),
    "said_other_time": ("said outside the time the question names", None),
    "age": ("said a while ago", "said recently"),
    "replaced": ("a newer word on it was said since", None),
    "replaces": ("the newest word on it", None),
    "digits": ("it holds a number", None),
    "unseen": ("some of the question's words are in nothing remembered", None),
    "lacks_rarest": ("it lacks the question's most telling word",
                     "it has the question's most telling word"),
}


@dataclass(frozen=True)
class Weights:
    """A fitted judge: standardisation, coefficients, intercept and the two bars."""

    embedder: str
    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    answers: float
    related: float
    prior: tuple[float, float]  # what a question scores against unrelated rows (mean, dev)
    prior_rows: int

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Weights:
        features = tuple(str(f) for f in data["features"])  # type: ignore[attr-defined]
        unknown = [f for f in features if f not in FEATURES]
        if unknown:
            raise ValueError(f"judge weights name unknown signals: {unknown}")

        def floats(key: str) -> tuple[float, ...]:
            values = tuple(float(v) for v in data[key])  # type: ignore[attr-defined]
            if len(values) != len(features):
                raise ValueError(f"judge weights: {key} has {len(values)} values")
            return values

        prior = data["prior"]
        return cls(
            embedder=str(data["embedder"]), features=features, mean=floats("mean"),
            scale=floats("scale"), coef=floats("coef"),
            intercept=float(data["intercept"]),  # type: ignore[arg-type]
            answers=float(data["answers"]),  # type: ignore[arg-type]
            related=float(data["related"]),  # type: ignore[arg-type]
            prior=(float(prior[0]), float(prior[1])),  # type: ignore[index]
            prior_rows=int(data["prior_rows"]),  # type: ignore[call-overload]
        )


@functools.cache
def weights_for(embedder: str | None) -> Weights:
    """The weights fitted for this embedder (by its name), the default model's for one never
    fitted on (a test's), and the keyword-only weights without an embedder."""
    name = KEYWORD_ONLY if embedder is None else embedder
    path = WEIGHTS / f"{name}.json"
    if not path.exists():
        path = WEIGHTS / f"{DEFAULT_WEIGHTS}.json"
    return Weights.from_json(json.loads(path.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    chance: float
    why: str


class SignalJudge:
    """The default judge: fitted weights over measured signals."""

    def __init__(self, weights: Weights) -> None:
        self.weights = weights
        self._index = [FEATURES.index(f) for f in weights.features]

    def contributions(self, signals: Sequence[float]) -> list[tuple[str, float, float]]:
        """(feature, its value, its contribution to the log-odds), in the weights' order."""
        w = self.weights
        out = []
        for k, at in enumerate(self._index):
            value = signals[at]
            out.append((w.features[k], value, w.coef[k] * (value - w.mean[k]) / w.scale[k]))
        return out

    def chance(self, signals: Sequence[float]) -> float:
        z = self.weights.intercept + sum(c for _, _, c in self.contributions(signals))
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))

    def judge(self, signals: Sequence[float], *, why: bool = True) -> Judgement:
        """The verdict; its why in words too unless `why` is False (a candidate that will not
        be handed back needs none)."""
        p = self.chance(signals)
        verdict = (Verdict.ANSWERS if p >= self.weights.answers
                   else Verdict.RELATED if p >= self.weights.related else Verdict.UNRELATED)
        return Judgement(verdict, round(p, 4), self.why(signals, verdict, p) if why else "")

    def explained(self, judgement: Judgement, signals: Sequence[float]) -> Judgement:
        """The judgement with its why in words."""
        if judgement.why:
            return judgement
        return Judgement(judgement.verdict, judgement.chance,
                         self.why(signals, judgement.verdict, judgement.chance))

    def why(self, signals: Sequence[float], verdict: Verdict, p: float) -> str:
        """The verdict and the signals that weighed most toward it, then the strongest
        against it, in words."""
        parts = self.contributions(signals)
        w = self.weights
        toward = verdict is Verdict.ANSWERS
        ranked = sorted(parts, key=lambda fvc: -fvc[2] if toward else fvc[2])
        said: list[str] = []
        against: list[str] = []
        named = signals[FEATURES.index("names_someone")] > 0
        for feature, value, contribution in ranked:
            if len(said) >= WHY_REASONS or (contribution > 0) != toward or not contribution:
                continue
            text = _say(feature, value, w.mean[w.features.index(feature)], named=named)
            if text:
                said.append(text)
        strongest_other = sorted(parts, key=lambda fvc: fvc[2] if toward else -fvc[2])
        for feature, value, contribution in strongest_other:
            if (contribution > 0) == toward or abs(contribution) < 0.5:
                continue
            text = _say(feature, value, w.mean[w.features.index(feature)], named=named)
            if text:
                against.append(text)
            break
        out = f"{verdict.value} ({p:.0%})"
        if said:
            out += ": " + "; ".join(said)
        if against:
            out += "; but " + against[0]
        return out


def _say(feature: str, value: float, mean: float, *, named: bool) -> str | None:
    if feature == "named_match" and not named:
        return None  # whom the question names says nothing when it names no one
    high, low = _SAYS.get(feature, (None, None))
    text = high if value > mean else low
    return None if text is None else text.format(value=value)
