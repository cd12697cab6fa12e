"""What lies at the database path, judged before anything opens it for writing.

Owns: refusing, with one line, a path hearth cannot use as its database: a folder, a missing
folder or file (unless a new database may be made there), an empty file, a file that is not
SQLite, another program's SQLite database, and a file or folder hearth may not write (SQLite in
WAL mode writes `-wal` and `-shm` files beside the database). A hearth database is one with
hearth's `migrations` table naming at least one of hearth's migrations (or, interrupted before
its first migration, that table and nothing else).
Must not: write to an existing file, or open it other than read-only. It only reads the header
and the schema, so another program's file keeps every byte.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from memory.errors import StoreError
from memory.migrations import MIGRATIONS

SQLITE_HEADER = b"SQLite format 3\x00"
_HEARTH_MIGRATIONS = frozenset(name for name, _ in MIGRATIONS)
_WAL_FILES = ("-wal", "-shm")


def check_database_file(path: Path, *, create: bool) -> bool:
    """Refuse (StoreError) a path hearth cannot use as its database; True when there is no
    file yet and `create` lets one be made (its folder is made too), False for a hearth
    database hearth may read and write."""
    if not path.exists():
        if path.is_symlink():
            raise StoreError(f"{path} is a link to nothing; point it at a database or remove it")
        if not create:
            raise StoreError(f"no database at {path}")
        _make_folder(path)
        return True
    if path.is_dir():
        raise StoreError(f"{path} is a folder, not a database file; give --db a file's path")
    if not path.is_file():
        raise StoreError(f"{path} is not a regular file, so it cannot be hearth's database")
    if path.stat().st_size == 0:
        raise StoreError(
            f"{path} is an empty file, not a hearth database; move it aside and hearth makes "
            "a new database there (`hearth people add NAME --owner`)"
        )
    if not os.access(path, os.R_OK):
        raise StoreError(f"cannot read {path}: permission denied")
    with path.open("rb") as handle:
        header = handle.read(len(SQLITE_HEADER))
    if header != SQLITE_HEADER:
        raise StoreError(f"{path} is not a usable hearth database: it is not a SQLite file")
    _check_writable(path)
    _check_hearths(path)
    return False


def _make_folder(path: Path) -> None:
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot make the folder {folder} for {path.name}: "
                         f"{exc.strerror}") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise StoreError(f"cannot make {path}: the folder {folder} is read-only for this user")


def _check_writable(path: Path) -> None:
    folder = path.parent
    if not os.access(path, os.W_OK):
        raise StoreError(
            f"{path} is read-only: hearth writes to its database; make it writable by this user"
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise StoreError(
            f"the folder {folder} is read-only: SQLite in WAL mode writes {path.name}-wal and "
            f"{path.name}-shm beside the database; make the folder writable by this user"
        )
    for suffix in _WAL_FILES:
        extra = path.with_name(path.name + suffix)
        if extra.exists() and not os.access(extra, os.R_OK | os.W_OK):
            raise StoreError(f"{extra} is read-only: SQLite in WAL mode must write it")


def _check_hearths(path: Path) -> None:
    """Refuse another program's SQLite database, reading its schema read-only."""
    uri = path.resolve().as_uri() + "?mode=ro"
    if not path.with_name(path.name + "-wal").exists():
        uri += "&immutable=1"  # nothing outside the file: read it without making -wal/-shm
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=5)
    except sqlite3.Error as exc:
        raise StoreError(f"{path} is not a usable hearth database: {exc}") from None
    try:
        tables = sorted(
            str(row[0]) for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
                " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
            )
        )
        names: set[str] = set()
        if "migrations" in tables:
            columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(migrations)")}
            if "name" in columns:
                names = {str(row[0]) for row in conn.execute("SELECT name FROM migrations")}
            else:
                names = {"(another program's)"}
    except sqlite3.Error as exc:
        raise StoreError(f"{path} is not a usable hearth database: {exc}") from None
    finally:
        conn.close()
    if "migrations" not in tables:
        held = f" (it holds {_listed(tables)})" if tables else " (it holds no tables)"
        raise StoreError(
            f"{path} is a SQLite database, but not hearth's{held}; hearth will not write into "
            "it: give --db another path"
        )
    others = [t for t in tables if t != "migrations"]
    if not names & _HEARTH_MIGRATIONS and (names or others):
        raise StoreError(
            f"{path} is a SQLite database, but not hearth's (its migrations table names none "
            "of hearth's migrations); hearth will not write into it: give --db another path"
        )


def _listed(tables: list[str]) -> str:
    shown = ", ".join(tables[:5])
    return shown + (f" and {len(tables) - 5} more" if len(tables) > 5 else "")


__all__ = ["SQLITE_HEADER", "check_database_file"]
