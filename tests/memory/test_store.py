"""The SQLite file: WAL, foreign keys and secure_delete, named migrations, refusing files it
cannot use, and a busy database that fails instead of hanging."""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import threading
import time
from pathlib import Path

import aiosqlite
import pytest

from memory import (
    SHARED,
    Activity,
    HearthError,
    Memory,
    Role,
    Sensitivity,
    StoreError,
    private_scope,
)
from memory.migrations import MIGRATIONS
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


async def _open_refused(path: Path) -> tuple[StoreError, set[threading.Thread]]:
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
            await Memory.open(path)
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
    for_bob = await m.grant(home.owner.person_id, Activity.PROACTIVE, Sensitivity.HEALTH,
                            shared=True, beneficiary_id=home.bob.person_id, note="for bob")
    for_all = await m.grant(home.owner.person_id, Activity.PROACTIVE, Sensitivity.FINANCE,
                            shared=True, note="for everyone")
    about_bob = await m.remember(home.alice.person_id, "Bob snores",
                                 subject_id=home.bob.person_id)
    line = await m.append_turn(chat_id="group:-100", speaker_id=home.bob.person_id,
                               role=Role.USER, scope=SHARED, text="morning all")
    assert about_bob.belief_id is not None

    await m.remove_person(home.bob.person_id)

    assert [g.grant_id for g in await m.grants()] == [for_all.grant_id]
    assert for_bob.grant_id != for_all.grant_id
    explanation = await m.explain(home.dm(home.alice), about_bob.belief_id)
    assert explanation is not None and explanation.belief.subject_id is None
    (turn,) = await m.transcript(home.group(), chat_id="group:-100")
    assert turn.turn_id == line and turn.speaker_id is None and turn.text == "morning all"


async def test_a_belief_about_an_unknown_person_is_refused_with_a_hearth_error(
    home: Household,
) -> None:
    # The foreign key on subject_id refuses the row; the caller hears it in hearth's own
    # vocabulary (errors.py: HearthError is the root of every error hearth raises on purpose),
    # not as a raw sqlite3 exception.
    m = home.memory
    with pytest.raises(HearthError):
        await m.remember(home.bob.person_id, "Zed likes jazz", subject_id="pnobody000000")
    assert await m.inspect(home.dm(home.bob, Activity.MEMBER_INSPECT)) == []


async def test_deleted_rows_leave_no_plaintext_in_the_file_secure_delete(
    home: Household,
) -> None:
    m = home.memory
    scope = private_scope(home.bob.person_id)
    for i in range(40):  # shared traffic on the same pages
        await m.append_turn(chat_id="group:-100", speaker_id=home.alice.person_id,
                            role=Role.USER, scope=SHARED, text=f"the tomato plants, day {i}")
        if i == 20:
            await m.append_turn(chat_id="dm:1002", speaker_id=home.bob.person_id,
                                role=Role.USER, scope=scope,
                                text="my password hint is aubergine-telescope")
    await m.checkpoint()
    assert b"aubergine-telescope" in raw_bytes(m.path)
    await m.remove_person(home.bob.person_id)
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
        with pytest.raises(StoreError, match="busy or locked"):
            await asyncio.wait_for(
                m.append_turn(chat_id="dm:1002", speaker_id=home.bob.person_id,
                              role=Role.USER, scope=private_scope(home.bob.person_id),
                              text="hello?"),
                timeout=30,
            )
        assert 3.0 < time.monotonic() - started < 30
    finally:
        other.execute("ROLLBACK")
        other.close()
    # once the lock is released the same Memory works again
    line = await m.append_turn(chat_id="dm:1002", speaker_id=home.bob.person_id,
                               role=Role.USER, scope=private_scope(home.bob.person_id),
                               text="hello again")
    assert [t.turn_id for t in await m.transcript(home.dm(home.bob))] == [line]
