"""The ledger: the receipts of every read, as members and the owner may see them.

Owns: the owner's audit listing, a member's "who read my facts" (the reads they made and the
reads that used their private facts), verifying the chain, and anchoring it anew. Listings are
reads like any other: through the gate, under `wall.ledger_predicate`, and receipted. The chain
itself (keying, hashing, the anchor beside the database) is `memory.receipts`.
"""

from __future__ import annotations

from memory.errors import InvalidRequest
from memory.gate import Gate
from memory.models import AccessContext, Activity, Receipt
from memory.people import PeopleBook
from memory.receipts import LedgerAnchor, receipt_from_row
from memory.store import Store


class LedgerBook:
    """`memory.ledger`."""

    def __init__(self, store: Store, gate: Gate, people: PeopleBook,
                 anchor: LedgerAnchor) -> None:
        self._store = store
        self._gate = gate
        self._people = people
        self._anchor = anchor

    async def audit(self, ctx: AccessContext, *, limit: int | None = None) -> list[Receipt]:
        """The ledger's metadata for the owner's audit; this read is receipted too."""
        if ctx.activity != Activity.OWNER_AUDIT or ctx.person_id is None:
            raise InvalidRequest("the whole ledger is the owner's audit")
        if not (await self._people.get(ctx.person_id)).is_owner:
            raise InvalidRequest("only the household's owner can audit the ledger")
        async with self._gate.read(ctx, "receipts") as read:
            rows = await read.ledger(order="seq DESC", limit=-1 if limit is None else limit)
        return [receipt_from_row(r) for r in reversed(rows)]

    async def about(self, ctx: AccessContext) -> list[Receipt]:
        """Reads that used this member's private facts, or that they made themselves."""
        if ctx.activity != Activity.MEMBER_INSPECT or ctx.person_id is None:
            raise InvalidRequest("who read my facts is a member looking at their own view")
        async with self._gate.read(ctx, "receipts_about") as read:
            rows = await read.ledger()
        return [receipt_from_row(r) for r in rows]

    async def verify(self) -> tuple[int, tuple[int, str] | None]:
        """(receipts checked, the first break or None): the HMAC chain from genesis, and its
        end against the anchor beside the database. A break is (receipt, one line saying
        what: altered, missing, or the ledger cut after a receipt the anchor outlived)."""
        return await self._anchor.verify(self._store)

    async def anchor(self) -> int:
        """Anchor the ledger anew at its end, once its chain verifies: for an install whose
        anchor was lost (a cut tail before now can no longer be told). Returns the receipt."""
        return await self._anchor.reanchor(self._store)
