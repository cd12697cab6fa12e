"""What was true when: the beliefs as they stood at a time, and the history of one thing.

A belief holds from its `valid_from` until its `valid_to`, which a newer belief of the same
scope sets when it supersedes it (`BeliefBook.supersede`, the dream's reconcile); the older
belief is kept with that validity, never deleted. A belief also stops holding once the newer
word of the same voice that replaced it began (`replacements`, marked when that word was
stored): "Tom works at the bakery" holds until "Tom has started at the library" was said.

Two reads, both receipted through the gate:

- `as_of(ctx, when)`: the beliefs the reader may see and this work may use that held at `when`.
- `history(ctx, thing)`: the beliefs whose words hold every word of `thing` (or the most of
  them any belief holds), with the earlier and later versions linked to them, oldest first,
  each with when it began and, once replaced, when it ended.

Owns: when a belief began and ended, as a reader may learn it. Must not: read around the gate,
or let a version the reader may not see or use end another's validity (it is left out as if it
had never been said).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from memory.beliefs import belief_from_row, normalize
from memory.gate import Gate, Read
from memory.models import AccessContext, Belief, BeliefStatus, as_utc
from memory.store import Row
from memory.terms import query_terms

AS_OF_METHOD = "as_of"
HISTORY_METHOD = "history"
# The most versions a history shows, the newest kept; and how far links are followed.
HISTORY_LIMIT = 20
LINK_STEPS = 4
# The words of a thing searched for, and the ids fetched per word (its newest, when more match).
THING_TERMS = 12
TERM_CAP = 200


@dataclass(frozen=True)
class Held:
    """One belief and when it held: from `since` until `until` (None: it still holds). ISO
    times, UTC."""

    belief: Belief
    since: str
    until: str | None


def began(row: Row) -> str:
    """When a belief row began to hold: its valid time, else when it was stored."""
    return str(row["valid_from"] or row["created_at"])


def holds_at(since: str, until: str | None, when: str) -> bool:
    return since <= when and (until is None or until > when)


class HistoryBook:
    """`memory.history`: beliefs as they stood, and a thing's history, through the gate."""

    def __init__(self, gate: Gate, now: Callable[[], datetime]) -> None:
        self._gate = gate
        self._now = now

    async def as_of(self, ctx: AccessContext, when: datetime) -> list[Held]:
        """The beliefs this reader may see and this work may use that held at `when`, oldest
        first, each with its validity; [] when none did. Not those still in quarantine then."""
        at = as_utc(when).isoformat()
        async with self._gate.read(ctx, AS_OF_METHOD, at) as read:
            rows = await read.usable(await read.beliefs(
                "b.quarantined = 0 AND coalesce(b.valid_from, b.created_at) <= ?"
                " AND (b.valid_to IS NULL OR b.valid_to > ?)", (at, at)))
            ends = await _ends(read, rows)
            held = [_held(r, ends, at) for r in rows]
            found = sorted((h for h in held if holds_at(h.since, h.until, at)),
                           key=lambda h: (h.since, h.belief.belief_id))
            read.returned([h.belief.belief_id for h in found], [h.belief.scope for h in found])
        return found

    async def history(self, ctx: AccessContext, thing: str) -> list[Held]:
        """The history of `thing` as this reader may see it: the beliefs about it and their
        earlier and later versions, oldest first, each with when it held; [] when nothing is
        known about it. A version said again in the same words is shown once."""
        terms = query_terms(thing, THING_TERMS)
        if not terms:
            return []
        now = self._now().isoformat()
        async with self._gate.read(ctx, HISTORY_METHOD, thing) as read:
            keyword = await read.keyword("beliefs", [t.fts() for t in terms], TERM_CAP)
            matched: dict[int, int] = {}
            for ids in keyword.ids:
                for belief_id in ids:
                    matched[belief_id] = matched.get(belief_id, 0) + 1
            best = max(matched.values(), default=0)
            found = {i for i, n in matched.items() if n == best} if best else set()
            rows = await _linked(read, found)
            ends = await _ends(read, rows)
            held = _once([_held(r, ends, now) for r in rows])[-HISTORY_LIMIT:]
            read.returned([h.belief.belief_id for h in held], [h.belief.scope for h in held])
        return held


async def _linked(read: Read, found: set[int]) -> list[Row]:
    """The usable, not quarantined rows of `found` and of the versions linked to them (by
    supersession or by a replacement mark, either way), a few links deep."""
    rows: dict[int, Row] = {}
    todo = set(found)
    for _ in range(LINK_STEPS):
        if not todo:
            break
        marks = ", ".join("?" for _ in todo)
        fetched = await read.usable(await read.beliefs(
            f"b.quarantined = 0 AND (b.belief_id IN ({marks}) OR b.superseded_by IN ({marks}))",
            (*todo, *todo)))
        rows.update({int(r["belief_id"]): r for r in fetched})
        step = {int(r["superseded_by"]) for r in fetched if r["superseded_by"] is not None}
        for old, new in await read.replacements("beliefs", sorted(rows)):
            step |= {old, new}
        todo = step - set(rows)
    return list(rows.values())


async def _ends(read: Read, rows: Sequence[Row]) -> dict[int, str]:
    """When each row stopped holding, where it did: its `valid_to`, or the start of the
    earliest newer word that replaced it, of those this reader may see and use (a mark the
    reader may not use ends nothing)."""
    ends = {int(r["belief_id"]): str(r["valid_to"]) for r in rows if r["valid_to"] is not None}
    marks = await read.replacements("beliefs", [int(r["belief_id"]) for r in rows])
    known = {int(r["belief_id"]): r for r in rows}
    newer = sorted({new for old, new in marks if old in known} - set(known))
    if newer:
        places = ", ".join("?" for _ in newer)
        for r in await read.beliefs(f"b.belief_id IN ({places})", newer):
            known[int(r["belief_id"])] = r
    for old, new in marks:
        if old not in known or new not in known or old == new:
            continue
        start = began(known[new])
        if start > began(known[old]) and (old not in ends or start < ends[old]):
            ends[old] = start
    return ends


def _held(row: Row, ends: dict[int, str], at: str) -> Held:
    """A row as a `Held`, its status as it stood at `at` (a belief that held then was no one's
    superseded belief yet)."""
    belief_id = int(row["belief_id"])
    until = ends.get(belief_id)
    belief = belief_from_row(row, datetime.fromisoformat(at))
    if belief.status is BeliefStatus.SUPERSEDED and holds_at(began(row), until, at):
        belief = belief.model_copy(update={"status": BeliefStatus.ACTIVE})
    return Held(belief=belief, since=began(row), until=until)


def _once(held: list[Held]) -> list[Held]:
    """Oldest first; a version said again in the same words right after itself is one version,
    from the first time until the last one ended."""
    out: list[Held] = []
    for h in sorted(held, key=lambda h: (h.since, h.belief.belief_id)):
        last = out[-1] if out else None
        if last is not None and normalize(last.belief.proposition) == normalize(
                h.belief.proposition):
            out[-1] = Held(belief=h.belief, since=last.since, until=h.until)
            continue
        out.append(h)
    return out


__all__ = ["AS_OF_METHOD", "HISTORY_METHOD", "Held", "HistoryBook"]
