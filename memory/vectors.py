"""The vector index: each scope's belief embeddings in its own matrix, searched scope by scope.

Owns: embedding beliefs (off the event loop, in memory's one CPU thread), storing their vectors,
loading them into per-scope matrices at open, taking in what another process wrote, and
dropping what was forgotten. Must not: search a scope the reader cannot see (`search` walks
`wall.visible_scopes`), or read a scope's rows except through that scope's `Lane`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from memory import wall
from memory.embedder import Embedder
from memory.gate import Census, Lane
from memory.models import AccessContext
from memory.store import Store

T = TypeVar("T")
Matrix = npt.NDArray[np.float32]
BLOCK = 500


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

    def search(self, query: Matrix, top: int) -> list[tuple[int, float]]:
        if not self.size:
            return []
        sims = self.matrix[: self.size] @ query
        picked = np.argpartition(-sims, top)[:top] if self.size > top else np.arange(self.size)
        return [(int(self.ids[i]), float(sims[i])) for i in picked]


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

    def search(self, ctx: AccessContext, query: Matrix, top: int) -> dict[int, float]:
        """Similarities for the best `top` candidates of each scope this reader may see."""
        found: dict[int, float] = {}
        for scope in wall.visible_scopes(ctx):
            vectors = self.scopes.get(scope)
            if vectors is not None:
                found.update(vectors.search(query, top))
        return found


class VectorBook:
    """The embedder and the index together; a book of `Memory` (`memory.vectors`)."""

    def __init__(self, store: Store, embedder: Embedder | None) -> None:
        self._store = store
        self.embedder = embedder
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hearth-cpu")
        self.index: VectorIndex | None = None if embedder is None else VectorIndex(embedder.dim)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def off_loop(self, fn: Callable[[], T]) -> T:
        """Run CPU work in memory's own thread, never on the event loop."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn)

    async def embed(self, texts: list[str]) -> Matrix | None:
        embedder = self.embedder
        if embedder is None or not texts:
            return None
        return await self.off_loop(lambda: embedder.embed(texts))

    async def search(self, ctx: AccessContext, query: str, top: int) -> dict[int, float]:
        """Similarities of the reader's visible beliefs to `query` ({} without an embedder)."""
        vector = await self.embed([query]) if query.strip() else None
        index = self.index
        if vector is None or index is None:
            return {}
        q = vector[0]
        return await self.off_loop(lambda: index.search(ctx, q, top))

    def near(self, scope: str, threshold: float) -> Callable[[list[int]], list[tuple[int, int]]]:
        index = self.index
        if index is None:
            return lambda ids: []
        return lambda ids: index.near_pairs(scope, ids, threshold)

    def remove(self, belief_ids: Iterable[int]) -> None:
        if self.index is not None:
            self.index.remove(belief_ids)

    async def sync(self) -> None:
        """Take in beliefs another process wrote (`hearth tick` or `hearth remember` while the
        bot runs): their vectors join this process's matrices, so semantic recall finds them.
        Reads only ids until it finds beliefs the matrices lack."""
        index = self.index
        if index is None:
            return
        async with self._store.transaction() as tx:
            rows = await Census(tx).select("beliefs", "belief_id, scope", order="belief_id")
        new: dict[str, list[int]] = {}
        for r in rows:
            if not index.has(int(r["belief_id"])):
                new.setdefault(str(r["scope"]), []).append(int(r["belief_id"]))
        for scope, ids in new.items():
            for start in range(0, len(ids), BLOCK):
                await self._load_scope(scope, ids[start : start + BLOCK])

    async def load(self) -> None:
        """Build every scope's matrix from stored vectors; embed beliefs written while no
        embedder was set."""
        if self.index is None:
            return
        async with self._store.transaction() as tx:
            scopes = [str(r["scope"]) for r in await Census(tx).select(
                "beliefs", "DISTINCT scope", order="scope")]
        for scope in scopes:
            await self._load_scope(scope, None)

    async def _load_scope(self, scope: str, only: Sequence[int] | None) -> None:
        if self.embedder is None or self.index is None:
            return
        model = self.embedder.name
        among, params = "1", tuple[int, ...]()
        if only is not None:
            among, params = f"belief_id IN ({', '.join('?' for _ in only)})", tuple(only)
        async with self._store.transaction() as tx:
            lane = Lane(tx, scope)
            stored = await lane.select(
                "belief_vectors", f"model = ? AND {among}", (model, *params),
                columns="belief_id, vector", order="belief_id",
            )
            have = {int(r["belief_id"]) for r in stored}
            every = await lane.select("beliefs", among, params, columns="belief_id")
            lacking = [int(r["belief_id"]) for r in every if int(r["belief_id"]) not in have]
            missing = []
            for start in range(0, len(lacking), BLOCK):
                chunk = lacking[start : start + BLOCK]
                missing += [
                    (int(r["belief_id"]), scope, str(r["proposition"]))
                    for r in await lane.select(
                        "beliefs", f"belief_id IN ({', '.join('?' for _ in chunk)})", chunk,
                        columns="belief_id, proposition", order="belief_id")
                ]
        if stored:
            ids = [int(r["belief_id"]) for r in stored]
            blob = b"".join(bytes(r["vector"]) for r in stored)
            matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(ids), self.embedder.dim)
            self.index.add(scope, ids, matrix)
        if missing:
            await self.store(missing)

    async def store(self, items: Sequence[tuple[int, str, str]]) -> None:
        """Embed and keep (belief id, scope, proposition) for beliefs just written, and add
        them to their scope's matrix. A belief forgotten meanwhile is skipped."""
        if self.embedder is None or self.index is None or not items:
            return
        vectors = await self.embed([text for _, _, text in items])
        if vectors is None:
            return
        model = self.embedder.name
        async with self._store.transaction() as tx:
            alive = {
                int(r["belief_id"])
                for r in await Census(tx).select(
                    "beliefs", "belief_id",
                    f"belief_id IN ({', '.join('?' for _ in items)})",
                    [belief_id for belief_id, _, _ in items],
                )
            }
            await tx.executemany(
                "INSERT OR REPLACE INTO belief_vectors(belief_id, model, vector) VALUES (?, ?, ?)",
                [
                    (belief_id, model, vectors[i].tobytes())
                    for i, (belief_id, _, _) in enumerate(items)
                    if belief_id in alive
                ],
            )
        by_scope: dict[str, list[int]] = {}
        for i, (belief_id, scope, _) in enumerate(items):
            if belief_id in alive and not self.index.has(belief_id):
                by_scope.setdefault(scope, []).append(i)
        for scope, rows in by_scope.items():
            self.index.add(scope, [items[i][0] for i in rows], vectors[rows])
