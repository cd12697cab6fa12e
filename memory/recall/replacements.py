"""A member's newer word on a thing, marked when it is stored: "the plumber is coming on
Wednesday instead" replaces "the plumber is coming on Monday".

When a belief or a member's line is stored and embedded, the older rows of the same scope and
the same voice (a line's speaker; a belief's subject, in its scope) that are alike enough to be
the same thing said again are marked replaced by it, in `replacements` (`memory.vectors`,
which holds the vectors, writes the marks). Recall's judge reads the mark (`signals`:
replaced, replaces) instead of deciding again at every question, and `verdict` tells the newer
first. Nothing is deleted: what a belief was, and when, stays (the dream's supersession and
validity are apart from this).

A question that names a past time ("where did Tom work in March?") is answered as of then: a
mark whose newer row began only after that time does not count (in March the older row had
not been replaced yet); the older row is told before the newer instead (`Candidate.later`),
and so is a belief superseded after that time. Each replaced row then carries when it stopped
holding (`Candidate.ended`), so what is told says "until".

Owns: reading the marks for recall. Must not: read a mark whose rows the reader may not see
or use.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.gate import Read
from memory.recall.candidates import Candidate
from memory.recall.periods import Period

TIERS = {"beliefs": "belief_id", "turns": "turn_id"}


def began(c: Candidate) -> str:
    """When a candidate began to hold: a belief's valid time (else when it was stored), a
    line's moment."""
    if c.belief is not None:
        return str(c.row["valid_from"] or c.row["created_at"])
    return c.at


async def load_replacements(read: Read, found: Sequence[Candidate],
                            period: Period | None = None) -> None:
    """Set each candidate's `newer` and `older`: the marks naming it whose other row this
    reader may see and this work may use (`Read.replacements`). With the `period` a question
    names, a mark whose newer row began after it sets the older row's `later` instead."""
    for tier in TIERS:
        tiered = [c for c in found if c.key[0] == tier]
        ids = [c.key[1] for c in tiered]
        marks = await read.replacements(tier, ids)
        starts = {} if period is None else await _starts(read, tier, found, marks)
        ended = "" if period is None else period.end.isoformat()
        newer: dict[int, set[int]] = {}
        older: dict[int, set[int]] = {}
        later: dict[int, set[int]] = {}
        ends: dict[int, str] = {}
        for old, new in marks:
            if old in starts and new in starts and starts[new] > starts[old]:
                ends[old] = min(ends.get(old, starts[new]), starts[new])
                if starts[old] < ended <= starts[new]:
                    later.setdefault(old, set()).add(new)
                    continue
            newer.setdefault(old, set()).add(new)
            older.setdefault(new, set()).add(old)
        # Most candidates carry no mark: they keep their empty defaults.
        for c in tiered:
            row_id = c.key[1]
            if row_id in newer:
                c.newer = frozenset(newer[row_id])
            if row_id in older:
                c.older = frozenset(older[row_id])
            if row_id in later:
                c.later = frozenset(later[row_id])
            c.ended = ends.get(row_id)
    if period is not None:
        ended = period.end.isoformat()
        for c in found:
            # A belief superseded after the time asked about still held then.
            row = c.row
            if (c.belief is not None and row["superseded_by"] is not None
                    and row["valid_to"] is not None and str(row["valid_to"]) >= ended
                    and began(c) < ended):
                c.later |= {int(row["superseded_by"])}


async def _starts(read: Read, tier: str, found: Sequence[Candidate],
                  marks: Sequence[tuple[int, int]]) -> dict[int, str]:
    """When each row these marks name began (rows the reader may see and use: the marks')."""
    starts = {c.key[1]: began(c) for c in found if c.key[0] == tier}
    unknown = sorted({i for pair in marks for i in pair} - set(starts))
    if unknown:
        places = ", ".join("?" for _ in unknown)
        if tier == "beliefs":
            rows = await read.beliefs(f"b.belief_id IN ({places})", unknown)
            starts |= {int(r["belief_id"]): str(r["valid_from"] or r["created_at"])
                       for r in rows}
        else:
            rows = await read.select("turns", f"turn_id IN ({places})", unknown,
                                     columns="turn_id, at")
            starts |= {int(r["turn_id"]): str(r["at"]) for r in rows}
    return starts
