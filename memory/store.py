"""The SQLite file: one connection, one serialised path, transactions.

Owns: opening the database (WAL, foreign keys, secure_delete), running the named migrations,
and handing out transactions one at a time. It is the only importer of `aiosqlite`.
Must not: decide what a reader may see (that is `memory.wall` and `memory.lens`), or be used
from outside `memory/` (the facade in `memory.facade` is the only door).

Every transaction is `BEGIN IMMEDIATE` on the one connection, under an asyncio lock: a read and
its receipt commit together, and a belief and its evidence commit together.

Another program may hold the database (a backup tool, `sqlite3` with `BEGIN EXCLUSIVE`). Then a
transaction waits: SQLite's busy handler for a second at a time, and between tries an asyncio
sleep with backoff, so the event loop and shutdown stay responsive, up to `lock_wait` seconds
in all, with one log line when the wait starts and one when it ends. Past the bound it raises
`StoreBusy` having written nothing, and so does a write the disk refuses just now (full, I/O):
the caller keeps its work and tries again later, never drops it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sqlite3
import stat
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from memory.dbfile import check_database_file
from memory.errors import ContentRefused, StoreBusy, StoreError
from memory.migrations import MIGRATIONS
from memory.schema import declared
from memory.terms import index_text

Params = Sequence[Any] | dict[str, Any]
_T = TypeVar("_T", bound="Tx")
_R = TypeVar("_R")
Row = sqlite3.Row

log = logging.getLogger("hearth.store")

# SQLite's own wait per attempt; the store's loop around it bounds the whole wait.
_BUSY_TIMEOUT_MS = 1000
# How long a checkpoint waits for another connection's read to end (`Store.checkpoint`).
CHECKPOINT_PATIENCE = 5.0
# How long one transaction waits for another program's lock before giving up (StoreBusy).
LOCK_WAIT_SECONDS = 10.0
_BACKOFF_FIRST_S = 0.05
_BACKOFF_MAX_S = 1.0
# SQLite's words for "not now": another connection holds a lock, or the disk refuses.
_TRANSIENT_WORDS = ("locked", "busy", "disk is full", "disk i/o", "unable to open")


def is_transient(exc: sqlite3.Error) -> bool:
    """True for errors that say "not now" rather than "never": retry the same work later."""
    return isinstance(exc, sqlite3.OperationalError) and any(
        word in str(exc).lower() for word in _TRANSIENT_WORDS
    )


_SOURCES = re.compile(r"\b(?:FROM|JOIN)\s+([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)
_LITERALS = re.compile(r"'[^']*'")
# Every table a statement writes (INSERT/REPLACE INTO t, UPDATE t, DELETE FROM t), wherever it
# stands in it (after a WITH as well).
_WRITES = re.compile(r"\b(?:INTO|UPDATE(?:\s+OR\s+[A-Za-z]+)?|DELETE\s+FROM)\s+"
                     r"([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)
_RETURNING = re.compile(r"\bRETURNING\b", re.IGNORECASE)


def _walled(name: str) -> bool:
    table = declared(name.lower())
    return table is not None and table.scope is not None


def walled_source(sql: str) -> str | None:
    """The walled table (or keyword index) this statement reads, if any: remembered content,
    which only the gate reads (`memory.gate` puts the wall in every such statement). A read is
    any FROM or JOIN but a write's own target (a SELECT, an INSERT ... SELECT, an UPDATE ...
    FROM), and a write that hands back what it wrote (RETURNING)."""
    said = _LITERALS.sub("''", sql)
    for name in _SOURCES.findall(_WRITES.sub("", said)):
        if _walled(name):
            return str(name)
    return writes_content(said) if _RETURNING.search(said) else None


def writes_content(sql: str) -> str | None:
    """The walled table this statement writes, if it writes one."""
    for name in _WRITES.findall(_LITERALS.sub("''", sql)):
        if _walled(name):
            return str(name)
    return None


class Tx:
    """One open transaction. Handed out by `Store.transaction`; never kept beyond it.

    It refuses any statement that selects from a walled table (`walled_source`): remembered
    content is read only through the gate, which reads through `unwalled(tx)` and puts the
    wall in every statement itself. So a read written beside the gate fails when it runs,
    whatever builds its SQL, not only when a test reads the source. It refuses to write a
    walled table too: a scope's rows are written through its lane (`memory.gate.Lane`), which
    confines each write to that scope."""

    def __init__(self, conn: aiosqlite.Connection, *, opening: _Opening,
                 walled: bool = True) -> None:
        self._conn = conn
        self._walled = walled
        self._opening = opening
        # The ledger's last receipt as this transaction appended it (`memory.receipts`): the
        # transaction holds the write lock, so no one else can append after it before commit.
        self.ledger_head: object | None = None

    def _check(self, sql: str) -> None:
        if not self._walled:
            return
        if (table := walled_source(sql)) is not None:
            raise ContentRefused(f"remembered content ({table}) is read only through the gate")
        if (table := writes_content(sql)) is not None:
            raise ContentRefused(f"remembered content ({table}) is written only through its"
                                 " scope's lane")

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run a statement; returns lastrowid (for inserts) or rowcount."""
        self._check(sql)
        insert = sql.lstrip().upper().startswith("INSERT")
        return await self._run(_statement, sql, params, insert)

    async def executemany(self, sql: str, rows: Iterable[Params]) -> int:
        """Run a statement once for each of `rows`; returns how many rows it changed."""
        self._check(sql)
        return await self._run(_statements, sql, rows)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        self._check(sql)
        return await self._run(_rows, sql, params)

    async def read_then_write(self, read: str, write: str,
                              rows_after: Callable[[Row | None], Sequence[Params]]) -> Row | None:
        """`read`'s first row, then `write` run for each of `rows_after(that row)`, in one trip:
        for an append that follows what the table ends with (the read ledger's chain).
        `rows_after` runs on the connection's thread, so it only computes. Returns the row."""
        self._check(read)
        self._check(write)
        return await self._run(_read_then_write, read, write, rows_after)

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """The first row of a statement that gives one (by key, or `LIMIT 1`)."""
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def scalar(self, sql: str, params: Params = ()) -> Any:
        row = await self.fetchone(sql, params)
        return None if row is None else row[0]

    async def _run(self, fn: Callable[..., _R], *args: Any) -> _R:
        """`fn` on the connection's thread; the transaction's first statement takes its BEGIN
        along in the same trip (see `_Opening`)."""
        opening = self._opening
        if not opening.owed:
            return await _on_thread(self._conn, fn, *args)
        opening.owed = False
        started = time.monotonic()
        try:
            result: _R = await _on_thread(self._conn, _begun, fn, *args)
        except _BeginRefused as refused:
            # Another program holds the lock past SQLite's own wait: the store's wait, with
            # its backoff and its bound, then the statement.
            await opening.store._begin(started=started, refused=refused.error)
            return await _on_thread(self._conn, fn, *args)
        opening.store._began()
        return result


@dataclass
class _Opening:
    """A transaction's BEGIN IMMEDIATE, owed until its first statement, which carries it to the
    connection's thread in the same trip: every transaction is one trip shorter, and one that
    runs no statement costs none. Every `Tx` of one transaction (a `joined` block's, the gate's
    `unwalled` view) shares it."""

    store: Store
    owed: bool = True


class _BeginRefused(Exception):
    """BEGIN IMMEDIATE failed on the connection's thread: `error` says why."""

    def __init__(self, error: sqlite3.OperationalError) -> None:
        super().__init__(str(error))
        self.error = error


def _begun(raw: sqlite3.Connection, fn: Callable[..., _R], *args: Any) -> _R:
    try:
        raw.execute("BEGIN IMMEDIATE").close()
    except sqlite3.OperationalError as exc:
        raise _BeginRefused(exc) from None
    return fn(raw, *args)


def _rows(raw: sqlite3.Connection, sql: str, params: Params) -> list[Row]:
    cursor = raw.execute(sql, params)
    try:
        return cursor.fetchall()
    finally:
        cursor.close()


def _read_then_write(raw: sqlite3.Connection, read: str, write: str,
                     rows_after: Callable[[Row | None], Sequence[Params]]) -> Row | None:
    cursor = raw.execute(read)
    try:
        row: Row | None = cursor.fetchone()
    finally:
        cursor.close()
    raw.executemany(write, rows_after(row)).close()
    return row


def _statements(raw: sqlite3.Connection, sql: str, rows: Iterable[Params]) -> int:
    cursor = raw.executemany(sql, rows)
    try:
        return int(cursor.rowcount)
    finally:
        cursor.close()


async def _on_thread(conn: aiosqlite.Connection, fn: Callable[..., _R], *args: Any) -> _R:
    """`fn(sqlite3_connection, *args)` on the connection's own thread: one trip there and back,
    where aiosqlite's cursor would make one for the statement and another to close it. A turn
    runs dozens of statements, and each trip waits on two thread hand-offs. Uses aiosqlite's
    queue (`_execute`, `_conn`), which the pin in pyproject.toml holds still."""
    result: _R = await conn._execute(  # type: ignore[no-untyped-call]
        lambda: fn(conn._conn, *args))
    return result


def _statement(raw: sqlite3.Connection, sql: str, params: Params, insert: bool) -> int:
    cursor = raw.execute(sql, params)
    try:
        if not insert:
            return int(cursor.rowcount)
        # An insert that added no row (OR IGNORE, a SELECT that chose none) says 0: SQLite's
        # last rowid is the connection's, from whichever insert came before.
        return int(cursor.lastrowid or 0) if cursor.rowcount > 0 else 0
    finally:
        cursor.close()


def unwalled(tx: Tx) -> Tx:
    """The same transaction without the refusal: for the gate alone, whose every statement
    carries the wall, and for the schema's own steps at open, before any reader. Nothing else
    calls it (tests/test_architecture.py)."""
    return Tx(tx._conn, walled=False, opening=tx._opening)


def household(tx: Tx) -> Tx:
    """The same transaction as a plain one, for the household's own tables (a lane's
    `household`): like every transaction beside the gate, it reads and writes no content."""
    return Tx(tx._conn, opening=tx._opening)


@dataclass
class _Joined:
    """The transaction `Store.joined` holds for one task, and what waits on its commit."""

    store: Store
    task: asyncio.Task[Any] | None
    opening: _Opening
    after: list[Callable[[], None]] = field(default_factory=list)


# The `joined` block the running task is inside, if any. A task started inside it inherits the
# variable but not the block: only the task that opened it joins its transaction.
_JOINED: ContextVar[_Joined | None] = ContextVar("hearth_store_joined", default=None)


class Store:
    """The database file and its single connection."""

    def __init__(self, path: Path, conn: aiosqlite.Connection,
                 lock_wait: float | None = None) -> None:
        self.path = path
        self._conn = conn
        self._lock = asyncio.Lock()
        self._holder: asyncio.Task[Any] | None = None  # the task inside `transaction`
        self.lock_wait = LOCK_WAIT_SECONDS if lock_wait is None else lock_wait
        self._locked_since: float | None = None
        # The migrations this open applied: work that may follow only its own migration (the
        # ledger's keying) asks here.
        self.applied_now: set[str] = set()

    @classmethod
    async def open(cls, path: Path, *, create: bool) -> Store:
        """Open (or, when `create` and no file is there, make) the database and bring its
        schema up to date. What `memory.dbfile` refuses (a folder, an empty file, another
        program's database, a file or folder hearth may not write) is refused before anything
        writes to it."""
        fresh = await asyncio.to_thread(check_database_file, path, create=create)
        if fresh:
            await asyncio.to_thread(make_private_file, path)
        pending = aiosqlite.connect(str(path), isolation_level=None)
        _as_daemon(pending)
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
            # SQLite gives -wal and -shm the database file's mode; an older database (0644
            # under the default umask) is brought to 0600 with them.
            await asyncio.to_thread(keep_private, path, *_wal_files(path))
        except sqlite3.DatabaseError as exc:
            await conn.close()
            raise StoreError(f"{path} is not a usable hearth database: {exc}") from exc
        except BaseException:
            # A refused open must not leave aiosqlite's worker thread holding the process.
            await conn.close()
            raise
        return store

    async def define(self, name: str, arity: int, fn: Callable[..., object]) -> None:
        """A deterministic SQL function of this connection (`memory.gate` names rows with one)."""
        await self._conn.create_function(name, arity, fn, deterministic=True)

    async def _configure(self) -> None:
        for pragma in (
            f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}",
            "PRAGMA journal_mode = WAL",
            "PRAGMA synchronous = NORMAL",
            "PRAGMA foreign_keys = ON",
            "PRAGMA secure_delete = ON",
        ):
            await self._conn.execute(pragma)
        # The keyword indexes' triggers stem with it, so every connection must have it.
        await self._conn.create_function("stems", 1, index_text, deterministic=True)
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
            self.applied_now.add(name)
            # A migration and the row recording it commit together. Its steps may rebuild an
            # index from its table, before any reader: the one place beside the gate that may.
            async with self.transaction() as tx:
                steps = unwalled(tx)
                for statement in statements:
                    await steps.execute(statement)
                await tx.execute("INSERT INTO migrations(name) VALUES (?)", (name,))

    def transaction(self) -> AbstractAsyncContextManager[Tx]:
        """The one serialised path: BEGIN IMMEDIATE, commit on success, roll back on error.

        Waits for another program's lock up to `lock_wait` seconds; raises StoreBusy, with
        nothing written, when the lock outlasts that or the disk refuses the write."""
        return self.opened(Tx)

    @asynccontextmanager
    async def joined(self) -> AsyncIterator[Tx]:
        """One transaction for the block: every transaction this task opens inside it joins
        it (no BEGIN, no commit of its own), and all of them commit, or none, as the block
        ends. A turn's reads, or its writes, cost one trip through the lock instead of one
        each, queued behind every other member's turn each time. Nothing slow may be awaited
        inside (a model, an embedding): the block holds the database for its length."""
        task = asyncio.current_task()
        outer = _JOINED.get()
        if outer is not None and outer.store is self and outer.task is task:
            async with self.transaction() as tx:  # already joined: the block is the outer's
                yield tx
            return
        async with self.transaction() as tx:
            joined = _Joined(self, task, tx._opening)
            token = _JOINED.set(joined)
            try:
                yield tx
            finally:
                _JOINED.reset(token)
        for then in joined.after:
            then()

    def committed(self, then: Callable[[], None]) -> None:
        """Call `then` once what this task wrote has committed: now, or, inside a `joined`
        block, when the block commits (never, when it rolls back)."""
        joined = _JOINED.get()
        if joined is not None and joined.store is self and joined.task is asyncio.current_task():
            joined.after.append(then)
        else:
            then()

    @asynccontextmanager
    async def opened(self, kind: type[_T]) -> AsyncIterator[_T]:
        """`transaction`, handing out a `kind` of transaction (the gate's `Writing`)."""
        task = asyncio.current_task()
        joined = _JOINED.get()
        if joined is not None and joined.store is self and joined.task is task:
            # Inside this task's `joined` block: its transaction, begun and ended by the block.
            yield kind(self._conn, opening=joined.opening)
            return
        if task is not None and self._holder is task:
            # The lock is this task's own: waiting on it would wait forever.
            raise RuntimeError("a transaction was opened inside another on the same task")
        async with self._locked(task):
            # BEGIN IMMEDIATE goes with the first statement (`_Opening`). A statement whose
            # waiter is cancelled (a stop, a cancelled job) still runs on the database thread,
            # its BEGIN with it: the rollback below queues behind it, and is a no-op when
            # nothing began.
            opening = _Opening(self)
            try:
                yield kind(self._conn, opening=opening)
            except sqlite3.Error as exc:
                await self._rollback()
                if is_transient(exc):
                    raise StoreBusy(f"the database could not be written just now: {exc}") from exc
                raise
            except BaseException:
                await self._rollback()
                raise
            else:
                if opening.owed:
                    return  # no statement ran: nothing began, nothing to commit
                try:
                    await self._conn.commit()
                except asyncio.CancelledError:
                    # The commit goes on without its waiter; should it fail there, nothing
                    # may stay open behind it (the rollback is a no-op after a commit).
                    await asyncio.shield(self._rollback())
                    raise
                except sqlite3.Error as exc:
                    await self._rollback()
                    if is_transient(exc):
                        raise StoreBusy(f"the database could not commit just now: {exc}") from exc
                    raise StoreError(f"the database could not commit: {exc}") from exc

    @asynccontextmanager
    async def _locked(self, task: asyncio.Task[Any] | None) -> AsyncIterator[None]:
        """The one lock, held by `task` (see `transaction`)."""
        async with self._lock:
            self._holder = task
            try:
                yield
            finally:
                self._holder = None

    async def _begin(self, *, started: float, refused: sqlite3.OperationalError) -> None:
        """BEGIN IMMEDIATE again, after the first try (sent with the transaction's first
        statement at `started`) was `refused`: retried with backoff while another program
        holds the lock. One warning when a lock starts to hold this store up, one line when it
        lets go."""
        delay = _BACKOFF_FIRST_S
        exc = refused
        while True:
            if not is_transient(exc):
                raise StoreError(f"the database cannot start a transaction: {exc}") from exc
            if self._locked_since is None:
                self._locked_since = started
                log.warning("the database is locked by another program; each write waits "
                            "up to %.0f s, then is kept and retried later", self.lock_wait)
            spent = time.monotonic() - started
            if spent + delay > self.lock_wait:
                raise StoreBusy(
                    "the database is locked by another program: nothing was written "
                    f"(waited {spent:.0f} s); try again once it is done"
                ) from exc
            await asyncio.sleep(delay)
            delay = min(delay * 2, _BACKOFF_MAX_S)
            try:
                await self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as again:
                exc = again
                continue
            self._began()
            return

    def _began(self) -> None:
        """A transaction began: if a lock had held this store up, say once that it let go."""
        if self._locked_since is not None:
            log.warning("the database is free again after %.1f s",
                        time.monotonic() - self._locked_since)
            self._locked_since = None

    async def _rollback(self) -> None:
        # A failed rollback (no transaction left, the disk gone) must not hide the first error.
        try:
            await self._conn.rollback()
        except sqlite3.Error as exc:
            log.warning("rollback failed: %s", exc)

    async def checkpoint(self, *, patience: float = CHECKPOINT_PATIENCE) -> bool:
        """Fold the WAL into the database file and truncate it. Another connection reading (a
        `hearth` command beside the bot) holds pages the WAL must keep until it finishes, and
        SQLite then folds only part: tried again for up to `patience` seconds. True when the
        WAL is empty; False (and a warning) when a reader outlasted it: what the WAL still
        holds goes at the next checkpoint."""
        deadline = time.monotonic() + patience
        pause = 0.02
        while True:
            async with self._lock:
                cursor = await self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                row = await cursor.fetchone()
            if row is None or not row[0]:
                return True
            if time.monotonic() >= deadline:
                log.warning("the WAL could not be emptied: another connection is reading; "
                            "the next checkpoint will")
                return False
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.5)

    async def backup_to(self, target: Path) -> None:
        """An online, consistent copy of the database, in a new file made mode 0600."""
        await asyncio.to_thread(make_private_file, target, replace=True)
        async with self._lock:
            dest = await aiosqlite.connect(str(target))
            try:
                await self._conn.backup(dest)
            finally:
                await dest.close()

    async def close(self) -> None:
        await self._conn.close()


def make_private_file(path: Path, *, replace: bool = False) -> None:
    """Make an empty file readable and writable by this user only (0600), whatever the umask,
    before SQLite opens it: SQLite makes a new file with the umask's mode (0644 by default),
    and its -wal, -shm and journal files with the database file's. With `replace`, a file
    already there is made anew; otherwise it is left to whoever just made it."""
    if replace:
        path.unlink(missing_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if replace:
            raise
        return
    except OSError as exc:
        raise StoreError(f"cannot make {path}: {exc.strerror}") from None
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


def keep_private(*paths: Path) -> None:
    """Bring this user's files among `paths` to 0600 (those missing or another's are left)."""
    for path in paths:
        try:
            info = path.stat()
            if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) & 0o077:
                os.chmod(path, 0o600)
        except FileNotFoundError:
            continue
        except OSError as exc:
            log.warning("cannot make %s private (0600): %s", path, exc.strerror)


def _wal_files(path: Path) -> tuple[Path, Path]:
    return path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")


def _as_daemon(conn: aiosqlite.Connection) -> None:
    """aiosqlite's worker thread, made a daemon before it starts: a program that stops without
    closing memory (a script that raised first) then exits instead of waiting forever on a
    thread nobody will stop. Whatever a transaction had not committed is rolled back by SQLite,
    as after a kill; `Memory.close` (or `async with Memory.open(...)`) still closes it cleanly."""
    thread = getattr(conn, "_thread", None)  # aiosqlite keeps no public handle on it
    if thread is not None and not thread.is_alive():
        thread.daemon = True


async def _worker_stopped(conn: aiosqlite.Connection) -> None:
    """After a failed connect, aiosqlite's worker thread still reports its own stop to the
    event loop; wait for it, or it reports to a closed loop and prints a stray traceback."""
    thread = getattr(conn, "_thread", None)  # aiosqlite keeps no public handle on it
    if thread is not None and thread.is_alive():
        await asyncio.to_thread(thread.join, 5)
