"""The nightly dream over one scope: dedupe, reconcile, decay, promote. Never across scopes.

Owns: the dream's thresholds, the belief-level changes it makes, and the pass over every scope
with its report (`DreamBook`). Each function gets the rows of ONE scope that the pass read
through the gate with the dream's lens (so a health fact with no dream grant is not even
touched), and that scope's `Lane` for the evidence of those rows. Nothing is deleted: a
duplicate or a contradicted belief is superseded, its evidence kept.
Must not: read another scope, or call a model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory.beliefs import count_again, is_quarantined, rescore
from memory.gate import Gate, Lane
from memory.models import SHARED, AccessContext, Activity, as_utc, private_scope
from memory.people import PeopleBook
from memory.store import Row, Store
from memory.vectors import VectorBook

# A belief nobody has reinforced for this long loses a tenth of its log-odds each night.
DECAY_AFTER = timedelta(days=14)
DECAY_FACTOR = 0.9

_FILLER = frozenset({
    "a", "an", "the", "is", "are", "was", "were", "really", "very", "quite", "so", "just",
    "also", "too", "does", "do", "did", "has", "have", "had", "to", "of", "in", "on", "at",
    "for", "with",
})  # fmt: skip


@dataclass
class DreamCounts:
    deduped: int = 0
    reconciled: int = 0
    decayed: int = 0
    promoted: int = 0

    def add(self, other: DreamCounts) -> None:
        self.deduped += other.deduped
        self.reconciled += other.reconciled
        self.decayed += other.decayed
        self.promoted += other.promoted


def _key(norm: str) -> str:
    words = [w.rstrip("s") if len(w) > 3 else w for w in norm.split() if w not in _FILLER]
    return " ".join(sorted(words))


def _groups(rows: Sequence[Row], near: Iterable[tuple[int, int]]) -> list[list[int]]:
    """Beliefs that say the same thing: the same words up to filler, or near-identical vectors."""
    parent = {int(r["belief_id"]): int(r["belief_id"]) for r in rows}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(a: int, b: int) -> None:
        if a in parent and b in parent:
            parent[root(a)] = root(b)

    by_key: dict[str, int] = {}
    for r in rows:
        key = _key(str(r["norm"])) + "|" + str(r["subject_id"])
        if key in by_key:
            join(int(r["belief_id"]), by_key[key])
        else:
            by_key[key] = int(r["belief_id"])
    for a, b in near:
        join(a, b)
    members: dict[int, list[int]] = {}
    for i in parent:
        members.setdefault(root(i), []).append(i)
    return [sorted(g) for g in members.values() if len(g) > 1]


async def _supersede(lane: Lane, old: int, new: int, now: str, *,
                     ended: str | None = None) -> None:
    """`old` gives way to `new` and is kept, valid until `ended` (by default now)."""
    await lane.update("beliefs", "superseded_by = ?, valid_to = ?, updated_at = ?",
                      "belief_id = ?", (new, ended or now, now, old))


async def dedupe(
    lane: Lane,
    rows: Sequence[Row],
    near: Callable[[list[int]], list[tuple[int, int]]],
    now: str,
) -> tuple[int, set[int]]:
    """Merge beliefs of one scope that say the same thing into the strongest (the oldest on a
    tie): its evidence gains the others' sources, and the others are superseded by it."""
    ids = [int(r["belief_id"]) for r in rows]
    by_id = {int(r["belief_id"]): r for r in rows}
    merged = 0
    gone: set[int] = set()
    for group in _groups(rows, near(ids)):
        keeper = max(group, key=lambda i: (float(by_id[i]["log_odds"]), -i))
        version = int(by_id[keeper]["version"])
        for dup in (i for i in group if i != keeper):
            for ev in await lane.select("evidence", "belief_id = ?", (dup,),
                                        order="evidence_id"):
                if await count_again(lane, lane, ev, keeper, version=version + 1):
                    version += 1
            await _supersede(lane, dup, keeper, now)
            gone.add(dup)
            merged += 1
        await lane.update("beliefs", "version = ?", "belief_id = ?", (version, keeper))
        await rescore(lane, keeper, now)
    return merged, gone


async def reconcile(lane: Lane, rows: Sequence[Row], now: str) -> tuple[int, set[int]]:
    """Of two contradicting beliefs of this scope, the newer supersedes the older."""
    by_id = {int(r["belief_id"]): r for r in rows}
    if len(by_id) < 2:
        return 0, set()
    marks = ", ".join("?" for _ in by_id)
    edges = await lane.household.fetchall(
        f"SELECT low_id, high_id FROM contradictions WHERE low_id IN ({marks})"
        f" AND high_id IN ({marks}) ORDER BY low_id, high_id",
        (*by_id, *by_id),
    )
    done: set[int] = set()
    for edge in edges:
        a, b = int(edge["low_id"]), int(edge["high_id"])
        if a in done or b in done:
            continue

        def when(i: int) -> tuple[str, str, int]:
            r = by_id[i]
            return (str(r["valid_from"] or r["created_at"]), str(r["created_at"]), i)

        older, newer = sorted((a, b), key=when)
        # The older held until the newer began: "what was true when" reads that validity.
        await _supersede(lane, older, newer, now, ended=when(newer)[0])
        done.add(older)
    return len(done), done


async def decay(lane: Lane, rows: Sequence[Row], now: datetime) -> int:
    """Unreinforced beliefs lose a tenth of their log-odds toward undecided."""
    cutoff = (now - DECAY_AFTER).isoformat()
    stale = [
        int(r["belief_id"])
        for r in rows
        if str(r["reinforced_at"]) < cutoff and float(r["log_odds"]) > 0
    ]
    for belief_id in stale:
        await lane.update("beliefs", "log_odds = log_odds * ?", "belief_id = ?",
                          (DECAY_FACTOR, belief_id))
    return len(stale)


async def promote(lane: Lane, rows: Sequence[Row], now: str) -> int:
    """Quarantined beliefs that a second source now corroborates become active."""
    promoted = 0
    for r in rows:
        if r["quarantined"] and not await is_quarantined(lane, int(r["belief_id"])):
            await lane.update("beliefs", "quarantined = 0, updated_at = ?", "belief_id = ?",
                              (now, int(r["belief_id"])))
            promoted += 1
    return promoted


async def dream_scope(
    lane: Lane,
    rows: Sequence[Row],
    near: Callable[[list[int]], list[tuple[int, int]]],
    now: datetime,
) -> DreamCounts:
    """One scope's dream over the live beliefs the dream may use (already walled and lensed)."""
    stamp = now.isoformat()
    counts = DreamCounts()
    counts.deduped, gone = await dedupe(lane, rows, near, stamp)
    live = [r for r in rows if int(r["belief_id"]) not in gone]
    counts.reconciled, gone = await reconcile(lane, live, stamp)
    live = [r for r in live if int(r["belief_id"]) not in gone]
    counts.promoted = await promote(lane, live, stamp)
    counts.decayed = await decay(lane, live, now)
    return counts


class DreamBook:
    """`memory.dream`: the nightly pass and its reports."""

    def __init__(self, store: Store, gate: Gate, people: PeopleBook, vectors: VectorBook,
                 now: Callable[[], datetime]) -> None:
        self._store = store
        self._gate = gate
        self._people = people
        self._vectors = vectors
        self._now = now

    async def run(
        self, extra: dict[str, int] | None = None, *, now: datetime | None = None
    ) -> tuple[int, dict[str, int]]:
        """The dream over every scope, one scope at a time, each read by its own lane through
        the gate and the dream's lens (receipted); then a report row of counts. Returns the
        report's id and its counts. `now` is the dream's clock (memory's own by default)."""
        now = self._now() if now is None else as_utc(now)
        people = await self._people.list()
        scopes = [SHARED] + [private_scope(p.person_id) for p in people]
        totals = DreamCounts()
        for scope in scopes:
            ctx = AccessContext.for_scope(scope, Activity.DREAM, "the nightly dream of one scope")
            async with self._gate.read(ctx, "dream", scope) as read:
                rows = await read.beliefs("b.scope = ? AND b.superseded_by IS NULL", (scope,))
                usable = await read.usable(rows)
                near = self._vectors.near(scope, self._vectors.same_thing)
                totals.add(await dream_scope(read.lane(scope), usable, near, now))
                ids = [int(r["belief_id"]) for r in usable]
                read.returned(ids, [scope] * len(ids))
        report = {
            "scopes": len(scopes),
            "deduped": totals.deduped,
            "reconciled": totals.reconciled,
            "decayed": totals.decayed,
            "promoted": totals.promoted,
        } | dict(extra or {})
        async with self._store.transaction() as tx:
            report_id = await tx.execute(
                "INSERT INTO dream_reports(at, report) VALUES (?, ?)",
                (now.isoformat(), json.dumps(report, sort_keys=True)),
            )
        return report_id, report

    async def reports(self, limit: int = 5) -> list[tuple[int, str, dict[str, int]]]:
        """The latest dream reports: (id, when, counts). Counts only, no content."""
        async with self._store.transaction() as tx:
            rows = await tx.fetchall(
                "SELECT * FROM dream_reports ORDER BY report_id DESC LIMIT ?", (limit,)
            )
        return [
            (int(r["report_id"]), str(r["at"]), dict(json.loads(r["report"]))) for r in rows
        ]
