"""Goals: what a member wants done, kept open until done or dropped.

Owns: adding a goal once (the same open goal in the same scope again is the same goal), its
state, and reading open goals through the gate. Must not: hold a secret token, live in another
member's scope, or return a goal the reader's wall or lens holds back.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from memory.beliefs import check_text, normalize
from memory.errors import InvalidRequest
from memory.gate import Gate, Writing
from memory.models import (
    SHARED,
    AccessContext,
    Goal,
    Sensitivity,
    check_scope,
    private_scope,
    scope_owner,
)
from memory.people import PeopleBook
from memory.secrets import has_secret
from memory.store import Store
from memory.vectors import VectorBook


class GoalBook:
    """`memory.goals`."""

    def __init__(self, store: Store, gate: Gate, people: PeopleBook, vectors: VectorBook,
                 now: Callable[[], datetime]) -> None:
        self._store = store
        self._gate = gate
        self._people = people
        self._vectors = vectors
        self._now = now

    async def add(
        self,
        person_id: str,
        text: str,
        *,
        scope: str,
        provenance: str,
        due: str | None = None,
        priority: int = 2,
        source_turn_id: int | None = None,
    ) -> tuple[int, bool]:
        """An open goal for a member, made once: the same open goal again returns its id and
        False. Returns only ids, never text."""
        cleaned = await self.check(person_id, text, scope=scope, priority=priority)
        sensitivity = await self.classed(cleaned)
        async with self._gate.writing() as tx:
            return await open_goal(tx, person_id, cleaned, sensitivity, scope=scope,
                                   provenance=provenance, due=due, priority=priority,
                                   source_turn_id=source_turn_id, now=self._now().isoformat())

    async def classed(self, cleaned: str) -> Sensitivity:
        """A goal's class, by its words and its meaning (`VectorBook.classes`)."""
        (sensitivity,) = await self._vectors.classes([cleaned])
        return sensitivity

    async def check(self, person_id: str, text: str, *, scope: str, priority: int = 2) -> str:
        """The goal's text as it would be kept; InvalidRequest for one that cannot be."""
        check_scope(scope)
        cleaned = check_text(text)
        if has_secret(cleaned):
            raise InvalidRequest("a goal cannot hold a secret token")
        if not 1 <= priority <= 3:
            raise InvalidRequest("a goal's priority is 1 (high) to 3 (low)")
        person = await self._people.get(person_id)
        if scope_owner(scope) not in (None, person.person_id):
            raise InvalidRequest("a member's goal lives in their own scope or the shared one")
        return cleaned

    async def set_state(self, person_id: str, goal_id: int, state: str) -> bool:
        if state not in ("open", "done", "dropped"):
            raise InvalidRequest("a goal is open, done or dropped")
        changed = 0
        async with self._gate.writing() as tx:
            for scope in (private_scope(person_id), SHARED):  # where a member's goals live
                changed += await tx.lane(scope).update(
                    "goals", "state = ?, updated_at = ?", "goal_id = ? AND person_id = ?",
                    (state, self._now().isoformat(), goal_id, person_id))
        return changed == 1

    async def open(self, ctx: AccessContext, *, limit: int = 20) -> list[Goal]:
        """Open goals this work may use: the member's own (or, for a group, shared ones)."""
        whose, params = "scope = 'shared'", tuple[str, ...]()
        if ctx.person_id is not None:
            whose, params = "person_id = ?", (ctx.person_id,)
        async with self._gate.read(ctx, "goals") as read:
            rows = await read.select(
                "goals", f"{whose} AND state = 'open'", params,
                order="priority, coalesce(due, '9999'), goal_id", limit=max(0, limit),
            )
            found = [Goal.model_validate({k: r[k] for k in Goal.model_fields})
                     for r in await read.usable(rows)]
            read.returned([g.goal_id for g in found], [g.scope for g in found])
        return found


async def open_goal(
    tx: Writing,
    person_id: str,
    cleaned: str,
    sensitivity: Sensitivity,
    *,
    scope: str,
    provenance: str,
    now: str,
    due: str | None = None,
    priority: int = 2,
    source_turn_id: int | None = None,
) -> tuple[int, bool]:
    """Inside the caller's transaction: the member's open goal with these words (made now, or
    the one already open: False). `cleaned` has passed `GoalBook.check`, `sensitivity` is its
    class (`VectorBook.classes`, read before the transaction: it may embed)."""
    norm = normalize(cleaned)
    existing = await tx.lane(scope).value(
        "goals", "goal_id", "person_id = ? AND norm = ? AND state = 'open'", (person_id, norm),
    )
    if existing is not None:
        return int(str(existing)), False
    goal_id = await tx.lane(scope).insert("goals", {
        "person_id": person_id, "scope": scope, "text": cleaned, "norm": norm,
        "sensitivity": sensitivity.value, "priority": priority, "due": due,
        "provenance": provenance, "source_turn_id": source_turn_id, "created_at": now,
        "updated_at": now})
    return goal_id, True
