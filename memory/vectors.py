"""The vector index: each scope's embeddings in its own matrix, searched scope by scope.

Two tiers are embedded: beliefs (what she concluded) and members' lines (what was said).
Owns: embedding both (off the event loop, in memory's one CPU thread), storing their vectors,
loading them into per-scope matrices at open, taking in what another process wrote, and
dropping what was forgotten. Must not: search a scope the reader cannot see (`search` walks
`wall.visible_scopes`), or read a scope's rows except through that scope's `Lane`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import combinations
from typing import TypeVar

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from memory import wall
from memory.embedder import Embedder
from memory.gate import Census, Lane
from memory.models import REDACTED, AccessContext
from memory.store import Store
from memory.terms import forget_cached_texts

T = TypeVar("T")
log = logging.getLogger("hearth.vectors")
Matrix = npt.NDArray[np.float32]
BLOCK = 500
JUST_EMBEDDED = 4  # lines whose vectors wait for the recall that answers them
SAME_TEXT = 0.999  # a text's cosine to itself, give or take rounding (bfloat16's too)


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
        self.size = needed

    def remove(self, belief_ids: set[int]) -> None:
        if not belief_ids or not self.size:
            return
        keep = ~np.isin(self.ids[: self.size], np.fromiter(belief_ids, dtype=np.int64))
        kept = int(keep.sum())
        self.ids[:kept] = self.ids[: self.size][keep]
        self.matrix[:kept] = self.matrix[: self.size][keep]
        self.size = kept

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

    def calibrated(self, mean: float, deviation: float, rows: int) -> tuple[float, float]:
        """The mean and deviation with `rows` more rows of a prior's (`mean`, `deviation`)
        counted in: a yardstick that a scope of a few rows cannot bend."""
        count = self.count + rows
        total = self.total + rows * mean
        squares = self.squares + rows * (deviation**2 + mean**2)
        blended = total / count
        return blended, float(max(0.0, squares / count - blended**2) ** 0.5)

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

    def newer_alike(self, row_ids: Iterable[int], threshold: float, most: int) -> dict[
        int, list[int]
    ]:
        """For each of these rows, up to `most` rows of its own scope added after it (a greater
        id) and at least `threshold` alike (cosine), the most alike first: one product per
        scope, of its matrix and these rows' vectors. Another scope is never searched."""
        by_scope: dict[str, list[int]] = {}
        for row_id in dict.fromkeys(row_ids):
            scope = self.where.get(row_id)
            if scope is not None:
                by_scope.setdefault(scope, []).append(row_id)
        out: dict[int, list[int]] = {}
        for scope, ids in by_scope.items():
            block = self.scopes[scope]
            vectors = self.vectors(ids)
            keys = list(vectors)
            if not keys:
                continue
            live = block.ids[: block.size]
            sims = block.matrix[: block.size] @ np.stack([vectors[k] for k in keys]).T
            for column, row_id in enumerate(keys):
                column_sims = np.where(live > row_id, sims[:, column], -1.0)
                hits = np.flatnonzero(column_sims >= threshold)
                if len(hits) > most:
                    hits = hits[np.argpartition(-column_sims[hits], most)[:most]]
                order = sorted(hits, key=lambda i: (-float(column_sims[i]), int(live[i])))
                out[row_id] = [int(live[i]) for i in order]
        return out

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
            at = np.flatnonzero(block.ids[: block.size] == row_id)
            if len(at):
                out[row_id] = block.matrix[int(at[0])]
        return out


@dataclass(frozen=True)
class Tier:
    """A table whose rows are embedded: its key, its words, its vectors, which of its rows."""

    table: str
    key: str
    text: str
    vectors: str
    rows: str  # which rows, in columns the census may read
    words: str  # and of those, whose words are embedded (a lane's condition)


BELIEFS = Tier("beliefs", "belief_id", "proposition", "belief_vectors", "1", "1")
# Members' lines (hers are not evidence); a forgotten line's words are gone, and so is its vector.
LINES = Tier("turns", "turn_id", "text", "turn_vectors", "role = 'user'", f"text != '{REDACTED}'")


@dataclass
class Similar:
    """A query's nearest visible beliefs and lines, and how it scores against all of them."""

    beliefs: dict[int, float] = field(default_factory=dict)
    lines: dict[int, float] = field(default_factory=dict)
    spread: Spread = field(default_factory=Spread)


class VectorBook:
    """The embedder and the indexes together; a book of `Memory` (`memory.vectors`)."""

    def __init__(self, store: Store, embedder: Embedder | None) -> None:
        self._store = store
        self.embedder = embedder
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hearth-cpu",
                                            initializer=_one_blas_thread)
        self.index: VectorIndex | None = None if embedder is None else VectorIndex(embedder.dim)
        self.lines: VectorIndex | None = None if embedder is None else VectorIndex(embedder.dim)
        self._unembedded: set[int] = set()  # forgotten lines: nothing left to embed
        self._forgets_seen: int | None = None  # tombstones at the last sync
        # The vectors of the last few lines stored one by one, each kept until a recall asks
        # with the same words (the reply to a line recalls with that line): embedded once.
        # Only a reader who may see the line takes its vector: no one learns, by how soon
        # their recall answers, what someone else just said.
        self._just_embedded: dict[str, tuple[str, Matrix]] = {}

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)

    def _index(self, tier: Tier) -> VectorIndex | None:
        return self.index if tier is BELIEFS else self.lines

    async def off_loop(self, fn: Callable[[], T]) -> T:
        """Run CPU work in memory's own thread, never on the event loop."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn)

    async def embed(self, texts: list[str]) -> Matrix | None:
        embedder = self.embedder
        if embedder is None or not texts:
            return None
        return await self.off_loop(lambda: embedder.embed(texts))

    async def similar(self, ctx: AccessContext, query: str, top: int) -> Similar | None:
        """The reader's visible beliefs and lines nearest `query`: of each tier, the `top`
        nearest across the scopes they see (None without an embedder)."""
        said = self._just_embedded.get(query)
        vector = None
        if said is not None and said[0] in wall.visible_scopes(ctx):
            vector = self._just_embedded.pop(query)[1]
        elif query.strip():
            vector = await self.embed([query])
        beliefs, lines = self.index, self.lines
        if vector is None or beliefs is None or lines is None:
            return None
        q = vector[0]

        def both() -> Similar:
            found = Similar()
            found.beliefs = beliefs.search(ctx, q, top, found.spread)
            found.lines = lines.search(ctx, q, top, found.spread)
            return found

        return await self.off_loop(both)

    async def newer_alike(self, belief_ids: list[int], threshold: float, most: int) -> dict[
        int, list[int]
    ]:
        """For each of these beliefs (read through the gate already), up to `most` beliefs of
        its own scope added after it and at least `threshold` alike, the most alike first: ids
        only, which a reader must read through the gate in turn."""
        index = self.index
        if index is None or not belief_ids:
            return {}
        return await self.off_loop(lambda: index.newer_alike(belief_ids, threshold, most))

    def near(self, scope: str, threshold: float) -> Callable[[list[int]], list[tuple[int, int]]]:
        index = self.index
        if index is None:
            return lambda ids: []
        return lambda ids: index.near_pairs(scope, ids, threshold)

    def remove(self, belief_ids: Iterable[int]) -> None:
        if self.index is not None:
            self.index.remove(belief_ids)

    def alike(self, keys: Sequence[tuple[str, int]]) -> dict[
        tuple[tuple[str, int], tuple[str, int]], float
    ]:
        """How alike each two of these rows are (cosine of their vectors), both ways round;
        keys are (table, id) of beliefs and lines already read through the gate. Rows without
        a vector (no embedder) are left out."""
        found: dict[tuple[str, int], Matrix] = {}
        for table, index in ((BELIEFS.table, self.index), (LINES.table, self.lines)):
            if index is not None:
                got = index.vectors(row_id for tier, row_id in keys if tier == table)
                found.update(((table, row_id), v) for row_id, v in got.items())
        pairs: dict[tuple[tuple[str, int], tuple[str, int]], float] = {}
        for a, b in combinations(found, 2):
            pairs[(a, b)] = pairs[(b, a)] = float(found[a] @ found[b])
        return pairs

    async def prune(self, *, forgot: bool = True) -> None:
        """Drop from memory what the store no longer has: the vectors of beliefs and lines a
        forget removed (or a member's removal), and every cache of texts
        (`memory.terms.text_cache`), which are keyed by the texts themselves. `forgot=False`
        (a sync) empties the caches only when something was gone."""
        gone = 0
        self._just_embedded.clear()
        for tier in (BELIEFS, LINES):
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
        What another process forgot meanwhile leaves this one's memory too (`prune`)."""
        forgets = await self._forgets()
        await self.prune(forgot=forgets != self._forgets_seen)
        self._forgets_seen = forgets
        for tier in (BELIEFS, LINES):
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
            for scope, ids in new.items():
                for start in range(0, len(ids), BLOCK):
                    await self._load_scope(tier, scope, ids[start : start + BLOCK])

    async def load(self) -> None:
        """Build every scope's matrices from stored vectors; embed rows written while no
        embedder was set."""
        for tier in (BELIEFS, LINES):
            if self._index(tier) is None:
                return
            async with self._store.transaction() as tx:
                scopes = [str(r["scope"]) for r in await Census(tx).select(
                    tier.table, "DISTINCT scope", tier.rows, order="scope")]
            for scope in scopes:
                await self._load_scope(tier, scope, None)

    async def _load_scope(self, tier: Tier, scope: str, only: Sequence[int] | None) -> None:
        index = self._index(tier)
        if self.embedder is None or index is None:
            return
        model, key = self.embedder.name, tier.key
        among, params = f"{tier.rows} AND {tier.words}", tuple[int, ...]()
        if only is not None:
            among += f" AND {key} IN ({', '.join('?' for _ in only)})"
            params = tuple(only)
        async with self._store.transaction() as tx:
            lane = Lane(tx, scope)
            every = [int(r["id"]) for r in await lane.select(
                tier.table, among, params, columns=f"{key} AS id")]
            if only is not None and tier is LINES:
                self._unembedded.update(set(only) - set(every))
            stored = await lane.select(
                tier.vectors, f"model = ? AND {key} IN (SELECT {key} FROM {tier.table}"
                f" WHERE {among})", (model, *params),
                columns=f"{key} AS id, vector", order=key,
            )
            have = {int(r["id"]) for r in stored}
            lacking = [i for i in every if i not in have]
            missing = []
            for start in range(0, len(lacking), BLOCK):
                chunk = lacking[start : start + BLOCK]
                missing += [
                    (int(r["id"]), scope, str(r["words"]))
                    for r in await lane.select(
                        tier.table, f"{key} IN ({', '.join('?' for _ in chunk)})", chunk,
                        columns=f"{key} AS id, {tier.text} AS words", order=key)
                ]
        if stored:
            ids = [int(r["id"]) for r in stored]
            blob = b"".join(bytes(r["vector"]) for r in stored)
            matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(ids), self.embedder.dim)
            index.add(scope, ids, matrix)
        if missing:
            await self.store(missing, tier)

    async def store(self, items: Sequence[tuple[int, str, str]], tier: Tier = BELIEFS) -> None:
        """Embed and keep (id, scope, text) for beliefs (or lines) just written, and add them
        to their scope's matrix. A row forgotten meanwhile is skipped."""
        index = self._index(tier)
        if self.embedder is None or index is None or not items:
            return
        vectors = await self.embed([text for _, _, text in items])
        if vectors is None:
            return
        model, key = self.embedder.name, tier.key
        async with self._store.transaction() as tx:
            alive = {
                int(r["id"])
                for r in await Census(tx).select(
                    tier.table, f"{key} AS id",
                    f"{tier.rows} AND {key} IN ({', '.join('?' for _ in items)})",
                    [row_id for row_id, _, _ in items],
                )
            }
            await tx.executemany(
                f"INSERT OR REPLACE INTO {tier.vectors}({key}, model, vector) VALUES (?, ?, ?)",
                [
                    (row_id, model, vectors[i].tobytes())
                    for i, (row_id, _, _) in enumerate(items)
                    if row_id in alive
                ],
            )
        by_scope: dict[str, list[int]] = {}
        for i, (row_id, scope, _) in enumerate(items):
            if row_id in alive and not index.has(row_id):
                by_scope.setdefault(scope, []).append(i)
        for scope, rows in by_scope.items():
            index.add(scope, [items[i][0] for i in rows], vectors[rows])
        if tier is LINES and len(items) == 1 and items[0][0] in alive:
            self._just_embedded[items[0][2]] = (items[0][1], vectors[:1])
            while len(self._just_embedded) > JUST_EMBEDDED:
                del self._just_embedded[next(iter(self._just_embedded))]
