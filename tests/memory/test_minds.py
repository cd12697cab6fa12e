"""Minds: a credential per agent, acting for one member, through the member's wall and its own
lens row; what a mind writes is second-hand, and its forget reaches only its own writing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory import (
    AccessContext,
    Activity,
    BeliefStatus,
    InvalidRequest,
    Memory,
    Role,
    Sensitivity,
    UnknownMind,
    private_scope,
)
from memory.minds import CACHE_SECONDS, REFUSED
from tests.helpers import Household, raw_bytes


class Ticks:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_token_is_shown_once_and_only_its_keyed_digest_is_kept(home: Household) -> None:
    issued = await home.memory.minds.add("calendar", home.bob.person_id)
    assert issued.token.startswith("hearth_mind_") and len(issued.token) > 50
    await home.memory.checkpoint()
    assert issued.token.encode() not in raw_bytes(home.memory.path)
    with sqlite3.connect(home.memory.path) as db:
        (digest,) = db.execute("SELECT token_digest FROM minds").fetchone()
    assert digest != issued.token and issued.token not in digest
    mind = await home.memory.minds.resolve(issued.token)
    assert (mind.name, mind.person_id) == ("calendar", home.bob.person_id)


@pytest.mark.parametrize("token", [
    "", "   ", "hearth_mind_", "Bearer hearth_mind_x", "hearth_mind_" + "A" * 43,
    "hearth_mind_" + "A" * 42 + "!", "not-a-token", "hearth_mind_" + "A" * 44,
])
async def test_unknown_and_malformed_tokens_fail_closed_with_one_message(
    home: Household, token: str
) -> None:
    await home.memory.minds.add("calendar", home.bob.person_id)
    with pytest.raises(UnknownMind) as raised:
        await home.memory.minds.resolve(token)
    assert str(raised.value) == REFUSED


async def test_a_revoked_token_stops_within_the_cache_window_even_from_another_process(
    home: Household, tmp_path: Path
) -> None:
    ticks = Ticks()
    issued = await home.memory.minds.add("calendar", home.bob.person_id)
    # The serving process: its own memory over the same file, remembering answers briefly.
    serving = await Memory.open(home.memory.path)
    serving.minds._monotonic = ticks  # the test's hand on the clock
    try:
        assert (await serving.minds.resolve(issued.token)).name == "calendar"
        await home.memory.minds.revoke("calendar")  # another process revokes it
        ticks.now += CACHE_SECONDS + 0.01
        with pytest.raises(UnknownMind):
            await serving.minds.resolve(issued.token)
        # and in the process that revoked it, at once
        with pytest.raises(UnknownMind):
            await home.memory.minds.resolve(issued.token)
    finally:
        await serving.close()


async def test_a_minds_name_is_never_reused_and_its_grants_go_with_its_revoke(
    home: Household,
) -> None:
    await home.memory.minds.add("desk", home.alice.person_id, grants=[Sensitivity.HEALTH])
    assert await home.memory.minds.granted((await home.memory.minds.list())[0]) == [
        Sensitivity.HEALTH]
    await home.memory.minds.revoke("desk")
    with pytest.raises(InvalidRequest, match="exists already"):
        await home.memory.minds.add("desk", home.bob.person_id)
    grants = await home.memory.grants.list(home.alice.person_id)
    assert [(g.mind, g.revoked_at is not None) for g in grants] == [("desk", True)]
    with pytest.raises(InvalidRequest, match="no live mind"):
        await home.memory.minds.revoke("desk")


@pytest.mark.parametrize("klass", [Sensitivity.CREDENTIALS, Sensitivity.ORDINARY])
async def test_a_mind_is_never_granted_credentials_or_a_grant_ordinary_facts_need_not(
    home: Household, klass: Sensitivity
) -> None:
    with pytest.raises(InvalidRequest, match="never"):
        await home.memory.minds.add("calendar", home.bob.person_id, grants=[klass])
    assert await home.memory.minds.list() == []


async def test_a_grant_of_the_mind_activity_must_name_a_live_mind_of_the_grantor(
    home: Household,
) -> None:
    await home.memory.minds.add("calendar", home.bob.person_id)
    with pytest.raises(InvalidRequest, match="names that mind"):
        await home.memory.grants.give(home.bob.person_id, Activity.MIND, Sensitivity.HEALTH)
    with pytest.raises(InvalidRequest, match="names that mind"):
        await home.memory.grants.give(home.bob.person_id, Activity.DREAM, Sensitivity.HEALTH,
                                      mind="calendar")
    with pytest.raises(InvalidRequest, match="no live mind"):
        await home.memory.grants.give(home.alice.person_id, Activity.MIND, Sensitivity.HEALTH,
                                      mind="calendar")


async def _facts(home: Household) -> dict[str, int]:
    ids = {}
    for key, text in {
        "tea": "Bob drinks lapsang souchong every morning",
        "insulin": "Bob takes insulin for his diabetes",
        "pin": "Bob's bank card PIN is 4921",
        "alice": "Alice collects vintage postcards of lighthouses",
    }.items():
        who = home.alice if key == "alice" else home.bob
        outcome = await home.memory.beliefs.remember(who.person_id, text)
        ids[key] = int(outcome.belief_id or 0)
    return ids


async def test_a_mind_sees_its_members_view_less_credentials_and_ungranted_classes(
    home: Household,
) -> None:
    ids = await _facts(home)
    plain = (await home.memory.minds.add("calendar", home.bob.person_id)).mind
    granted = (await home.memory.minds.add("health-coach", home.bob.person_id,
                                           grants=[Sensitivity.HEALTH])).mind
    seen = {b.belief_id for b in await home.memory.beliefs.inspect(plain.context("test"))}
    assert seen == {ids["tea"]}
    seen = {b.belief_id for b in await home.memory.beliefs.inspect(granted.context("test"))}
    assert seen == {ids["tea"], ids["insulin"]}  # never the PIN, never Alice's
    # a grant naming one mind opens nothing for another mind of the same member
    again = {b.belief_id for b in await home.memory.beliefs.inspect(plain.context("test"))}
    assert again == {ids["tea"]}


async def test_what_a_mind_remembers_is_quarantined_stamped_and_in_its_members_scope(
    home: Household,
) -> None:
    mind = (await home.memory.minds.add("calendar", home.bob.person_id)).mind
    belief = await home.memory.minds.remember(mind, "Bob's book club meets on Wednesdays")
    assert belief is not None and belief.status == BeliefStatus.QUARANTINED
    assert belief.scope == private_scope(home.bob.person_id)
    explained = await home.memory.beliefs.explain(home.dm(home.bob), belief.belief_id)
    assert explained is not None
    assert [(e.source, e.provenance.value) for e in explained.evidence] == [
        ("mind:calendar", "relayed")]
    # saying it again is not a second source, nor is a second mind
    await home.memory.minds.remember(mind, "Bob's book club meets on Wednesdays")
    other = (await home.memory.minds.add("desk", home.bob.person_id)).mind
    again = await home.memory.minds.remember(other, "Bob's book club meets on Wednesdays")
    assert again is not None and again.status == BeliefStatus.QUARANTINED
    # the member saying it is what corroborates it
    await home.memory.beliefs.remember(home.bob.person_id, "Bob's book club meets on Wednesdays")
    told = await home.memory.beliefs.explain(home.dm(home.bob), belief.belief_id)
    assert told is not None and told.belief.status == BeliefStatus.ACTIVE


async def test_a_minds_write_echoes_nothing_its_lens_hides(home: Household) -> None:
    ids = await _facts(home)
    mind = (await home.memory.minds.add("calendar", home.bob.person_id)).mind
    # the very words of the member's health belief: reinforced, but not told to the mind
    assert await home.memory.minds.remember(mind, "Bob takes insulin for his diabetes") is None
    # words the member forgot are refused the same way, and not told apart
    await home.memory.forgetting.forget(home.dm(home.bob, Activity.MEMBER_INSPECT),
                                        "lapsang souchong")
    assert await home.memory.minds.remember(
        mind, "Bob drinks lapsang souchong every morning") is None
    assert ids["tea"] not in {b.belief_id for b in await home.memory.beliefs.inspect(
        home.dm(home.bob))}
    with pytest.raises(InvalidRequest, match="secret"):
        await home.memory.minds.remember(mind, "the api key is sk-proj-4f8Hq2LmZ9xT7vB3nW6cR1yK")


async def test_a_minds_forget_takes_back_its_own_writing_and_never_the_members_words(
    home: Household,
) -> None:
    ids = await _facts(home)
    mind = (await home.memory.minds.add("calendar", home.bob.person_id)).mind
    own = await home.memory.minds.remember(mind, "Bob's barber is Mr Okafor on Mill Lane")
    shared_words = await home.memory.minds.remember(
        mind, "Bob drinks lapsang souchong every morning")
    assert own is not None and shared_words is not None
    line = await home.memory.transcript.append(
        chat_id="dm:1002", speaker_id=home.bob.person_id, role=Role.USER,
        scope=private_scope(home.bob.person_id), text="I drink lapsang souchong every morning")
    assert await home.memory.minds.forget(mind, "lapsang souchong") == 1
    assert await home.memory.minds.forget(mind, "Okafor") == 1
    bob = home.dm(home.bob)
    kept = await home.memory.beliefs.explain(bob, ids["tea"])
    assert kept is not None and [e.source for e in kept.evidence if
                                 e.source.startswith("mind:")] == []
    assert await home.memory.beliefs.explain(bob, own.belief_id) is None
    lines = await home.memory.transcript.lines(bob, limit=10)
    assert [t.text for t in lines if t.turn_id == line] == [
        "I drink lapsang souchong every morning"]
    # nothing of another member's, nor a belief it never wrote, is within its reach
    assert await home.memory.minds.forget(mind, "postcards") == 0
    assert await home.memory.minds.forget(mind, "insulin") == 0
    await home.memory.checkpoint()
    assert b"Okafor" not in raw_bytes(home.memory.path)


async def test_explain_by_ref_answers_a_hidden_belief_exactly_as_a_missing_one(
    home: Household,
) -> None:
    ids = await _facts(home)
    mind = (await home.memory.minds.add("calendar", home.bob.person_id)).mind
    refs = {b.belief_id: b.ref for b in await home.memory.beliefs.inspect(
        home.dm(home.bob, Activity.MEMBER_INSPECT))}
    alice_ref = next(b.ref for b in await home.memory.beliefs.inspect(
        home.dm(home.alice, Activity.MEMBER_INSPECT)))
    shown = await home.memory.minds.explain(mind, refs[ids["tea"]])
    assert shown is not None and shown.belief.belief_id == ids["tea"]
    for hidden in (refs[ids["insulin"]], refs[ids["pin"]], alice_ref, "b00000000", ""):
        assert await home.memory.minds.explain(mind, hidden) is None


async def test_a_minds_reads_are_receipted_under_its_name_and_listed_for_its_member(
    home: Household,
) -> None:
    await _facts(home)
    mind = (await home.memory.minds.add("calendar", home.bob.person_id)).mind
    await home.memory.recall.search(mind.context("test"), "lapsang")
    await home.memory.recall.search(mind.context("a read that finds nothing"), "zebra crossing")
    bob_inspect = AccessContext.for_member(home.bob.person_id, Activity.MEMBER_INSPECT, "who")
    mine = await home.memory.ledger.about(bob_inspect)
    assert any(r.actor == "mind:calendar" and r.activity == "mind" and r.returned_ids
               for r in mine)
    # a read of the mind's that used none of Bob's facts is his to see too
    assert any(r.actor == "mind:calendar" and r.purpose == "a read that finds nothing"
               and not r.returned_ids for r in mine)
    alice_inspect = AccessContext.for_member(home.alice.person_id, Activity.MEMBER_INSPECT,
                                             "who")
    assert not any(r.actor.startswith("mind:") for r in await home.memory.ledger.about(
        alice_inspect))
