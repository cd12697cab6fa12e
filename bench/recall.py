"""Recall latency as memory grows: `python -m bench.recall`.

Seeds 1k, 10k and 100k beliefs across five members (and the shared scope) through the facade's
write path, then times recall end to end through the facade: query embedding, the walled
candidate search, ranking, and the receipt commit; and the CPU time all the process's threads
spend per recall. Prints a table, then one JSON line per size.

Embedding 100k beliefs and 100k lines one by one takes e5 over half an hour on two cores, so
rows seeded beyond `--shared-above` (10k) share one vector among rows whose words differ only
in their note number and opening (`SharedVectors`): every row is still stored, indexed by its
own words and searched; only the seed's embedding work is shared. Every question is embedded.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.report import print_report, profiled
from memory import (
    SHARED,
    AccessContext,
    Activity,
    Assertion,
    Embedder,
    Memory,
    Person,
    Provenance,
    Role,
    dm_chat,
    group_chat,
    make_embedder,
    private_scope,
)

MEMBERS = ["Olivia", "Bob", "Alice", "Sam", "Priya"]
SUBJECTS = ["my sister", "my brother", "the neighbour", "my boss", "grandma", "my friend Tom",
            "the plumber", "our landlord", "my cousin", "the dentist", "my teacher", "the vet"]
VERBS = ["likes", "hates", "is planning", "keeps talking about", "bought", "borrowed",
         "recommended", "is worried about", "lost", "fixed", "painted", "forgot"]
OBJECTS = ["the red bicycle", "a sourdough starter", "the garden shed", "a trip to Lisbon",
           "the old piano", "jazz records", "the blue kettle", "a marathon", "the chess set",
           "Thai curry", "the broken fence", "a new laptop", "the camping tent", "a puppy",
           "the book club", "the tomato plants", "a pottery class", "the car insurance"]
WHEN = ["on Monday", "last weekend", "in March", "every Friday", "since the summer",
        "before Christmas", "after work", "this morning", "at the market", "in the attic"]
# How members' lines open: one in three speaks to someone ("you"), so recall looks up whom it
# answers (`memory.recall._addressees`) as often as a chat would make it.
OPENINGS = ["I heard that {}", "Did you hear? {}", "I heard that {}"]
QUERIES = ["what does my sister like", "the garden shed", "who borrowed the chess set",
           "trip to Lisbon", "sourdough", "tomato plants", "what did the plumber fix",
           "a new laptop", "the dentist", "pottery class on Friday", "car insurance",
           "who is worried about the marathon", "the blue kettle", "jazz records"]


def propositions(rng: random.Random, count: int, seen: set[str]) -> list[str]:
    out: list[str] = []
    while len(out) < count:
        text = (f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} "
                f"{rng.choice(OBJECTS)} {rng.choice(WHEN)} (note {rng.randrange(10**6)})")
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


class SharedVectors:
    """The bench's embedder for a big seed: rows whose words differ only in their note number
    (and a line's opening) get one vector, embedded once; questions pass through."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name, self.dim, self.symmetric = inner.name, inner.dim, inner.symmetric
        self._vectors: dict[str, Any] = {}

    @staticmethod
    def _kind(text: str) -> str:
        text = _NOTE.sub("", text)
        for opening in {o.format("") for o in OPENINGS}:
            text = text.removeprefix(opening)
        return text.casefold()

    def embed(self, texts: list[str]) -> Any:
        kinds = [self._kind(t) for t in texts]
        new = sorted({k for k in kinds if k not in self._vectors})
        if new:
            self._vectors.update(zip(new, self.inner.embed(new), strict=True))
        return np.stack([self._vectors[k] for k in kinds])

    def embed_query(self, texts: list[str]) -> Any:
        return self.inner.embed_query(texts)


_NOTE = re.compile(r"\s*\(note \d+\)\s*$")


def rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def seed(memory: Memory, scopes: list[str], rng: random.Random, count: int,
               seen: set[str]) -> None:
    batch = 2000
    for start in range(0, count, batch):
        texts = propositions(rng, min(batch, count - start), seen)
        items = [
            Assertion(proposition=t, scope=rng.choice(scopes), provenance=Provenance.TOLD,
                      source=f"bench:{start + i}")
            for i, t in enumerate(texts)
        ]
        await memory.beliefs.assert_all(items)


async def seed_lines(path: Path, people: list[Person], rng: random.Random, count: int,
                     seen: set[str]) -> None:
    """Members' lines, each in its speaker's DM or the group, through a handle without an
    embedder (another process); the measured handle embeds them when it syncs."""
    writer = await Memory.open(path)
    try:
        for text in propositions(rng, count, seen):
            person = rng.choice(people)
            group = rng.random() < 0.3
            await writer.transcript.append(
                chat_id=group_chat() if group else dm_chat(person), speaker_id=person.person_id,
                role=Role.USER, scope=SHARED if group else private_scope(person.person_id),
                text=rng.choice(OPENINGS).format(f"{text[0].lower()}{text[1:]}"))
    finally:
        await writer.close()


async def measure(memory: Memory, readers: list[AccessContext], rng: random.Random,
                  queries: int, *, label: str = "", profile: int = 0) -> tuple[list[float], float]:
    """Each recall's time, and the process's CPU time per recall over all of them (every
    thread's: the loop's, the database's, the embedding's, and any library's own workers)."""
    timings: list[float] = []
    for _ in range(5):  # warm-up
        await memory.recall.recollect(rng.choice(readers), rng.choice(QUERIES))
    cpu = time.process_time()
    with profiled(label, profile):
        for _ in range(queries):
            ctx, query = rng.choice(readers), rng.choice(QUERIES)
            start = time.perf_counter()
            await memory.recall.recollect(ctx, query)
            timings.append((time.perf_counter() - start) * 1000)
    return timings, (time.process_time() - cpu) * 1000 / queries


def embedding_beside_python(embedder: Embedder, queries: int = 40) -> dict[str, object]:
    """One query's embedding alone, and while another thread runs Python (what the event loop
    or a database thread does while a recall embeds): it must not wait on the GIL."""
    def timed() -> list[float]:
        out = []
        for i in range(queries):
            start = time.perf_counter()
            embedder.embed_query([QUERIES[i % len(QUERIES)]])
            out.append((time.perf_counter() - start) * 1000)
        return out

    timed()  # warm-up
    alone = timed()
    stop = threading.Event()

    def python() -> None:
        while not stop.is_set():
            sum(range(1000))

    busy = threading.Thread(target=python)
    busy.start()
    try:
        beside = timed()
    finally:
        stop.set()
        busy.join()
    return {"bench": "recall_query_embedding", "alone_p50_ms": round(percentile(alone, 0.5), 2),
            "beside_python_p50_ms": round(percentile(beside, 0.5), 2), "queries": queries,
            "embedder": embedder.name,
            # float32, or bfloat16 where this CPU runs that quicker (`memory.embedder`)
            "precision": getattr(embedder, "precision", "float32")}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def run(sizes: list[int], queries: int, embedder_name: str,
              embedder: Embedder | None, shared_above: int, *,
              profile: int = 0) -> list[dict[str, object]]:
    rng = random.Random(20261130)
    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as folder:
        memory = await Memory.open(Path(folder) / "bench.db", create=True,
                                   embedder=embedder)
        try:
            people = [await memory.people.add(n, owner=i == 0) for i, n in enumerate(MEMBERS)]
            scopes = [SHARED, *(private_scope(p.person_id) for p in people)]
            readers = [AccessContext.for_member(p.person_id, Activity.DM_CONVERSATION,
                                                "benchmark") for p in people]
            seen: set[str] = set()
            have = 0
            for size in sorted(sizes):
                shared = embedder is not None and size > shared_above
                if shared and embedder is not None:
                    memory.vectors.embedder = SharedVectors(embedder)
                t0 = time.perf_counter()
                await seed(memory, scopes, rng, size - have, seen)
                await seed_lines(Path(folder) / "bench.db", people, rng, size - have, seen)
                await memory.vectors.sync()
                memory.vectors.embedder = embedder  # questions are embedded by the model itself
                have = size
                seeded_s = time.perf_counter() - t0
                timings, cpu_ms = await measure(memory, readers, rng, queries,
                                                label=f"recall at {size} beliefs", profile=profile)
                results.append({
                    "bench": "recall",
                    "beliefs": size,
                    "lines": size,
                    "p50_ms": round(percentile(timings, 0.50), 2),
                    "p95_ms": round(percentile(timings, 0.95), 2),
                    "cpu_ms": round(cpu_ms, 2),
                    "rss_mb": round(rss_mb(), 1),
                    "queries": queries,
                    "embedder": embedder_name,
                    "seed_s": round(seeded_s, 1),
                    "seed_vectors": "shared" if shared else "each",
                })
                print(f"  seeded {size} beliefs and {size} lines ({seeded_s:.1f}s),"
                      f" measured {queries} recalls",
                      file=sys.stderr)
        finally:
            await memory.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--embedder", default="e5", choices=["e5", "minilm", "none"])
    parser.add_argument("--shared-above", type=int, default=10_000,
                        help="rows seeded beyond this many beliefs share vectors (see above)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="print where the time goes: the N costliest functions (cProfile)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    embedder = make_embedder(args.embedder)  # loaded once, for the sizes and the last table
    results = asyncio.run(run(sizes, args.queries, args.embedder, embedder, args.shared_above,
                              profile=args.profile))
    print_report(results, [("beliefs", "beliefs"), ("p50_ms", "p50 ms"), ("p95_ms", "p95 ms"),
                           ("cpu_ms", "CPU ms"), ("rss_mb", "rss MB")])
    if embedder is not None:
        print_report([embedding_beside_python(embedder)],
                     [("alone_p50_ms", "query alone ms"),
                      ("beside_python_p50_ms", "beside Python ms"), ("precision", "precision")])


if __name__ == "__main__":
    main()
