"""The read ledger: the only code that writes receipts, and the verifier of their chain.

Every facade read appends one row inside the read's own transaction: sequence, time, actor,
activity, purpose, method, a digest of the query keyed per actor (never its text), the ids
returned, the scopes they came from, and how many the lens suppressed. Each row's hash is an
HMAC, under the install secret, of its fields and the previous row's hash, from a genesis of
zeros: a changed, reordered or deleted row breaks the chain at that row, and whoever can write
the database but not read the secret cannot forge a new chain.

The chain's head is anchored outside the database, in `<db>.ledger-head` (mode 0600) beside the
secret: the last receipt this install saw committed, its hash, and an HMAC of both. So a tail
cut from the table is told from the ledger's end ("the ledger was cut after receipt 41; the
anchor says 57"). The anchor is written after the commit, off the event loop, and only ever
forward, whichever process writes it (each looks and writes under one lock): it may lag the
table (a process that dies before writing it leaves an older head, which still verifies),
never lead it. A process moves the anchor only while the table still
reaches the head it trusts; once the table does not (cut, or rewritten), it leaves the anchor
alone, so the evidence stays for `hearth receipts verify`. A missing anchor beside a ledger
that has receipts fails verification: deleting the anchor is how a cut would otherwise hide.

Ledgers from before the HMAC chain (plain SHA-256 rows) are keyed once when a new hearth first
opens them (`ledger_keying` records it): if their plain chain holds, every row is re-chained
under the HMAC and the anchor written; if it does not, the rows are left as they were and
verification names the receipt where the old chain was already broken.

The HMAC key is the install's secret, kept in a mode-0600 file beside the database. It also keys
tombstone fingerprints, so neither a query digest nor a tombstone can be reversed by dictionary;
query digests are keyed per actor, so the same words read by two members give two digests and
no audit can confirm a guess about another member's read.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import hashlib
import hmac
import json
import logging
import os
import secrets
import stat
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memory.errors import LedgerError
from memory.models import AccessContext, Receipt
from memory.store import Row, Store, Tx

GENESIS = "0" * 64
_SECRET_BYTES = 32
# How long the anchor waits after a commit to gather the next ones into the same write. A
# process that dies in between leaves the anchor that much behind, which still verifies.
_COALESCE_S = 0.05

log = logging.getLogger("hearth.ledger")


def secret_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".secret")


def head_path(db_path: Path) -> Path:
    """The ledger's anchor: `<db>.ledger-head`, beside the database and its secret."""
    return db_path.with_name(db_path.name + ".ledger-head")


def load_secret(db_path: Path, *, create: bool) -> bytes:
    """Read the install secret, making it (mode 0600) when `create` and it is missing.

    A secret is made only for a database that does not exist yet: beside an existing database a
    new secret would silently break its ledger and its tombstones, so a missing one is refused
    with how to get it back."""
    path = secret_path(db_path)
    if not path.exists():
        if not create or db_path.exists():
            raise LedgerError(
                f"the install secret for {db_path.name} is missing ({path.name} beside it): "
                "restore it from your backup (`hearth backup` writes it beside the copy); "
                "without it receipts cannot be verified"
            )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(_SECRET_BYTES))
        except OSError as exc:
            raise LedgerError(f"cannot make the install secret {path}: {exc.strerror}") from None
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            os.chmod(path, 0o600)
        data = path.read_bytes()
    except OSError as exc:
        raise LedgerError(f"cannot read the install secret {path}: {exc.strerror}") from None
    if len(data) != _SECRET_BYTES:
        raise LedgerError(f"the install secret {path} is damaged")
    return data


def _write_private(path: Path, data: bytes) -> None:
    """Replace `path` with `data`, mode 0600 whatever the umask: a fresh file beside it, synced,
    then renamed over it, so a reader sees the old bytes or the new, never half."""
    tmp = path.with_name(f"{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def copy_secret(source_db: Path, target_db: Path) -> None:
    """Carry the install secret along with a copy of its database (mode 0600)."""
    data = load_secret(source_db, create=False)
    path = secret_path(target_db)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def read_head_bytes(db_path: Path) -> bytes | None:
    """The anchor's bytes as they are (None when there is none), to carry with a copy."""
    try:
        return head_path(db_path).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LedgerError(f"cannot read the ledger's anchor {head_path(db_path)}: "
                          f"{exc.strerror}") from None


def put_head_bytes(db_path: Path, data: bytes | None) -> None:
    """Set a copy's anchor to what its source had (mode 0600); none when the source had none,
    so a copy never keeps an anchor that belongs to another ledger."""
    path = head_path(db_path)
    try:
        if data is None:
            path.unlink(missing_ok=True)
        else:
            _write_private(path, data)
    except OSError as exc:
        raise LedgerError(f"cannot write the ledger's anchor {path}: {exc.strerror}") from None


def copy_head(source_db: Path, target_db: Path) -> None:
    """Carry the ledger's anchor along with a copy of its database."""
    put_head_bytes(target_db, read_head_bytes(source_db))


def keyed_digest(secret: bytes, text: str) -> str:
    return hmac.new(secret, text.encode("utf-8"), hashlib.sha256).hexdigest()


@functools.lru_cache(maxsize=256)
def _subkey(secret: bytes, purpose: str) -> bytes:
    """A key for one use of the secret, so no two uses can stand in for each other."""
    return hmac.new(secret, f"hearth\n{purpose}".encode(), hashlib.sha256).digest()


def query_digest(secret: bytes, actor: str, method: str, query: str) -> str:
    """The query as a receipt keeps it: keyed by the actor's own key, so the same words read by
    two actors give two digests (and the owner's audit confirms no guess about another's read),
    while one actor's repeated query is still seen as a repeat."""
    return keyed_digest(_subkey(secret, f"query digest\n{actor}"), f"{method}\n{query}")


def _body(prev_hash: str, fields: dict[str, object]) -> bytes:
    body = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return f"{prev_hash}\n{body}".encode()


def _row_hash(secret: bytes, prev_hash: str, fields: dict[str, object]) -> str:
    return hmac.new(_subkey(secret, "ledger row"), _body(prev_hash, fields),
                    hashlib.sha256).hexdigest()


def _plain_row_hash(prev_hash: str, fields: dict[str, object]) -> str:
    """The unkeyed chain of ledgers written before 0005_keyed_ledger; read only to key them."""
    return hashlib.sha256(_body(prev_hash, fields)).hexdigest()


def _fields(
    *,
    seq: int,
    at: str,
    actor: str,
    activity: str,
    purpose: str,
    method: str,
    query_digest: str,
    returned_ids: Sequence[int],
    scopes: Sequence[str],
    suppressed: int,
) -> dict[str, object]:
    return {
        "seq": seq,
        "at": at,
        "actor": actor,
        "activity": activity,
        "purpose": purpose,
        "method": method,
        "query_digest": query_digest,
        "returned_ids": list(returned_ids),
        "scopes": list(scopes),
        "suppressed": suppressed,
    }


# --- the anchor ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Head:
    """A point of the chain: a receipt's sequence number and its hash (0 and GENESIS: none)."""

    seq: int
    hash: str


GENESIS_HEAD = Head(0, GENESIS)
HeadState = Head | Literal["missing", "altered"]


def _head_mac(secret: bytes, head: Head) -> str:
    return keyed_digest(_subkey(secret, "ledger head"), f"{head.seq}\n{head.hash}")


def _head_bytes(secret: bytes, head: Head) -> bytes:
    doc = {"seq": head.seq, "hash": head.hash, "mac": _head_mac(secret, head)}
    return (json.dumps(doc, sort_keys=True) + "\n").encode()


def read_head(db_path: Path, secret: bytes) -> HeadState:
    """The anchor beside the database: its head, or "missing", or "altered" (unreadable, or
    not written under this install's secret)."""
    data = read_head_bytes(db_path)
    if data is None:
        return "missing"
    try:
        doc = json.loads(data)
        head = Head(int(doc["seq"]), str(doc["hash"]))
        mac = str(doc["mac"])
    except (ValueError, TypeError, KeyError):
        return "altered"
    if head.seq < 0 or not hmac.compare_digest(mac, _head_mac(secret, head)):
        return "altered"
    if head.seq == 0 and head.hash != GENESIS:
        return "altered"
    return head


def write_head(db_path: Path, secret: bytes, head: Head) -> None:
    try:
        _write_private(head_path(db_path), _head_bytes(secret, head))
    except OSError as exc:
        raise LedgerError(f"cannot write the ledger's anchor {head_path(db_path)}: "
                          f"{exc.strerror}") from None


def _advance_head(db_path: Path, secret: bytes, head: Head, *, may_create: bool) -> bool:
    """Move the anchor forward to `head`; True once the anchor exists (moved or already ahead).
    Never backward (another process may have moved it further), and never over an anchor that
    is altered or, unless this is the ledger's first anchor, missing: that is evidence.

    The look and the write are one step for every writer of this database's anchor (the bot,
    the CLI beside it): each holds an exclusive `flock` on the install secret's file meanwhile,
    a file that exists while the database does and is never replaced. Without it, a writer
    that read an older anchor could write its own head after another's newer one."""
    with _anchor_lock(db_path):
        current = read_head(db_path, secret)
        if isinstance(current, Head):
            if current.seq >= head.seq:
                return True
        elif current == "altered" or not may_create:
            return False
        write_head(db_path, secret, head)
        return True


@contextlib.contextmanager
def _anchor_lock(db_path: Path) -> Iterator[None]:
    """An exclusive `flock` on `<db>.secret` while the block runs (held for one small write).
    A secret gone from beside the database is left to the reads that need it to say so."""
    fd = _lock_anchor(db_path)
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)  # closing the descriptor drops its lock


@contextlib.asynccontextmanager
async def _anchor_held(db_path: Path) -> AsyncIterator[None]:
    """The same lock, taken off the event loop and held across awaits: for a step that reads
    the ledger's end and anchors there, so no other writer's move falls in between."""
    fd = await asyncio.to_thread(_lock_anchor, db_path)
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)


def _lock_anchor(db_path: Path) -> int | None:
    """A descriptor on `<db>.secret` holding its exclusive `flock` (None: there is no secret)."""
    try:
        fd = os.open(secret_path(db_path), os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _key_head(db_path: Path, secret: bytes, head: Head) -> None:
    """The first anchor of a ledger keyed at this open, under the lock, and never over a
    head another process has moved further since the keying committed."""
    with _anchor_lock(db_path):
        current = read_head(db_path, secret)
        if isinstance(current, Head) and current.seq > head.seq:
            return
        write_head(db_path, secret, head)


_LAST = "SELECT seq, hash FROM receipts ORDER BY seq DESC LIMIT 1"


async def _last(tx: Tx) -> Head:
    return _head_of(await tx.fetchone(_LAST))


def _head_of(row: Row | None) -> Head:
    return GENESIS_HEAD if row is None else Head(int(row["seq"]), str(row["hash"]))


class LedgerAnchor:
    """This process's view of the chain head, and the one writer of `<db>.ledger-head`.

    It trusts the head it read at open (or wrote since). Before a receipt is appended it checks
    that the table still reaches that head, at no cost when the last row is the head itself;
    after the receipt's commit it moves the anchor forward in a background thread, at most one
    write every `_COALESCE_S`, so a burst of reads (a reply's context is several) costs the
    event loop nothing and the disk one write. `flush` writes what waits, at once."""

    def __init__(self, db_path: Path, secret: bytes) -> None:
        self._db_path = db_path
        self._secret = secret
        self._known: Head | None = None
        self._may_create = False
        self._staged: Head | None = None
        self._pending: Head | None = None
        self._task: asyncio.Task[None] | None = None
        self._now = asyncio.Event()

    @property
    def path(self) -> Path:
        return head_path(self._db_path)

    async def open(self, store: Store, now: str) -> None:
        """Key a ledger written before the HMAC chain (once, recorded), and take the anchor's
        head as the one this process trusts. A missing anchor is taken as the start only for an
        empty ledger; beside receipts, or altered, this process never moves it."""
        state = await asyncio.to_thread(read_head, self._db_path, self._secret)
        async with store.transaction() as tx:
            keyed: Head | None = None
            if await tx.fetchone("SELECT 1 FROM ledger_keying LIMIT 1") is None:
                # An old plain chain is keyed only by the open that brings the database up to
                # the keyed ledger. A keying record gone from a database keyed before is not a
                # reason to bless whatever chain is there now: verify judges it under the HMAC.
                upgrading = "0005_keyed_ledger" in store.applied_now
                keyed = await _key_old_chain(tx, self._secret, state, now, upgrading=upgrading)
            last = await _last(tx)
        if keyed is not None:
            await asyncio.to_thread(_key_head, self._db_path, self._secret, keyed)
            state = keyed
        if isinstance(state, Head):
            self._known = state
        elif state == "missing" and last == GENESIS_HEAD:
            self._known, self._may_create = GENESIS_HEAD, True

    async def reaches(self, tx: Tx, last: Head) -> None:
        """Before an append: does the table (ending at `last`) still hold the trusted head? If
        not, stop moving the anchor, so it keeps saying where the ledger really reached."""
        known = self._known
        if known is None or last == known:
            return
        if last.seq > known.seq:
            if known == GENESIS_HEAD:
                return
            row = await tx.fetchone("SELECT hash FROM receipts WHERE seq = ?", (known.seq,))
            if row is not None and str(row["hash"]) == known.hash:
                return
        log.warning("the read ledger no longer reaches its anchor (receipt %d); the anchor is "
                    "left as it is: `hearth receipts verify` says what changed", known.seq)
        self._known = None

    def stage(self, head: Head) -> None:
        """The receipt just appended, in a transaction not yet committed."""
        self._staged = head if self._known is not None else None

    def committed(self, seq: int) -> None:
        """The read whose receipt was `seq` committed: move the anchor there (off the loop).
        Receipts written earlier in the same transaction (a `joined` block's) are told too,
        first: they leave the staged head for the last one."""
        staged = self._staged
        if staged is None or staged.seq != seq:
            return
        self._staged = None
        if self._known is None:
            return
        self._known = self._pending = staged
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        with contextlib.suppress(TimeoutError):  # gather the reads of this moment into one write
            await asyncio.wait_for(self._now.wait(), _COALESCE_S)
        while self._pending is not None:
            head, self._pending = self._pending, None
            try:
                exists = await asyncio.to_thread(
                    _advance_head, self._db_path, self._secret, head,
                    may_create=self._may_create,
                )
            except (LedgerError, OSError, RuntimeError) as exc:
                log.warning("the ledger's anchor could not be moved to receipt %d: %s",
                            head.seq, exc)
                continue
            if exists:
                self._may_create = False

    async def flush(self) -> None:
        """Wait until the anchor holds every receipt this process committed."""
        task = self._task
        if task is not None and not task.done():
            self._now.set()
            try:
                await task
            finally:
                self._now.clear()

    async def verify(self, store: Store) -> tuple[int, tuple[int, str] | None]:
        """(receipts checked, the first break as (receipt, one line) or None)."""
        await self.flush()
        # The anchor first: it is written after commits, so read before the rows it never leads.
        state = await asyncio.to_thread(read_head, self._db_path, self._secret)
        async with store.transaction() as tx:
            keying = await tx.fetchone(
                "SELECT broken_at, reason FROM ledger_keying WHERE broken_at IS NOT NULL"
                " ORDER BY rowid LIMIT 1"
            )
            rows = await tx.fetchall("SELECT * FROM receipts ORDER BY seq")
        if keying is not None:
            at = int(keying["broken_at"])
            return len(rows), (at, f"receipt {at} was already broken before the ledger was "
                                   f"keyed ({keying['reason']})")
        broken = first_broken_link(rows, self._secret)
        if broken is not None:
            return len(rows), broken
        return len(rows), _against_anchor(rows, state, self.path.name)

    async def reanchor(self, store: Store) -> int:
        """Anchor the ledger at its current end, after its chain verifies from genesis: for an
        install whose anchor was lost. Returns the receipt anchored at."""
        await self.flush()
        # Held from reading the end to writing it: a process that commits a receipt meanwhile
        # moves the anchor past this one after it, never under it.
        async with _anchor_held(self._db_path):
            async with store.transaction() as tx:
                rows = await tx.fetchall("SELECT * FROM receipts ORDER BY seq")
                keyed_broken = await tx.fetchone(
                    "SELECT 1 FROM ledger_keying WHERE broken_at IS NOT NULL LIMIT 1"
                )
            broken = first_broken_link(rows, self._secret)
            if broken is not None or keyed_broken is not None:
                raise LedgerError("the ledger's chain is broken, so there is no end to anchor: "
                                  "`hearth receipts verify` says where")
            head = GENESIS_HEAD if not rows else Head(int(rows[-1]["seq"]), str(rows[-1]["hash"]))
            await asyncio.to_thread(write_head, self._db_path, self._secret, head)
        self._known, self._may_create = head, False
        return head.seq


def _against_anchor(rows: Sequence[Row], state: HeadState, name: str) -> tuple[int, str] | None:
    """An intact chain held against its anchor: is its end where the anchor says it reached?"""
    last = GENESIS_HEAD if not rows else Head(int(rows[-1]["seq"]), str(rows[-1]["hash"]))
    if state == "missing":
        if not rows:
            return None
        return last.seq, (f"the ledger's anchor {name} is missing, so a cut tail cannot be ruled "
                          "out; put it back from the backup beside the database (`hearth "
                          "backup` writes it), or `hearth receipts anchor` to anchor anew")
    if state == "altered":
        return last.seq, (f"the ledger's anchor {name} was altered (it is not one this install "
                          "wrote), so a cut tail cannot be ruled out")
    head = state
    if head.seq > last.seq:
        if not rows:
            return 1, f"the ledger was emptied; the anchor says {head.seq}"
        return last.seq + 1, (f"the ledger was cut after receipt {last.seq}; the anchor says "
                              f"{head.seq}")
    if head.seq > 0 and str(rows[head.seq - 1]["hash"]) != head.hash:
        return head.seq, (f"receipt {head.seq} is not the one the anchor holds: the ledger was "
                          "rewritten up to there")
    return None


# --- keying a ledger from before the HMAC chain ------------------------------------------------


async def _key_old_chain(tx: Tx, secret: bytes, state: HeadState, now: str, *,
                         upgrading: bool) -> Head | None:
    """Once per database: re-chain rows written under plain SHA-256 with the HMAC, when their
    chain holds; record the outcome. Returns the head to anchor at, or None for no new anchor."""
    rows = await tx.fetchall("SELECT * FROM receipts ORDER BY seq")

    async def record(count: int, broken: tuple[int, str] | None) -> None:
        await tx.execute(
            "INSERT INTO ledger_keying(keyed_at, rows, broken_at, reason) VALUES (?, ?, ?, ?)",
            (now, count, None if broken is None else broken[0],
             None if broken is None else broken[1]),
        )

    if not upgrading or first_broken_link(rows, secret) is None or isinstance(state, Head):
        # Already keyed (a new ledger, or its record of keying went missing). With an anchor
        # standing, or outside the upgrade, re-keying would bless rows rewritten in the old
        # form: verify judges them.
        await record(0, None)
        return None
    broken = _first_break(rows, _plain_row_hash)
    if broken is not None:
        await record(0, broken)
        return None
    prev_hash, updates = GENESIS, []
    for row in rows:
        digest = _row_hash(secret, prev_hash, _fields_of(receipt_from_row(row)))
        updates.append((prev_hash, digest, int(row["seq"])))
        prev_hash = digest
    await tx.executemany("UPDATE receipts SET prev_hash = ?, hash = ? WHERE seq = ?", updates)
    await record(len(rows), None)
    return GENESIS_HEAD if not rows else Head(int(rows[-1]["seq"]), prev_hash)


# --- writing and reading receipts ----------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One receipt to append: whom a read was for, what it was, and what it returned."""

    ctx: AccessContext
    method: str
    query: str
    returned_ids: Sequence[int]
    scopes: Sequence[str]
    suppressed: int
    now: str


_APPEND = ("INSERT INTO receipts(seq, at, actor, activity, purpose, method, query_digest,"
           " returned_ids, scopes, suppressed, prev_hash, hash)"
           " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


async def write_receipts(tx: Tx, entries: Sequence[Entry], *, secret: bytes,
                         anchor: LedgerAnchor | None = None) -> int:
    """Append these receipts, chained in order, in one statement of the caller's transaction;
    returns the last one's sequence number (with an `anchor`, tell it `committed(seq)` once
    the transaction commits)."""
    if isinstance(tx.ledger_head, Head):
        # Not the transaction's first receipts: they follow its last, already checked.
        rows, head = _chained(tx.ledger_head, entries, secret)
        await tx.executemany(_APPEND, rows)
    else:
        # The transaction's first: they follow the table's last row, read in the same trip
        # as the append (the transaction holds the write lock: no one appends in between).
        chained: list[Head] = []

        def after(row: Row | None) -> list[tuple[object, ...]]:
            rows, head = _chained(_head_of(row), entries, secret)
            chained.append(head)
            return rows

        last = _head_of(await tx.read_then_write(_LAST, _APPEND, after))
        head = chained[0]
        if anchor is not None:
            await anchor.reaches(tx, last)
    tx.ledger_head = head
    if anchor is not None:
        anchor.stage(head)
    return head.seq


def _chained(last: Head, entries: Sequence[Entry],
             secret: bytes) -> tuple[list[tuple[object, ...]], Head]:
    """The rows that append `entries` after `last`, each hashed over the one before, and the
    head they end at."""
    rows: list[tuple[object, ...]] = []
    for e in entries:
        seq, prev_hash = last.seq + 1, last.hash
        digest = query_digest(secret, e.ctx.actor, e.method, e.query)
        ordered_scopes = sorted(set(e.scopes))
        fields = _fields(
            seq=seq,
            at=e.now,
            actor=e.ctx.actor,
            activity=e.ctx.activity.value,
            purpose=e.ctx.purpose,
            method=e.method,
            query_digest=digest,
            returned_ids=e.returned_ids,
            scopes=ordered_scopes,
            suppressed=e.suppressed,
        )
        row_hash = _row_hash(secret, prev_hash, fields)
        rows.append((seq, e.now, e.ctx.actor, e.ctx.activity.value, e.ctx.purpose, e.method,
                     digest, json.dumps(list(e.returned_ids)), json.dumps(ordered_scopes),
                     e.suppressed, prev_hash, row_hash))
        last = Head(seq, row_hash)
    return rows, last


def receipt_from_row(row: Row) -> Receipt:
    return Receipt(
        seq=int(row["seq"]),
        at=str(row["at"]),
        actor=str(row["actor"]),
        activity=str(row["activity"]),
        purpose=str(row["purpose"]),
        method=str(row["method"]),
        query_digest=str(row["query_digest"]),
        returned_ids=tuple(int(i) for i in json.loads(row["returned_ids"])),
        scopes=tuple(str(s) for s in json.loads(row["scopes"])),
        suppressed=int(row["suppressed"]),
        prev_hash=str(row["prev_hash"]),
        hash=str(row["hash"]),
    )


def _fields_of(receipt: Receipt) -> dict[str, object]:
    fields = receipt.model_dump(
        include={"seq", "at", "actor", "activity", "purpose", "method", "query_digest",
                 "returned_ids", "scopes", "suppressed"}
    )
    fields["returned_ids"] = list(receipt.returned_ids)
    fields["scopes"] = list(receipt.scopes)
    return fields


def _first_break(
    rows: Sequence[Row], row_hash: Callable[[str, dict[str, object]], str]
) -> tuple[int, str] | None:
    prev_hash = GENESIS
    expected = 1
    for row in rows:
        try:
            receipt = receipt_from_row(row)
        except (ValueError, TypeError, KeyError):
            return expected, f"receipt {expected} cannot be read"
        if receipt.seq != expected:
            if receipt.seq < expected:
                return expected, f"receipt {receipt.seq} is out of place"
            gone = (f"receipt {expected} is" if receipt.seq == expected + 1
                    else f"receipts {expected} to {receipt.seq - 1} are")
            where = (f"the ledger goes from {expected - 1} to {receipt.seq}" if expected > 1
                     else f"the ledger starts at {receipt.seq}")
            return expected, f"{gone} missing ({where})"
        if receipt.prev_hash != prev_hash:
            return expected, (f"receipt {expected} was altered (its link to the receipt before "
                              "it does not match)")
        if row_hash(prev_hash, _fields_of(receipt)) != receipt.hash:
            return expected, (f"receipt {expected} was altered (its HMAC does not match its "
                              "contents)")
        prev_hash = receipt.hash
        expected += 1
    return None


def first_broken_link(rows: Sequence[Row], secret: bytes) -> tuple[int, str] | None:
    """Recompute the HMAC chain from genesis over rows in sequence order.

    Returns (receipt, one line) for the first row that does not follow from the one before it,
    where receipt is the sequence number the chain expected there; None when the chain holds.
    """
    return _first_break(rows, functools.partial(_row_hash, secret))
