"""Principals: minted once per Telegram id, with a stable random person_id, distinct names, at
most one owner; removing a member purges everything they own."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from memory import (
    SHARED,
    AccessContext,
    Activity,
    InvalidRequest,
    Memory,
    Role,
    Sensitivity,
    UnknownPerson,
    private_scope,
)
from tests.helpers import Household, make_household, raw_bytes

PERSON_ID = re.compile(r"^p[0-9a-f]{12}$")


# --- adding and finding --------------------------------------------------------------------


async def test_people_are_added_listed_and_found_by_id_and_name(home: Household) -> None:
    book = home.memory.people
    listed = await book.list()
    assert [p.name for p in listed] == ["Olivia", "Bob", "Alice"]
    assert [p.is_owner for p in listed] == [True, False, False]
    assert await book.get(home.bob.person_id) == home.bob
    assert await book.by_name("Bob") == home.bob
    assert await book.by_name("  bob ") == home.bob  # names are matched without case
    assert await home.memory.people.by_name("ALICE") == home.alice
    assert await book.by_telegram_id(1003) == home.alice
    assert await book.by_telegram_id(9999) is None
    assert await book.owner() == home.owner


async def test_an_unknown_person_is_an_unknown_person_error(home: Household) -> None:
    with pytest.raises(UnknownPerson):
        await home.memory.people.get("p000000000000")
    with pytest.raises(UnknownPerson):
        await home.memory.people.by_name("Mallory")


@pytest.mark.parametrize("name", ["", "   ", "42", "9lives", "_bob", "x" * 41, "Bob;DROP"])
async def test_an_unusable_name_is_refused(home: Household, name: str) -> None:
    with pytest.raises(InvalidRequest):
        await home.memory.people.add(name)


async def test_a_name_or_telegram_id_already_taken_is_refused(home: Household) -> None:
    with pytest.raises(InvalidRequest):
        await home.memory.people.add("bob")
    with pytest.raises(InvalidRequest):
        await home.memory.people.add("Robert", telegram_id=1002)
    assert len(await home.memory.people.list()) == 3


# --- person ids ----------------------------------------------------------------------------


async def test_a_person_id_is_random_and_never_the_telegram_id(tmp_path: Path) -> None:
    first = await make_household(tmp_path / "one.db")
    second = await make_household(tmp_path / "two.db")
    try:
        for home in (first, second):
            for person in (home.owner, home.bob, home.alice):
                assert PERSON_ID.match(person.person_id), person.person_id
                assert person.person_id != str(person.telegram_id)
                assert str(person.telegram_id) != person.person_id[1:]
        # the same names and Telegram ids in two households get different ids
        assert first.bob.telegram_id == second.bob.telegram_id
        assert first.bob.person_id != second.bob.person_id
        assert len({p.person_id for h in (first, second)
                    for p in (h.owner, h.bob, h.alice)}) == 6
    finally:
        await first.memory.close()
        await second.memory.close()


async def test_a_person_id_is_stable_across_reopening(tmp_path: Path) -> None:
    home = await make_household(tmp_path / "hearth.db")
    path, bob = home.memory.path, home.bob
    await home.memory.close()
    memory = await Memory.open(path)
    try:
        assert await memory.people.get(bob.person_id) == bob
        assert await memory.people.by_telegram_id(1002) == bob
    finally:
        await memory.close()


# --- minting -------------------------------------------------------------------------------


async def test_mint_returns_the_same_principal_for_the_same_telegram_id(
    home: Household,
) -> None:
    book = home.memory.people
    sam = await book.mint(2001, "Sam")
    assert sam.name == "Sam" and sam.telegram_id == 2001 and not sam.is_owner
    assert await book.mint(2001, "Sam") == sam
    assert await book.mint(2001, "Samuel Renamed") == sam  # a new display name changes nothing
    assert await book.mint(1002, "Bobby") == home.bob
    kim = await book.mint(2002, "Kim")
    assert kim.person_id != sam.person_id
    assert len(await book.list()) == 5


async def test_two_people_with_the_same_display_name_get_distinct_names(
    home: Household,
) -> None:
    book = home.memory.people
    first = await book.mint(2001, "Sam")
    second = await book.mint(2002, "Sam")
    third = await book.mint(2003, "sam")
    names = [first.name, second.name, third.name]
    assert names[0] == "Sam"
    assert len({n.casefold() for n in names}) == 3
    assert all(n.casefold().startswith("sam") for n in names)
    assert len({first.person_id, second.person_id, third.person_id}) == 3
    for person in (first, second, third):
        assert await book.by_name(person.name) == person
    # an existing member's name is not taken over either
    another_bob = await book.mint(2004, "Bob")
    assert another_bob.name != "Bob" and another_bob.person_id != home.bob.person_id


async def test_mint_gives_an_unusable_display_name_a_plain_one(home: Household) -> None:
    person = await home.memory.people.mint(2001, "🙂🙂🙂")
    assert person.name == "Member"
    other = await home.memory.people.mint(2002, "")
    assert other.name != person.name and other.name.startswith("Member")


# --- the owner -----------------------------------------------------------------------------


async def test_there_is_at_most_one_owner(home: Household) -> None:
    book = home.memory.people
    with pytest.raises(InvalidRequest, match="owner"):
        await book.add("Zoe", owner=True)
    with pytest.raises(InvalidRequest):
        await book.mint(2001, "Zoe", owner=True)
    assert await book.by_telegram_id(2001) is None
    assert [p.person_id for p in await book.list() if p.is_owner] == [home.owner.person_id]


async def test_the_schema_itself_refuses_a_second_owner(home: Household) -> None:
    path = home.memory.path
    await home.memory.close()
    conn = sqlite3.connect(path)
    try:
        with pytest.raises(sqlite3.IntegrityError), conn:
            conn.execute(
                "INSERT INTO people(person_id, name, is_owner, created_at)"
                " VALUES ('pdeadbeef0000', 'Zoe', 1, '2026-01-01T00:00:00+00:00')"
            )
    finally:
        conn.close()
    home.memory = await Memory.open(path)  # so the fixture's close has something to close


# --- removal -------------------------------------------------------------------------------


async def test_removing_a_person_purges_their_private_beliefs_lines_and_grants(
    home: Household,
) -> None:
    m = home.memory
    bob_id = home.bob.person_id
    bob_scope = private_scope(bob_id)
    secrets = [
        "Bob is secretly applying for a job in Lisbon",
        "Bob takes propranolol before presentations",
    ]
    created = [await m.beliefs.remember(bob_id, text) for text in secrets]
    assert all(o.status == "created" for o in created)
    dm_line = await m.transcript.append(chat_id="dm:1002", speaker_id=bob_id, role=Role.USER,
                                  scope=bob_scope, text="please keep the Lisbon plan quiet")
    reply = await m.transcript.append(chat_id="dm:1002", speaker_id=None, role=Role.ASSISTANT,
                                scope=bob_scope, text="Of course, the Lisbon plan stays here.")
    group_line = await m.transcript.append(chat_id="group:-100", speaker_id=bob_id, role=Role.USER,
                                     scope=SHARED, text="who wants pancakes on Sunday")
    shared = await m.beliefs.remember(bob_id, "Pancakes on Sunday at nine", shared=True)
    await m.grants.give(bob_id, Activity.PROACTIVE, Sensitivity.HEALTH, note="remind me")
    alices = await m.beliefs.remember(home.alice.person_id, "Alice is training for a triathlon")
    await m.grants.give(home.alice.person_id, Activity.DREAM, Sensitivity.HEALTH)
    await m.checkpoint()
    assert b"Lisbon" in raw_bytes(m.path)
    bob_ctx = AccessContext.for_member(bob_id, Activity.DM_CONVERSATION, "after removal")
    found = await m.recall.search(bob_ctx, "Lisbon job")
    assert found[0].belief.belief_id == created[0].belief_id

    assert await m.forgetting.remove_person(bob_id) == 2

    with pytest.raises(UnknownPerson):
        await m.people.get(bob_id)
    assert await m.people.by_telegram_id(1002) is None
    # what Bob owned is gone, as the facade sees it
    for query in ("Lisbon job", "propranolol presentations"):
        found = await m.recall.search(bob_ctx, query)
        assert all(r.belief.scope == SHARED for r in found), query
    for outcome in created:
        assert await m.beliefs.explain(bob_ctx, int(outcome.belief_id or 0)) is None
    lines = await m.transcript.lines(bob_ctx)
    assert [t.turn_id for t in lines] == [group_line]
    assert lines[0].speaker_id is None
    assert dm_line not in [t.turn_id for t in await m.transcript.lines(bob_ctx, chat_id="dm:1002")]
    assert reply not in [t.turn_id for t in lines]
    assert [g.grantor_id for g in await m.grants.list()] == [home.alice.person_id]
    assert await m.grants.list(bob_id) == []
    # what others own, and what the household shares, stays
    alice_ctx = home.dm(home.alice)
    assert [r.belief.belief_id for r in await m.recall.search(alice_ctx,
            "triathlon training")] == [
        alices.belief_id
    ]
    assert [r.belief.belief_id for r in await m.recall.search(home.group(),
            "pancakes Sunday")] == [
        shared.belief_id
    ]
    # and the words are nowhere in the file
    await m.checkpoint()
    raw = raw_bytes(m.path)
    for fragment in (b"Lisbon", b"propranolol", b"presentations", b"keep the"):
        assert fragment not in raw, fragment
    assert b"triathlon" in raw and b"pancakes" in raw


async def test_a_removed_person_who_returns_starts_with_nothing(home: Household) -> None:
    m = home.memory
    await m.beliefs.remember(home.bob.person_id, "Bob hides chocolate in the piano")
    await m.forgetting.remove_person(home.bob.person_id)
    again = await m.people.mint(1002, "Bob")
    assert again.person_id != home.bob.person_id
    ctx = AccessContext.for_member(again.person_id, Activity.MEMBER_INSPECT, "returning")
    assert await m.beliefs.inspect(ctx) == []
    assert await m.recall.search(home.dm(again), "chocolate piano") == []


async def test_removing_an_unknown_person_raises_and_removes_nothing(home: Household) -> None:
    with pytest.raises(UnknownPerson):
        await home.memory.forgetting.remove_person("p000000000000")
    assert len(await home.memory.people.list()) == 3
