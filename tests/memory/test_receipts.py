"""The ledger: every facade read is receipted, chained from genesis, and tamper-evident."""

from __future__ import annotations

import hashlib
import sqlite3
import stat
from pathlib import Path

import pytest

from memory import AccessContext, Activity, Memory
from memory.receipts import secret_path
from tests.helpers import Household, make_household


async def _reads(home: Household, n: int = 6) -> None:
    await home.memory.remember(home.bob.person_id, "Bob likes long walks by the canal")
    for i in range(n):
        await home.memory.recall(home.dm(home.bob), f"walks {i}")


def _tamper(db: Path, sql: str, params: tuple[object, ...] = ()) -> None:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(sql, params)
    conn.close()


async def test_every_kind_of_facade_read_writes_one_receipt(home: Household) -> None:
    m = home.memory
    ctx = home.dm(home.bob)
    inspect_ctx = home.dm(home.bob, Activity.MEMBER_INSPECT)
    await m.recall(ctx, "anything")
    await m.inspect(inspect_ctx)
    await m.explain(ctx, 1)
    await m.conflicts(ctx)
    await m.transcript(ctx)
    await m.export(inspect_ctx)
    await m.forget(inspect_ctx, "nothing like this")
    audit = AccessContext.for_audit(home.owner.person_id, "audit")
    methods = [r.method for r in await m.receipts(audit)]
    # the audit's own receipt commits with it, after the rows it returned were read
    assert methods == ["recall", "inspect", "explain", "conflicts", "transcript", "export",
                       "forget"]
    assert [r.method for r in await m.receipts(audit)][-1] == "receipts"


async def test_a_receipt_holds_a_keyed_digest_and_never_the_query_text(home: Household) -> None:
    await home.memory.recall(home.dm(home.bob), "where does Alice hide the spare key")
    conn = sqlite3.connect(home.memory.path)
    dump = "\n".join(conn.iterdump())
    conn.close()
    assert "spare key" not in dump
    assert "Alice hide" not in dump


async def test_the_install_secret_is_kept_beside_the_database_with_mode_0600(
    home: Household,
) -> None:
    path = secret_path(home.memory.path)
    assert path.exists()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


async def test_an_intact_ledger_verifies_from_genesis(home: Household) -> None:
    await _reads(home)
    checked, broken = await home.memory.verify_receipts()
    assert checked == 6 and broken is None


@pytest.mark.parametrize(
    ("label", "sql", "params", "row"),
    [
        ("tampered suppression count", "UPDATE receipts SET suppressed = 7 WHERE seq = 3", (), 3),
        ("tampered returned ids", "UPDATE receipts SET returned_ids = '[]' WHERE seq = 4", (), 4),
        ("tampered purpose", "UPDATE receipts SET purpose = 'nothing' WHERE seq = 2", (), 2),
        ("deleted row", "DELETE FROM receipts WHERE seq = 4", (), 4),
        ("first row deleted", "DELETE FROM receipts WHERE seq = 1", (), 1),
    ],
)
async def test_a_tampered_or_deleted_receipt_fails_verification_at_that_row(
    tmp_path: Path, label: str, sql: str, params: tuple[object, ...], row: int
) -> None:
    db = tmp_path / "hearth.db"
    home = await make_household(db)
    await _reads(home)
    await home.memory.close()
    _tamper(db, sql, params)
    memory = await Memory.open(db)
    try:
        _, broken = await memory.verify_receipts()
        assert broken is not None, label
        assert broken[0] == row, label
    finally:
        await memory.close()


async def test_reordered_receipts_fail_verification_at_the_first_moved_row(
    tmp_path: Path,
) -> None:
    db = tmp_path / "hearth.db"
    home = await make_household(db)
    await _reads(home)
    await home.memory.close()
    conn = sqlite3.connect(db)
    with conn:
        rows = conn.execute("SELECT * FROM receipts WHERE seq IN (3, 4) ORDER BY seq").fetchall()
        conn.execute("DELETE FROM receipts WHERE seq IN (3, 4)")
        # swap the two rows' contents while keeping their positions
        conn.execute("INSERT INTO receipts VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                     (3, *rows[1][1:]))
        conn.execute("INSERT INTO receipts VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                     (4, *rows[0][1:]))
    conn.close()
    memory = await Memory.open(db)
    try:
        _, broken = await memory.verify_receipts()
        assert broken is not None and broken[0] == 3
    finally:
        await memory.close()


async def test_a_member_sees_which_reads_used_their_facts_and_not_others(
    home: Household,
) -> None:
    m = home.memory
    await m.remember(home.bob.person_id, "Bob is training for a marathon")
    await m.remember(home.alice.person_id, "Alice is training for a triathlon")
    await m.recall(home.dm(home.bob), "training marathon")
    await m.recall(home.dm(home.alice), "training triathlon")
    bob_reads = await m.receipts_about(home.bob.person_id)
    assert [r.method for r in bob_reads] == ["recall"]
    assert bob_reads[0].actor == home.bob.person_id
    assert bob_reads[0].activity == Activity.DM_CONVERSATION


async def test_receipts_count_what_the_lens_suppressed(home: Household) -> None:
    m = home.memory
    await m.remember(home.bob.person_id, "Bob takes insulin for his diabetes")
    proactive = home.dm(home.bob, Activity.PROACTIVE)
    assert await m.recall(proactive, "insulin diabetes") == []
    audit = AccessContext.for_audit(home.owner.person_id, "audit")
    last = [r for r in await m.receipts(audit) if r.method == "recall"][-1]
    assert last.suppressed == 1 and last.returned_ids == ()


# --- query digests are the actor's own -----------------------------------------------------------


async def test_the_same_query_by_two_members_gives_two_digests(home: Household) -> None:
    m = home.memory
    words = "is Alice seeing someone"
    await m.recall(home.dm(home.bob), words)
    await m.recall(home.dm(home.alice), words)
    await m.recall(home.dm(home.bob), words)
    await m.recall(home.dm(home.owner), words)  # the owner trying the guess herself
    audit = AccessContext.for_audit(home.owner.person_id, "audit")
    digests = {r.actor: r.query_digest for r in await m.receipts(audit) if r.method == "recall"}
    bob_reads = [r.query_digest for r in await m.receipts(audit)
                 if r.method == "recall" and r.actor == home.bob.person_id]
    assert len(set(digests.values())) == 3  # Bob's, Alice's and the owner's all differ
    assert bob_reads[0] == bob_reads[1]  # one member's repeat is still a repeat
    # nor does a digest of the bare words (as an unkeyed or unactored digest would be) match
    bare = hashlib.sha256(f"recall\n{words}".encode()).hexdigest()
    assert bare not in digests.values()
