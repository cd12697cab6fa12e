"""The vector index: each scope's embeddings in its own matrix, searched scope by scope.

Three tiers are embedded: beliefs (what she concluded), members' lines (what was said) and the
shelf's passages (what documents sent in chat say, `memory.knowledge`).
Owns: embedding both (off the event loop, in memory's one CPU thread), storing their vectors
with the name of the model that made them, loading them into per-scope matrices at open
(re-embedding what another model embedded), taking in what another process wrote, and
dropping what was forgotten. Must not: search a scope the reader cannot see (`search` walks
`wall.visible_scopes`), read a scope's rows except through that scope's `Lane`, or rank one
model's question against another model's rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from memory import wall
from memory.classifier import classify
from memory.embedder import Embedder
from memory.errors import InvalidRequest, StoreBusy
from memory.gate import Census, Gate, Lane, Writing
from memory.models import REDACTED, AccessContext, Sensitivity
from memory.sensing import Senser, less_private_than, more_private, senser_for
from memory.store import Store
from memory.terms import forget_cached_texts

T = TypeVar("T")
log = logging.getLogger("hearth.vectors")
Matrix = npt.NDArray[np.float32]
BLOCK = 500
JUST_EMBEDDED = 4  # lines whose vectors wait for the recall that answers them
# Questions whose vectors are kept for their asker (`VectorBook.question`): more than the turns
# a household has under way at once, each of which asks its own.
QUESTIONS_KEPT = 32
# Questions asked while memory's CPU thread is busy wait together and are embedded in one call
# of at most this many: the model packs their words into one pass, which on a small machine
# costs much less than one pass each (see `VectorBook._embed_question`).
QUESTIONS_BATCHED = 8
# A member's line said in a turn is filed (embedded, its meaning read, marked as saying an older
# line again) after the reply, when memory's CPU has had no question to embed for FILE_QUIET_S:
# a household talking at once is answered first and its lines filed in the pauses between, each
# line at most FILE_WITHIN_S after it was said, however busy the chats are.
FILE_QUIET_S = 0.5
# Lines filed in one embedding: fewer passes of the model than one each, short enough that a
# question asked meanwhile does not wait long behind them.
FILED_TOGETHER = 4
FILE_WITHIN_S = 30.0
_FILE_RETRY_S = 5.0  # after the database refused to file a line (locked, disk full)
# A row this alike (cosine) to an older one of the same scope and voice says the same thing
# again: it is marked as replacing it (`VectorBook._mark_replaced`), per embedder, (lines,
# beliefs). Measured on bench/households, the changed facts' old and new words against every
# other two facts of one member in one chat: e5 at 0.89 marks 73% of the lines that changed
# and 4% of the rest, at 0.91 75% of the beliefs and 5%; MiniLM, whose scale is wider, the
# same at 0.55 and 0.64. An embedder never measured (a test's) marks only near-copies.
REPLACES = {"multilingual-e5-small-q4": (0.89, 0.91), "all-MiniLM-L6-v2": (0.55, 0.64)}
REPLACES_UNMEASURED = (0.9, 0.9)
REPLACED_MOST = 3  # older rows one new row marks, the most alike first
# Two beliefs of one scope this alike say the same thing, and the dream merges them, per
# embedder. e5's scale is narrow (unrelated sentences score 0.7-0.85, and "Bob applied for the
# job at the bakery" / "Bob was offered the job at the bakery" 0.98), so under it only a
# near-copy merges by its vector; a rephrasing kept twice costs little, two facts merged into
# one lose one. Words alike up to filler merge under any embedder (`memory.dream`).
SAME_THING = {"multilingual-e5-small-q4": 0.99, "all-MiniLM-L6-v2": 0.93}
SAME_THING_UNMEASURED = 0.93
SAME_TEXT = 0.999  # a text's cosine to itself, give or take rounding (bfloat16's too)
# A member's line says a forgotten belief again, in any words or language, when its cosine to
# the belief stands out from the scope's other lines: at least REPEATS_DEVIATIONS deviations
# over their mean and above the embedder's floor (fewer than REPEATS_MEASURED lines: the
# replacement bar for lines instead). Measured on bench/households, each fact's belief against
# every line of its chat, per language: e5 at 2.5 deviations and 0.85 finds 0.87-0.92 of the
# lines that said the fact and takes 0.4-0.6% of the rest; MiniLM at 0.5 finds 0.76-0.80 and
# takes 0.2-0.6%. An embedder never measured (a test's) leaves it to the words.
REPEATS = {"multilingual-e5-small-q4": 0.85, "all-MiniLM-L6-v2": 0.5}
REPEATS_DEVIATIONS = 2.5
REPEATS_MEASURED = 20
# A goal or a summary is measured sentence by sentence (a summary holds many things, and its
# whole vector would be like none of them), at most PIECES sentences of each.
_PIECE = re.compile(r"(?<=[.!?;])\s+|\n+")
PIECES = 24


async def raise_class(lane: Lane, tier: Tier, row_id: int, sensitivity: Sensitivity,
                      by: str) -> None:
    """Raise one row's class to `sensitivity`, saying who gave it (`sensitivity_by`): never
    lower, and never over a class a member set on their own belief."""
    milder = less_private_than(sensitivity)
    keep_own = (" AND NOT EXISTS (SELECT 1 FROM sensitivity_overrides o"
                " WHERE o.scope = beliefs.scope AND o.norm = beliefs.norm)"
                if tier is BELIEFS else "")
    await lane.update(
        tier.table, "sensitivity = ?, sensitivity_by = ?",
        f"{tier.key} = ? AND sensitivity IN ({', '.join('?' for _ in milder)})" + keep_own,
        (sensitivity.value, by, row_id, *(m.value for m in milder)),
    )


async def _alive(tx: Writing, tier: Tier, items: Sequence[tuple[int, str, str]]) -> set[int]:
    """Which of these rows (id, scope, text) are still stored with their words, each read
    through its own scope's lane."""
    by_scope: dict[str, list[int]] = {}
    for row_id, scope, _ in items:
        by_scope.setdefault(scope, []).append(row_id)
    alive: set[int] = set()
    for scope, ids in by_scope.items():
        rows = await tx.lane(scope).select(
            tier.table, f"{tier.rows} AND {tier.words} AND {tier.key} IN"
            f" ({', '.join('?' for _ in ids)})", ids, columns=f"{tier.key} AS id")
        alive.update(int(r["id"]) for r in rows)
    return alive


def _one_blas_thread() -> None:
    """Set once, as memory's CPU thread starts: the process's BLAS (numpy's products: a query
    against a scope's matrix, a tick's near pairs) runs on the calling thread alone. BLAS's own
    workers, left to themselves, spin for a while after each product, and with a recall every
    few dozen ms one of them held a core without pause (44 ms of CPU per recall at 10k, more
    than the embedding, the loop and the database thread together). A product of a query with
    10k rows takes half a millisecond on one thread. PyTorch's threads (the embedding) are its
    own and not limited here. Should the BLAS not let itself be set, it is left as it is: a
    thread that failed to start would fail every embedding after it."""
    try:
        threadpool_limits(limits=1, user_api="blas")
    except Exception:  # any failure here must leave the CPU thread working
        log.warning("the BLAS threads could not be limited; recall uses more CPU",
                    exc_info=True)


@dataclass
class ScopeVectors:
    """One scope's vectors in a contiguous, growable matrix; rows [0, size) are live."""

    dim: int
    ids: npt.NDArray[np.int64] = field(init=False)
    matrix: Matrix = field(init=False)
    size: int = 0
    at: dict[int, int] = field(default_factory=dict)  # a row's id to its place in the matrix

    def __post_init__(self) -> None:
        self.ids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, self.dim), dtype=np.float32)

    def add(self, belief_ids: list[int], vectors: Matrix) -> None:
        needed = self.size + len(belief_ids)
        if needed > len(self.ids):
            capacity = max(needed, 2 * len(self.ids), 64)
            ids = np.zeros(capacity, dtype=np.int64)
            matrix = np.zeros((capacity, self.dim), dtype=np.float32)
            ids[: self.size] = self.ids[: self.size]
            matrix[: self.size] = self.matrix[: self.size]
            self.ids, self.matrix = ids, matrix
        self.ids[self.size : needed] = belief_ids
        self.matrix[self.size : needed] = vectors
        self.at.update((row_id, self.size + i) for i, row_id in enumerate(belief_ids))
        self.size = needed

    def remove(self, belief_ids: set[int]) -> None:
        if not belief_ids or not self.size:
            return
        keep = ~np.isin(self.ids[: self.size], np.fromiter(belief_ids, dtype=np.int64))
        kept = int(keep.sum())
        self.ids[:kept] = self.ids[: self.size][keep]
        self.matrix[:kept] = self.matrix[: self.size][keep]
        self.size = kept
        self.at = {int(row_id): i for i, row_id in enumerate(self.ids[:kept])}

    def search(self, query: Matrix, top: int, spread: Spread) -> list[tuple[int, float]]:
        if not self.size:
            return []
        sims = self.matrix[: self.size] @ query
        spread.add(sims)
        picked = np.argpartition(-sims, top)[:top] if self.size > top else np.arange(self.size)
        return [(int(self.ids[i]), float(sims[i])) for i in picked]


@dataclass
class Spread:
    """How a query scores against every row a reader may see: the mean and deviation recall
    measures a candidate's similarity against (a margin over the unrelated rows, not a bar)."""

    count: int = 0
    total: float = 0.0
    squares: float = 0.0

    def add(self, sims: Matrix) -> None:
        # A row the query matches exactly is the question itself (just said, or asked before),
        # not a yardstick of what unrelated rows score.
        sims = sims[sims < SAME_TEXT]
        self.count += len(sims)
        self.total += float(sims.sum(dtype=np.float64))
        self.squares += float(np.square(sims, dtype=np.float64).sum())

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0

    @property
    def deviation(self) -> float:
        if self.count < 2:
            return 0.0
        return float(max(0.0, self.squares / self.count - self.mean**2) ** 0.5)


@dataclass
class VectorIndex:
    """Every scope's matrix. Searched only scope by scope, for scopes the wall shows."""

    dim: int
    scopes: dict[str, ScopeVectors] = field(default_factory=dict)
    where: dict[int, str] = field(default_factory=dict)

    def add(self, scope: str, belief_ids: list[int], vectors: Matrix) -> None:
        if not belief_ids:
            return
        self.scopes.setdefault(scope, ScopeVectors(self.dim)).add(belief_ids, vectors)
        for belief_id in belief_ids:
            self.where[belief_id] = scope

    def remove(self, belief_ids: Iterable[int]) -> None:
        by_scope: dict[str, set[int]] = {}
        for belief_id in belief_ids:
            scope = self.where.pop(belief_id, None)
            if scope is not None:
                by_scope.setdefault(scope, set()).add(belief_id)
        for scope, ids in by_scope.items():
            self.scopes[scope].remove(ids)

    def has(self, belief_id: int) -> bool:
        return belief_id in self.where

    def near_pairs(self, scope: str, belief_ids: Iterable[int], threshold: float) -> list[
        tuple[int, int]
    ]:
        """Pairs among `belief_ids` of one scope whose vectors are at least `threshold` alike."""
        vectors = self.scopes.get(scope)
        wanted = set(belief_ids)
        if vectors is None or len(wanted) < 2:
            return []
        rows = [i for i in range(vectors.size) if int(vectors.ids[i]) in wanted]
        if len(rows) < 2:
            return []
        matrix = vectors.matrix[rows]
        ids = [int(vectors.ids[i]) for i in rows]
        pairs: list[tuple[int, int]] = []
        for start in range(0, len(ids), 512):  # blocks keep a big scope's memory flat
            sims = matrix[start : start + 512] @ matrix.T
            for bi, j in zip(*np.nonzero(sims >= threshold), strict=True):
                i = start + int(bi)
                if i < int(j):
                    pairs.append((ids[i], ids[int(j)]))
        return pairs

    def search(self, ctx: AccessContext, query: Matrix, top: int,
               spread: Spread) -> dict[int, float]:
        """Similarities of the `top` rows nearest the query across every scope this reader may
        see, each scope's matrix searched on its own; every visible row measures the query
        (`spread`). The nearest of them all, not `top` of each: a member's DM sees two scopes,
        and a quota of each was twice the rows to read and rank, most of them far from the
        query (bench.recall at 10k, interleaved: 2 ms less CPU per recall; the household
        benchmark and the probes rank and abstain exactly as before)."""
        found: dict[int, float] = {}
        for scope in wall.visible_scopes(ctx):
            vectors = self.scopes.get(scope)
            if vectors is not None:
                found.update(vectors.search(query, top, spread))
        if len(found) > top:
            found = dict(sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))[:top])
        return found

    def ids(self) -> set[int]:
        return set(self.where)

    def vectors(self, ids: Iterable[int]) -> dict[int, Matrix]:
        """The vectors of these rows (those the index holds), by id."""
        out: dict[int, Matrix] = {}
        for row_id in ids:
            scope = self.where.get(row_id)
            if scope is None:
                continue
            block = self.scopes[scope]
            at = block.at.get(row_id)
            if at is not None:
                out[row_id] = block.matrix[at]
        return out

    def standing_out(self, scope: str, vectors: Matrix, floor: float, few: float) -> set[int]:
        """Rows of `scope` whose cosine to any of `vectors` stands out from the scope's rows:
        `REPEATS_DEVIATIONS` over their mean and at least `floor`; with fewer than
        `REPEATS_MEASURED` rows to measure by, at least `few`."""
        block = self.scopes.get(scope)
        if block is None or not block.size or not len(vectors):
            return set()
        sims = vectors @ block.matrix[: block.size].T
        hit = (sims >= self._bars(sims, floor, few)[:, None]).any(axis=0)
        return {int(row_id) for row_id in block.ids[: block.size][hit]}

    def bars(self, scope: str, vectors: Matrix, floor: float, few: float) -> Matrix:
        """For each of `vectors`, the cosine a text must reach to stand out from the rows of
        `scope` as `standing_out` measures it: what a text kept without a vector (a goal, a
        summary's sentence) is held to."""
        block = self.scopes.get(scope)
        if block is None or not block.size:
            return np.full(len(vectors), few, dtype=np.float32)
        return self._bars(vectors @ block.matrix[: block.size].T, floor, few)

    @staticmethod
    def _bars(sims: Matrix, floor: float, few: float) -> Matrix:
        if sims.shape[1] >= REPEATS_MEASURED:
            spread = sims.mean(axis=1) + REPEATS_DEVIATIONS * sims.std(axis=1)
            bars: Matrix = np.maximum(floor, spread).astype(np.float32)
            return bars
        return np.full(len(sims), few, dtype=np.float32)

    def older(self, scope: str, vector: Matrix, row_id: int, threshold: float,
              most: int) -> list[tuple[int, float]]:
        """The `most` rows of `scope` added before `row_id` (a smaller id) that are at least
        `threshold` alike to `vector`, the most alike first."""
        block = self.scopes.get(scope)
        if block is None or not block.size:
            return []
        sims = block.matrix[: block.size] @ vector
        hits = np.flatnonzero((sims >= threshold) & (block.ids[: block.size] < row_id))
        order = hits[np.argsort(-sims[hits], kind="stable")][:most]
        return [(int(block.ids[i]), float(sims[i])) for i in order]


@dataclass(frozen=True)
class Tier:
    """A table whose rows are embedded: its key, its words, its vectors, which of its rows."""

    table: str
    key: str
    text: str
    vectors: str
    rows: str  # which rows, in columns the census may read
    words: str  # and of those, whose words are embedded (a lane's condition)
    noun: str  # what its rows are called in the log


BELIEFS = Tier("beliefs", "belief_id", "proposition", "belief_vectors", "1", "1", "beliefs")
# Members' lines (hers are not evidence); a forgotten line's words are gone, and so is its vector.
LINES = Tier("turns", "turn_id", "text", "turn_vectors", "role = 'user'", f"text != '{REDACTED}'",
             "lines")
# The shelf's passages: embedded, with the line that situates each, when a document is put on
# the shelf (`memory.knowledge`); only a passage another model embedded is embedded here.
PASSAGES = Tier("chunks", "chunk_id", "text", "chunk_vectors", "1", "1", "passages")
TIERS = (BELIEFS, LINES, PASSAGES)


@dataclass
class Similar:
    """A query's nearest visible beliefs and lines, and how it scores against all of them."""

    beliefs: dict[int, float] = field(default_factory=dict)
    lines: dict[int, float] = field(default_factory=dict)
    spread: Spread = field(default_factory=Spread)
    vector: Matrix | None = None  # the question's own


class VectorBook:
    """The embedder and the indexes together; a book of `Memory` (`memory.vectors`)."""

    def __init__(self, store: Store, gate: Gate, embedder: Embedder | None,
                 now: Callable[[], datetime] | None = None) -> None:
        self._store = store
        self._gate = gate
        self.embedder = embedder
        self._now = now or (lambda: datetime.now(UTC))
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hearth-cpu",
                                            initializer=_one_blas_thread)
        self.index: VectorIndex | None = None if embedder is None else VectorIndex(embedder.dim)
        self.lines: VectorIndex | None = None if embedder is None else VectorIndex(embedder.dim)
        self.passages: VectorIndex | None = (None if embedder is None
                                             else VectorIndex(embedder.dim))
        self._unembedded: set[int] = set()  # forgotten lines: nothing left to embed
        self._forgets_seen: int | None = None  # tombstones at the last sync
        # The vectors of the last few lines stored one by one, each kept until a recall asks
        # with the same words (the reply to a line recalls with that line): embedded once.
        # Only for a symmetric embedder, whose question vector is the stored row's. Only a
        # reader who may see the line takes its vector: no one learns, by how soon their
        # recall answers, what someone else just said.
        self._just_embedded: dict[str, tuple[str, Matrix]] = {}
        # Members' lines waiting to be filed (`file_later`), oldest first, with when each was
        # said (monotonic seconds); when memory last embedded a question; the task filing them.
        self._waiting: deque[tuple[float, tuple[int, str, str]]] = deque()
        self._asked_at = 0.0
        self._filing = asyncio.Lock()
        self._filer: asyncio.Task[None] | None = None
        # The last few questions' vectors, by who asked them and their words (`question`);
        # with a symmetric embedder, a line filed after the reply takes its question's too.
        self._questions: dict[tuple[str, str], asyncio.Future[Matrix]] = {}
        # Questions waiting for the CPU thread, and whether a call to embed them is queued
        # there; both shared with that thread, under the lock.
        self._asking: list[tuple[str, asyncio.Future[Matrix]]] = []
        self._asking_queued = False
        self._asking_lock = threading.Lock()

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)

    def _index(self, tier: Tier) -> VectorIndex | None:
        return {BELIEFS.table: self.index, LINES.table: self.lines,
                PASSAGES.table: self.passages}[tier.table]

    @property
    def _model(self) -> str:
        """The embedder's name, which the measured bars are kept under ("" without one)."""
        return "" if self.embedder is None else self.embedder.name

    @property
    def _senser(self) -> Senser | None:
        return None if self.embedder is None else senser_for(self.embedder.name)

    async def off_loop(self, fn: Callable[[], T]) -> T:
        """Run CPU work in memory's own thread, never on the event loop."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn)

    async def embed(self, texts: list[str]) -> Matrix | None:
        """Vectors of rows to store (`Embedder.embed`); None without an embedder."""
        embedder = self.embedder
        if embedder is None or not texts:
            return None
        return await self.off_loop(lambda: embedder.embed(texts))

    async def classes(self, texts: list[str]) -> list[Sensitivity]:
        """The class of each text about to be stored without a vector of its own (a goal or
        a reminder's): the word rules' reading, raised to the more private class the fitted
        reader finds in its meaning (`memory.sensing`). The words alone under an embedder
        never fitted on, or when the embedder fails: what was asked for is kept either way."""
        by_words = [classify(text) for text in texts]
        senser = self._senser
        if senser is None:
            return by_words
        try:
            vectors = await self.embed(texts)
        except Exception:
            log.exception("a text's meaning could not be read; its words class it")
            return by_words
        if vectors is None:
            return by_words
        return [c if sensed is None else more_private(c, sensed.sensitivity)
                for c, sensed in zip(by_words, senser.read(vectors), strict=True)]

    async def similar(self, ctx: AccessContext, query: str, top: int) -> Similar | None:
        """The reader's visible beliefs and lines nearest `query`, embedded as a question
        (`Embedder.embed_query`): of each tier, the `top` nearest across the scopes they see
        (None without an embedder)."""
        said = self._just_embedded.get(query)
        if said is not None and said[0] in wall.visible_scopes(ctx):
            q: Matrix | None = self._just_embedded.pop(query)[1][0]
        else:
            q = await self.question(query, asker=ctx.actor)
        beliefs, lines = self.index, self.lines
        if q is None or beliefs is None or lines is None:
            return None

        def both() -> Similar:
            found = Similar(vector=q)
            found.beliefs = beliefs.search(ctx, q, top, found.spread)
            found.lines = lines.search(ctx, q, top, found.spread)
            return found

        return await self.off_loop(both)

    async def question(self, query: str, *, asker: str | None = None) -> Matrix | None:
        """A question's vector (`Embedder.embed_query`), on memory's CPU thread; None without
        an embedder or words. The same words asked again by the same `asker` (recall, then
        the shelf, answering one line; or a turn that began embedding them early, `foresee`)
        take the vector made or being made: only the asker's own, so no one learns by how
        soon they are answered what someone else asked."""
        embedder = self.embedder
        if embedder is None or not query.strip():
            return None
        if asker is None:
            return await self._embed_question(query)
        # Shielded: a caller that gives up does not stop the embedding another awaits.
        return await asyncio.shield(self._question_for(query, asker))

    def foresee(self, query: str, *, asker: str) -> None:
        """Begin embedding a question `asker` is about to ask (`question`), while the turn
        does its other work first."""
        if self.embedder is not None and query.strip():
            self._question_for(query, asker)

    def _question_for(self, query: str, asker: str) -> asyncio.Future[Matrix]:
        """The embedding of `asker`'s question, made or being made; a failed one is not kept."""
        key = (asker, query)
        known = self._questions.get(key)
        if known is not None and not (known.done() and (known.cancelled()
                                                         or known.exception() is not None)):
            return known
        made = asyncio.ensure_future(self._embed_question(query))
        made.add_done_callback(lambda f: None if f.cancelled() else f.exception())
        self._questions[key] = made
        while len(self._questions) > QUESTIONS_KEPT:
            del self._questions[next(iter(self._questions))]
        return made

    def _asked_with(self, words: str) -> Matrix | None:
        """A symmetric embedder's vector of these words, already made for a question (any
        asker's: the filer hands nothing to a reader). None for an asymmetric embedder, whose
        rows are not embedded as questions."""
        if self.embedder is None or not self.embedder.symmetric:
            return None
        for (_, query), made in self._questions.items():
            if query == words and made.done() and not made.cancelled() \
                    and made.exception() is None:
                return made.result()
        return None

    async def _embed_question(self, query: str) -> Matrix:
        """One question's vector. Questions asked while the CPU thread is busy (a household
        talking at once) wait for it together and are embedded in one call, up to
        `QUESTIONS_BATCHED`: the first question of a quiet moment starts at once, alone."""
        embedder = self.embedder
        if embedder is None:
            raise InvalidRequest("no embedder to embed a question with")
        loop = asyncio.get_running_loop()
        made: asyncio.Future[Matrix] = loop.create_future()
        self._asked_at = time.monotonic()
        with self._asking_lock:
            self._asking.append((query, made))
            start = not self._asking_queued
            self._asking_queued = True
        if start:
            self._queue_asking(embedder)
        try:
            return await made
        finally:
            self._asked_at = time.monotonic()

    def _embed_asking(self, embedder: Embedder) -> list[tuple[asyncio.Future[Matrix], Matrix]]:
        """On the CPU thread: the questions waiting when it got here, embedded in one call (the
        rest, past `QUESTIONS_BATCHED`, queue the next call)."""
        with self._asking_lock:
            batch = self._asking[:QUESTIONS_BATCHED]
            del self._asking[:QUESTIONS_BATCHED]
            more = bool(self._asking)
            self._asking_queued = more
        if not batch:  # what this call was queued for was refused meanwhile (memory closing)
            return []
        if more:
            # Queued behind this call, from the loop: the executor is not to be touched here.
            self._loop_of(batch).call_soon_threadsafe(self._queue_asking, embedder)
        try:
            vectors = embedder.embed_query([query for query, _ in batch])
        except Exception as error:
            self._loop_of(batch).call_soon_threadsafe(self._fail, batch, error)
            raise
        return [(made, vectors[i]) for i, (_, made) in enumerate(batch)]

    @staticmethod
    def _loop_of(batch: list[tuple[str, asyncio.Future[Matrix]]]) -> asyncio.AbstractEventLoop:
        return batch[0][1].get_loop()

    def _queue_asking(self, embedder: Embedder) -> None:
        """Queue a call to embed what waits on the CPU thread; if the thread is gone (memory
        closing), every waiting question fails instead of waiting for ever."""
        try:
            job = asyncio.get_running_loop().run_in_executor(self._executor, self._embed_asking,
                                                             embedder)
        except RuntimeError as error:
            self._fail_waiting(error)
            return
        job.add_done_callback(self._answer_asking)

    def _answer_asking(self, job: asyncio.Future[list[tuple[asyncio.Future[Matrix], Matrix]]]
                       ) -> None:
        if job.cancelled():  # the thread stopped before the call ran: nothing was taken
            self._fail_waiting(InvalidRequest("memory closed before the question was embedded"))
            return
        if job.exception() is not None:
            return  # the call failed its own questions
        for made, vector in job.result():
            if not made.done():
                made.set_result(vector)

    def _fail_waiting(self, error: Exception) -> None:
        with self._asking_lock:
            batch, self._asking = self._asking, []
            self._asking_queued = False
        self._fail(batch, error)

    @staticmethod
    def _fail(batch: list[tuple[str, asyncio.Future[Matrix]]], error: Exception) -> None:
        for _, made in batch:
            if not made.done():
                made.set_exception(error)

    # --- filing members' lines after the reply ---------------------------------------------

    def file_later(self, items: Sequence[tuple[int, str, str]]) -> None:
        """Keep these members' lines (id, scope, text), just stored, to be filed as `store`
        would, once memory's CPU is quiet (`FILE_QUIET_S`) or at the latest `FILE_WITHIN_S`
        after: the turn that stored them answers without waiting for their embedding. Until a
        line is filed its meaning is unread (`unfiled`)."""
        if self.embedder is None or self.lines is None or not items:
            return
        said = time.monotonic()
        self._asked_at = said
        self._waiting.extend((said, item) for item in items)
        if self._filer is None or self._filer.done():
            self._filer = asyncio.get_running_loop().create_task(self._file_when_quiet())

    async def stop_filing(self) -> None:
        """Stop the filer before the store closes under it: a line it was filing is rolled
        back whole, and what still waits has no vector, so the next `load` files it."""
        filer, self._filer = self._filer, None
        if filer is not None and not filer.done():
            filer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await filer

    @property
    def unfiled(self) -> frozenset[int]:
        """Ids of members' lines stored but not yet filed: their meaning is not yet read."""
        return frozenset(item[0] for _, item in self._waiting)

    async def file_waiting(self) -> None:
        """File every line waiting now (the tick's work and the proactive pass read what was
        said as filed, never before its meaning is read)."""
        while self._waiting:
            await self._file_one()

    async def _file_when_quiet(self) -> None:
        while self._waiting:
            now = time.monotonic()
            due = min(self._asked_at + FILE_QUIET_S, self._waiting[0][0] + FILE_WITHIN_S)
            if now < due:
                await asyncio.sleep(due - now)
                continue
            try:
                await self._file_one()
            except StoreBusy as exc:
                log.warning("a line could not be filed just now (%s); trying again in %.0f s",
                            exc, _FILE_RETRY_S)
                await asyncio.sleep(_FILE_RETRY_S)

    async def _file_one(self) -> None:
        """File the oldest waiting lines, up to `FILED_TOGETHER` in one embedding; each leaves
        the queue once it is stored, or once it failed for good (it has no vector then, and
        the next open's `load` tries again): one line that cannot be filed never holds up the
        lines after it. A busy database (StoreBusy) keeps them waiting."""
        async with self._filing:
            batch = [item for _, item in itertools.islice(self._waiting, FILED_TOGETHER)]
            if not batch:
                return
            if len(batch) == 1:
                await self._file_alone(batch[0])
            else:
                try:
                    await self._file(batch)
                except StoreBusy:
                    raise
                except Exception:
                    # Which line failed is not known: each is tried alone.
                    log.debug("a batch of lines could not be filed together", exc_info=True)
                    for item in batch:
                        await self._file_alone(item)
            for item in batch:
                if self._waiting and self._waiting[0][1] is item:
                    self._waiting.popleft()

    async def _file(self, items: list[tuple[int, str, str]]) -> None:
        """Store these lines' vectors: a line a symmetric embedder already embedded as a
        question takes that vector, the rest are embedded in one call."""
        given = [self._asked_with(text) for _, _, text in items]
        fresh = [item for item, vector in zip(items, given, strict=True) if vector is None]
        asked = [(item, vector) for item, vector in zip(items, given, strict=True)
                 if vector is not None]
        if fresh:
            await self.store(fresh, LINES)
        if asked:
            await self.store([item for item, _ in asked], LINES,
                             given=np.stack([vector for _, vector in asked]))

    async def _file_alone(self, item: tuple[int, str, str]) -> None:
        try:
            await self._file([item])
        except StoreBusy:
            raise
        except Exception:
            log.exception("a line could not be filed; the next start files it")

    async def nearest_passages(self, ctx: AccessContext, vector: Matrix, top: int,
                               among: Sequence[int] = ()) -> tuple[dict[int, float], Spread]:
        """The `top` passages nearest `vector` across the scopes this reader may see, the
        cosine of each of `among` too (passages found by their words), and how the question
        scores against every visible passage."""
        index = self.passages
        if index is None:
            return {}, Spread()

        def run() -> tuple[dict[int, float], Spread]:
            spread = Spread()
            found = index.search(ctx, vector, top, spread)
            for row_id, v in index.vectors(i for i in among if i not in found).items():
                found[row_id] = float(v @ vector)
            return found, spread

        return await self.off_loop(run)

    def sees_passages(self, ctx: AccessContext) -> bool:
        """Whether any passage of a scope this reader may see is in this process's matrices
        (a document put by another process joins them at the next `sync`)."""
        index = self.passages
        return index is not None and any(
            (block := index.scopes.get(scope)) is not None and block.size > 0
            for scope in wall.visible_scopes(ctx))

    def add_passages(self, scope: str, ids: list[int], vectors: Matrix) -> None:
        """Passages just stored with their vectors (`memory.knowledge`) join their scope's
        matrix."""
        if self.passages is not None:
            self.passages.add(scope, ids, vectors)

    def remove_passages(self, ids: Iterable[int]) -> None:
        if self.passages is not None:
            self.passages.remove(ids)

    def cosines(self, vector: Matrix, keys: Sequence[tuple[str, int]]) -> dict[
        tuple[str, int], float
    ]:
        """How alike the question's `vector` is to each of these rows (table, id) read through
        the gate already: rows without a vector are left out. A few dozen dot products."""
        out: dict[tuple[str, int], float] = {}
        for table, index in ((BELIEFS.table, self.index), (LINES.table, self.lines)):
            if index is not None:
                got = index.vectors(row_id for tier, row_id in keys if tier == table)
                out.update(((table, row_id), float(v @ vector)) for row_id, v in got.items())
        return out

    def said_again(self, scope: str, belief_ids: Iterable[int]) -> set[int]:
        """The members' lines of `scope` that say what these beliefs of it say, by meaning
        (`REPEATS`): what a forget of them scrubs beside the lines that repeat their words.
        Nothing under an embedder never measured, or for a belief without a vector."""
        forgotten = self._forgotten(scope, belief_ids)
        if forgotten is None or self.lines is None:
            return set()
        beliefs, floor, few = forgotten
        return self.lines.standing_out(scope, beliefs, floor, few)

    def _forgotten(self, scope: str,
                   belief_ids: Iterable[int]) -> tuple[Matrix, float, float] | None:
        """The vectors of these beliefs of `scope`, with the embedder's floor for what says
        them again and the bar for a scope with too few lines to measure by; None under an
        embedder never measured, or when none of them has a vector."""
        floor = REPEATS.get(self._model)
        if floor is None or self.index is None:
            return None
        got = [v for row_id, v in self.index.vectors(belief_ids).items()
               if self.index.where.get(row_id) == scope]
        if not got:
            return None
        lines, _ = REPLACES.get(self._model, REPLACES_UNMEASURED)
        return np.stack(got), floor, lines

    async def pieces(self, texts: Sequence[str]) -> list[Matrix] | None:
        """Each text's sentences embedded (at most `PIECES` of each), in one call off the loop:
        a goal or a summary, which keep no vectors, measured as `said_again` measures lines.
        None under an embedder never measured."""
        if REPEATS.get(self._model) is None or self.embedder is None or not texts:
            return None
        split = [[p for p in _PIECE.split(t) if p.strip()][:PIECES] or [t] for t in texts]
        vectors = await self.embed([p for parts in split for p in parts])
        if vectors is None:
            return None
        out, at = [], 0
        for parts in split:
            out.append(vectors[at : at + len(parts)])
            at += len(parts)
        return out

    def say_again(self, scope: str, belief_ids: Iterable[int],
                  measured: dict[T, Matrix]) -> set[T]:
        """Which of `measured` (texts' `pieces`) say what these beliefs of `scope` say: a
        piece as alike to a belief as a line of the scope that `said_again` would take."""
        forgotten = None if not measured else self._forgotten(scope, belief_ids)
        if forgotten is None or self.lines is None:
            return set()
        beliefs, floor, few = forgotten
        bars = self.lines.bars(scope, beliefs, floor, few)
        return {key for key, pieces in measured.items()
                if len(pieces) and ((beliefs @ pieces.T) >= bars[:, None]).any()}

    @property
    def same_thing(self) -> float:
        """How alike two beliefs must be to say the same thing, under this embedder."""
        return SAME_THING.get(self._model, SAME_THING_UNMEASURED)

    def near(self, scope: str, threshold: float) -> Callable[[list[int]], list[tuple[int, int]]]:
        index = self.index
        if index is None:
            return lambda ids: []
        return lambda ids: index.near_pairs(scope, ids, threshold)

    def remove(self, belief_ids: Iterable[int]) -> None:
        if self.index is not None:
            self.index.remove(belief_ids)

    async def prune(self, *, forgot: bool = True) -> None:
        """Drop from memory what the store no longer has: the vectors of beliefs and lines a
        forget removed (or a member's removal), and every cache of texts
        (`memory.terms.text_cache`), which are keyed by the texts themselves. `forgot=False`
        (a sync) empties the caches only when something was gone."""
        gone = 0
        self._just_embedded.clear()
        self._questions.clear()
        if self._waiting:  # a forgotten line's words leave the queue too
            async with self._filing, self._gate.writing() as tx:
                alive = await _alive(tx, LINES, [item for _, item in self._waiting])
            self._waiting = deque(w for w in self._waiting if w[1][0] in alive)
        for tier in TIERS:
            index = self._index(tier)
            if index is None:
                continue
            held = index.ids()  # before the read: a row added meanwhile is not "gone"
            async with self._store.transaction() as tx:
                kept = {int(r["id"]) for r in await Census(tx).select(
                    tier.vectors, f"{tier.key} AS id")}
            index.remove(held - kept)
            gone += len(held - kept)
        if forgot or gone:
            forget_cached_texts()

    async def _forgets(self) -> int:
        async with self._store.transaction() as tx:
            rows = await Census(tx).select("tombstones", "count(*) AS n")
        return int(rows[0]["n"])

    async def sync(self) -> None:
        """Take in beliefs and lines another process wrote (`hearth tick`, `hearth remember`
        or `hearth chat` while the bot runs): their vectors join this process's matrices, so
        semantic recall finds them. Reads only ids until it finds rows the matrices lack.
        What another process forgot meanwhile leaves this one's memory too (`prune`). Lines
        this process has yet to file are filed first."""
        await self.file_waiting()
        forgets = await self._forgets()
        await self.prune(forgot=forgets != self._forgets_seen)
        self._forgets_seen = forgets
        for tier in TIERS:
            index = self._index(tier)
            if index is None:
                return
            async with self._store.transaction() as tx:
                rows = await Census(tx).select(tier.table, f"{tier.key} AS id, scope", tier.rows,
                                               order=tier.key)
            new: dict[str, list[int]] = {}
            for r in rows:
                if not index.has(int(r["id"])) and int(r["id"]) not in self._unembedded:
                    new.setdefault(str(r["scope"]), []).append(int(r["id"]))
            lacking = [(scope, await self._load_stored(tier, scope, ids[start : start + BLOCK]))
                       for scope, ids in new.items() for start in range(0, len(ids), BLOCK)]
            await self._embed_lacking(tier, lacking)

    async def load(self) -> None:
        """Build every scope's matrices from stored vectors, and embed, before the handle is
        handed out, every row that has no vector of this embedder's model: rows written while
        no embedder was set, and rows another model embedded (the household chose another
        embedder), whose vectors are replaced. A question is never ranked against rows of
        another model, whose vectors mean nothing to its own."""
        for tier in TIERS:
            if self._index(tier) is None or self.embedder is None:
                return
            async with self._store.transaction() as tx:
                census = Census(tx)
                scopes = [str(r["scope"]) for r in await census.select(
                    tier.table, "DISTINCT scope", tier.rows, order="scope")]
                others = await census.select(tier.vectors, "model, count(*) AS n", "model != ?",
                                             (self.embedder.name,), group="model",
                                             order="model")
            if others:
                log.info("%s %s have vectors of %s: re-embedding them for %s before recall"
                         " uses them", sum(int(r["n"]) for r in others), tier.noun,
                         ", ".join(str(r["model"]) for r in others), self.embedder.name)
            lacking = [(scope, await self._load_stored(tier, scope, None)) for scope in scopes]
            await self._embed_lacking(tier, lacking, switched=bool(others))

    async def _load_stored(self, tier: Tier, scope: str, only: Sequence[int] | None) -> list[int]:
        """Put one scope's stored vectors of this embedder's model (of `only` these rows, when
        given) into its matrix; return the ids of its rows that have none."""
        index = self._index(tier)
        if self.embedder is None or index is None:
            return []
        model, key = self.embedder.name, tier.key
        among, params = f"{tier.rows} AND {tier.words}", tuple[int, ...]()
        named = "1"
        if only is not None:
            named = f"{key} IN ({', '.join('?' for _ in only)})"
            among += f" AND {named}"
            params = tuple(only)
        async with self._gate.writing() as tx:
            lane = tx.lane(scope)
            every = [int(r["id"]) for r in await lane.select(
                tier.table, among, params, columns=f"{key} AS id")]
            if only is not None and tier is LINES:
                self._unembedded.update(set(only) - set(every))
            # The scope's vectors under this model, of the rows just counted (a lane reads
            # one table at a time: its conditions name no other).
            wanted = set(every)
            stored = [r for r in await lane.select(
                tier.vectors, f"model = ? AND {named}", (model, *params),
                columns=f"{key} AS id, vector", order=key) if int(r["id"]) in wanted]
        if stored:
            ids = [int(r["id"]) for r in stored]
            blob = b"".join(bytes(r["vector"]) for r in stored)
            matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(ids), self.embedder.dim)
            index.add(scope, ids, matrix)
        have = {int(r["id"]) for r in stored}
        return [i for i in every if i not in have]

    async def _embed_lacking(self, tier: Tier, lacking: Sequence[tuple[str, list[int]]], *,
                             switched: bool = False) -> None:
        """Embed and keep these rows of each scope, a `BLOCK` at a time: each block's words
        read through its scope's lane, embedded outside any transaction, and stored in one.
        A job of more than a block, or one replacing another model's vectors (`switched`),
        logs each block: 10,000 lines take a minute or two."""
        if self.embedder is None:
            return
        total = sum(len(ids) for _, ids in lacking)
        level = logging.INFO if switched or total > BLOCK else logging.DEBUG
        done = 0
        for scope, ids in lacking:
            for start in range(0, len(ids), BLOCK):
                chunk = ids[start : start + BLOCK]
                among = f"{tier.key} IN ({', '.join('?' for _ in chunk)}) AND {tier.words}"
                async with self._gate.writing() as tx:  # a line forgotten since is skipped
                    rows = await tx.lane(scope).select(
                        tier.table, among, chunk,
                        columns=f"{tier.key} AS id, {tier.text} AS words", order=tier.key)
                await self._keep([(int(r["id"]), scope, str(r["words"])) for r in rows], tier)
                done += len(chunk)
                log.log(level, "%s %d/%d %s for %s", "re-embedding" if switched else "embedding",
                        done, total, tier.noun, self.embedder.name)

    async def store(self, items: Sequence[tuple[int, str, str]], tier: Tier = BELIEFS, *,
                    given: Matrix | None = None) -> None:
        """Embed and keep (id, scope, text) for beliefs (or lines) just written, and add them
        to their scope's matrix (`given`: their vectors, already made by a symmetric
        embedder). A row forgotten meanwhile is skipped."""
        kept = await self._keep(items, tier, given)
        await self._mark_replaced(items, kept, tier)
        symmetric = self.embedder is not None and self.embedder.symmetric
        if symmetric and tier is LINES and len(items) == 1 and items[0][0] in kept:
            row_id, scope, text = items[0]
            self._just_embedded[text] = (scope, kept[row_id][None, :])
            while len(self._just_embedded) > JUST_EMBEDDED:
                del self._just_embedded[next(iter(self._just_embedded))]

    async def _mark_replaced(self, items: Sequence[tuple[int, str, str]],
                             kept: dict[int, Matrix], tier: Tier) -> None:
        """Mark the older rows of the same scope and voice that these rows, just said, say
        again (`REPLACES`): a member's newer word on a thing (`replacements`, which recall's
        judge reads). A line's voice is its speaker; a belief's, its scope and subject."""
        index = self._index(tier)
        if index is None or not kept:
            return
        lines, beliefs = REPLACES.get(self._model, REPLACES_UNMEASURED)
        threshold = lines if tier is LINES else beliefs
        scopes = {row_id: scope for row_id, scope, _ in items if row_id in kept}

        def near() -> dict[int, list[tuple[int, float]]]:
            return {row_id: index.older(scopes[row_id], vector, row_id, threshold,
                                        REPLACED_MOST * 4)
                    for row_id, vector in kept.items()}

        found = {row_id: hits for row_id, hits in (await self.off_loop(near)).items() if hits}
        if not found:
            return
        now = self._now().isoformat()
        voice = "speaker_id" if tier is LINES else "subject_id"
        async with self._gate.writing() as tx:
            marks: dict[str, list[tuple[str, int, int, str, float, str]]] = {}
            for row_id, hits in found.items():
                scope = scopes[row_id]
                wanted = [row_id, *(old for old, _ in hits)]
                rows = await tx.lane(scope).select(
                    tier.table, f"{tier.key} IN ({', '.join('?' for _ in wanted)})", wanted,
                    columns=f"{tier.key} AS id, {voice} AS voice")
                voices = {int(r["id"]): r["voice"] for r in rows}
                if row_id not in voices:
                    continue
                same = [(old, sim) for old, sim in hits
                        if old in voices and voices[old] == voices[row_id]]
                marks.setdefault(scope, []).extend((tier.table, old, row_id, scope, sim, now)
                                                   for old, sim in same[:REPLACED_MOST])
            for scope, marked in marks.items():
                await tx.lane(scope).insert_many(
                    "replacements", ("tier", "old_id", "new_id", "scope", "similarity", "at"),
                    marked, ignore=True)

    async def _sense(self, tx: Writing, tier: Tier, items: Sequence[tuple[int, str, str]],
                     vectors: Matrix, alive: set[int]) -> None:
        """Raise the class of rows whose meaning the fitted reader finds more private than the
        word rules did (`memory.sensing`), in the transaction that stores their vectors: a row
        is never recallable under the milder class once its vector exists. A belief a member
        classed themselves keeps their class."""
        senser = self._senser
        if senser is None:
            return
        for (row_id, scope, _), sensed in zip(items, senser.read(vectors), strict=True):
            if sensed is not None and row_id in alive:
                await raise_class(tx.lane(scope), tier, row_id, sensed.sensitivity, sensed.why)

    async def _keep(self, items: Sequence[tuple[int, str, str]], tier: Tier,
                    given: Matrix | None = None) -> dict[int, Matrix]:
        """Embed these rows (unless `given` their vectors), store their vectors under this
        embedder's model (replacing any other model's: a row has one vector) and add them to
        their scopes' matrices; the vectors kept, by id. A row forgotten meanwhile is
        skipped."""
        index = self._index(tier)
        if self.embedder is None or index is None or not items:
            return {}
        vectors = given if given is not None else await self.embed([t for _, _, t in items])
        if vectors is None:
            return {}
        model, key = self.embedder.name, tier.key
        async with self._gate.writing() as tx:
            # Alive: still there and not forgotten (a forget may have ended while it embedded).
            alive = await _alive(tx, tier, items)
            kept: dict[str, list[tuple[int, str, bytes]]] = {}
            for i, (row_id, scope, _) in enumerate(items):
                if row_id in alive:
                    kept.setdefault(scope, []).append((row_id, model, vectors[i].tobytes()))
            for scope, fresh in kept.items():
                await tx.lane(scope).insert_many(tier.vectors, (key, "model", "vector"), fresh,
                                                 replace=True)
            await self._sense(tx, tier, items, vectors, alive)
        by_scope: dict[str, list[int]] = {}
        for i, (row_id, scope, _) in enumerate(items):
            if row_id in alive and not index.has(row_id):
                by_scope.setdefault(scope, []).append(i)
        for scope, rows in by_scope.items():
            index.add(scope, [items[i][0] for i in rows], vectors[rows])
        return {row_id: vectors[i] for i, (row_id, _, _) in enumerate(items) if row_id in alive}
