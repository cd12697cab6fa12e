"""Her own state, kept beside memory: affect, bootstrap, persona proposals and the turn log.

Owns: rows that are not a member's remembered content (numbers about her mood, flags, her own
proposed persona text, and per-turn accounting of what a prompt used). Must not: hold or return
what a member said; goals and summaries, which are content, are read through the facade's gate.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

from memory.errors import InvalidRequest
from memory.models import Frozen
from memory.store import Store


class AffectRow(Frozen):
    key: str
    valence: float
    arousal: float
    drives: dict[str, float]
    updated_at: str


class PersonaProposal(Frozen):
    proposal_id: int
    text: str
    reason: str
    proposed_by: str
    state: str
    created_at: str
    decided_at: str | None
    decided_by: str | None


class StateBook:
    """Her per-member state and the ledger of persona edits."""

    def __init__(self, store: Store, now: Callable[[], str]) -> None:
        self._store = store
        self._now = now

    # --- affect ------------------------------------------------------------------------------

    async def affect(self, key: str) -> AffectRow | None:
        async with self._store.transaction() as tx:
            row = await tx.fetchone("SELECT * FROM affect WHERE key = ?", (key,))
        if row is None:
            return None
        return AffectRow(
            key=str(row["key"]),
            valence=float(row["valence"]),
            arousal=float(row["arousal"]),
            drives={str(k): float(v) for k, v in json.loads(row["drives"]).items()},
            updated_at=str(row["updated_at"]),
        )

    async def save_affect(
        self, key: str, valence: float, arousal: float, drives: Mapping[str, float], at: str
    ) -> None:
        async with self._store.transaction() as tx:
            await tx.execute(
                "INSERT INTO affect(key, valence, arousal, drives, updated_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET"
                " valence = excluded.valence, arousal = excluded.arousal,"
                " drives = excluded.drives, updated_at = excluded.updated_at",
                (key, valence, arousal, json.dumps(dict(sorted(drives.items()))), at),
            )

    async def affect_keys(self) -> list[str]:
        async with self._store.transaction() as tx:
            rows = await tx.fetchall("SELECT key FROM affect ORDER BY key")
        return [str(r["key"]) for r in rows]

    # --- bootstrap -----------------------------------------------------------------------------

    async def is_introduced(self, person_id: str) -> bool:
        async with self._store.transaction() as tx:
            return bool(
                await tx.scalar("SELECT 1 FROM bootstrap_done WHERE person_id = ?", (person_id,))
            )

    async def retire_bootstrap(self, person_id: str) -> None:
        """Called once the first exchange with this member has been stored."""
        async with self._store.transaction() as tx:
            await tx.execute(
                "INSERT OR IGNORE INTO bootstrap_done(person_id, at) VALUES (?, ?)",
                (person_id, self._now()),
            )

    # --- persona proposals ---------------------------------------------------------------------

    async def propose_persona(self, text: str, reason: str, proposed_by: str) -> int:
        if not text.strip() or not reason.strip():
            raise InvalidRequest("a persona proposal needs both the text and a reason")
        async with self._store.transaction() as tx:
            return await tx.execute(
                "INSERT INTO persona_proposals(text, reason, proposed_by, created_at)"
                " VALUES (?, ?, ?, ?)",
                (text.strip(), reason.strip(), proposed_by, self._now()),
            )

    async def persona_proposals(self, state: str | None = None) -> list[PersonaProposal]:
        async with self._store.transaction() as tx:
            if state is None:
                rows = await tx.fetchall("SELECT * FROM persona_proposals ORDER BY proposal_id")
            else:
                rows = await tx.fetchall(
                    "SELECT * FROM persona_proposals WHERE state = ? ORDER BY proposal_id",
                    (state,),
                )
        return [PersonaProposal.model_validate(dict(r)) for r in rows]

    async def decide_persona(self, proposal_id: int, *, approve: bool, by: str) -> bool:
        """Approve or reject a pending proposal, or withdraw (reject) an approved one, which
        then stops shaping every prompt at once; False when there is no such proposal."""
        async with self._store.transaction() as tx:
            changed = await tx.execute(
                "UPDATE persona_proposals SET state = ?, decided_at = ?, decided_by = ?"
                " WHERE proposal_id = ? AND (state = 'pending'"
                " OR (state = 'approved' AND ? = 'rejected'))",
                ("approved" if approve else "rejected", self._now(), by, proposal_id,
                 "approved" if approve else "rejected"),
            )
        return changed == 1

    async def approved_persona_edits(self) -> list[str]:
        """Approved amendments, oldest first: the persona the assembler uses is the file plus
        these, so nothing ever writes the SOUL folder."""
        return [p.text for p in await self.persona_proposals("approved")]

    # --- turn log -----------------------------------------------------------------------------

    async def log_turn(
        self,
        turn_id: int,
        template_version: str,
        tokens: Mapping[str, int],
        belief_ids: Sequence[int],
    ) -> None:
        async with self._store.transaction() as tx:
            await tx.execute(
                "INSERT OR REPLACE INTO turn_log(turn_id, template_version, tokens, belief_ids,"
                " at) VALUES (?, ?, ?, ?, ?)",
                (turn_id, template_version, json.dumps(dict(tokens)), json.dumps(list(belief_ids)),
                 self._now()),
            )

    async def turn_log(self, turn_id: int) -> tuple[str, dict[str, int], list[int]] | None:
        async with self._store.transaction() as tx:
            row = await tx.fetchone("SELECT * FROM turn_log WHERE turn_id = ?", (turn_id,))
        if row is None:
            return None
        return (
            str(row["template_version"]),
            {str(k): int(v) for k, v in json.loads(row["tokens"]).items()},
            [int(i) for i in json.loads(row["belief_ids"])],
        )
