"""The SQLite file: WAL, foreign keys and secure_delete, named migrations, refusing files it
cannot use, and a busy database that fails instead of hanging."""

from __future__ import annotations

import asyncio
import gc
import os
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import aiosqlite
import pytest

from memory import (
    SHARED,
    Activity,
    HearthError,
    LedgerError,
    Memory,
    Role,
    Sensitivity,
    StoreError,
    private_scope,
)
from memory.lockfile import hold_database, lock_path
from memory.migrations import MIGRATIONS
from memory.receipts import head_path, secret_path
from tests.helpers import Household, make_household, raw_bytes


def _query(db: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def _execute(db: Path, sql: str, params: tuple[object, ...] = ()) -> None:
    conn = sqlite3.connect(db)
    try:
        with conn:
            conn.execute(sql, params)
    finally:
        conn.close()


def _worker_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if "_connection_worker_thread" in t.name}


async def _new_workers_alive(before: set[threading.Thread]) -> set[threading.Thread]:
    """aiosqlite worker threads started since `before` that are still alive after a moment."""
    for _ in range(50):
        alive = _worker_threads() - before
        if not alive:
            return alive
        await asyncio.sleep(0.02)
    return _worker_threads() - before


async def _open_refused(
    path: Path, *, create: bool = False
) -> tuple[StoreError, set[threading.Thread]]:
    """Open a database that must be refused: the StoreError, and any aiosqlite worker thread
    the failed open left running.

    Whatever leaked is closed before returning: its worker thread is not a daemon, so one leak
    would otherwise hang the whole test run at exit. The garbage collector is paused so the
    leaked connection is still there to close (collected unclosed, it warns and stays alive).
    """
    before = _worker_threads()
    gc.disable()
    try:
        with pytest.raises(StoreError) as caught:
            await Memory.open(path, create=create)
        leaked = await _new_workers_alive(before)
    finally:
        for obj in gc.get_objects():
            if type(obj) is aiosqlite.Connection:  # type(), not isinstance: no __class__ lookups
                await obj.close()
        gc.enable()
    return caught.value, leaked


@pytest.fixture
async def created(tmp_path: Path) -> Path:
    """A fresh household database, closed again."""
    home = await make_household(tmp_path / "hearth.db")
    path = home.memory.path
    await home.memory.close()
    return path


# --- pragmas, through behaviour ------------------------------------------------------------


async def test_the_database_is_in_wal_mode_and_stays_so(created: Path) -> None:
    assert _query(created, "PRAGMA journal_mode") == [("wal",)]
    memory = await Memory.open(created)
    await memory.close()
    assert _query(created, "PRAGMA journal_mode") == [("wal",)]


async def test_foreign_keys_are_enforced_removing_a_person_cascades_and_nulls(
    home: Household,
) -> None:
    m = home.memory
    # The owner grants over shared facts *for* Bob: Bob is only the beneficiary, so nothing
    # but the foreign key removes this row when he goes.
    for_bob = await m.grants.give(home.owner.person_id, Activity.PROACTIVE, Sensitivity.HEALTH,
                            shared=True, beneficiary_id=home.bob.person_id, note="for bob")
    for_all = await m.grants.give(home.owner.person_id, Activity.PROACTIVE, Sensitivity.FINANCE,
                            shared=True, note="for everyone")
    about_bob = await m.beliefs.remember(home.alice.person_id, "Bob snores",
                                 subject_id=home.bob.person_id)
    line = await m.transcript.append(chat_id="group:-100", speaker_id=home.bob.person_id,
                               role=Role.USER, scope=SHARED, text="morning all")
    assert about_bob.belief_id is not None

    await m.forgetting.remove_person(home.bob.person_id)

    assert [g.grant_id for g in await m.grants.list()] == [for_all.grant_id]
    assert for_bob.grant_id != for_all.grant_id
    explanation = await m.beliefs.explain(home.dm(home.alice), about_bob.belief_id)
    assert explanation is not None and explanation.belief.subject_id is None
    (turn,) = await m.transcript.lines(home.group(), chat_id="group:-100")
    assert turn.turn_id == line and turn.speaker_id is None and turn.text == "morning all"


async def test_a_belief_about_an_unknown_person_is_refused_with_a_hearth_error(
    home: Household,
) -> None:
    # The foreign key on subject_id refuses the row; the caller hears it in hearth's own
    # vocabulary (errors.py: HearthError is the root of every error hearth raises on purpose),
    # not as a raw sqlite3 exception.
    m = home.memory
    with pytest.raises(HearthError):
        await m.beliefs.remember(home.bob.person_id, "Zed likes jazz", subject_id="pnobody000000")
    assert await m.beliefs.inspect(home.dm(home.bob, Activity.MEMBER_INSPECT)) == []


async def test_deleted_rows_leave_no_plaintext_in_the_file_secure_delete(
    home: Household,
) -> None:
    m = home.memory
    scope = private_scope(home.bob.person_id)
    for i in range(40):  # shared traffic on the same pages
        await m.transcript.append(chat_id="group:-100", speaker_id=home.alice.person_id,
                            role=Role.USER, scope=SHARED, text=f"the tomato plants, day {i}")
        if i == 20:
            await m.transcript.append(chat_id="dm:1002", speaker_id=home.bob.person_id,
                                role=Role.USER, scope=scope,
                                text="my password hint is aubergine-telescope")
    await m.checkpoint()
    assert b"aubergine-telescope" in raw_bytes(m.path)
    await m.forgetting.remove_person(home.bob.person_id)
    await m.checkpoint()
    raw = raw_bytes(m.path)
    assert b"aubergine" not in raw and b"telescope" not in raw
    assert b"tomato plants" in raw


# --- migrations ----------------------------------------------------------------------------


async def test_migrations_are_recorded_by_name_and_never_applied_twice(created: Path) -> None:
    names = [name for name, _ in MIGRATIONS]
    rows = _query(created, "SELECT name, applied_at FROM migrations ORDER BY name")
    assert [r[0] for r in rows] == names
    for _ in range(2):
        memory = await Memory.open(created)
        await memory.close()
    assert _query(created, "SELECT name, applied_at FROM migrations ORDER BY name") == rows
    # the schema is whole: one owner index, the tables, and the people still there
    assert _query(created, "SELECT count(*) FROM people") == [(3,)]


async def test_a_database_from_a_newer_hearth_refuses_to_open(created: Path) -> None:
    _execute(created, "INSERT INTO migrations(name) VALUES ('9999_from_the_future')")
    error, _ = await _open_refused(created)
    assert "newer" in str(error)
    assert "9999_from_the_future" in str(error)
    # nothing was changed and nothing was applied
    assert ("9999_from_the_future",) in _query(created, "SELECT name FROM migrations")


async def test_a_refused_newer_database_leaves_no_connection_open(created: Path) -> None:
    _execute(created, "INSERT INTO migrations(name) VALUES ('9999_from_the_future')")
    error, leaked = await _open_refused(created)
    assert "newer" in str(error)
    assert leaked == set()


async def test_a_missing_file_without_create_raises_store_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "hearth.db"
    with pytest.raises(StoreError, match="no database"):
        await Memory.open(missing)
    assert not missing.exists()
    assert not missing.parent.exists()


@pytest.mark.parametrize(
    "content",
    [b"this is not a database at all\n" * 200, b"SQLite format 3\x00" + b"\xff" * 4080],
    ids=["text", "damaged-header"],
)
async def test_a_garbage_file_raises_store_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "hearth.db"
    path.write_bytes(content)
    error, leaked = await _open_refused(path)
    assert "not a usable hearth database" in str(error)
    assert path.read_bytes() == content
    assert leaked == set()


# --- a busy database -----------------------------------------------------------------------


async def test_a_write_fails_with_store_error_when_another_process_holds_the_lock(
    home: Household,
) -> None:
    m = home.memory
    other = sqlite3.connect(m.path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        with pytest.raises(StoreError, match="locked by another program: nothing was written"):
            await asyncio.wait_for(
                m.transcript.append(chat_id="dm:1002", speaker_id=home.bob.person_id,
                              role=Role.USER, scope=private_scope(home.bob.person_id),
                              text="hello?"),
                timeout=30,
            )
        assert 3.0 < time.monotonic() - started < 30
    finally:
        other.execute("ROLLBACK")
        other.close()
    # once the lock is released the same Memory works again
    line = await m.transcript.append(chat_id="dm:1002", speaker_id=home.bob.person_id,
                               role=Role.USER, scope=private_scope(home.bob.person_id),
                               text="hello again")
    assert [t.turn_id for t in await m.transcript.lines(home.dm(home.bob))] == [line]


# --- files that are not what they seem -----------------------------------------------------


def _bytes(path: Path) -> bytes:
    return path.read_bytes()


def _beside(path: Path) -> set[str]:
    """The names in the database's folder that start with its name (-wal, -shm, .secret...)."""
    return {p.name for p in path.parent.iterdir() if p.name.startswith(path.name)}


def _foreign(path: Path, *statements: str, wal: bool = False) -> bytes:
    conn = sqlite3.connect(path)
    try:
        if wal:
            conn.execute("PRAGMA journal_mode = WAL")
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()
    return path.read_bytes()


@pytest.mark.parametrize("create", [False, True], ids=["open", "create"])
async def test_an_empty_file_is_refused_and_stays_empty(tmp_path: Path, create: bool) -> None:
    path = tmp_path / "hearth.db"
    path.touch()
    error, leaked = await _open_refused(path, create=create)
    assert "empty file" in str(error) and "\n" not in str(error)
    assert path.read_bytes() == b""
    assert _beside(path) == {"hearth.db"}  # no secret, no -wal or -shm was made beside it
    assert leaked == set()


@pytest.mark.parametrize(
    ("statements", "wal", "needle"),
    [
        (("CREATE TABLE notes(body TEXT)", "INSERT INTO notes VALUES ('milk')"), False,
         "it holds notes"),
        (("CREATE TABLE migrations(id INTEGER, migration TEXT, batch INTEGER)",
          "INSERT INTO migrations VALUES (1, '2014_10_12_create_users', 1)",
          "CREATE TABLE users(name TEXT)"), False, "names none of hearth's migrations"),
        (("CREATE TABLE migrations(name TEXT)", "INSERT INTO migrations VALUES ('0001_init')",
          "CREATE TABLE photos(path TEXT)"), True, "names none of hearth's migrations"),
        (("CREATE TABLE photos(path TEXT)",), True, "it holds photos"),
        ((), False, "it holds no tables"),
    ],
    ids=["other-tables", "another-migrations-table", "other-migrations-wal", "wal", "no-tables"],
)
@pytest.mark.parametrize("create", [False, True], ids=["open", "create"])
async def test_another_programs_sqlite_file_is_refused_before_any_migration_touches_it(
    tmp_path: Path, statements: tuple[str, ...], wal: bool, needle: str, create: bool
) -> None:
    path = tmp_path / "photos.db"
    before = _foreign(path, *statements, "VACUUM" if not statements else "SELECT 1", wal=wal)
    files = _beside(path)
    error, leaked = await _open_refused(path, create=create)
    assert "not hearth's" in str(error) and needle in str(error)
    assert path.read_bytes() == before
    assert _beside(path) == files  # nothing made beside it either: no secret, no -wal
    assert leaked == set()


async def test_a_folder_given_as_the_database_is_refused_with_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "household"
    folder.mkdir()
    for create in (False, True):
        error, leaked = await _open_refused(folder, create=create)
        assert "is a folder" in str(error) and leaked == set()
    assert list(folder.iterdir()) == []


async def test_a_database_in_a_folder_that_does_not_exist_is_refused_unless_made(
    tmp_path: Path,
) -> None:
    path = tmp_path / "nowhere" / "hearth.db"
    error, leaked = await _open_refused(path)
    assert "no database at" in str(error) and leaked == set()
    memory = await Memory.open(path, create=True)
    await memory.close()
    assert _beside(path) == {"hearth.db", "hearth.db.secret"}


async def test_a_new_database_gets_a_new_secret_and_an_existing_one_keeps_its_own(
    tmp_path: Path,
) -> None:
    path = tmp_path / "hearth.db"
    memory = await Memory.open(path, create=True)
    await memory.close()
    secret = secret_path(path)
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    kept = secret.read_bytes()
    memory = await Memory.open(path, create=True)
    await memory.close()
    assert secret.read_bytes() == kept


@pytest.mark.parametrize("create", [False, True], ids=["open", "create"])
async def test_an_existing_database_without_its_secret_is_refused_and_no_secret_is_made(
    created: Path, create: bool
) -> None:
    secret = secret_path(created)
    secret.unlink()
    before = _bytes(created)
    with pytest.raises(LedgerError) as caught:
        await Memory.open(created, create=create)
    message = str(caught.value)
    assert "\n" not in message
    assert "hearth.db.secret" in message and "restore it from your backup" in message
    assert "hearth backup" in message
    assert not secret.exists()
    assert _bytes(created) == before


@pytest.mark.parametrize(
    ("denied", "needle"),
    [("file", "hearth.db is read-only"), ("folder", "is read-only: SQLite in WAL mode")],
)
async def test_a_database_hearth_may_not_write_is_refused_before_it_is_opened(
    created: Path, monkeypatch: pytest.MonkeyPatch, denied: str, needle: str
) -> None:
    # Root ignores permissions, so this plays them with os.access; tests/bot/test_cli.py
    # runs `hearth doctor` and `hearth run` as nobody against real read-only files.
    real_access = os.access
    barred = created if denied == "file" else created.parent

    def access(path: str | os.PathLike[str], mode: int) -> bool:
        if Path(path) == barred and mode & os.W_OK:
            return False
        return real_access(path, mode)

    monkeypatch.setattr("memory.dbfile.os.access", access)
    before = _bytes(created)
    error, leaked = await _open_refused(created)
    assert needle in str(error) and leaked == set()
    assert _bytes(created) == before


# --- the run lock --------------------------------------------------------------------------


def test_the_database_lock_is_one_holders_at_a_time_and_its_file_is_0600(
    tmp_path: Path,
) -> None:
    db = tmp_path / "hearth.db"
    old = os.umask(0)
    try:
        with hold_database(db, create=True, then="stop the other one"):
            assert stat.S_IMODE(lock_path(db).stat().st_mode) == 0o600
            with pytest.raises(StoreError, match=r"in use.*stop the other one"), \
                    hold_database(db, create=True, then="stop the other one"):
                pass
    finally:
        os.umask(old)
    with hold_database(db, create=False, then="-"):  # let go at the end of the block
        pass
    assert not db.exists()  # the lock never makes the database


async def test_restore_is_refused_while_the_database_is_held_and_changes_nothing(
    created: Path, tmp_path: Path
) -> None:
    memory = await Memory.open(created)
    copy = tmp_path / "copy.db"
    await memory.backup(copy)
    await memory.close()
    before = _bytes(created)
    with hold_database(created, create=False, then="stop it"):
        with pytest.raises(StoreError, match=r"hearth run.*before restoring"):
            await Memory.restore(copy, created)
        assert _bytes(created) == before
    await Memory.restore(copy, created)  # once it is let go


async def test_restore_brings_back_a_lost_install_secret(created: Path, tmp_path: Path) -> None:
    memory = await Memory.open(created)
    copy = tmp_path / "copy.db"
    await memory.backup(copy)
    await memory.close()
    secret_path(created).unlink()
    await Memory.restore(copy, created)
    memory = await Memory.open(created)
    try:
        assert (await memory.ledger.verify())[1] is None
    finally:
        await memory.close()
    assert secret_path(created).read_bytes() == secret_path(copy).read_bytes()


# --- every file is the household's only: 0600 whatever the umask ----------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _modes(folder: Path, prefix: str = "") -> dict[str, int]:
    """The mode of each file in `folder` whose name starts with `prefix`."""
    return {p.name: _mode(p) for p in folder.iterdir() if p.name.startswith(prefix)}


@pytest.mark.usefixtures("default_umask")
async def test_the_database_its_wal_shm_secret_anchor_and_lock_are_made_0600(
    tmp_path: Path,
) -> None:
    db = tmp_path / "hearth.db"
    home = await make_household(db)
    try:
        await home.memory.recall.search(home.dm(home.bob), "anything")  # a receipt: the anchor too
        await home.memory.checkpoint()
        await home.memory.recall.search(home.dm(home.bob), "anything else")
        await home.memory._anchor.flush()  # the anchor is written beside the loop
        made = _modes(tmp_path)
    finally:
        await home.memory.close()
    assert {"hearth.db", "hearth.db-wal", "hearth.db-shm", "hearth.db.secret",
            "hearth.db.ledger-head"} <= set(made)
    assert made == dict.fromkeys(made, 0o600)
    with hold_database(db, create=False, then="-"):
        assert _mode(lock_path(db)) == 0o600
    # a control: under this umask a file made the ordinary way is world-readable
    (tmp_path / "plain").touch()
    assert _mode(tmp_path / "plain") == 0o644


@pytest.mark.usefixtures("default_umask")
async def test_a_backup_and_a_restore_are_made_0600(home: Household, tmp_path: Path) -> None:
    await home.memory.recall.search(home.dm(home.bob), "anything")  # a receipt, so an anchor
    copy = tmp_path / "copy.db"
    await home.memory.backup(copy)
    assert _modes(tmp_path, "copy.db") == dict.fromkeys(
        ("copy.db", "copy.db.ledger-head", "copy.db.secret"), 0o600
    )
    target = tmp_path / "restored.db"
    await Memory.restore(copy, target)
    for path in (target, secret_path(target), head_path(target)):
        assert _mode(path) == 0o600, path.name
    memory = await Memory.open(target)  # and its -wal and -shm once it is used
    try:
        await memory.stats()
        for suffix in ("-wal", "-shm"):
            assert _mode(target.with_name(target.name + suffix)) == 0o600, suffix
    finally:
        await memory.close()


@pytest.mark.usefixtures("default_umask")
async def test_an_older_world_readable_database_is_made_0600_when_opened(created: Path) -> None:
    os.chmod(created, 0o644)
    memory = await Memory.open(created)
    try:
        await memory.stats()
        for path in (created, created.with_name(created.name + "-wal"),
                     created.with_name(created.name + "-shm")):
            assert _mode(path) == 0o600, path.name
    finally:
        await memory.close()


async def test_a_write_cancelled_while_its_transaction_begins_leaves_the_database_writable(
    home: Household,
) -> None:
    store = home.memory._store  # the store's own transaction path is what is tested
    for _ in range(20):  # a cancel lands before, during or after the BEGIN on the db thread
        async def write() -> None:
            async with store.transaction() as tx:
                await tx.execute("SELECT 1")

        task = asyncio.create_task(write())
        await asyncio.sleep(0)  # the task now waits for its BEGIN IMMEDIATE
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        # What a stop or a cancelled job leaves behind: the next write must still go through.
        assert await home.memory.outbox.count_pending() == 0


_RAISES_BEFORE_CLOSE = """
import asyncio, sys
from pathlib import Path
from memory import Memory

async def main():
    memory = await Memory.open(Path(sys.argv[1]), create=True)
    raise RuntimeError("the script's own mistake")

asyncio.run(main())
"""


def test_a_script_that_raises_before_closing_memory_exits_with_its_error(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(_RAISES_BEFORE_CLOSE, encoding="utf-8")
    done = subprocess.run(  # noqa: S603 -- our own interpreter and script
        [sys.executable, str(script), str(tmp_path / "hearth.db")], capture_output=True,
        text=True, timeout=30, cwd=Path(__file__).resolve().parents[2], check=False)
    assert done.returncode == 1
    assert "the script's own mistake" in done.stderr


async def test_memory_opened_in_async_with_is_closed_when_the_block_raises(
    tmp_path: Path,
) -> None:
    path = tmp_path / "hearth.db"
    with pytest.raises(RuntimeError):
        async with await Memory.open(path, create=True) as memory:
            raise RuntimeError("inside the block")
    with pytest.raises(ValueError, match="no active connection"):  # closed
        await memory.checkpoint()
