"""A member's newer word on a thing, marked when it is stored: "the plumber is coming on
Wednesday instead" replaces "the plumber is coming on Monday".

When a belief or a member's line is stored and embedded, the older rows of the same scope and
the same voice (a line's speaker; a belief's subject, in its scope) that are alike enough to be
the same thing said again are marked replaced by it, in `replacements` (`memory.vectors`,
which holds the vectors, writes the marks). Recall's judge reads the mark (`signals`:
replaced, replaces) instead of deciding again at every question, and `verdict` tells the newer
first. Nothing is deleted: what a belief was, and when, stays (the dream's supersession and
validity are apart from this).

Owns: reading the marks for recall. Must not: read a mark whose rows the reader may not see
or use.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.gate import Read
from memory.recall.candidates import Candidate

TIERS = {"beliefs": "belief_id", "turns": "turn_id"}


async def load_replacements(read: Read, found: Sequence[Candidate]) -> None:
    """Set each candidate's `newer` and `older`: the marks naming it whose other row this
    reader may see and this work may use (`Read.replacements`)."""
    for tier in TIERS:
        ids = [c.key[1] for c in found if c.key[0] == tier]
        newer: dict[int, set[int]] = {}
        older: dict[int, set[int]] = {}
        for old, new in await read.replacements(tier, ids):
            newer.setdefault(old, set()).add(new)
            older.setdefault(new, set()).add(old)
        for c in found:
            if c.key[0] == tier:
                c.newer = frozenset(newer.get(c.key[1], ()))
                c.older = frozenset(older.get(c.key[1], ()))
