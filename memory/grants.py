"""Grants: a fact's owner opening one cell of the purpose lens, for one activity and class.

Owns: giving and revoking grants (never for credentials, only for the cells the policy table
makes grantable), and listing them. A grant opens no wall. Its free-text note is its grantor's
own words: read only through the grantor's own scope's `Lane`, masked, and only for the member
whose facts the grant covers; every other listing reads the census, which has no notes.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from memory.errors import InvalidRequest
from memory.gate import GRANT_COLUMNS, Census, Gate, grant_from_row
from memory.lens import GRANTABLE
from memory.models import SHARED, Activity, Grant, Person, Sensitivity, private_scope, scope_owner
from memory.people import PeopleBook
from memory.secrets import mask_secrets
from memory.store import Store


def covered(scope: str, owner_id: str | None) -> str | None:
    """The member whose facts a grant over `scope` covers: the scope's owner, or for the
    household's shared facts the household's owner."""
    return owner_id if scope == SHARED else scope_owner(scope)


def owner_means_shared(person: Person, activity: Activity) -> bool:
    """The owner granting (or revoking) group_conversation means the household's shared facts:
    the wall never shows anyone's private facts to a group, so a grant over the owner's own
    could never open anything."""
    return person.is_owner and activity == Activity.GROUP_CONVERSATION


class GrantBook:
    """`memory.grants`."""

    def __init__(self, store: Store, gate: Gate, people: PeopleBook,
                 now: Callable[[], datetime]) -> None:
        self._store = store
        self._gate = gate
        self._people = people
        self._now = now

    async def give(
        self,
        grantor_id: str,
        activity: Activity,
        sensitivity: Sensitivity,
        *,
        days: float | None = None,
        shared: bool = False,
        beneficiary_id: str | None = None,
        note: str = "",
        mind: str | None = None,
    ) -> Grant:
        """A standing grant from a fact's owner opening one lens cell. Opens no wall. A grant
        of the `mind` activity names the one mind, acting for the grantor, that it opens for."""
        if sensitivity == Sensitivity.CREDENTIALS:
            raise InvalidRequest("credentials are never granted to any activity")
        if (activity, sensitivity) not in GRANTABLE:
            raise InvalidRequest(
                f"{activity} does not take grants for {sensitivity}"
                " (see the policy table: only health and finance for group_conversation,"
                " compaction, dream and proactive)"
            )
        if days is not None and days <= 0:
            raise InvalidRequest("a grant must last a positive number of days")
        person = await self._people.get(grantor_id)
        shared = shared or owner_means_shared(person, activity)
        if shared and not person.is_owner:
            raise InvalidRequest("only the household's owner can grant over shared facts")
        if beneficiary_id is not None:
            await self._people.get(beneficiary_id)
        if (activity == Activity.MIND) != (mind is not None):
            raise InvalidRequest("a grant to a mind names that mind, and only such a grant"
                                 " does: `hearth minds add NAME --for MEMBER --grant CLASS`")
        now = self._now()
        expires = None if days is None else (now + timedelta(days=days)).isoformat()
        scope = SHARED if shared else private_scope(person.person_id)
        note = mask_secrets(note.replace("\x00", "").strip())  # kept as a line is: masked
        async with self._gate.writing() as tx:
            # A member's grant names one of their own minds; the owner's over shared facts
            # may name any member's.
            whose = "1" if shared else "person_id = ?"
            if mind is not None and await Census(tx).value(
                "minds", "mind_id", f"name = ? AND revoked_at IS NULL AND {whose}",
                (mind,) if shared else (mind, person.person_id),
            ) is None:
                raise InvalidRequest(f"no live mind called {mind} acts for "
                                     f"{'a member' if shared else person.name}")
            grant_id = await tx.lane(scope).insert("grants", {
                "grantor_id": person.person_id, "scope": scope, "activity": activity.value,
                "sensitivity": sensitivity.value, "beneficiary_id": beneficiary_id,
                "note": note, "created_at": now.isoformat(), "expires_at": expires,
                "mind": mind})
            rows = await Census(tx).select("grants", GRANT_COLUMNS, "grant_id = ?", (grant_id,))
        if not rows:
            raise InvalidRequest("the grant could not be recorded")
        return grant_from_row(rows[0], note)

    async def revoke(
        self,
        grantor_id: str,
        activity: Activity,
        sensitivity: Sensitivity,
        *,
        shared: bool = False,
    ) -> int:
        """Revoke at once; the rows stay, marked. Returns how many were active."""
        person = await self._people.get(grantor_id)
        shared = shared or owner_means_shared(person, activity)
        if shared and not person.is_owner:
            raise InvalidRequest("only the household's owner can revoke grants over shared facts")
        scope = SHARED if shared else private_scope(person.person_id)
        async with self._gate.writing() as tx:
            return await tx.lane(scope).update(
                "grants", "revoked_at = ?",
                "grantor_id = ? AND activity = ? AND sensitivity = ? AND revoked_at IS NULL",
                (self._now().isoformat(), person.person_id, activity.value, sensitivity.value),
            )

    async def list(
        self, grantor_id: str | None = None, *, viewer_id: str | None = None
    ) -> list[Grant]:
        """Grants as rows (who opened what, for whom, until when). A grant's free-text note is
        shown, secret tokens masked as in a transcript line, only when `viewer_id` is the
        member whose facts the grant covers (for shared facts, the household's owner), and is
        empty in every other listing."""
        async with self._gate.writing() as tx:
            census = Census(tx)
            if grantor_id is None:
                rows = await census.select("grants", GRANT_COLUMNS, order="grant_id")
            else:
                rows = await census.select("grants", GRANT_COLUMNS, "grantor_id = ?",
                                           (grantor_id,), order="grant_id")
            owner = await census.value("people", "person_id", "is_owner = 1")
            shown = []
            for row in rows:
                scope = str(row["scope"])
                note = ""
                if viewer_id is not None and viewer_id == covered(scope, str(owner or "")):
                    said = await tx.lane(scope).value("grants", "note", "grant_id = ?",
                                                       (row["grant_id"],))
                    note = mask_secrets(str(said or ""))
                shown.append(grant_from_row(row, note))
        return shown
