"""Export: everything a member may see about themselves, as one JSON-ready document.

Owns: the document's shape, which names rows only by their opaque `ref`: memory's own keys
(belief, line, goal, grant and receipt numbers) are global sequences whose gaps would tell a
member how much others said, so none is in it. Every part is read through the gate as that
member (their beliefs with evidence, their own scope's lines, goals and documents on the shelf,
and the reads of their facts under the ledger's own wall), and their grants, with their own
notes, through `memory.grants`. Must not: read a row any other way.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from memory.beliefs import evidence_for, lensed
from memory.errors import InvalidRequest
from memory.gate import Gate
from memory.grants import GrantBook
from memory.models import AccessContext, Activity, Goal, private_scope
from memory.people import PeopleBook
from memory.receipts import receipt_from_row
from memory.transcript import turn_from_row


class ExportBook:
    """`memory.export`."""

    def __init__(self, gate: Gate, people: PeopleBook, grants: GrantBook,
                 now: Callable[[], datetime]) -> None:
        self._gate = gate
        self._people = people
        self._grants = grants
        self._now = now

    async def document(self, ctx: AccessContext) -> dict[str, Any]:
        """Everything this member may see about themselves."""
        if ctx.activity != Activity.MEMBER_INSPECT or ctx.person_id is None:
            raise InvalidRequest("an export is a member looking at their own view")
        person = await self._people.get(ctx.person_id)
        now = self._now()
        scope = private_scope(person.person_id)
        async with self._gate.read(ctx, "export") as read:
            rows = await read.beliefs("(b.scope = ? OR b.subject_id = ?)",
                                      (scope, person.person_id))
            beliefs = []
            for belief in await lensed(read, rows, now):
                evidence = await evidence_for(read, belief.belief_id)
                beliefs.append(
                    belief.model_dump(mode="json", exclude={"belief_id"})
                    | {"evidence": [e.model_dump(mode="json") for e in evidence]}
                )
            lines = await read.usable(
                await read.select("turns", "scope = ?", (scope,), order="turn_id"))
            goals = await read.usable(await read.select(
                "goals", "person_id = ? AND scope = ?", (person.person_id, scope),
                order="goal_id"))
            reads = [receipt_from_row(r) for r in await read.ledger()]
            documents = await read.usable(await read.select(
                "documents", "scope = ?", (scope,),
                columns="*, ref('document', document_id) AS ref", order="document_id"))
            passages = await read.usable(await read.select(
                "chunks", "scope = ?", (scope,), order="document_id, seq"))
        given = await self._grants.list(person.person_id, viewer_id=person.person_id)
        by_document: dict[int, list[dict[str, Any]]] = {}
        for c in passages:
            by_document.setdefault(int(c["document_id"]), []).append(
                {"page": c["page"], "section": c["section"], "text": str(c["text"])})
        return {
            "person": person.model_dump(mode="json"),
            "exported_at": now.isoformat(),
            "beliefs": beliefs,
            "transcript": [turn_from_row(r).model_dump(mode="json", exclude={"turn_id"})
                           for r in lines],
            "grants_given": [g.model_dump(mode="json", exclude={"grant_id"}) for g in given],
            "goals": [
                Goal.model_validate({k: r[k] for k in Goal.model_fields})
                .model_dump(mode="json", exclude={"goal_id"})
                for r in goals
            ],
            "documents": [
                {"ref": str(d["ref"]), "title": str(d["title"]), "format": str(d["format"]),
                 "sensitivity": str(d["sensitivity"]), "pages": d["pages"],
                 "added_at": str(d["created_at"]),
                 "passages": by_document.get(int(d["document_id"]), [])}
                for d in documents
            ],
            "reads_of_my_facts": [
                r.model_dump(mode="json", exclude={"seq", "prev_hash", "hash", "returned_ids"})
                for r in reads
            ],
        }
