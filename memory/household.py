"""The household's membership paperwork: invite codes, enabled group chats, the owner's principal.

Owns: single-use expiring invite codes (kept only as SHA-256 digests: a code is 64 random bits,
so its digest cannot be reversed by guessing), the chats the owner enabled as household groups,
and binding the configured owner Telegram id to the owner's principal.
Must not: hold anything a member said, or anything about a stranger (strangers are never stored).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from datetime import datetime, timedelta

from memory.errors import InvalidRequest
from memory.models import Person
from memory.people import PeopleBook
from memory.store import Store

INVITE_LIFETIME = timedelta(days=2)


def _digest(code: str) -> str:
    return hashlib.sha256(code.strip().encode("utf-8")).hexdigest()


class HouseholdBook:
    """Invites, household group chats and the owner's principal."""

    def __init__(self, store: Store, people: PeopleBook, now: Callable[[], datetime]) -> None:
        self._store = store
        self._people = people
        self._now = now

    # --- the owner ---------------------------------------------------------------------------

    async def owner_principal(self, telegram_id: int, name: str) -> Person:
        """The owner's principal for the configured Telegram id: found, bound, or made once.

        A household set up from the shell may already have an owner with no Telegram id; the
        first message from the configured id binds to it. Another owner id is refused: the
        configuration names one owner and the database must agree.
        """
        found = await self._people.by_telegram_id(telegram_id)
        owner = await self._people.owner()
        if found is not None:
            if found.is_owner:
                return found
            if owner is None:
                async with self._store.transaction() as tx:
                    await tx.execute(
                        "UPDATE people SET is_owner = 1 WHERE person_id = ?", (found.person_id,)
                    )
                return await self._people.get(found.person_id)
            raise InvalidRequest("the household's owner in the database is someone else")
        if owner is None:
            return await self._people.mint(telegram_id, name, owner=True)
        if owner.telegram_id is None:
            async with self._store.transaction() as tx:
                await tx.execute(
                    "UPDATE people SET telegram_id = ? WHERE person_id = ?",
                    (telegram_id, owner.person_id),
                )
            return await self._people.get(owner.person_id)
        raise InvalidRequest("the household's owner in the database has another Telegram id")

    # --- invites -----------------------------------------------------------------------------

    async def create_invite(self, owner_id: str) -> tuple[str, datetime]:
        """A new single-use code and when it expires. Only its digest is kept."""
        person = await self._people.get(owner_id)
        if not person.is_owner:
            raise InvalidRequest("only the household's owner can invite")
        code = secrets.token_urlsafe(9)  # 72 bits; URL-safe for a t.me start link
        now = self._now()
        expires = now + INVITE_LIFETIME
        async with self._store.transaction() as tx:
            await tx.execute(
                "INSERT INTO invites(code_digest, created_by, created_at, expires_at)"
                " VALUES (?, ?, ?, ?)",
                (_digest(code), person.person_id, now.isoformat(), expires.isoformat()),
            )
        return code, expires

    async def redeem_invite(self, code: str, telegram_id: int, name: str) -> Person | None:
        """Make a member from a valid, unused, unexpired code; None (and nothing stored) when
        the code is not one. A person who is already a member gets their principal back and
        the code stays unused."""
        if not code.strip() or len(code) > 64:
            return None
        existing = await self._people.by_telegram_id(telegram_id)
        if existing is not None:
            return existing
        now = self._now().isoformat()
        async with self._store.transaction() as tx:
            claimed = await tx.execute(
                "UPDATE invites SET used_at = ? WHERE code_digest = ? AND used_at IS NULL"
                " AND expires_at > ?",
                (now, _digest(code), now),
            )
        if claimed != 1:
            return None
        person = await self._people.mint(telegram_id, name)
        async with self._store.transaction() as tx:
            await tx.execute(
                "UPDATE invites SET used_by = ? WHERE code_digest = ?",
                (person.person_id, _digest(code)),
            )
        return person

    # --- household groups --------------------------------------------------------------------

    async def enable_group(self, chat_id: str, owner_id: str) -> bool:
        """The owner makes this group chat a household group; False when it already was."""
        person = await self._people.get(owner_id)
        if not person.is_owner:
            raise InvalidRequest("only the household's owner can enable a group")
        async with self._store.transaction() as tx:
            if await tx.scalar("SELECT 1 FROM household_chats WHERE chat_id = ?", (chat_id,)):
                return False
            await tx.execute(
                "INSERT INTO household_chats(chat_id, enabled_by, enabled_at) VALUES (?, ?, ?)",
                (chat_id, person.person_id, self._now().isoformat()),
            )
        return True

    async def move_group(self, old_chat_id: str, new_chat_id: str) -> bool:
        """Telegram upgraded a household group to a supergroup under a new id: the new chat
        stays a household group. False (and nothing changes) when the old one was not one."""
        async with self._store.transaction() as tx:
            row = await tx.fetchone(
                "SELECT enabled_by FROM household_chats WHERE chat_id = ?", (old_chat_id,)
            )
            if row is None:
                return False
            if not await tx.scalar(
                "SELECT 1 FROM household_chats WHERE chat_id = ?", (new_chat_id,)
            ):
                await tx.execute(
                    "INSERT INTO household_chats(chat_id, enabled_by, enabled_at)"
                    " VALUES (?, ?, ?)",
                    (new_chat_id, row["enabled_by"], self._now().isoformat()),
                )
        return True

    async def is_household_group(self, chat_id: str) -> bool:
        async with self._store.transaction() as tx:
            return bool(
                await tx.scalar("SELECT 1 FROM household_chats WHERE chat_id = ?", (chat_id,))
            )

    async def household_groups(self) -> list[str]:
        async with self._store.transaction() as tx:
            rows = await tx.fetchall("SELECT chat_id FROM household_chats ORDER BY enabled_at")
        return [str(r["chat_id"]) for r in rows]
