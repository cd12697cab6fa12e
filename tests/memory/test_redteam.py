"""The red team: facts that are present, highly relevant and not allowed are never hydrated.

Ports the peer's four specifications to our store: zero unauthorized hydrations across every
activity x class x read method, with positive controls proving the same facts come back where
they are allowed; a credential never surfaces outside a private chat with its owner; re-assertion
never moves a belief's scope; members' private beliefs stay apart.

The oracle below is the policy table of DESIGN §4 written out independently of `memory.lens`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from memory import (
    SHARED,
    AccessContext,
    Activity,
    E5Embedder,
    InvalidRequest,
    Memory,
    Person,
    Role,
    Sensitivity,
    private_scope,
)
from memory.classifier import classify
from tests.helpers import Household, make_household

# The worlds are built once per module and only read by the tests that share them (a read
# writes a receipt, which no test here counts): building one per reader cost most of this
# module's time. Their tests run in the module's event loop, the one their database opened in.
pytestmark = pytest.mark.asyncio(loop_scope="module")

O, H, F, C = "ordinary", "health", "finance", "credentials"  # noqa: E741 -- the table's own letters

# Each owner's facts, one per class. Words are distinct per owner so a query finds its target.
FACTS: dict[str, dict[str, str]] = {
    "bob": {
        O: "Bob's favourite tea is lapsang souchong",
        H: "Bob takes insulin for his diabetes",
        F: "Bob owes the bank twelve thousand pounds on his car loan",
        C: "Bob's bank card PIN is 4921",
    },
    "alice": {
        O: "Alice collects vintage postcards of lighthouses",
        H: "Alice is seeing a therapist for her anxiety",
        F: "Alice's salary is forty two thousand a year",
        C: "Alice's email password is tangerine-violin",
    },
    "olivia": {
        O: "Olivia is learning to play the cello",
        H: "Olivia had knee surgery in March",
        F: "Olivia has fifteen thousand in her savings account",
        C: "Olivia's laptop passcode is 771903",
    },
    SHARED: {
        O: "The family dog is called Biscuit",
        H: "Grandma is allergic to penicillin",
        F: "The household mortgage payment is due on the first of the month",
        C: "The wifi password is marmalade-sky",
    },
}

# DESIGN §4, transcribed: Y allowed, G by grant, N never, S same scope only.
TABLE: dict[Activity, dict[str, str]] = {
    Activity.DM_CONVERSATION: {O: "Y", H: "Y", F: "Y", C: "Y"},
    Activity.GROUP_CONVERSATION: {O: "Y", H: "G", F: "G", C: "N"},
    Activity.MEMBER_INSPECT: {O: "Y", H: "Y", F: "Y", C: "Y"},
    Activity.CONSOLIDATION: {O: "Y", H: "Y", F: "Y", C: "S"},
    Activity.COMPACTION: {O: "Y", H: "G", F: "G", C: "N"},
    Activity.DREAM: {O: "Y", H: "G", F: "G", C: "N"},
    Activity.PROACTIVE: {O: "Y", H: "G", F: "G", C: "N"},
    Activity.OWNER_AUDIT: {O: "N", H: "N", F: "N", C: "N"},
    Activity.MIND: {O: "Y", H: "G", F: "G", C: "N"},  # grants naming the mind
}

GRANT_ACTIVITIES = [Activity.GROUP_CONVERSATION, Activity.COMPACTION, Activity.DREAM,
                    Activity.PROACTIVE]


@dataclass(frozen=True)
class Reader:
    label: str
    viewer: str | None  # "bob" / "alice" / "olivia", or None for the group
    activity: Activity

    def context(self, home: Household) -> AccessContext:
        purpose = f"red team: {self.label}"
        if self.viewer is None:
            if self.activity == Activity.CONSOLIDATION:
                return AccessContext.for_batch(SHARED, purpose)
            return AccessContext.for_group(self.activity, purpose)
        person_id = _person(home, self.viewer).person_id
        if self.activity == Activity.CONSOLIDATION:
            return AccessContext.for_batch(private_scope(person_id), purpose)
        if self.activity == Activity.OWNER_AUDIT:
            return AccessContext.for_audit(person_id, purpose)
        if self.activity == Activity.MIND:
            return AccessContext.for_mind(person_id, mind_of(self.viewer), purpose)
        return AccessContext.for_member(person_id, self.activity, purpose)


def mind_of(viewer: str) -> str:
    """The mind acting for each member in the red team's household."""
    return f"agent-{viewer}"


READERS = [
    Reader(f"{viewer} {activity}", viewer, activity)
    for viewer in ("bob", "alice", "olivia")
    for activity in Activity
    if activity != Activity.GROUP_CONVERSATION
] + [
    Reader(f"group {activity}", None, activity)
    for activity in (Activity.GROUP_CONVERSATION, Activity.COMPACTION, Activity.DREAM,
                     Activity.PROACTIVE, Activity.CONSOLIDATION)
]


def _person(home: Household, who: str) -> Person:
    return {"bob": home.bob, "alice": home.alice, "olivia": home.owner}[who]


def oracle(reader: Reader, owner: str, klass: str, granted: bool) -> bool:
    """May this reader be given this fact? Wall first, then the table."""
    if reader.activity == Activity.OWNER_AUDIT:
        return False
    if owner not in (SHARED, reader.viewer):
        return False  # the wall: another member's private life, or a group audience
    rule = TABLE[reader.activity][klass]
    if rule == "Y":
        return True
    if rule == "G":
        return granted
    if rule == "S":
        # a consolidation batch reads its own scope's credentials only
        return owner == (reader.viewer or SHARED)
    return False


@dataclass
class World:
    home: Household
    ids: dict[tuple[str, str], int]  # (owner, class) -> belief id
    turns: dict[tuple[str, str], int]  # (owner, class) -> transcript line id
    by_id: dict[int, tuple[str, str]]
    turn_by_id: dict[int, tuple[str, str]]
    granted: bool


async def _build(path: Path, *, granted: bool) -> World:
    home = await make_household(path)
    memory = home.memory
    ids: dict[tuple[str, str], int] = {}
    turns: dict[tuple[str, str], int] = {}
    for owner, facts in FACTS.items():
        teller = home.owner if owner == SHARED else _person(home, owner)
        scope = SHARED if owner == SHARED else private_scope(teller.person_id)
        for klass, text in facts.items():
            assert classify(text) == Sensitivity(klass), text
            outcome = await memory.beliefs.remember(teller.person_id, text, shared=owner == SHARED)
            assert outcome.status == "created" and outcome.belief_id is not None
            ids[(owner, klass)] = outcome.belief_id
            chat = "group:-100" if owner == SHARED else f"dm:{teller.telegram_id}"
            turns[(owner, klass)] = await memory.transcript.append(
                chat_id=chat, speaker_id=teller.person_id, role=Role.USER, scope=scope, text=text
            )
        # One contradiction per scope, between its ordinary and health facts.
        ctx = home.dm(teller)
        assert await memory.beliefs.link_contradiction(ctx, ids[(owner, O)], ids[(owner, H)])
    for who in ("bob", "alice", "olivia"):
        # Each member's mind gets the member's grants naming it (and the owner's over shared
        # facts) in the world with every grant; in the other, none.
        classes = [Sensitivity.HEALTH, Sensitivity.FINANCE] if granted else []
        await memory.minds.add(mind_of(who), _person(home, who).person_id, grants=classes)
        for klass in classes:
            await memory.grants.give(home.owner.person_id, Activity.MIND, klass, shared=True,
                                     mind=mind_of(who))
    if granted:
        for activity in GRANT_ACTIVITIES:
            for klass in (Sensitivity.HEALTH, Sensitivity.FINANCE):
                for person in (home.bob, home.alice, home.owner):
                    await memory.grants.give(person.person_id, activity, klass)
                await memory.grants.give(home.owner.person_id, activity, klass, shared=True)
    return World(
        home,
        ids,
        turns,
        {v: k for k, v in ids.items()},
        {v: k for k, v in turns.items()},
        granted,
    )


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=[False, True],
                        ids=["no grants", "every grant"])
async def world(request: pytest.FixtureRequest,
                tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[World]:
    built = await _build(tmp_path_factory.mktemp("world") / "hearth.db", granted=request.param)
    try:
        yield built
    finally:
        await built.home.memory.close()


def _expected(world: World, reader: Reader, keys: list[tuple[str, str]]) -> set[tuple[str, str]]:
    return {k for k in keys if oracle(reader, k[0], k[1], world.granted)}


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.label)
async def test_recall_returns_exactly_the_allowed_facts_for_every_reader(
    world: World, reader: Reader
) -> None:
    memory: Memory = world.home.memory
    ctx = reader.context(world.home)
    for key, belief_id in world.ids.items():
        found = await memory.recall.search(ctx, FACTS[key[0]][key[1]])
        returned = {world.by_id[r.belief.belief_id] for r in found}
        unauthorized = {k for k in returned if not oracle(reader, k[0], k[1], world.granted)}
        assert not unauthorized, f"{reader.label} hydrated {unauthorized}"
        if oracle(reader, key[0], key[1], world.granted):
            assert belief_id in {r.belief.belief_id for r in found}, (
                f"positive control: {reader.label} should recall {key}"
            )


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.label)
async def test_explain_answers_only_allowed_beliefs_and_hides_the_rest_as_missing(
    world: World, reader: Reader
) -> None:
    memory = world.home.memory
    ctx = reader.context(world.home)
    missing = await memory.beliefs.explain(ctx, 999_999)
    assert missing is None
    for key, belief_id in world.ids.items():
        explanation = await memory.beliefs.explain(ctx, belief_id)
        if oracle(reader, key[0], key[1], world.granted):
            assert explanation is not None and explanation.belief.belief_id == belief_id
            for other in explanation.contradicts:
                other_key = world.by_id[other]
                assert other_key[0] == key[0]
        else:
            assert explanation == missing


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.label)
async def test_transcript_holds_only_lines_the_reader_may_use(
    world: World, reader: Reader
) -> None:
    turns = await world.home.memory.transcript.lines(reader.context(world.home), limit=1000)
    returned = {world.turn_by_id[t.turn_id] for t in turns}
    assert returned == _expected(world, reader, list(world.turns))


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.label)
async def test_conflicts_pair_only_beliefs_the_reader_may_use(
    world: World, reader: Reader
) -> None:
    pairs = await world.home.memory.beliefs.conflicts(reader.context(world.home))
    returned = {(world.by_id[a.belief_id], world.by_id[b.belief_id]) for a, b in pairs}
    expected = {
        ((owner, O), (owner, H))
        for owner in FACTS
        if oracle(reader, owner, O, world.granted) and oracle(reader, owner, H, world.granted)
    }
    assert returned == expected


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.label)
async def test_inspect_shows_a_member_only_their_own_view(world: World, reader: Reader) -> None:
    found = await world.home.memory.beliefs.inspect(reader.context(world.home))
    returned = {world.by_id[b.belief_id] for b in found}
    # inspect lists the member's own scope (and shared beliefs about them; there are none here)
    own = [k for k in world.ids if k[0] == reader.viewer]
    assert returned == _expected(world, reader, own)


@pytest.mark.parametrize("who", ["bob", "alice", "olivia"])
async def test_export_holds_the_members_own_facts_and_lines_and_nobody_elses(
    world: World, who: str
) -> None:
    person = _person(world.home, who)
    ctx = AccessContext.for_member(person.person_id, Activity.MEMBER_INSPECT, "export")
    document = await world.home.memory.export.document(ctx)
    # The export names rows by their opaque refs; memory's own view maps them back.
    belief_of = {b.ref: b.belief_id for b in await world.home.memory.beliefs.inspect(ctx)}
    line_of = {t.ref: t.turn_id for t in await world.home.memory.transcript.lines(ctx, limit=999)}
    beliefs = {world.by_id[belief_of[b["ref"]]] for b in document["beliefs"]}
    lines = {world.turn_by_id[line_of[t["ref"]]] for t in document["transcript"]}
    assert beliefs == {k for k in world.ids if k[0] == who}
    assert lines == {k for k in world.turns if k[0] == who}
    text = repr(document)
    for owner, facts in FACTS.items():
        if owner != who:
            for fact in facts.values():
                assert fact not in text


@pytest.mark.parametrize(
    "reader", [r for r in READERS if r.activity != Activity.MEMBER_INSPECT],
    ids=lambda r: r.label,
)
async def test_export_is_refused_for_any_activity_but_a_members_own_inspection(
    world: World, reader: Reader
) -> None:
    with pytest.raises(InvalidRequest):
        await world.home.memory.export.document(reader.context(world.home))


CREDENTIAL_SAFE = {Activity.DM_CONVERSATION, Activity.MEMBER_INSPECT, Activity.CONSOLIDATION}


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.label)
async def test_a_credential_never_surfaces_outside_a_private_chat_with_its_owner(
    world: World, reader: Reader
) -> None:
    memory = world.home.memory
    ctx = reader.context(world.home)
    surfaced: set[str] = set()
    for owner in FACTS:
        for r in await memory.recall.search(ctx, FACTS[owner][C] + " password PIN passcode"):
            if r.belief.sensitivity == Sensitivity.CREDENTIALS:
                surfaced.add(world.by_id[r.belief.belief_id][0])
    for t in await memory.transcript.lines(ctx, limit=1000):
        if t.sensitivity == Sensitivity.CREDENTIALS:
            surfaced.add(world.turn_by_id[t.turn_id][0])
    for b in await memory.beliefs.inspect(ctx):
        if b.sensitivity == Sensitivity.CREDENTIALS:
            surfaced.add(world.by_id[b.belief_id][0])
    if reader.activity == Activity.CONSOLIDATION:
        # an isolated batch reads its own scope's credentials, and nobody else's
        assert surfaced == {reader.viewer or SHARED}
    elif reader.activity not in CREDENTIAL_SAFE or reader.viewer is None:
        assert surfaced == set()
    else:
        # only the reader's own, and the household's (the wifi) in their private chat
        assert surfaced == {reader.viewer, SHARED}


async def test_reasserting_a_hidden_belief_never_moves_its_scope(tmp_path: Path) -> None:
    home = await make_household(tmp_path / "hearth.db")
    memory = home.memory
    try:
        secret = "Bob is planning a surprise party for Alice"
        first = await memory.beliefs.remember(home.bob.person_id, secret)
        again = await memory.beliefs.remember(home.alice.person_id, secret.upper() + "!!")
        shared = await memory.beliefs.remember(home.owner.person_id, secret, shared=True)
        assert first.status == again.status == shared.status == "created"
        assert len({first.belief_id, again.belief_id, shared.belief_id}) == 3
        bob_view = await memory.beliefs.explain(home.dm(home.bob), int(first.belief_id))
        assert bob_view is not None
        assert bob_view.belief.scope == private_scope(home.bob.person_id)
        assert bob_view.belief.evidence_count == 1
        assert await memory.beliefs.explain(home.dm(home.alice), int(first.belief_id)) is None
        # the write told Alice nothing about Bob's belief: not its id, not its text
        assert again.belief_id != first.belief_id and again.reason is None
    finally:
        await memory.close()


async def test_a_private_assertion_of_a_shared_beliefs_words_is_no_oracle_for_the_group(
    tmp_path: Path,
) -> None:
    home = await make_household(tmp_path / "hearth.db")
    memory = home.memory
    try:
        shared = await memory.beliefs.remember(home.owner.person_id, "Bins go out on Tuesday",
                shared=True)
        seen = await memory.beliefs.explain(home.group(), int(shared.belief_id))
        assert seen is not None
        mine = await memory.beliefs.remember(home.bob.person_id, "bins go out on tuesday.")
        assert mine.status == "created" and mine.belief_id != shared.belief_id
        view = await memory.beliefs.explain(home.group(), int(shared.belief_id))
        assert view is not None and view.belief.scope == SHARED
        assert (view.belief.evidence_count, view.belief.confidence) == (
            seen.belief.evidence_count, seen.belief.confidence)
        # Bob's words stay his: the group cannot see his belief, his private scope keeps it.
        assert await memory.beliefs.explain(home.group(), int(mine.belief_id or 0)) is None
        own = await memory.beliefs.explain(home.dm(home.bob), int(mine.belief_id or 0))
        assert own is not None and own.belief.scope == private_scope(home.bob.person_id)
    finally:
        await memory.close()


async def test_members_private_beliefs_stay_apart(tmp_path: Path) -> None:
    home = await make_household(tmp_path / "hearth.db")
    memory = home.memory
    try:
        await memory.beliefs.remember(home.bob.person_id, "My sister lives in Lisbon")
        await memory.beliefs.remember(home.alice.person_id, "My sister lives in Oslo")
        bob = [r.belief.proposition for r in await memory.recall.search(home.dm(home.bob),
                "sister")]
        alice = [r.belief.proposition for r in await memory.recall.search(home.dm(home.alice),
                "sister")]
        owner = await memory.recall.search(home.dm(home.owner), "sister")
        group = await memory.recall.search(home.group(), "sister lives")
        assert bob == ["My sister lives in Lisbon"]
        assert alice == ["My sister lives in Oslo"]
        assert owner == [] and group == []
    finally:
        await memory.close()


# The same promise for facts no listed word gives away, in four languages: a diagnosis or a
# medicine said plainly, a secret given by its shape. Their class comes from the shape rules or
# from the meaning of the line (`memory.sensing`, under the default embedder); either way the
# lens must then hold them exactly as the table says.
UNLISTED: dict[str, dict[str, str]] = {
    "bob": {
        H: "Bob was treated for chlamydia at the walk-in on Friday",
        C: "Para desactivar la alarma de Bob, marca 48213 en el panel",
    },
    "alice": {
        H: "Papi prend du lithium tous les matins depuis son dernier épisode",
        C: "Zum Entschärfen von Alices Alarmanlage 51977 am Tastenfeld eingeben",
    },
    "olivia": {
        H: "Olivia's scan showed a stage 3 lymphoma and she sees the oncologist on Tuesdays",
    },
    SHARED: {
        C: "Netflix account: family.hale@example.com with Gooseberry77",
        H: "Grandpa takes lithium every morning since his last episode",
    },
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def unlisted(tmp_path_factory: pytest.TempPathFactory,
                   e5: E5Embedder) -> AsyncIterator[World]:
    home = await make_household(tmp_path_factory.mktemp("unlisted") / "hearth.db", embedder=e5)
    memory = home.memory
    ids: dict[tuple[str, str], int] = {}
    turns: dict[tuple[str, str], int] = {}
    try:
        for owner, facts in UNLISTED.items():
            teller = home.owner if owner == SHARED else _person(home, owner)
            scope = SHARED if owner == SHARED else private_scope(teller.person_id)
            for klass, text in facts.items():
                outcome = await memory.beliefs.remember(teller.person_id, text,
                                                        shared=owner == SHARED)
                assert outcome.belief_id is not None
                ids[(owner, klass)] = outcome.belief_id
                chat = "group:-100" if owner == SHARED else f"dm:{teller.telegram_id}"
                turns[(owner, klass)] = await memory.transcript.append(
                    chat_id=chat, speaker_id=teller.person_id, role=Role.USER, scope=scope,
                    text=text)
        yield World(home, ids, turns, {v: k for k, v in ids.items()},
                    {v: k for k, v in turns.items()}, granted=False)
    finally:
        await memory.close()


async def test_facts_no_listed_word_gives_away_are_stored_under_their_class(
    unlisted: World,
) -> None:
    home = unlisted.home
    for owner, facts in UNLISTED.items():
        viewer = home.owner if owner == SHARED else _person(home, owner)
        scope = SHARED if owner == SHARED else private_scope(viewer.person_id)
        seen = {b.belief_id: b.sensitivity for b in await home.memory.beliefs.in_scope(
            home.dm(viewer, Activity.MEMBER_INSPECT), scope)}
        for klass in facts:
            assert seen[unlisted.ids[(owner, klass)]] == Sensitivity(klass), facts[klass]


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.label)
async def test_facts_no_listed_word_gives_away_are_hydrated_only_where_allowed(
    unlisted: World, reader: Reader,
) -> None:
    memory = unlisted.home.memory
    ctx = reader.context(unlisted.home)
    for (owner, klass), _ in unlisted.ids.items():
        text = UNLISTED[owner][klass]
        handed = await memory.recall.recollect(ctx, text, unrelated=True)
        beliefs = {unlisted.by_id[r.belief.belief_id] for r in handed if hasattr(r, "belief")}
        lines = {unlisted.turn_by_id[r.turn.turn_id] for r in handed if hasattr(r, "turn")}
        for found in beliefs | lines:
            assert oracle(reader, found[0], found[1], granted=False), (reader.label, found)
        if oracle(reader, owner, klass, granted=False) and reader.activity in (
            Activity.DM_CONVERSATION, Activity.MEMBER_INSPECT
        ):
            assert (owner, klass) in beliefs | lines, (reader.label, text)  # positive control
