"""Does she tell what she remembers, in every language a household writes? Run it as
`python -m bench.recall_quality [--embedder e5|minilm|none]`.

Every household under bench/households/ (the project's own, written for hearth, in several
languages; see bench/households/README.md) is replayed into a fresh memory as the bot and its
tick would store it (`bench.replay`), then each question is asked through recall as its asker
would ask it where they ask it (their DM, or the group), and scored against the household's
answer key:

- hit@10: one of the question's evidence lines is among the first ten candidates recall ranks
  (`memory.recall.explain`): she *finds* it;
- told@10: the evidence is among what the prompt tells as a memory (the `answers` verdicts of
  `memory.recall.recollect` at the assembler's limit): she *tells* it;
- told precision: of the memories told for answerable questions, the share that are evidence;
- shown@10: the evidence is among what a capable model's prompt holds when the signals judge:
  told, or listed apart as possibly related (the `related` verdicts; a small model gets only
  what is told);
- judged@12: the evidence is among what a capable model is asked to judge (the first of the
  candidates whatever their verdicts, at the same limit): what the model judge can tell at best;
- nothing-told: for questions with no answer the asker may see (never told, or told only
  where they may not look), nothing is told;
- leaks: a row returned that the asker may not see there (must be 0).

With `--model`, the configured model (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, `HEARTH_MODEL`, as
the bot reads them) also judges what recall handed over for each question, in the one call a
turn makes (`soul.judge`), and its columns follow: model told@12, its precision, its
nothing-told, and how often it could not judge (a timeout, an error, an answer that does not
fit the schema: then the signal judge's verdicts stand, and are what is counted). The model's
time is reported apart from recall's. `--split held_out` asks only the held-out households
(a real model takes a second or more per question).

BM25 over the same visible lines runs beside it (`bm25s`, the baseline of
`bench.household_memory`): its hit@10, and as "told" its first line, which it always tells
(nothing only when no word matches). Rows: each household, then each language over the
held-out households (the judge was never fitted on them: these are the figures that count),
then each language over all. Prints the tables, then one JSON line.
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

from bench.household_memory import Household, Question, asking_order, run_bm25
from bench.judging import configured, judged
from bench.recall import percentile
from bench.replay import HOUSEHOLDS, Replayed, discover, replay
from memory import Embedder, Quoted, Recalled, Sensitivity, Verdict, make_embedder
from memory.classifier import classify
from memory.recall import LIMIT
from soul.judge import StructuredModel
from soul.model import Gateway

HIT_AT = 10


@dataclass
class Scored:
    """One question's outcome."""

    household: str
    language: str
    split: str
    abstain: bool
    hit: bool = False
    told: bool = False
    shown: bool = False
    judged: bool = False
    told_items: int = 0
    told_right: int = 0
    leak: bool = False
    bm25_hit: bool = False
    bm25_told: bool = False  # BM25's first line is evidence (answerable) / something (abstain)
    ms: float = 0.0
    kind: str = ""
    # The model judge's outcome (None: no model asked).
    model_told: bool | None = None
    model_told_items: int = 0
    model_told_right: int = 0
    model_fell_back: bool = False
    model_ms: float = 0.0


async def ask_all(household: Household, embedder: Embedder | None,
                  model: StructuredModel | None = None) -> list[Scored]:
    out: list[Scored] = []
    bm25 = run_bm25(household, "lines", HIT_AT)
    with tempfile.TemporaryDirectory() as folder:
        done = await replay(household, embedder, Path(folder) / "household.db")
        try:
            for i, q in enumerate(asking_order(household.questions)):
                done.clock.now = household.ask_at + timedelta(minutes=i)
                ctx = done.context(q)
                ranked = await done.memory.recall.explain(ctx, q.text, limit=HIT_AT)
                start = time.perf_counter()
                handed = await done.memory.recall.recollect(ctx, q.text, limit=LIMIT,
                                                            unrelated=True)
                ms = (time.perf_counter() - start) * 1000
                evidence = set(q.evidence)
                told = [done.keys_of(item) for item in handed if item.sure]
                shown = [done.keys_of(item) for item in handed
                         if item.verdict in (Verdict.ANSWERS, Verdict.RELATED)]
                judged = [done.keys_of(item) for item in handed]
                returned = [e.item for e in ranked] + list(handed)
                base = bm25[q.qid]
                s = Scored(household.name, household.language, household.split, q.abstain,
                           ms=ms, kind=q.kind)
                s.leak = any(_leaks(household, q, item, done.keys_of(item)) for item in returned)
                if q.abstain:
                    s.told = bool(told)
                    s.bm25_told = bool(base.keys)
                else:
                    s.hit = any(set(done.keys_of(e.item)) & evidence for e in ranked)
                    s.told = any(set(keys) & evidence for keys in told)
                    s.shown = any(set(keys) & evidence for keys in shown)
                    s.judged = any(set(keys) & evidence for keys in judged)
                    s.told_items = len(told)
                    s.told_right = sum(bool(set(keys) & evidence) for keys in told)
                    s.bm25_hit = bool(set(base.keys[:HIT_AT]) & evidence)
                    s.bm25_told = bool(set(base.keys[:1]) & evidence)
                if model is not None:
                    await _judge_with(model, done, q, handed, s)
                out.append(s)
        finally:
            await done.memory.close()
    return out


async def _judge_with(model: StructuredModel, done: Replayed, q: Question,
                      handed: Sequence[Recalled | Quoted], s: Scored) -> None:
    """The model's verdicts on what recall handed over, scored into `s` as the assembler would
    use them: what it says answers is told."""
    names = {p.person_id: p.name for p in done.people.values()}
    verdicts = await judged(model, handed, question=q.text, asker=done.people[q.asker].name,
                            names=names, now=done.clock.now)
    s.model_ms, s.model_fell_back = verdicts.ms, verdicts.fell_back
    said = [done.keys_of(item) for item in verdicts.items if item.sure]
    evidence = set(q.evidence)
    s.model_told = bool(said) if q.abstain else any(set(keys) & evidence for keys in said)
    if not q.abstain:
        s.model_told_items = len(said)
        s.model_told_right = sum(bool(set(keys) & evidence) for keys in said)


def _leaks(household: Household, q: Question, item: Recalled | Quoted, keys: list[str]) -> bool:
    """Whether a recalled row is one the asker may not see where they ask: another member's DM,
    their own DM asked in the group, or in the group a row whose words are health or money
    (judged by the row's own words: a line recalled before its belief was drawn is the line's
    class, a belief the class of what it says)."""
    for key in keys:
        line = household.by_key[key]
        if key in q.forbidden:
            return True
        if q.chat == "group":
            words = item.belief.proposition if isinstance(item, Recalled) else item.turn.text
            if not line.group or classify(words) is not Sensitivity.ORDINARY:
                return True
        elif not (line.group or line.chat == f"dm:{q.asker}"):
            return True
    return False


def summary(rows: Sequence[Scored]) -> dict[str, Any]:
    answerable = [r for r in rows if not r.abstain]
    abstain = [r for r in rows if r.abstain]

    def rate(hits: int, n: int) -> float | None:
        return round(hits / n, 3) if n else None

    told_items = sum(r.told_items for r in answerable)
    model = {}
    if any(r.model_told is not None for r in rows):
        model = {
            "model_told": rate(sum(bool(r.model_told) for r in answerable), len(answerable)),
            "model_precision": rate(sum(r.model_told_right for r in answerable),
                                    sum(r.model_told_items for r in answerable)),
            "model_nothing_told": rate(sum(not r.model_told for r in abstain), len(abstain)),
            "model_fell_back": sum(r.model_fell_back for r in rows),
        }
    return model | {
        "questions": len(rows), "answerable": len(answerable), "abstain": len(abstain),
        "hit_at_10": rate(sum(r.hit for r in answerable), len(answerable)),
        "told_at_10": rate(sum(r.told for r in answerable), len(answerable)),
        "told_precision": rate(sum(r.told_right for r in answerable), told_items),
        "shown_at_10": rate(sum(r.shown for r in answerable), len(answerable)),
        "judged_at_12": rate(sum(r.judged for r in answerable), len(answerable)),
        "nothing_told": rate(sum(not r.told for r in abstain), len(abstain)),
        "leaks": sum(r.leak for r in rows),
        "bm25_hit_at_10": rate(sum(r.bm25_hit for r in answerable), len(answerable)),
        "bm25_told": rate(sum(r.bm25_told for r in answerable), len(answerable)),
        "bm25_nothing_told": rate(sum(not r.bm25_told for r in abstain), len(abstain)),
    }


COLUMNS = (("questions", "n"), ("hit_at_10", "hit@10"), ("told_at_10", "told@10"),
           ("told_precision", "precision"), ("shown_at_10", "shown@10"),
           ("judged_at_12", "judged@12"),
           ("nothing_told", "nothing"), ("leaks", "leaks"), ("bm25_hit_at_10", "bm25 hit"),
           ("bm25_told", "bm25 told"), ("bm25_nothing_told", "bm25 nothing"))
MODEL_COLUMNS = (("model_told", "model told"), ("model_precision", "model prec"),
                 ("model_nothing_told", "model noth"), ("model_fell_back", "fell back"))


def print_table(title: str, rows: dict[str, dict[str, Any]]) -> None:
    print(f"\n{title}")
    columns = COLUMNS + (MODEL_COLUMNS if any("model_told" in r for r in rows.values()) else ())
    print(f"{'':<30}" + "".join(f"{h:>13}" for _, h in columns))
    for name, row in rows.items():
        cells = []
        for key, _ in columns:
            value = row[key]
            cells.append("-" if value is None else
                         f"{value:.3f}" if isinstance(value, float) else str(value))
        print(f"{name[:29]:<30}" + "".join(f"{c:>13}" for c in cells))


async def run(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    embedder = make_embedder(args.embedder)
    name = "none" if embedder is None else embedder.name
    households = [h for h in discover(Path(args.data)) if args.split in ("all", h.split)]
    config = await configured() if args.model else None
    gateway = None if config is None else Gateway(config)
    scored: list[Scored] = []
    try:
        for household in households:
            scored += await ask_all(household, embedder, gateway)
    finally:
        if gateway is not None:
            await gateway.aclose()
    per_household = {f"{h.name[:20]} ({h.language}, {h.split})":
                     summary([s for s in scored if s.household == h.name]) for h in households}
    languages = sorted({h.language for h in households})
    held = {lang: summary([s for s in scored if s.language == lang and s.split == "held_out"])
            for lang in languages}
    every = {lang: summary([s for s in scored if s.language == lang]) for lang in languages}
    print(f"recall quality: {len(households)} households, {len(scored)} questions,"
          f" embedder {name}, limit {LIMIT}")
    print_table("per household", per_household)
    print_table("held out (never fitted on), per language",
                {k: v for k, v in held.items() if v["questions"]})
    print_table("all households, per language", every)
    kinds = sorted({s.kind for s in scored})
    print_table("all households, per kind",
                {k: summary([s for s in scored if s.kind == k]) for k in kinds})
    timings = [s.ms for s in scored]
    print(f"\nrecollect p50 {percentile(timings, 0.5):.1f} ms, p95 {percentile(timings, 0.95):.1f}"
          f" ms; {time.perf_counter() - started:.0f} s in all")
    out = {"bench": "recall_quality", "embedder": name, "limit": LIMIT,
           "held_out": {k: v for k, v in held.items() if v["questions"]},
           "all": summary(scored), "per_language": every,
           "p50_ms": round(percentile(timings, 0.5), 2),
           "p95_ms": round(percentile(timings, 0.95), 2)}
    if config is not None:
        judged = [s.model_ms for s in scored]
        print(f"model judge ({config.model}): p50 {percentile(judged, 0.5):.0f} ms,"
              f" p95 {percentile(judged, 0.95):.0f} ms per question")
        out |= {"model": config.model,
                "model_p50_ms": round(percentile(judged, 0.5), 1),
                "model_p95_ms": round(percentile(judged, 0.95), 1)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="e5", choices=["e5", "minilm", "none"])
    parser.add_argument("--data", default=str(HOUSEHOLDS), help="the households' folder")
    parser.add_argument("--split", default="all", choices=["all", "held_out", "fit"],
                        help="which households to ask")
    parser.add_argument("--model", action="store_true",
                        help="the configured model judges too (OPENAI_BASE_URL, HEARTH_MODEL)")
    print(json.dumps(asyncio.run(run(parser.parse_args())), ensure_ascii=False))


if __name__ == "__main__":
    main()
