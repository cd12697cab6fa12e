"""The shelf: ingest speed, search latency at 1k documents, and whether the passage that answers
is found and told. `python -m bench.shelf [--embedder e5|minilm|none] [--documents 1000]`.

The documents and questions are the project's own (`bench/shelf/`, written for hearth, in four
languages; see its README): each answerable question names the exact words of its document that
answer it, so a passage "hits" when it holds them.

- **ingest**: seconds per MB of document to read, cut, class, embed and store the set's 16
  documents (embedding the passages is nearly all of it).
- **quality** (the 16 documents alone on the shelf of the member asking): hit@5 (a passage that
  holds the answer among the best five, told or not), told@5 (among those told), nothing-told
  (questions no document answers, told nothing), and hit@5 of plain BM25 (bm25s) over the same
  passages, beside it.
- **latency**: the same questions against a shelf of `--documents` documents (the set copied
  under other titles; copies reuse the vectors of their first, so seeding is quick and the
  shelf is as large as a real one for search), p50/p95 of `Shelf.search` end to end: question
  embedding, walled keyword statistics, the visible matrices, the lens and the receipt.

Prints a table, then one JSON line:
`{"bench": "shelf", "documents": ..., "passages": ..., "ingest_s_per_mb": ..., "p50_ms": ...,
"p95_ms": ..., "hit_at_5": ..., "told_at_5": ..., "nothing_told": ..., "bm25_hit_at_5": ...}`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.report import print_report
from memory import AccessContext, Activity, Embedder, Memory, make_embedder
from memory.embedder import Vectors
from memory.knowledge import reading
from memory.terms import stems, words

HERE = Path(__file__).resolve().with_name("shelf")
DOCUMENTS = HERE / "documents"
QUESTIONS = HERE / "questions.json"


class _Reused:
    """The embedder, remembering each passage's vector by its words without the line that
    situates it: a copy of a document under another title costs nothing to seed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name, self.dim, self.symmetric = inner.name, inner.dim, inner.symmetric
        self.seen: dict[str, np.ndarray] = {}

    def embed_query(self, texts: list[str]) -> Vectors:
        return self.inner.embed_query(texts)

    def embed(self, texts: list[str]) -> Vectors:
        keys = [t.split("\n", 1)[-1] for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in self.seen]
        if missing:
            fresh = self.inner.embed([texts[i] for i in missing])
            for i, v in zip(missing, fresh, strict=True):
                self.seen[keys[i]] = v
        return np.stack([self.seen[k] for k in keys]).astype(np.float32)


def _hit(text: str, quote: str) -> bool:
    return " ".join(quote.split()).casefold() in " ".join(text.split()).casefold()


async def _quality(memory: Memory, ctx: AccessContext,
                   questions: list[dict[str, str | None]]) -> dict[str, float]:
    hits = told = answerable = nothing = unanswerable = 0
    for q in questions:
        found = await memory.shelf.search(ctx, str(q["question"]), limit=5, told_only=False)
        if q["document"] is None:
            unanswerable += 1
            nothing += not any(f.told for f in found)
            continue
        answerable += 1
        quote = str(q["quote"])
        hits += any(f.title == q["document"] and _hit(f.text, quote) for f in found)
        told += any(f.told and f.title == q["document"] and _hit(f.text, quote) for f in found)
    return {"hit_at_5": hits / answerable, "told_at_5": told / answerable,
            "nothing_told": nothing / unanswerable}


def _bm25_hit(questions: list[dict[str, str | None]]) -> float:
    import bm25s  # noqa: PLC0415 -- a dev dependency, for the baseline only

    corpus: list[tuple[str, str]] = []
    for path in sorted(DOCUMENTS.iterdir()):
        _, sections = reading.read(path.name, path.read_bytes())
        corpus += [(path.name, p.text) for p in reading.passages(sections)]

    def tokens(text: str) -> list[str]:
        return [min(stems(w)) for w in words(text)] or ["_"]

    retriever = bm25s.BM25()
    retriever.index([tokens(t) for _, t in corpus], show_progress=False)
    hits = answerable = 0
    for q in questions:
        if q["document"] is None:
            continue
        answerable += 1
        top, _ = retriever.retrieve([tokens(str(q["question"]))], k=5, show_progress=False)
        hits += any(corpus[int(i)][0] == q["document"] and _hit(corpus[int(i)][1], str(q["quote"]))
                    for i in top[0])
    return hits / answerable


async def run(embedder_name: str, documents: int) -> dict[str, object]:
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    inner = make_embedder(embedder_name)
    embedder = None if inner is None else _Reused(inner)
    with tempfile.TemporaryDirectory() as tmp:
        memory = await Memory.open(Path(tmp) / "shelf.db", embedder=embedder, create=True)
        try:
            owner = await memory.people.add("Olivia", telegram_id=1, owner=True)
            dm = AccessContext.for_member(owner.person_id, Activity.DM_CONVERSATION, "bench")
            if inner is not None:
                await asyncio.to_thread(inner.embed, ["the model loads before the clock starts"])
            files = sorted(DOCUMENTS.iterdir())
            size = sum(p.stat().st_size for p in files)
            start = time.perf_counter()
            passages = 0
            for path in files:
                passages += (await memory.shelf.put(owner.person_id, path.name,
                                                    path.read_bytes())).passages
            ingest = time.perf_counter() - start
            first = passages
            quality = await _quality(memory, dm, questions)
            copies = 0
            while len(files) * (copies + 1) < documents:
                copies += 1
                for path in files:
                    passages += (await memory.shelf.put(owner.person_id,
                                                        f"{copies}-{path.name}",
                                                        path.read_bytes())).passages
            timings = []
            for q in questions * 2:
                t = time.perf_counter()
                await memory.shelf.search(dm, str(q["question"]), limit=5)
                timings.append((time.perf_counter() - t) * 1000)
            timings = timings[len(questions) // 2 :]  # warm
        finally:
            await memory.close()
    p95 = statistics.quantiles(timings, n=20)[18]
    return {
        "bench": "shelf", "embedder": embedder_name, "documents": len(files) * (copies + 1),
        "passages": passages,
        "ingest_s_per_mb": round(ingest / (size / 1e6), 2),
        "ingest_ms_per_passage": round(ingest * 1000 / first, 1),
        "p50_ms": round(statistics.median(timings), 1), "p95_ms": round(p95, 1),
        **{k: round(v, 3) for k, v in quality.items()},
        "bm25_hit_at_5": round(_bm25_hit(questions), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--embedder", default="e5", choices=["e5", "minilm", "none"])
    parser.add_argument("--documents", type=int, default=1000)
    args = parser.parse_args()
    result = asyncio.run(run(args.embedder, args.documents))
    print_report([result], [(k, k) for k in result if k != "bench"])


if __name__ == "__main__":
    main()
