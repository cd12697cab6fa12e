"""The ledger: every facade read is receipted, chained from genesis, and tamper-evident."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import stat
import threading
import time
from pathlib import Path

import pytest

from memory import AccessContext, Activity, Memory, receipts
from memory.receipts import head_path, secret_path
from tests.helpers import Household, make_household


async def _reads(home: Household, n: int = 6) -> None:
    await home.memory.beliefs.remember(home.bob.person_id, "Bob likes long walks by the canal")
    for i in range(n):
        await home.memory.recall.search(home.dm(home.bob), f"walks {i}")


def _tamper(db: Path, sql: str, params: tuple[object, ...] = ()) -> None:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(sql, params)
    conn.close()


async def test_every_kind_of_facade_read_writes_one_receipt(home: Household) -> None:
    m = home.memory
    ctx = home.dm(home.bob)
    inspect_ctx = home.dm(home.bob, Activity.MEMBER_INSPECT)
    await m.recall.search(ctx, "anything")
    await m.beliefs.inspect(inspect_ctx)
    await m.beliefs.explain(ctx, 1)
    await m.beliefs.conflicts(ctx)
    await m.transcript.lines(ctx)
    await m.export.document(inspect_ctx)
    await m.forgetting.forget(inspect_ctx, "nothing like this")
    audit = AccessContext.for_audit(home.owner.person_id, "audit")
    methods = [r.method for r in await m.ledger.audit(audit)]
    # the audit's own receipt commits with it, after the rows it returned were read
    assert methods == ["recall", "inspect", "explain", "conflicts", "transcript", "export",
                       "forget"]
    assert [r.method for r in await m.ledger.audit(audit)][-1] == "receipts"


async def test_a_receipt_holds_a_keyed_digest_and_never_the_query_text(home: Household) -> None:
    await home.memory.recall.search(home.dm(home.bob), "where does Alice hide the spare key")
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
    checked, broken = await home.memory.ledger.verify()
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
        _, broken = await memory.ledger.verify()
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
        _, broken = await memory.ledger.verify()
        assert broken is not None and broken[0] == 3
    finally:
        await memory.close()


async def test_a_member_sees_which_reads_used_their_facts_and_not_others(
    home: Household,
) -> None:
    m = home.memory
    await m.beliefs.remember(home.bob.person_id, "Bob is training for a marathon")
    await m.beliefs.remember(home.alice.person_id, "Alice is training for a triathlon")
    await m.recall.search(home.dm(home.bob), "training marathon")
    await m.recall.search(home.dm(home.alice), "training triathlon")
    bob_reads = await m.ledger.about(
        AccessContext.for_member(home.bob.person_id, Activity.MEMBER_INSPECT, "who read mine"))
    assert [r.method for r in bob_reads] == ["recall"]
    assert bob_reads[0].actor == home.bob.person_id
    assert bob_reads[0].activity == Activity.DM_CONVERSATION


async def test_receipts_count_what_the_lens_suppressed(home: Household) -> None:
    m = home.memory
    await m.beliefs.remember(home.bob.person_id, "Bob takes insulin for his diabetes")
    proactive = home.dm(home.bob, Activity.PROACTIVE)
    assert await m.recall.search(proactive, "insulin diabetes") == []
    audit = AccessContext.for_audit(home.owner.person_id, "audit")
    last = [r for r in await m.ledger.audit(audit) if r.method == "recall"][-1]
    assert last.suppressed == 1 and last.returned_ids == ()


# --- the keyed chain and its anchor ------------------------------------------------------------


def _plain_chain(db: Path, start: int = 1) -> None:
    """What someone who can write the file, but not read the secret, can do: recompute each
    row's hash from receipt `start` on the way an unkeyed ledger chains them (plain SHA-256),
    linked to the real hash of the row before."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    with conn:
        before = conn.execute("SELECT hash FROM receipts WHERE seq = ?", (start - 1,)).fetchone()
        prev = "0" * 64 if before is None else str(before["hash"])
        rows = conn.execute("SELECT * FROM receipts WHERE seq >= ? ORDER BY seq", (start,))
        for row in rows.fetchall():
            fields = {
                "seq": row["seq"], "at": row["at"], "actor": row["actor"],
                "activity": row["activity"], "purpose": row["purpose"], "method": row["method"],
                "query_digest": row["query_digest"],
                "returned_ids": json.loads(row["returned_ids"]),
                "scopes": json.loads(row["scopes"]), "suppressed": row["suppressed"],
            }
            body = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
            digest = hashlib.sha256(f"{prev}\n{body}".encode()).hexdigest()
            conn.execute("UPDATE receipts SET prev_hash = ?, hash = ? WHERE seq = ?",
                         (prev, digest, row["seq"]))
            prev = digest
    conn.close()


async def _verified(db: Path) -> tuple[int, tuple[int, str] | None]:
    memory = await Memory.open(db)
    try:
        return await memory.ledger.verify()
    finally:
        await memory.close()


@pytest.fixture
async def ledger(tmp_path: Path) -> Path:
    """A closed household database with six receipts, its secret and its anchor beside it."""
    db = tmp_path / "hearth.db"
    home = await make_household(db)
    await _reads(home)
    await home.memory.close()
    return db


async def test_an_untouched_ledger_verifies_against_its_anchor(ledger: Path) -> None:
    assert head_path(ledger).exists()
    assert stat.S_IMODE(head_path(ledger).stat().st_mode) == 0o600
    assert await _verified(ledger) == (6, None)


async def test_a_row_rewritten_and_rechained_with_plain_sha_fails_at_that_row(
    ledger: Path,
) -> None:
    # hide that receipt 4 returned a belief, then recompute the whole chain so it "holds"
    _tamper(ledger, "UPDATE receipts SET returned_ids = '[]', scopes = '[]' WHERE seq = 4")
    _plain_chain(ledger)
    _, broken = await _verified(ledger)
    # the first row whose hash is not this install's HMAC is the first one rechained
    assert broken is not None and broken[0] == 1
    assert "receipt 1 was altered" in broken[1]


async def test_a_rewritten_row_is_named_when_the_rows_before_it_are_untouched(
    ledger: Path,
) -> None:
    _tamper(ledger, "UPDATE receipts SET returned_ids = '[]', scopes = '[]' WHERE seq = 4")
    _plain_chain(ledger, start=4)  # row 4 and every link after it recomputed
    _, broken = await _verified(ledger)
    assert broken == (4, "receipt 4 was altered (its HMAC does not match its contents)")


async def test_a_cut_tail_fails_saying_where_it_was_cut_and_what_the_anchor_says(
    ledger: Path,
) -> None:
    _tamper(ledger, "DELETE FROM receipts WHERE seq > 3")
    checked, broken = await _verified(ledger)
    assert checked == 3
    assert broken == (4, "the ledger was cut after receipt 3; the anchor says 6")


async def test_a_cut_tail_stays_found_after_the_bot_goes_on_reading(ledger: Path) -> None:
    _tamper(ledger, "DELETE FROM receipts WHERE seq > 3")
    memory = await Memory.open(ledger)
    try:
        ctx = AccessContext.for_member(
            (await memory.people.by_name("Bob")).person_id, Activity.DM_CONVERSATION, "a read"
        )
        for i in range(5):  # new receipts 4..8 chain validly onto receipt 3
            await memory.recall.search(ctx, f"canal {i}")
    finally:
        await memory.close()
    _, broken = await _verified(ledger)
    # the anchor was not moved over the cut: it still holds the receipt 6 that was removed
    assert broken is not None and broken[0] == 6
    assert "not the one the anchor holds" in broken[1]


async def test_a_deleted_middle_row_is_a_gap_named_in_one_line(ledger: Path) -> None:
    _tamper(ledger, "DELETE FROM receipts WHERE seq = 3")
    gap = "receipt 3 is missing (the ledger goes from 2 to 4)"
    assert await _verified(ledger) == (5, (3, gap))


async def test_a_missing_anchor_fails_until_anchored_anew(ledger: Path) -> None:
    head_path(ledger).unlink()
    _, broken = await _verified(ledger)
    assert broken is not None and broken[0] == 6
    assert "anchor hearth.db.ledger-head is missing" in broken[1]
    memory = await Memory.open(ledger)
    try:
        assert await memory.ledger.anchor() == 6
        assert await memory.ledger.verify() == (6, None)
    finally:
        await memory.close()


async def test_an_altered_anchor_fails(ledger: Path) -> None:
    doc = json.loads(head_path(ledger).read_text())
    head_path(ledger).write_text(json.dumps(doc | {"seq": 3}))
    _, broken = await _verified(ledger)
    assert broken is not None and "was altered" in broken[1] and "anchor" in broken[1]


async def test_a_backup_and_its_restore_verify_with_their_anchor(
    ledger: Path, tmp_path: Path
) -> None:
    memory = await Memory.open(ledger)
    copy = tmp_path / "copy.db"
    try:
        await memory.backup(copy)
    finally:
        await memory.close()
    assert head_path(copy).read_bytes() == head_path(ledger).read_bytes()
    assert stat.S_IMODE(head_path(copy).stat().st_mode) == 0o600
    assert await _verified(copy) == (6, None)
    # the live ledger grows past the backup, then the backup is restored over it
    home = await Memory.open(ledger)
    try:
        bob = await home.people.by_name("Bob")
        await home.recall.search(AccessContext.for_member(bob.person_id, Activity.DM_CONVERSATION,
                                                   "a read"), "walks")
    finally:
        await home.close()
    await Memory.restore(copy, ledger)
    assert await _verified(ledger) == (6, None)  # the anchor came back with the rows


async def test_a_ledger_from_before_the_hmac_is_keyed_once_and_recorded(ledger: Path) -> None:
    _as_before_keying(ledger)
    memory = await Memory.open(ledger)
    try:
        assert await memory.ledger.verify() == (6, None)
    finally:
        await memory.close()
    conn = sqlite3.connect(ledger)
    assert conn.execute("SELECT rows, broken_at FROM ledger_keying").fetchall() == [(6, None)]
    conn.close()
    assert head_path(ledger).exists()


async def test_a_ledger_broken_before_it_was_keyed_stays_broken_and_says_so(
    ledger: Path,
) -> None:
    _as_before_keying(ledger)
    _tamper(ledger, "UPDATE receipts SET purpose = 'nothing' WHERE seq = 2")
    _, broken = await _verified(ledger)
    assert broken is not None and broken[0] == 2
    assert "already broken before the ledger was keyed" in broken[1]


def _as_before_keying(db: Path) -> None:
    """Turn a database back into one an older hearth wrote: plain-SHA rows, no anchor, and no
    record of the keying migration."""
    _plain_chain(db)
    _tamper(db, "DROP TABLE ledger_keying")
    _tamper(db, "DELETE FROM migrations WHERE name = '0005_keyed_ledger'")
    head_path(db).unlink()


async def test_a_restored_ledger_missing_its_keying_record_is_not_keyed_over_its_anchor(
    ledger: Path,
) -> None:
    # rewritten in the old unkeyed form, with the keying record dropped: the anchor stands, so
    # the rows are judged, not re-keyed
    _plain_chain(ledger)
    _tamper(ledger, "DELETE FROM ledger_keying")
    _, broken = await _verified(ledger)
    assert broken is not None and broken[0] == 1 and "altered" in broken[1]


async def test_two_processes_reading_in_turn_keep_one_anchor_that_verifies(ledger: Path) -> None:
    bot, shell = await Memory.open(ledger), await Memory.open(ledger)  # `hearth run` and the CLI
    try:
        bob = await bot.people.by_name("Bob")
        ctx = AccessContext.for_member(bob.person_id, Activity.DM_CONVERSATION, "a read")
        for i in range(4):
            await bot.recall.search(ctx, f"walks {i}")
            await shell.recall.search(ctx, f"canal {i}")
    finally:
        await bot.close()
        await shell.close()
    assert await _verified(ledger) == (14, None)
    assert json.loads(head_path(ledger).read_text())["seq"] == 14


async def test_an_anchor_left_behind_by_a_process_that_died_still_verifies(
    ledger: Path,
) -> None:
    behind = head_path(ledger).read_bytes()  # the anchor at receipt 6
    memory = await Memory.open(ledger)
    try:
        bob = await memory.people.by_name("Bob")
        ctx = AccessContext.for_member(bob.person_id, Activity.DM_CONVERSATION, "a read")
        await memory.recall.search(ctx, "walks")
    finally:
        await memory.close()
    head_path(ledger).write_bytes(behind)  # as if it died before moving the anchor to 7
    assert await _verified(ledger) == (7, None)


# --- query digests are the actor's own -----------------------------------------------------------


async def test_the_same_query_by_two_members_gives_two_digests(home: Household) -> None:
    m = home.memory
    words = "is Alice seeing someone"
    await m.recall.search(home.dm(home.bob), words)
    await m.recall.search(home.dm(home.alice), words)
    await m.recall.search(home.dm(home.bob), words)
    await m.recall.search(home.dm(home.owner), words)  # the owner trying the guess herself
    audit = AccessContext.for_audit(home.owner.person_id, "audit")
    listed = await m.ledger.audit(audit)
    digests = {r.actor: r.query_digest for r in listed if r.method == "recall"}
    bob_reads = [r.query_digest for r in await m.ledger.audit(audit)
                 if r.method == "recall" and r.actor == home.bob.person_id]
    assert len(set(digests.values())) == 3  # Bob's, Alice's and the owner's all differ
    assert bob_reads[0] == bob_reads[1]  # one member's repeat is still a repeat
    # nor does a digest of the bare words (as an unkeyed or unactored digest would be) match
    bare = hashlib.sha256(f"recall\n{words}".encode()).hexdigest()
    assert bare not in digests.values()


def test_two_writers_moving_the_anchor_at_once_never_move_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The bot and the CLI each move the anchor after their own commits. One that looked at the
    # anchor first but writes last must not put its older head over the other's newer one.
    db = tmp_path / "hearth.db"
    secret = receipts.load_secret(db, create=True)
    receipts.write_head(db, secret, receipts.Head(12, "a" * 64))
    write = receipts.write_head

    def slow_for_the_older(path: Path, key: bytes, head: receipts.Head) -> None:
        if head.seq == 13:
            time.sleep(0.3)  # the older head's writer is the slow one
        write(path, key, head)

    monkeypatch.setattr(receipts, "write_head", slow_for_the_older)
    older = threading.Thread(target=receipts._advance_head,
                             args=(db, secret, receipts.Head(13, "b" * 64)),
                             kwargs={"may_create": False})
    older.start()
    time.sleep(0.1)  # the older writer has looked at the anchor and is writing
    assert receipts._advance_head(db, secret, receipts.Head(14, "c" * 64), may_create=False)
    older.join()
    assert receipts.read_head(db, secret) == receipts.Head(14, "c" * 64)


async def test_anchoring_anew_while_the_bot_reads_never_leaves_the_anchor_behind_the_bot(
    ledger: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `hearth receipts anchor` reads the ledger's end and anchors there. A bot beside it that
    # commits a receipt in between moves the anchor after it, never under it.
    head_path(ledger).unlink()
    secret = receipts.load_secret(ledger, create=False)
    bots = receipts.Head(7, "d" * 64)
    bot = threading.Thread(target=receipts._advance_head, args=(ledger, secret, bots),
                           kwargs={"may_create": True})
    check = receipts.first_broken_link

    def the_bot_reads_meanwhile(rows: object, key: bytes) -> object:
        bot.start()
        time.sleep(0.3)  # the bot's anchor move, had it not waited, is written by now
        return check(rows, key)  # type: ignore[arg-type]

    monkeypatch.setattr(receipts, "first_broken_link", the_bot_reads_meanwhile)
    memory = await Memory.open(ledger)
    try:
        assert await memory.ledger.anchor() == 6
    finally:
        await memory.close()
    bot.join()
    assert receipts.read_head(ledger, secret) == bots
