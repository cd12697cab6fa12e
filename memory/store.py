"""The SQLite file: one connection, one serialised path, transactions.

Owns: opening the database (WAL, foreign keys, secure_delete), running the named migrations,
and handing out transactions one at a time. It is the only importer of `aiosqlite`.
Must not: decide what a reader may see (that is `memory.wall` and `memory.lens`), or be used
from outside `memory/` (the facade in `memory.facade` is the only door).

Every transaction is `BEGIN IMMEDIATE` on the one connection, under an asyncio lock: a read and
its receipt commit together, and a belief and its evidence commit together.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from memory.dbfile import check_database_file
from memory.errors import StoreError
from memory.migrations import MIGRATIONS

Params = Sequence[Any] | dict[str, Any]
Row = sqlite3.Row

_BUSY_TIMEOUT_MS = 5000


class Tx:
    """One open transaction. Handed out by `Store.transaction`; never kept beyond it."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run a statement; returns lastrowid (for inserts) or rowcount."""
        cursor = await self._conn.execute(sql, params)
        try:
            if sql.lstrip().upper().startswith("INSERT"):
                return int(cursor.lastrowid or 0)
            return int(cursor.rowcount)
        finally:
            await cursor.close()

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        await self._conn.executemany(sql, rows)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        cursor = await self._conn.execute(sql, params)
        try:
            return list(await cursor.fetchall())
        finally:
            await cursor.close()

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        cursor = await self._conn.execute(sql, params)
        try:
            return await cursor.fetchone()
        finally:
            await cursor.close()

    async def scalar(self, sql: str, params: Params = ()) -> Any:
        row = await self.fetchone(sql, params)
        return None if row is None else row[0]


class Store:
    """The database file and its single connection."""

    def __init__(self, path: Path, conn: aiosqlite.Connection) -> None:
        self.path = path
        self._conn = conn
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: Path, *, create: bool) -> Store:
        """Open (or, when `create` and no file is there, make) the database and bring its
        schema up to date. What `memory.dbfile` refuses (a folder, an empty file, another
        program's database, a file or folder hearth may not write) is refused before anything
        writes to it."""
        await asyncio.to_thread(check_database_file, path, create=create)
        pending = aiosqlite.connect(str(path), isolation_level=None)
        try:
            conn = await pending
        except sqlite3.Error as exc:
            await _worker_stopped(pending)
            raise StoreError(f"cannot open the database at {path}: {exc}") from exc
        conn.row_factory = sqlite3.Row
        store = cls(path, conn)
        try:
            await store._configure()
            await store._migrate()
        except sqlite3.DatabaseError as exc:
            await conn.close()
            raise StoreError(f"{path} is not a usable hearth database: {exc}") from exc
        except BaseException:
            # A refused open must not leave aiosqlite's worker thread holding the process.
            await conn.close()
            raise
        return store

    async def _configure(self) -> None:
        for pragma in (
            f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}",
            "PRAGMA journal_mode = WAL",
            "PRAGMA synchronous = NORMAL",
            "PRAGMA foreign_keys = ON",
            "PRAGMA secure_delete = ON",
        ):
            await self._conn.execute(pragma)
        row = await (await self._conn.execute("PRAGMA journal_mode")).fetchone()
        if row is None or str(row[0]).lower() != "wal":
            raise StoreError(f"{self.path}: the database could not switch to WAL")

    async def _migrate(self) -> None:
        async with self.transaction() as tx:
            await tx.execute(
                "CREATE TABLE IF NOT EXISTS migrations ("
                " name TEXT PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT (datetime('now')))"
            )
            done = {r[0] for r in await tx.fetchall("SELECT name FROM migrations")}
        known = {name for name, _ in MIGRATIONS}
        if done - known:
            raise StoreError(
                f"{self.path} was written by a newer hearth (unknown migrations: "
                f"{', '.join(sorted(done - known))})"
            )
        for name, statements in MIGRATIONS:
            if name in done:
                continue
            # A migration and the row recording it commit together.
            async with self.transaction() as tx:
                for statement in statements:
                    await tx.execute(statement)
                await tx.execute("INSERT INTO migrations(name) VALUES (?)", (name,))

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Tx]:
        """The one serialised path: BEGIN IMMEDIATE, commit on success, roll back on error."""
        async with self._lock:
            try:
                await self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StoreError(f"the database is busy or locked: {exc}") from exc
            try:
                yield Tx(self._conn)
            except BaseException:
                await self._conn.rollback()
                raise
            else:
                try:
                    await self._conn.commit()
                except sqlite3.OperationalError as exc:
                    await self._conn.rollback()
                    raise StoreError(f"the database could not commit: {exc}") from exc

    async def checkpoint(self) -> None:
        """Fold the WAL into the database file and truncate it."""
        async with self._lock:
            await self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    async def backup_to(self, target: Path) -> None:
        """An online, consistent copy of the database."""
        async with self._lock:
            dest = await aiosqlite.connect(str(target))
            try:
                await self._conn.backup(dest)
            finally:
                await dest.close()

    async def close(self) -> None:
        await self._conn.close()


async def _worker_stopped(conn: aiosqlite.Connection) -> None:
    """After a failed connect, aiosqlite's worker thread still reports its own stop to the
    event loop; wait for it, or it reports to a closed loop and prints a stray traceback."""
    thread = getattr(conn, "_thread", None)  # aiosqlite keeps no public handle on it
    if thread is not None and thread.is_alive():
        await asyncio.to_thread(thread.join, 5)
