"""The nightly dream over one scope: dedupe, reconcile, decay, promote. Never across scopes.

Owns: the dream's thresholds and the belief-level changes it makes. Each function gets the rows
of ONE scope that the facade already read through the wall and the dream's lens (so a health
fact with no dream grant is not even touched), and changes only those rows. Nothing is deleted:
a duplicate or a contradicted belief is superseded, its evidence kept.
Must not: read rows itself beyond the evidence of the beliefs it was handed, or call a model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory.beliefs import LOG_ODDS_LIMIT, is_quarantined
from memory.store import Row, Tx

# Two beliefs of one scope whose vectors are this alike say the same thing.
DEDUPE_SIMILARITY = 0.93
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


async def _supersede(tx: Tx, old: int, new: int, now: str) -> None:
    await tx.execute(
        "UPDATE beliefs SET superseded_by = ?, valid_to = ?, updated_at = ? WHERE belief_id = ?",
        (new, now, now, old),
    )


async def _rescore(tx: Tx, belief_id: int, now: str) -> None:
    """Log-odds from the belief's evidence, and whether one weak source still holds it."""
    total = float(
        await tx.scalar(
            "SELECT coalesce(sum(sign * weight * reliability), 0) FROM evidence"
            " WHERE belief_id = ?",
            (belief_id,),
        )
    )
    log_odds = max(-LOG_ODDS_LIMIT, min(LOG_ODDS_LIMIT, total))
    quarantined = await is_quarantined(tx, belief_id)
    await tx.execute(
        "UPDATE beliefs SET log_odds = ?, quarantined = ?, updated_at = ? WHERE belief_id = ?",
        (log_odds, int(quarantined), now, belief_id),
    )


async def dedupe(
    tx: Tx,
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
            for ev in await tx.fetchall(
                "SELECT * FROM evidence WHERE belief_id = ? ORDER BY evidence_id", (dup,)
            ):
                if await tx.scalar(
                    "SELECT 1 FROM evidence WHERE belief_id = ? AND source = ? AND sign = ?",
                    (keeper, ev["source"], ev["sign"]),
                ):
                    continue
                version += 1
                new_id = await tx.execute(
                    "INSERT INTO evidence(belief_id, source, sign, weight, provenance,"
                    " reliability, version, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (keeper, ev["source"], ev["sign"], ev["weight"], ev["provenance"],
                     ev["reliability"], version, ev["at"]),
                )
                await tx.execute(
                    "INSERT OR IGNORE INTO evidence_turns(evidence_id, turn_id)"
                    " SELECT ?, turn_id FROM evidence_turns WHERE evidence_id = ?",
                    (new_id, ev["evidence_id"]),
                )
            await _supersede(tx, dup, keeper, now)
            gone.add(dup)
            merged += 1
        await tx.execute("UPDATE beliefs SET version = ? WHERE belief_id = ?", (version, keeper))
        await _rescore(tx, keeper, now)
    return merged, gone


async def reconcile(tx: Tx, rows: Sequence[Row], now: str) -> tuple[int, set[int]]:
    """Of two contradicting beliefs of this scope, the newer supersedes the older."""
    by_id = {int(r["belief_id"]): r for r in rows}
    if len(by_id) < 2:
        return 0, set()
    marks = ", ".join("?" for _ in by_id)
    edges = await tx.fetchall(
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
        await _supersede(tx, older, newer, now)
        done.add(older)
    return len(done), done


async def decay(tx: Tx, rows: Sequence[Row], now: datetime) -> int:
    """Unreinforced beliefs lose a tenth of their log-odds toward undecided."""
    cutoff = (now - DECAY_AFTER).isoformat()
    stale = [
        int(r["belief_id"])
        for r in rows
        if str(r["reinforced_at"]) < cutoff and float(r["log_odds"]) > 0
    ]
    for belief_id in stale:
        await tx.execute(
            "UPDATE beliefs SET log_odds = log_odds * ? WHERE belief_id = ?",
            (DECAY_FACTOR, belief_id),
        )
    return len(stale)


async def promote(tx: Tx, rows: Sequence[Row], now: str) -> int:
    """Quarantined beliefs that a second source now corroborates become active."""
    promoted = 0
    for r in rows:
        if r["quarantined"] and not await is_quarantined(tx, int(r["belief_id"])):
            await tx.execute(
                "UPDATE beliefs SET quarantined = 0, updated_at = ? WHERE belief_id = ?",
                (now, int(r["belief_id"])),
            )
            promoted += 1
    return promoted


async def dream_scope(
    tx: Tx,
    rows: Sequence[Row],
    near: Callable[[list[int]], list[tuple[int, int]]],
    now: datetime,
) -> DreamCounts:
    """One scope's dream over the live beliefs the dream may use (already walled and lensed)."""
    stamp = now.isoformat()
    counts = DreamCounts()
    counts.deduped, gone = await dedupe(tx, rows, near, stamp)
    live = [r for r in rows if int(r["belief_id"]) not in gone]
    counts.reconciled, gone = await reconcile(tx, live, stamp)
    live = [r for r in live if int(r["belief_id"]) not in gone]
    counts.promoted = await promote(tx, live, stamp)
    counts.decayed = await decay(tx, live, now)
    return counts
