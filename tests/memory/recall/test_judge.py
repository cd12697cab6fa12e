"""Recall's judge: fitted weights over measured signals, a verdict and a why that says it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory import Verdict
from memory.recall.judge import WEIGHTS, SignalJudge, Weights, weights_for
from memory.recall.signals import FEATURES

SHIPPED = sorted(WEIGHTS.glob("*.json"))


def judge_of(centre: float = 0.0, **coef: float) -> SignalJudge:
    """A judge weighing only the named signals, each standardised around `centre`, scale 1."""
    features = tuple(coef)
    return SignalJudge(Weights(
        embedder="test", features=features, mean=(centre,) * len(features),
        scale=(1.0,) * len(features), coef=tuple(coef.values()), intercept=-2.0,
        answers=0.8, related=0.3, prior=(0.0, 0.1), prior_rows=16))


def signals(**values: float) -> list[float]:
    out = [0.0] * len(FEATURES)
    for name, value in values.items():
        out[FEATURES.index(name)] = value
    return out


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_weights_file_names_measured_signals_and_sane_bars(path: Path) -> None:
    weights = Weights.from_json(json.loads(path.read_text(encoding="utf-8")))
    assert set(weights.features) <= set(FEATURES)
    assert 0.0 < weights.related <= weights.answers <= 1.0
    assert weights.embedder == path.stem
    assert all(s > 0 for s in weights.scale)


def test_the_default_embedder_and_keyword_only_recall_have_fitted_weights() -> None:
    names = {p.stem for p in SHIPPED}
    assert {"multilingual-e5-small-q4", "all-MiniLM-L6-v2", "none"} <= names
    # An embedder never fitted on (a test's) is judged by the default model's weights.
    assert weights_for("hash-test").embedder == "multilingual-e5-small-q4"
    assert weights_for(None).embedder == "none"


def test_the_shipped_judge_finds_standing_out_in_meaning_and_words_for_an_answer() -> None:
    weights = weights_for("multilingual-e5-small-q4")
    coef = dict(zip(weights.features, weights.coef, strict=True))
    assert coef["lead"] > 0
    assert coef["coverage"] > 0
    assert coef["asking"] < 0  # a line that asks tells less


def test_the_verdict_follows_the_two_bars() -> None:
    judge = judge_of(lead=1.0)
    assert judge.judge(signals(lead=6.0)).verdict is Verdict.ANSWERS  # p 0.98
    assert judge.judge(signals(lead=1.5)).verdict is Verdict.RELATED  # p 0.38
    assert judge.judge(signals(lead=0.0)).verdict is Verdict.UNRELATED  # p 0.12


def test_a_why_says_the_verdict_how_likely_and_the_signals_that_decided_it() -> None:
    judge = judge_of(lead=1.0, coverage=2.0, asking=-3.0)
    told = judge.judge(signals(lead=4.2, coverage=0.6))
    assert told.why.startswith("answers (")
    assert "close in meaning (4.2 deviations" in told.why
    assert "60% of the question's keyword weight" in told.why
    silenced = judge.judge(signals(lead=4.2, coverage=0.6, asking=1.0))
    assert silenced.verdict is not Verdict.ANSWERS
    assert "it mostly asks a question" in silenced.why


def test_a_why_never_says_whom_the_question_names_when_it_names_no_one() -> None:
    judge = judge_of(0.5, lead=1.0, named_match=1.0)
    why = judge.judge(signals(lead=1.0)).why
    assert "the person the question names" not in why
    named = judge.judge(signals(lead=1.0, names_someone=1.0)).why
    assert "not about the person the question names" in named


def test_weights_naming_an_unknown_signal_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown signals"):
        Weights.from_json({"embedder": "x", "features": ["shoe_size"], "mean": [0.0],
                           "scale": [1.0], "coef": [1.0], "intercept": 0.0, "answers": 0.5,
                           "related": 0.2, "prior": [0.0, 0.1], "prior_rows": 1})
