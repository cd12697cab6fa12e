"""Refit recall's judge: `python -m bench.fit_judge [--embedder e5|minilm|none]`.

The judge (`memory.recall.judge`) is a logistic regression over measured signals. This script
replays every household under bench/households/ whose `split` is `fit` (never a `held_out` one,
and never a public dataset), asks each question through `memory.recall.explain` as its asker
would, labels each judged candidate by the household's own answer key (it answers when it
stands for one of the question's evidence lines), fits the weights with scikit-learn, and picks
the two bars on the same data:

- `answers`: the lowest probability at which the questions with no answer are told nothing in
  at least `--nothing-told` of cases (0.91 by default, above the 0.90 promised, for what a
  household never seen will add), and then, among bars that keep it, the one telling the most
  evidence;
- `related`: the lowest probability at which a question with no answer is shown something
  "possibly related" in at most `--related-noise` of cases.

It reports leave-one-household-out figures first (each fit household judged by weights fitted
on the others: what to expect on a household never seen), then fits on all of them and writes
`memory/recall/weights/<embedder name>.json`. The prior (what a question scores against
unrelated rows) is measured on the same households before the signals are.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bench.household_memory import Household, asking_order, visible
from bench.replay import discover, replay
from memory import Embedder, make_embedder
from memory.recall import JUDGED
from memory.recall.judge import KEYWORD_ONLY, WEIGHTS, weights_for

LIMIT = 12  # what the assembler asks recall for
# The signals the judge weighs: the measured ones but those that restate another (the ranks
# restate the lead and the coverage), so that each weight, and so each why, means one thing.
JUDGED_FEATURES = ("lead", "gap", "runner_up", "coverage", "line", "asking", "reply", "by_asker",
                   "about_asker", "names_someone", "named_match", "other_voice", "about_other",
                   "shared", "said_then", "said_other_time", "age", "replaced", "replaces",
                   "digits", "unseen", "lacks_rarest")
PRIOR_ROWS = 16


@dataclass
class Row:
    household: str
    language: str
    qid: str
    abstain: bool
    signals: list[float]
    answers: bool  # stands for one of the question's evidence lines
    rank: int  # its place in the fused ranking, from 1


async def collect(household: Household, embedder: Embedder | None) -> list[Row]:
    """Every judged candidate of every question, with its signals and label."""
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as folder:
        done = await replay(household, embedder, Path(folder) / "household.db")
        try:
            for i, q in enumerate(asking_order(household.questions)):
                done.clock.now = household.ask_at + timedelta(minutes=i)
                explained = await done.memory.recall.explain(done.context(q), q.text,
                                                             limit=JUDGED)
                for rank, e in enumerate(explained, start=1):
                    keys = done.keys_of(e.item)
                    rows.append(Row(household.name, household.language, q.qid, q.abstain,
                                    [e.signals[f] for f in JUDGED_FEATURES],
                                    bool(set(keys) & set(q.evidence)), rank))
        finally:
            await done.memory.close()
    return rows


def measure_prior(households: Sequence[Household], embedder: Embedder) -> tuple[float, float]:
    """The mean and deviation of a question's similarity to the lines its asker may see."""
    sims: list[np.ndarray[Any, Any]] = []
    for household in households:
        texts = [line.text for line in household.lines]
        rows = embedder.embed(texts)
        asked = list(household.questions)
        queries = embedder.embed_query([q.text for q in asked])
        for q, vector in zip(asked, queries, strict=True):
            seen = [i for i, line in enumerate(household.lines) if visible(line, q)]
            sims.append(rows[seen] @ vector)
    flat = np.concatenate(sims)
    return float(flat.mean()), float(flat.std())


def write_weights(name: str, payload: dict[str, Any]) -> Path:
    path = WEIGHTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    weights_for.cache_clear()
    return path


def fit(rows: Sequence[Row]) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any],
                                      np.ndarray[Any, Any], float]:
    """Standardisation and logistic-regression weights: (mean, scale, coef, intercept)."""
    from sklearn.linear_model import LogisticRegression  # noqa: PLC0415 -- dev extra

    x = np.array([r.signals for r in rows], dtype=np.float64)
    y = np.array([r.answers for r in rows], dtype=np.int64)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=0.5, max_iter=2000)
    model.fit((x - mean) / scale, y)
    return mean, scale, model.coef_[0], float(model.intercept_[0])


def chances(rows: Sequence[Row], mean: np.ndarray[Any, Any], scale: np.ndarray[Any, Any],
            coef: np.ndarray[Any, Any], intercept: float) -> np.ndarray[Any, Any]:
    x = (np.array([r.signals for r in rows], dtype=np.float64) - mean) / scale
    return 1.0 / (1.0 + np.exp(-(x @ coef + intercept)))


def outcome(rows: Sequence[Row], p: np.ndarray[Any, Any], bar: float) -> dict[str, float]:
    """told@LIMIT, its precision and nothing-told at one bar, per question."""
    by_q: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(rows):
        by_q.setdefault((r.household, r.qid), []).append(i)
    told_hits = answerable = nothing = abstain = told_items = told_right = 0
    for idx in by_q.values():
        told = sorted((i for i in idx if p[i] >= bar), key=lambda i: -p[i])[:LIMIT]
        if rows[idx[0]].abstain:
            abstain += 1
            nothing += not told
        else:
            answerable += 1
            told_hits += any(rows[i].answers for i in told)
            told_items += len(told)
            told_right += sum(rows[i].answers for i in told)
    return {"told": told_hits / max(answerable, 1), "nothing_told": nothing / max(abstain, 1),
            "precision": told_right / max(told_items, 1)}


def pick_bars(rows: Sequence[Row], p: np.ndarray[Any, Any], nothing_told: float,
              related_noise: float) -> tuple[float, float]:
    grid = np.unique(np.round(np.quantile(p, np.linspace(0.5, 1.0, 400)), 4))
    keeps = [b for b in grid if outcome(rows, p, float(b))["nothing_told"] >= nothing_told]
    answers = float(min(keeps)) if keeps else 1.0
    related = answers
    for b in sorted(grid, reverse=True):
        if b >= answers:
            continue
        if outcome(rows, p, float(b))["nothing_told"] >= 1.0 - related_noise:
            related = float(b)
    return answers, related


async def run(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    households = [h for h in discover(Path(args.data)) if h.split == "fit"]
    if not households:
        raise SystemExit("no household with split 'fit' to fit on")
    embedder = make_embedder(args.embedder)
    name = KEYWORD_ONLY if embedder is None else embedder.name
    prior = (0.0, 1.0) if embedder is None else measure_prior(households, embedder)
    zeros = [0.0] * len(JUDGED_FEATURES)
    write_weights(name, {"embedder": name, "features": list(JUDGED_FEATURES), "mean": zeros,
                         "scale": [1.0] * len(JUDGED_FEATURES), "coef": zeros,
                         "intercept": 0.0,
                         "answers": 0.5, "related": 0.25, "prior": list(prior),
                         "prior_rows": PRIOR_ROWS})
    per_household: dict[str, list[Row]] = {}
    for household in households:
        per_household[household.name] = await collect(household, embedder)
        print(f"  {household.name}: {len(per_household[household.name])} candidates",
              flush=True)
    print(f"\nleave one household out (embedder {name}):")
    print(f"{'household':<48}{'told@12':>9}{'precision':>10}{'nothing':>9}")
    folds: list[Row] = []
    out_of_fold: list[float] = []
    for held, test in per_household.items():
        train = [r for h, rs in per_household.items() if h != held for r in rs]
        mean, scale, coef, intercept = fit(train)
        folds += test
        out_of_fold += list(chances(test, mean, scale, coef, intercept))
    p_fold = np.array(out_of_fold)
    answers, related = pick_bars(folds, p_fold, args.nothing_told, args.related_noise)
    for held in per_household:
        idx = [i for i, r in enumerate(folds) if r.household == held]
        got = outcome([folds[i] for i in idx], p_fold[idx], answers)
        print(f"{held[:47]:<48}{got['told']:>9.3f}{got['precision']:>10.3f}"
              f"{got['nothing_told']:>9.3f}")
    got = outcome(folds, p_fold, answers)
    print(f"{'all, each judged by the others':<48}{got['told']:>9.3f}{got['precision']:>10.3f}"
          f"{got['nothing_told']:>9.3f}   answers bar {answers:.3f}, related {related:.3f}")
    rows = folds
    mean, scale, coef, intercept = fit(rows)
    print("\nweights (standardised):")
    for feature, c in sorted(zip(JUDGED_FEATURES, coef, strict=True),
                             key=lambda fc: -abs(fc[1])):
        print(f"  {feature:<16}{c:+.3f}")
    path = write_weights(name, {
        "embedder": name, "features": list(JUDGED_FEATURES),
        "mean": [round(float(v), 6) for v in mean], "scale": [round(float(v), 6) for v in scale],
        "coef": [round(float(v), 6) for v in coef], "intercept": round(intercept, 6),
        "answers": answers, "related": related,
        "prior": [round(v, 6) for v in prior], "prior_rows": PRIOR_ROWS,
        "fitted_on": sorted(per_household), "candidates": len(rows),
    })
    print(f"\nwrote {path} in {time.perf_counter() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="e5", choices=["e5", "minilm", "none"])
    parser.add_argument("--data", default=str(Path(__file__).resolve().with_name("households")))
    parser.add_argument("--nothing-told", type=float, default=0.91)
    parser.add_argument("--related-noise", type=float, default=0.5)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
