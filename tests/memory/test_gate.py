"""The gate's three ways in: a receipted read, one scope's lane, and the census without words;
and no way in beside them."""

from __future__ import annotations

import asyncio

import pytest

from memory import AccessContext, Activity, Role, private_scope
from memory.errors import ContentRefused
from memory.gate import Census, Lane
from tests.helpers import Household


async def test_the_census_refuses_every_column_that_holds_words(home: Household) -> None:
    m = home.memory
    await m.beliefs.remember(home.bob.person_id, "Bob keeps a diary under the mattress")
    async with m._store.transaction() as tx:
        census = Census(tx)
        counted = await census.select("beliefs", "scope, count(*) AS n", group="scope")
        assert [(r["scope"], r["n"]) for r in counted] == [(private_scope(home.bob.person_id), 1)]
        for columns in ("proposition", "b.norm", "*", "belief_id, text"):
            with pytest.raises(ValueError, match="no content"):
                await census.select("beliefs b", columns)
        with pytest.raises(ValueError, match="no content"):
            await census.select("beliefs", "belief_id", "proposition LIKE '%diary%'")


async def test_a_lane_sees_its_own_scope_and_nothing_of_anyone_elses(home: Household) -> None:
    m = home.memory
    await m.beliefs.remember(home.bob.person_id, "Bob keeps a diary under the mattress")
    await m.beliefs.remember(home.alice.person_id, "Alice keeps a diary in the piano")
    async with m.grants._gate.writing() as tx:
        bobs = tx.lane(private_scope(home.bob.person_id))
        seen = await bobs.select("beliefs", "norm LIKE ?", ("%diary%",), columns="proposition")
        assert [r["proposition"] for r in seen] == ["Bob keeps a diary under the mattress"]
        evidence = await bobs.select("evidence", columns="source")
        assert len(evidence) == 1  # Alice's evidence is not reachable from Bob's lane
        assert str(evidence[0]["source"]).startswith(f"statement:{home.bob.person_id}")
        with pytest.raises(ValueError, match="not a content table"):
            await bobs.select("people")


async def test_a_transaction_beside_the_gate_cannot_read_or_write_anyones_words_however_it_asks(
    home: Household,
) -> None:
    m = home.memory
    await m.beliefs.remember(home.bob.person_id, "Bob keeps a diary under the mattress")
    await m.transcript.append(chat_id="dm:1002", speaker_id=home.bob.person_id, role=Role.USER,
                              scope=private_scope(home.bob.person_id), text="my diary is there")
    table = "".join(("tu", "rns"))  # a name no reader of the source sees
    peeks = (
        "SELECT proposition FROM beliefs",
        f"select text from {table}",
        "SELECT b.belief_id FROM evidence e JOIN Beliefs b ON b.belief_id = e.belief_id",
        "SELECT block FROM turns_fts_data",
        "SELECT rowid FROM beliefs_fts WHERE beliefs_fts MATCH 'diary'",
        "SELECT count(*) FROM turn_vectors",
        "INSERT INTO affect(key, valence, arousal, drives, updated_at)"
        " SELECT text, 0, 0, '', at FROM turns",
        # Writes that read or hand back what they touch are reads too.
        "UPDATE people SET name = t.text FROM turns t WHERE t.turn_id = 1",
        "UPDATE beliefs SET salience = salience RETURNING proposition",
        f"DELETE FROM {table} WHERE 0 RETURNING text",
    )
    async with m._store.transaction() as tx:
        for sql in peeks:
            with pytest.raises(ContentRefused, match="only through the gate"):
                await tx.fetchall(sql)
            with pytest.raises(ContentRefused):
                await tx.execute(sql)
        # Nor write them: a scope's rows are written through its lane.
        for sql in ("UPDATE beliefs SET scope = 'shared' WHERE 0", f"DELETE FROM {table}",
                    "INSERT INTO goals(person_id, scope, text) VALUES ('p', 'shared', 'x')",
                    "WITH nothing AS (SELECT 1) UPDATE beliefs SET scope = 'shared' WHERE 0"):
            with pytest.raises(ContentRefused, match="only through its scope's lane"):
                await tx.execute(sql)
        # What holds no member's words is still read and written as before.
        assert await tx.scalar("SELECT count(*) FROM people") == 3
        assert await tx.execute("UPDATE people SET name = name WHERE 0") == 0
    async with m._store.transaction() as tx:
        assert await tx.scalar("SELECT count(*) FROM affect") == 0  # nothing was copied


async def test_a_lane_comes_only_from_the_gate(home: Household) -> None:
    m = home.memory
    await m.beliefs.remember(home.bob.person_id, "Bob keeps a diary under the mattress")
    async with m._store.transaction() as tx:
        with pytest.raises(TypeError, match="comes from the gate"):
            Lane(tx, private_scope(home.bob.person_id))
        with pytest.raises(TypeError, match="comes from the gate"):
            Lane(tx, private_scope(home.bob.person_id), key=object())


async def test_reads_made_together_are_each_receipted_and_the_chain_still_verifies(
    home: Household,
) -> None:
    m = home.memory
    await m.beliefs.remember(home.bob.person_id, "Bob keeps a diary under the mattress")
    ctx = home.dm(home.bob)
    async with m.together(ctx):
        about = await m.beliefs.about(ctx, home.bob.person_id)
        await m.goals.open(ctx)
        await m.transcript.lines(ctx)
    assert [b.proposition for b in about] == ["Bob keeps a diary under the mattress"]
    audit = AccessContext.for_audit(home.owner.person_id, "audit")
    receipts = await m.ledger.audit(audit)
    assert [r.method for r in receipts][-3:] == ["about", "goals", "transcript"]
    assert list(receipts[-3].returned_ids) == [about[0].belief_id]
    checked, broken = await m.ledger.verify()
    assert broken is None and checked >= 3


async def test_a_read_that_fails_inside_a_shared_read_leaves_no_receipt_of_the_others(
    home: Household,
) -> None:
    m = home.memory
    ctx = home.dm(home.bob)
    audit = AccessContext.for_audit(home.owner.person_id, "audit")
    before = len(await m.ledger.audit(audit))

    async def bob_then_alice() -> None:
        async with m.together(ctx):
            await m.goals.open(ctx)
            await m.goals.open(home.dm(home.alice))  # Alice's read may not ride on Bob's

    with pytest.raises(RuntimeError, match="for one reader"):
        await bob_then_alice()
    methods = [r.method for r in await m.ledger.audit(audit)]
    assert len(methods) == before + 1 and methods[-1] == "receipts"  # only the audit's own


async def test_the_households_own_state_read_inside_a_shared_read_joins_its_transaction(
    home: Household,
) -> None:
    m = home.memory
    async with m.together(home.dm(home.bob)):
        async with asyncio.timeout(5):  # the same task: waiting on the lock would never end
            assert len(await m.people.list()) == 3
            assert not await m.state.is_introduced(home.bob.person_id)
    assert len(await m.people.list()) == 3  # the store is free again


async def test_a_transaction_opened_inside_another_on_the_same_task_fails_instead_of_hanging(
    home: Household,
) -> None:
    m = home.memory
    async with m._store.transaction():
        with pytest.raises(RuntimeError, match="inside another"):
            async with asyncio.timeout(5):
                await m.people.list()
    assert len(await m.people.list()) == 3


class _Undone(Exception):
    """What ends a block before it commits."""


async def test_writes_made_at_once_are_all_kept_or_none_are(home: Household) -> None:
    m = home.memory
    bob = home.dm(home.bob)
    scope = private_scope(home.bob.person_id)

    async def said(text: str) -> None:
        await m.transcript.receive(chat_id="dm:bob", speaker_id=home.bob.person_id,
                                   role=Role.USER, scope=scope, text=text, source_update=None)
        await m.state.save_affect("person:bob", 0.4, 0.2, {}, "2026-03-01T09:00:00+00:00")

    async def undone() -> None:
        async with m.at_once():
            await said("I moved the spare key to the blue pot")
            raise _Undone

    with pytest.raises(_Undone):
        await undone()
    assert await m.transcript.lines(bob, chat_id="dm:bob") == []
    assert await m.state.affect("person:bob") is None
    async with m.at_once():
        await said("I moved the spare key to the green pot")
    assert [t.text for t in await m.transcript.lines(bob, chat_id="dm:bob")] == [
        "I moved the spare key to the green pot"]
    row = await m.state.affect("person:bob")
    assert row is not None and row.valence == 0.4


async def test_a_read_undone_with_its_block_leaves_a_ledger_that_verifies(
    home: Household,
) -> None:
    m = home.memory
    await m.beliefs.remember(home.bob.person_id, "Bob keeps the boat papers in the loft")
    bob = home.dm(home.bob)
    async def undone() -> None:
        async with m.at_once():
            assert await m.beliefs.about(bob, home.bob.person_id)  # receipted, then undone
            raise _Undone

    with pytest.raises(_Undone):
        await undone()
    assert await m.beliefs.about(bob, home.bob.person_id)
    checked, broken = await m.ledger.verify()  # the anchor never ran ahead of the ledger
    assert broken is None and checked >= 1


async def test_a_task_started_inside_a_shared_read_reads_on_its_own(home: Household) -> None:
    m = home.memory
    await m.beliefs.remember(home.alice.person_id, "Alice keeps her bike in the shed")
    bob, alice = home.dm(home.bob), home.dm(home.alice)
    async with m.together(bob):
        await m.goals.open(bob)
        # Started inside Bob's block, Alice's read is not his: it waits for its own
        # transaction, and is neither refused nor run in his.
        hers = asyncio.ensure_future(m.beliefs.about(alice, home.alice.person_id))
        await asyncio.sleep(0.05)
        assert not hers.done()
    assert [b.proposition for b in await hers] == ["Alice keeps her bike in the shed"]


async def test_a_lane_writes_only_its_own_scopes_rows(home: Household) -> None:
    m = home.memory
    await m.beliefs.remember(home.bob.person_id, "Bob keeps a diary under the mattress")
    await m.beliefs.remember(home.alice.person_id, "Alice keeps a diary in the piano")
    bob, alice = private_scope(home.bob.person_id), private_scope(home.alice.person_id)
    async with m.grants._gate.writing() as tx:
        alices = await tx.lane(alice).select("beliefs", columns="belief_id")
        hers = int(alices[0]["belief_id"])
        bobs = tx.lane(bob)
        assert await bobs.update("beliefs", "log_odds = 9", "belief_id = ?", (hers,)) == 0
        assert await bobs.delete("beliefs", "belief_id = ?", (hers,)) == 0
        assert await bobs.delete("evidence", "belief_id = ?", (hers,)) == 0
        with pytest.raises(ValueError, match="its own rows"):
            await bobs.insert("evidence", {"belief_id": hers, "source": "statement:x:1",
                                           "sign": 1, "weight": 1.0, "provenance": "stated",
                                           "reliability": 1.0, "version": 9, "at": "now"})
        with pytest.raises(ValueError, match="its own rows"):
            await bobs.insert("beliefs", {"proposition": "x", "norm": "x", "scope": alice,
                                          "kind": "fact", "sensitivity": "ordinary",
                                          "log_odds": 0, "version": 0, "quarantined": 0,
                                          "created_at": "now", "updated_at": "now",
                                          "reinforced_at": "now"})
    async with m.grants._gate.writing() as tx:
        left = await tx.lane(alice).select("beliefs", columns="belief_id, log_odds, version")
        assert [(int(r["belief_id"]), r["version"]) for r in left] == [(hers, 1)]
        assert float(left[0]["log_odds"]) < 9
        assert len(await tx.lane(alice).select("evidence", columns="evidence_id")) == 1
        assert await tx.lane(bob).select("beliefs", "norm = 'x'", columns="belief_id") == []


async def test_a_lane_neither_reads_past_its_scope_nor_writes_content_beside_its_methods(
    home: Household,
) -> None:
    m = home.memory
    await m.beliefs.remember(home.alice.person_id, "Alice keeps a diary in the piano")
    bob = private_scope(home.bob.person_id)
    async with m.grants._gate.writing() as tx:
        bobs = tx.lane(bob)
        # A condition that looks into another table's words is an oracle over another scope.
        with pytest.raises(ContentRefused, match="its own scope"):
            await bobs.select("beliefs", "EXISTS (SELECT 1 FROM beliefs o WHERE"
                                         " o.norm LIKE '%piano%')", columns="belief_id")
        with pytest.raises(ContentRefused, match="its own scope"):
            await bobs.update("beliefs", "norm = (SELECT norm FROM beliefs LIMIT 1)", "1")
        # The household's own tables go through `household`, which holds no one's words.
        with pytest.raises(ContentRefused, match="written only through its scope's lane"):
            await bobs.household.execute("UPDATE beliefs SET scope = ? WHERE 1", (bob,))
        with pytest.raises(ContentRefused, match="read only through the gate"):
            await bobs.household.fetchall("SELECT proposition FROM beliefs")
        assert await bobs.household.scalar("SELECT count(*) FROM people") == 3
        with pytest.raises(ValueError, match="not a keyword index"):
            await bobs.merge_indexes("beliefs")
        # Nor move a row out of its scope, which would publish it.
        with pytest.raises(ValueError, match="keeps its rows"):
            await bobs.update("beliefs", "scope = 'shared'", "1")
        with pytest.raises(ValueError, match="keeps its rows"):
            await bobs.update("evidence", "weight = 1, belief_id = 1", "1")
    assert not hasattr(bobs, "tx")
    hers = await m.beliefs.inspect(AccessContext.for_member(
        home.alice.person_id, Activity.MEMBER_INSPECT, "their own beliefs"))
    assert [b.proposition for b in hers] == ["Alice keeps a diary in the piano"]
