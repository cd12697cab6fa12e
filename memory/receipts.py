"""The read ledger: the only code that writes receipts, and the verifier of their chain.

Every facade read appends one row inside the read's own transaction: sequence, time, actor,
activity, purpose, method, a digest of the query keyed per actor (never its text), the ids
returned, the scopes they came from, and how many the lens suppressed. Each row's hash covers
its fields and the previous row's hash, from a genesis of zeros, so a changed, reordered or
deleted row breaks the chain at that row.

The HMAC key is the install's secret, kept in a mode-0600 file beside the database. It also keys
tombstone fingerprints, so neither a query digest nor a tombstone can be reversed by dictionary;
query digests are keyed per actor, so the same words read by two members give two digests and
no audit can confirm a guess about another member's read.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path

from memory.errors import LedgerError
from memory.models import AccessContext, Receipt
from memory.store import Row, Tx

GENESIS = "0" * 64
_SECRET_BYTES = 32


def secret_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".secret")


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


def copy_secret(source_db: Path, target_db: Path) -> None:
    """Carry the install secret along with a copy of its database (mode 0600)."""
    data = load_secret(source_db, create=False)
    path = secret_path(target_db)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


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


def _row_hash(prev_hash: str, fields: dict[str, object]) -> str:
    body = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(f"{prev_hash}\n{body}".encode()).hexdigest()


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


async def write_receipt(
    tx: Tx,
    *,
    secret: bytes,
    ctx: AccessContext,
    method: str,
    query: str,
    returned_ids: Sequence[int],
    scopes: Sequence[str],
    suppressed: int,
    now: str,
) -> int:
    """Append one receipt in the caller's transaction; returns its sequence number."""
    last = await tx.fetchone("SELECT seq, hash FROM receipts ORDER BY seq DESC LIMIT 1")
    seq, prev_hash = (1, GENESIS) if last is None else (int(last["seq"]) + 1, str(last["hash"]))
    digest = query_digest(secret, ctx.actor, method, query)
    ordered_scopes = sorted(set(scopes))
    fields = _fields(
        seq=seq,
        at=now,
        actor=ctx.actor,
        activity=ctx.activity.value,
        purpose=ctx.purpose,
        method=method,
        query_digest=digest,
        returned_ids=returned_ids,
        scopes=ordered_scopes,
        suppressed=suppressed,
    )
    await tx.execute(
        "INSERT INTO receipts(seq, at, actor, activity, purpose, method, query_digest,"
        " returned_ids, scopes, suppressed, prev_hash, hash)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            seq,
            now,
            ctx.actor,
            ctx.activity.value,
            ctx.purpose,
            method,
            digest,
            json.dumps(list(returned_ids)),
            json.dumps(ordered_scopes),
            suppressed,
            prev_hash,
            _row_hash(prev_hash, fields),
        ),
    )
    return seq


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


def first_broken_link(rows: Sequence[Row]) -> tuple[int, str] | None:
    """Recompute the chain from genesis over rows in storage order.

    Returns (position, reason) for the first row that does not follow from the one before it,
    where position is the sequence number the chain expected there; None when the chain holds.
    """
    prev_hash = GENESIS
    for expected_seq, row in enumerate(rows, start=1):
        try:
            receipt = receipt_from_row(row)
        except (ValueError, TypeError, KeyError):
            return expected_seq, "the row cannot be read"
        if receipt.seq != expected_seq:
            return expected_seq, f"expected sequence {expected_seq}, found {receipt.seq}"
        if receipt.prev_hash != prev_hash:
            return expected_seq, "its link to the previous receipt does not match"
        fields = receipt.model_dump(
            include={"seq", "at", "actor", "activity", "purpose", "method", "query_digest",
                     "returned_ids", "scopes", "suppressed"}
        )
        fields["returned_ids"] = list(receipt.returned_ids)
        fields["scopes"] = list(receipt.scopes)
        if _row_hash(prev_hash, fields) != receipt.hash:
            return expected_seq, "its contents do not match its hash"
        prev_hash = receipt.hash
    return None
