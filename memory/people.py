"""Principals: household members minted once per Telegram user id, with a stable person_id.

Owns: the people table. A person_id is random and never the Telegram id; the owner is flagged
and there is at most one. Must not: hold or return anything a member said.
"""

from __future__ import annotations

import re
import secrets
import sqlite3
from collections.abc import Callable

from memory.errors import InvalidRequest, UnknownPerson
from memory.models import Person
from memory.store import Row, Store, Tx

_NAME = re.compile(r"^[^\W\d_][\w .'-]{0,39}$", re.UNICODE)


def _person(row: Row) -> Person:
    return Person(
        person_id=str(row["person_id"]),
        name=str(row["name"]),
        telegram_id=row["telegram_id"],
        is_owner=bool(row["is_owner"]),
        created_at=str(row["created_at"]),
    )


def check_name(name: str) -> str:
    cleaned = " ".join(name.split())
    if not _NAME.match(cleaned):
        raise InvalidRequest(
            f"{name!r} is not a usable name: start with a letter, at most 40 characters"
        )
    return cleaned


class PeopleBook:
    """Register, find and list principals."""

    def __init__(self, store: Store, now: Callable[[], str]) -> None:
        self._store = store
        self._now = now

    async def add(self, name: str, *, telegram_id: int | None = None,
                  owner: bool = False) -> Person:
        cleaned = check_name(name)
        person_id = "p" + secrets.token_hex(6)
        async with self._store.transaction() as tx:
            if await tx.scalar("SELECT 1 FROM people WHERE name = ?", (cleaned,)):
                raise InvalidRequest(f"{cleaned} is already a member")
            if telegram_id is not None and await tx.scalar(
                "SELECT 1 FROM people WHERE telegram_id = ?", (telegram_id,)
            ):
                raise InvalidRequest(f"Telegram id {telegram_id} already belongs to a member")
            if owner and await tx.scalar("SELECT 1 FROM people WHERE is_owner = 1"):
                raise InvalidRequest("the household already has an owner")
            try:
                await tx.execute(
                    "INSERT INTO people(person_id, name, telegram_id, is_owner, created_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (person_id, cleaned, telegram_id, int(owner), self._now()),
                )
            except sqlite3.IntegrityError as exc:
                raise InvalidRequest(f"{cleaned} could not be added: {exc}") from exc
            row = await tx.fetchone("SELECT * FROM people WHERE person_id = ?", (person_id,))
        if row is None:
            raise InvalidRequest(f"{cleaned} could not be added")
        return _person(row)

    async def mint(self, telegram_id: int, name: str, *, owner: bool = False) -> Person:
        """The principal for a Telegram user: looked up, or made once."""
        found = await self.by_telegram_id(telegram_id)
        if found is not None:
            return found
        if owner and await self.owner() is not None:
            raise InvalidRequest("the household already has an owner")
        base = check_name(name) if _NAME.match(" ".join(name.split())) else "Member"
        candidate, n = base, 1
        while True:
            try:
                return await self.add(candidate, telegram_id=telegram_id, owner=owner)
            except InvalidRequest:
                again = await self.by_telegram_id(telegram_id)
                if again is not None:
                    return again
                n += 1
                if n > 50:
                    raise
                candidate = f"{base[:36]} {n}"

    async def get(self, person_id: str, *, tx: Tx | None = None) -> Person:
        sql, params = "SELECT * FROM people WHERE person_id = ?", (person_id,)
        if tx is not None:
            row = await tx.fetchone(sql, params)
        else:
            async with self._store.transaction() as own:
                row = await own.fetchone(sql, params)
        if row is None:
            raise UnknownPerson(f"no member with id {person_id}")
        return _person(row)

    async def by_name(self, name: str) -> Person:
        async with self._store.transaction() as tx:
            row = await tx.fetchone(
                "SELECT * FROM people WHERE name = ?", (" ".join(name.split()),)
            )
        if row is None:
            raise UnknownPerson(f"no member named {name!r}")
        return _person(row)

    async def by_telegram_id(self, telegram_id: int) -> Person | None:
        async with self._store.transaction() as tx:
            row = await tx.fetchone("SELECT * FROM people WHERE telegram_id = ?", (telegram_id,))
        return None if row is None else _person(row)

    async def owner(self) -> Person | None:
        async with self._store.transaction() as tx:
            row = await tx.fetchone("SELECT * FROM people WHERE is_owner = 1")
        return None if row is None else _person(row)

    async def list(self) -> list[Person]:
        async with self._store.transaction() as tx:
            rows = await tx.fetchall("SELECT * FROM people ORDER BY created_at, name")
        return [_person(r) for r in rows]
