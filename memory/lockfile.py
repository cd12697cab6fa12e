"""The database's run lock: one `hearth run` per database, and no restore under a serving bot.

Owns: the `<db>.lock` file beside the database (mode 0600) and an exclusive `flock` on it, taken
without waiting: whoever cannot have it is refused at once with one line. The OS drops the lock
when its holder exits, however it exits (a crash, SIGKILL), so a lock file left behind never
blocks anyone. The file itself stays: deleting it while someone waits to lock it would let two
processes lock two different files. The descriptor is not inherited, so a child process (the
embedded model server) never keeps the lock alive after hearth is gone.
Must not: wait for the lock, or stand in for SQLite's own locking of rows and transactions.
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memory.errors import StoreError


def lock_path(db_path: Path) -> Path:
    """The lock file of a database: `<db>.lock`, beside it."""
    return db_path.with_name(db_path.name + ".lock")


@contextmanager
def hold_database(db_path: Path, *, create: bool, then: str) -> Iterator[Path]:
    """Hold the database's lock for the block, or raise StoreError (ending with `then`, what
    the person should do) when another process holds it. `create` makes a missing folder,
    as opening a new database would."""
    path = lock_path(db_path)
    folder = path.parent
    if db_path.is_dir():
        raise StoreError(f"{db_path} is a folder, not a database file; give --db a file's path")
    if create:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot make the folder {folder}: {exc.strerror}") from None
    elif not folder.is_dir():
        raise StoreError(f"no folder {folder} for the database {db_path.name}")
    fd = _open_lock_file(path)
    try:
        info = os.fstat(fd)
        if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) & 0o077:
            os.fchmod(fd, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(
                f"{db_path} is in use: another hearth process (a running `hearth run`, or a "
                f"restore) holds {path.name}; {then}"
            ) from None
        except OSError as exc:
            raise StoreError(f"cannot lock {path}: {exc.strerror}") from None
        yield path
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _open_lock_file(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except PermissionError:
        if not path.exists():
            raise StoreError(
                f"the folder {path.parent} is read-only: hearth writes its lock file there, and "
                "SQLite in WAL mode its -wal and -shm files; make it writable by this user"
            ) from None
    except OSError as exc:
        raise StoreError(f"cannot make the lock file {path}: {exc.strerror}") from None
    try:  # made earlier by a user with more rights: a descriptor for reading is enough to lock
        return os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise StoreError(f"cannot open the lock file {path}: {exc.strerror}") from None


__all__ = ["hold_database", "lock_path"]
