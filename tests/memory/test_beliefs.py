"""Beliefs: one per normalised proposition and scope, log-odds confidence revised by evidence,
quarantine, valid time, contradiction, staleness, sensitivity overrides and the secret gate."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from memory import (
    SHARED,
    AccessContext,
    Activity,
    Assertion,
    Belief,
    BeliefStatus,
    Kind,
    Memory,
    Person,
    Provenance,
    Sensitivity,
    WriteOutcome,
    private_scope,
)
from tests.helpers import HashEmbedder

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
OPENAI_KEY = "sk-" + "proj-" + "Ab3dEf6hIj9kLmN0pQrStUvWxYz12345_abcXYZ"


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


@dataclass
class Home:
    memory: Memory
    clock: FakeClock
    owner: Person
    bob: Person
    alice: Person

    def dm(self, person: Person, activity: Activity = Activity.DM_CONVERSATION) -> AccessContext:
        return AccessContext.for_member(person.person_id, activity, "a belief test")

    def mine(self, person: Person) -> str:
        return private_scope(person.person_id)

    async def belief(self, person: Person, belief_id: int) -> Belief:
        explanation = await self.memory.beliefs.explain(self.dm(person), belief_id)
        assert explanation is not None
        return explanation.belief

    async def say(self, *items: Assertion) -> list[WriteOutcome]:
        return await self.memory.beliefs.assert_all(list(items))


@pytest.fixture
async def home(tmp_path: Path) -> AsyncIterator[Home]:
    clock = FakeClock()
    memory = await Memory.open(
        tmp_path / "hearth.db", embedder=HashEmbedder(), create=True, clock=clock
    )
    try:
        owner = await memory.people.add("Olivia", telegram_id=1001, owner=True)
        bob = await memory.people.add("Bob", telegram_id=1002)
        alice = await memory.people.add("Alice", telegram_id=1003)
        yield Home(memory, clock, owner, bob, alice)
    finally:
        await memory.close()


def told(text: str, scope: str, source: str, **extra: object) -> Assertion:
    return Assertion(proposition=text, scope=scope, provenance=Provenance.TOLD, source=source,
                     **extra)  # type: ignore[arg-type]


def extracted(text: str, scope: str, source: str, **extra: object) -> Assertion:
    return Assertion(proposition=text, scope=scope, provenance=Provenance.EXTRACTED,
                     source=source, **extra)  # type: ignore[arg-type]


def sigmoid(log_odds: float) -> float:
    return round(1.0 / (1.0 + math.exp(-log_odds)), 4)


# --- normalisation -------------------------------------------------------------------------


async def test_case_spacing_and_trailing_punctuation_variants_are_one_belief(
    home: Home,
) -> None:
    scope = home.mine(home.bob)
    variants = [
        "Bob likes green tea",
        "bob LIKES green tea.",
        "  Bob   likes\tgreen  tea!!  ",
        "Bob likes green tea?!",
        '"Bob likes green tea"',
    ]
    outcomes = await home.memory.beliefs.assert_all(
        [told(text, scope, f"statement:{i}") for i, text in enumerate(variants)]
    )
    assert [o.status for o in outcomes] == ["created"] + ["reinforced"] * (len(variants) - 1)
    assert len({o.belief_id for o in outcomes}) == 1
    belief_id = outcomes[0].belief_id
    assert belief_id is not None
    belief = await home.belief(home.bob, belief_id)
    assert belief.evidence_count == len(variants)
    assert belief.proposition == "Bob likes green tea"  # the first writer's wording is kept
    inspected = await home.memory.beliefs.inspect(home.dm(home.bob, Activity.MEMBER_INSPECT))
    assert [b.belief_id for b in inspected] == [belief_id]


async def test_the_same_proposition_in_two_private_scopes_is_two_beliefs(home: Home) -> None:
    (bobs,) = await home.say(told("The boiler is noisy", home.mine(home.bob), "s:1"))
    (alices,) = await home.say(told("the boiler is NOISY.", home.mine(home.alice), "s:2")
    )
    assert bobs.status == alices.status == "created"
    assert bobs.belief_id != alices.belief_id


async def test_words_that_differ_inside_the_sentence_are_different_beliefs(home: Home) -> None:
    scope = home.mine(home.bob)
    first, second = await home.memory.beliefs.assert_all(
        [told("Bob likes green tea", scope, "s:1"), told("Bob likes greentea", scope, "s:2")]
    )
    assert first.status == second.status == "created"
    assert first.belief_id != second.belief_id


# --- confidence ----------------------------------------------------------------------------


async def test_confidence_starts_at_even_odds_and_moves_by_reliability_times_weight(
    home: Home,
) -> None:
    scope = home.mine(home.bob)
    (outcome,) = await home.say(told("Bob cycles to work", scope, "s:1", weight=0.5))
    assert outcome.belief_id is not None
    assert (await home.belief(home.bob, outcome.belief_id)).confidence == sigmoid(0.95 * 0.5)
    # Equal and opposite evidence brings it back to the 0.5 it started from.
    (against,) = await home.say(told("Bob cycles to work", scope, "s:2", sign=-1, weight=0.5)
    )
    assert against.status == "reinforced"
    assert (await home.belief(home.bob, outcome.belief_id)).confidence == 0.5


async def test_being_told_counts_for_more_than_an_extraction(home: Home) -> None:
    scope = home.mine(home.bob)
    told_outcome, extracted_outcome = await home.memory.beliefs.assert_all([
        told("Bob plays the trumpet", scope, "statement:1"),
        extracted("Bob plays the violin", scope, "turns:1"),
    ])
    assert told_outcome.belief_id is not None and extracted_outcome.belief_id is not None
    by_told = await home.belief(home.bob, told_outcome.belief_id)
    by_extraction = await home.belief(home.bob, extracted_outcome.belief_id)
    assert by_told.confidence == sigmoid(0.95)
    assert by_extraction.confidence == sigmoid(0.75)
    assert by_told.confidence > by_extraction.confidence > 0.5


async def test_confidence_is_clamped_at_six_log_odds_and_never_reaches_certainty(
    home: Home,
) -> None:
    scope = home.mine(home.bob)
    outcomes = await home.memory.beliefs.assert_all(
        [told("Bob is a night owl", scope, f"statement:{i}") for i in range(20)]
    )
    belief_id = outcomes[0].belief_id
    assert belief_id is not None
    assert all(o.belief_id == belief_id for o in outcomes)
    belief = await home.belief(home.bob, belief_id)
    assert belief.confidence == sigmoid(6.0)
    assert belief.confidence < 1.0
    # and as far the other way: many denials stop at -6
    await home.memory.beliefs.assert_all(
        [told("Bob is a night owl", scope, f"denial:{i}", sign=-1) for i in range(40)]
    )
    belief = await home.belief(home.bob, belief_id)
    assert belief.confidence == sigmoid(-6.0)
    assert belief.confidence > 0.0


async def test_negative_evidence_lowers_confidence(home: Home) -> None:
    scope = home.mine(home.bob)
    (first,) = await home.say(told("Bob is vegetarian", scope, "s:1"))
    assert first.belief_id is not None
    before = (await home.belief(home.bob, first.belief_id)).confidence
    (denial,) = await home.say(extracted("Bob is vegetarian.", scope, "t:9", sign=-1))
    assert denial.status == "reinforced" and denial.belief_id == first.belief_id
    after = await home.belief(home.bob, first.belief_id)
    assert after.confidence == sigmoid(0.95 - 0.75)
    assert after.confidence < before
    assert after.evidence_count == 2


async def test_negative_evidence_for_an_unknown_proposition_creates_nothing(
    home: Home,
) -> None:
    (outcome,) = await home.say(told("Bob owns a boat", home.mine(home.bob), "s:1", sign=-1)
    )
    assert outcome.status == "dropped"
    assert outcome.belief_id is None
    assert await home.memory.beliefs.inspect(home.dm(home.bob, Activity.MEMBER_INSPECT)) == []


async def test_a_replayed_evidence_row_is_dropped(home: Home) -> None:
    scope = home.mine(home.bob)
    (first,) = await home.say(extracted("Bob drinks oat milk", scope, "turns:7"))
    (second,) = await home.say(told("Bob drinks oat milk", scope, "statement:1"))
    assert second.status == "reinforced" and second.belief_id == first.belief_id
    before = await home.belief(home.bob, int(first.belief_id or 0))
    (replay,) = await home.say(extracted("bob drinks oat milk!", scope, "turns:7"))
    assert replay.status == "dropped"
    assert replay.belief_id == first.belief_id
    after = await home.belief(home.bob, int(first.belief_id or 0))
    assert after.confidence == before.confidence
    assert after.evidence_count == before.evidence_count == 2


async def test_an_explicit_older_version_is_dropped(home: Home) -> None:
    scope = home.mine(home.bob)
    (first,) = await home.say(told("Bob walks the dog", scope, "s:1", version=5))
    assert first.status == "created" and first.belief_id is not None
    before = await home.belief(home.bob, first.belief_id)
    for stale_version in (3, 5):
        (late,) = await home.say(told("Bob walks the dog", scope, f"s:late{stale_version}",
                           version=stale_version)
        )
        assert late.status == "dropped"
        assert late.belief_id == first.belief_id
    (newer,) = await home.say(told("Bob walks the dog", scope, "s:2", version=6))
    assert newer.status == "reinforced"
    explanation = await home.memory.beliefs.explain(home.dm(home.bob), first.belief_id)
    assert explanation is not None
    assert [e.version for e in explanation.evidence] == [5, 6]
    assert explanation.belief.confidence > before.confidence


async def test_a_dropped_first_assertion_leaves_no_belief_behind(home: Home) -> None:
    # A version that is not newer than "nothing yet" (0) is dropped; the drop must not leave
    # an evidence-less belief that recall and inspect then show at even odds.
    scope = home.mine(home.bob)
    (outcome,) = await home.say(told("Bob collects stamps", scope, "s:1", version=0))
    assert outcome.status == "dropped"
    assert await home.memory.beliefs.inspect(home.dm(home.bob, Activity.MEMBER_INSPECT)) == []
    assert await home.memory.recall.search(home.dm(home.bob), "Bob collects stamps") == []


# --- quarantine ----------------------------------------------------------------------------


async def test_a_single_weak_source_is_quarantined_and_not_recalled(home: Home) -> None:
    scope = home.mine(home.bob)
    weak, weaker = await home.memory.beliefs.assert_all([
        extracted("Bob is learning Portuguese", scope, "turns:1", weight=0.8),
        Assertion(proposition="Bob is saving for a motorbike", scope=scope,
                  provenance=Provenance.INFERRED, source="dream:1"),
    ])
    for outcome in (weak, weaker):
        assert outcome.status == "created" and outcome.belief_id is not None
        belief = await home.belief(home.bob, outcome.belief_id)
        assert belief.status == BeliefStatus.QUARANTINED
    ctx = home.dm(home.bob)
    assert await home.memory.recall.search(ctx, "Bob is learning Portuguese") == []
    assert await home.memory.recall.search(ctx, "Bob is saving for a motorbike") == []


async def test_a_second_distinct_source_ends_quarantine(home: Home) -> None:
    scope = home.mine(home.bob)
    (first,) = await home.say(
        extracted("Bob is learning Portuguese", scope, "turns:1", weight=0.8)
    )
    assert first.belief_id is not None
    (replay,) = await home.say(
        extracted("Bob is learning Portuguese", scope, "turns:1", weight=0.8)
    )
    assert replay.status == "dropped"
    assert (await home.belief(home.bob, first.belief_id)).status == BeliefStatus.QUARANTINED
    (second,) = await home.say(
        extracted("Bob is learning Portuguese", scope, "turns:2", weight=0.8)
    )
    assert second.status == "reinforced"
    assert (await home.belief(home.bob, first.belief_id)).status == BeliefStatus.ACTIVE
    found = await home.memory.recall.search(home.dm(home.bob), "Bob is learning Portuguese")
    assert [r.belief.belief_id for r in found] == [first.belief_id]


async def test_a_first_hand_extraction_from_a_members_own_words_is_not_quarantined(
    home: Home,
) -> None:
    (outcome,) = await home.say(extracted("Bob is learning Portuguese", home.mine(home.bob),
                                          "turns:1"))
    assert outcome.belief_id is not None
    assert (await home.belief(home.bob, outcome.belief_id)).status == BeliefStatus.ACTIVE


async def test_a_member_telling_her_directly_is_not_quarantined(home: Home) -> None:
    outcome = await home.memory.beliefs.remember(home.bob.person_id, "Bob is learning Portuguese")
    assert outcome.belief_id is not None
    assert (await home.belief(home.bob, outcome.belief_id)).status == BeliefStatus.ACTIVE


# --- kind and subject ----------------------------------------------------------------------


async def test_kind_and_subject_are_kept(home: Home) -> None:
    outcome = await home.memory.beliefs.remember(
        home.bob.person_id, "Alice prefers jasmine tea", kind=Kind.PREFERENCE,
        subject_id=home.alice.person_id,
    )
    assert outcome.belief_id is not None
    belief = await home.belief(home.bob, outcome.belief_id)
    assert belief.kind == Kind.PREFERENCE
    assert belief.subject_id == home.alice.person_id
    assert belief.scope == home.mine(home.bob)
    # About Alice is not Alice's: it never reaches her view.
    assert await home.memory.beliefs.inspect(home.dm(home.alice, Activity.MEMBER_INSPECT)) == []
    (goal,) = await home.say(told("Run a marathon", home.mine(home.bob), "s:9",
                                           kind=Kind.GOAL))
    assert (await home.belief(home.bob, int(goal.belief_id or 0))).kind == Kind.GOAL


# --- valid time ----------------------------------------------------------------------------


async def _job_change(home: Home) -> tuple[int, int, datetime]:
    m = home.memory
    old = await m.beliefs.remember(home.bob.person_id, "Bob works at the bakery")
    changed_at = home.clock.advance(days=30)
    new = await m.beliefs.remember(home.bob.person_id, "Bob works at the library")
    assert old.belief_id is not None and new.belief_id is not None
    assert await m.beliefs.supersede(home.dm(home.bob), old.belief_id, new.belief_id)
    home.clock.advance(days=5)
    return old.belief_id, new.belief_id, changed_at


async def test_supersede_keeps_the_old_belief_marked_superseded(home: Home) -> None:
    old, new, changed_at = await _job_change(home)
    explanation = await home.memory.beliefs.explain(home.dm(home.bob), old)
    assert explanation is not None
    assert explanation.belief.status == BeliefStatus.SUPERSEDED
    assert explanation.superseded_by == new
    assert explanation.belief.valid_from == T0.isoformat()
    assert explanation.belief.valid_to == changed_at.isoformat()
    inspected = await home.memory.beliefs.inspect(home.dm(home.bob, Activity.MEMBER_INSPECT))
    assert {b.belief_id: b.status for b in inspected} == {
        old: BeliefStatus.SUPERSEDED,
        new: BeliefStatus.ACTIVE,
    }


async def test_recall_as_of_answers_what_was_true_then(home: Home) -> None:
    old, new, changed_at = await _job_change(home)
    ctx = home.dm(home.bob)
    query = "where does Bob work: bakery or library"

    async def ids(as_of: datetime | None) -> list[int]:
        return [r.belief.belief_id for r in await home.memory.recall.search(ctx, query,
                as_of=as_of)]

    assert await ids(None) == [new]
    assert await ids(T0 + timedelta(days=10)) == [old]
    assert await ids(changed_at - timedelta(seconds=1)) == [old]
    assert await ids(changed_at) == [new]
    assert await ids(T0 - timedelta(days=1)) == []


async def test_recall_as_of_is_the_same_instant_in_any_time_zone(home: Home) -> None:
    old, _, changed_at = await _job_change(home)
    ctx = home.dm(home.bob)
    query = "where does Bob work: bakery or library"
    an_hour_before = changed_at - timedelta(hours=1)
    in_utc = await home.memory.recall.search(ctx, query, as_of=an_hour_before)
    assert [r.belief.belief_id for r in in_utc] == [old]
    plus_five = timezone(timedelta(hours=5))
    elsewhere = await home.memory.recall.search(ctx, query,
            as_of=an_hour_before.astimezone(plus_five))
    assert [r.belief.belief_id for r in elsewhere] == [old]


async def test_supersede_needs_two_visible_beliefs_of_one_scope(home: Home) -> None:
    m = home.memory
    mine = await m.beliefs.remember(home.bob.person_id, "Bob's bike is red")
    shared = await m.beliefs.remember(home.owner.person_id, "The bike shed is locked", shared=True)
    alices = await m.beliefs.remember(home.alice.person_id, "Alice's bike is blue")
    assert mine.belief_id and shared.belief_id and alices.belief_id
    ctx = home.dm(home.bob)
    assert not await m.beliefs.supersede(ctx, mine.belief_id, mine.belief_id)
    assert not await m.beliefs.supersede(ctx, mine.belief_id, shared.belief_id)
    assert not await m.beliefs.supersede(ctx, mine.belief_id, alices.belief_id)
    assert (await home.belief(home.bob, mine.belief_id)).status == BeliefStatus.ACTIVE


# --- contradiction -------------------------------------------------------------------------


async def test_a_contradiction_makes_the_weaker_belief_read_contradicted(home: Home) -> None:
    scope = home.mine(home.bob)
    strong, _, weak = await home.memory.beliefs.assert_all([
        told("Bob's car is blue", scope, "s:1"),
        told("Bob's car is blue", scope, "s:2"),
        told("Bob's car is red", scope, "s:3"),
    ])
    assert strong.belief_id is not None and weak.belief_id is not None
    ctx = home.dm(home.bob)
    assert await home.memory.beliefs.link_contradiction(ctx, weak.belief_id, strong.belief_id)
    assert (await home.belief(home.bob, weak.belief_id)).status == BeliefStatus.CONTRADICTED
    assert (await home.belief(home.bob, strong.belief_id)).status == BeliefStatus.ACTIVE
    explanation = await home.memory.beliefs.explain(ctx, weak.belief_id)
    assert explanation is not None and explanation.contradicts == (strong.belief_id,)
    pairs = await home.memory.beliefs.conflicts(ctx)
    assert [(a.belief_id, b.belief_id) for a, b in pairs] == [
        (strong.belief_id, weak.belief_id)
    ]


async def test_contradictions_link_only_within_one_visible_scope(home: Home) -> None:
    m = home.memory
    mine = await m.beliefs.remember(home.bob.person_id, "The car is blue")
    shared = await m.beliefs.remember(home.owner.person_id, "The car is red", shared=True)
    alices = await m.beliefs.remember(home.alice.person_id, "The car is green")
    assert mine.belief_id and shared.belief_id and alices.belief_id
    bob = home.dm(home.bob)
    assert not await m.beliefs.link_contradiction(bob, mine.belief_id, shared.belief_id)
    assert not await m.beliefs.link_contradiction(bob, mine.belief_id, alices.belief_id)
    assert not await m.beliefs.link_contradiction(bob, mine.belief_id, mine.belief_id)
    for belief_id in (mine.belief_id, shared.belief_id):
        assert (await home.belief(home.bob, belief_id)).status == BeliefStatus.ACTIVE
    assert await m.beliefs.conflicts(bob) == []


# --- staleness -----------------------------------------------------------------------------


async def test_a_belief_not_reinforced_for_200_days_reads_stale(home: Home) -> None:
    m = home.memory
    outcome = await m.beliefs.remember(home.bob.person_id, "Bob's dentist is Dr Hale")
    assert outcome.belief_id is not None
    home.clock.advance(days=100)
    assert (await home.belief(home.bob, outcome.belief_id)).status == BeliefStatus.ACTIVE
    home.clock.advance(days=100)
    assert (await home.belief(home.bob, outcome.belief_id)).status == BeliefStatus.STALE


async def test_reinforcement_freshens_a_belief_but_a_denial_does_not(home: Home) -> None:
    scope = home.mine(home.bob)
    (outcome,) = await home.say(told("Bob's dentist is Dr Hale", scope, "s:1"))
    assert outcome.belief_id is not None
    home.clock.advance(days=150)
    await home.say(told("Bob's dentist is Dr Hale", scope, "s:2", sign=-1,
                                  weight=0.1))
    home.clock.advance(days=50)
    assert (await home.belief(home.bob, outcome.belief_id)).status == BeliefStatus.STALE
    await home.say(told("Bob's dentist is Dr Hale", scope, "s:3"))
    home.clock.advance(days=50)
    assert (await home.belief(home.bob, outcome.belief_id)).status == BeliefStatus.ACTIVE


# --- sensitivity overrides -----------------------------------------------------------------


async def test_an_override_to_ordinary_makes_a_health_belief_usable_proactively(
    home: Home,
) -> None:
    m = home.memory
    outcome = await m.beliefs.remember(home.bob.person_id, "Bob takes insulin for his diabetes")
    assert outcome.belief_id is not None
    assert (await home.belief(home.bob, outcome.belief_id)).sensitivity == Sensitivity.HEALTH
    proactive = home.dm(home.bob, Activity.PROACTIVE)
    query = "insulin diabetes"
    assert await m.recall.search(proactive, query) == []
    assert await m.beliefs.set_sensitivity(home.dm(home.bob), outcome.belief_id,
            Sensitivity.ORDINARY)
    found = await m.recall.search(proactive, query)
    assert [r.belief.belief_id for r in found] == [outcome.belief_id]
    assert found[0].belief.sensitivity == Sensitivity.ORDINARY
    assert await m.grants.list() == []  # no grant was needed


async def test_an_override_to_health_suppresses_an_ordinary_belief_proactively(
    home: Home,
) -> None:
    m = home.memory
    outcome = await m.beliefs.remember(home.bob.person_id,
            "Bob's favourite tea is lapsang souchong")
    assert outcome.belief_id is not None
    proactive = home.dm(home.bob, Activity.PROACTIVE)
    query = "favourite tea lapsang souchong"
    assert [r.belief.belief_id for r in await m.recall.search(proactive,
            query)] == [outcome.belief_id]
    assert await m.beliefs.set_sensitivity(home.dm(home.bob), outcome.belief_id,
            Sensitivity.HEALTH)
    assert await m.recall.search(proactive, query) == []
    # the member's own conversation still has it
    dm = await m.recall.search(home.dm(home.bob), query)
    assert [r.belief.belief_id for r in dm] == [outcome.belief_id]
    assert dm[0].belief.sensitivity == Sensitivity.HEALTH


async def test_a_member_cannot_override_another_members_belief(home: Home) -> None:
    m = home.memory
    bobs = await m.beliefs.remember(home.bob.person_id, "Bob takes insulin for his diabetes")
    shared = await m.beliefs.remember(home.owner.person_id, "Grandma takes warfarin", shared=True)
    assert bobs.belief_id is not None and shared.belief_id is not None
    for ctx in (home.dm(home.alice), home.dm(home.owner)):
        assert not await m.beliefs.set_sensitivity(ctx, bobs.belief_id, Sensitivity.ORDINARY)
    assert (await home.belief(home.bob, bobs.belief_id)).sensitivity == Sensitivity.HEALTH
    # a shared belief is the owner's to reclassify, not any member's
    assert not await m.beliefs.set_sensitivity(home.dm(home.bob), shared.belief_id,
            Sensitivity.ORDINARY)
    assert (await home.belief(home.bob, shared.belief_id)).sensitivity == Sensitivity.HEALTH
    assert await m.beliefs.set_sensitivity(home.dm(home.owner), shared.belief_id,
            Sensitivity.ORDINARY)
    assert (await home.belief(home.bob, shared.belief_id)).sensitivity == Sensitivity.ORDINARY


async def test_an_override_of_a_missing_belief_returns_false(home: Home) -> None:
    assert not await home.memory.beliefs.set_sensitivity(home.dm(home.bob), 999,
            Sensitivity.HEALTH)


# --- the secret gate -----------------------------------------------------------------------


async def test_a_secret_token_is_refused_without_echo(home: Home) -> None:
    m = home.memory
    text = f"Bob's OpenAI key is {OPENAI_KEY}"
    outcome = await m.beliefs.remember(home.bob.person_id, text)
    assert outcome.status == "refused"
    assert outcome.belief_id is None
    # What a write tells: what happened, and the belief's key and opaque name; never its text.
    assert set(WriteOutcome.model_fields) == {"status", "belief_id", "reason", "ref"}
    dumped = outcome.model_dump_json()
    assert OPENAI_KEY not in dumped and OPENAI_KEY[:12] not in dumped
    (background,) = await m.beliefs.assert_all([
        extracted(text, home.mine(home.bob), "turns:1"),
    ])
    assert background.status == "refused" and background.belief_id is None
    assert await m.beliefs.inspect(home.dm(home.bob, Activity.MEMBER_INSPECT)) == []
    await m.checkpoint()
    raw = m.path.read_bytes()
    assert OPENAI_KEY.encode() not in raw
    assert OPENAI_KEY[8:24].encode() not in raw


async def test_a_member_saying_a_shared_beliefs_words_in_private_moves_and_confirms_nothing(
    home: Home,
) -> None:
    m = home.memory
    shared = await m.beliefs.remember(home.owner.person_id, "The bins go out on Tuesday",
            shared=True)
    before = await home.belief(home.alice, int(shared.belief_id or 0))
    (again,) = await home.say(told("the bins go out on tuesday.", home.mine(home.bob), "s:bob")
    )
    # Bob gets a belief of his own, in his own scope; the shared one is not found, not
    # reinforced, not named: what the group can watch does not move.
    assert again.status == "created" and again.belief_id != shared.belief_id
    after = await home.belief(home.alice, int(shared.belief_id or 0))
    assert (after.confidence, after.evidence_count) == (before.confidence, before.evidence_count)
    assert after.scope == SHARED
    mine = await home.belief(home.bob, int(again.belief_id or 0))
    assert mine.scope == home.mine(home.bob) and mine.evidence_count == 1
    # Positive control: saying it again in the shared scope does reinforce the shared belief.
    (group,) = await home.say(told("The bins go out on Tuesday", SHARED, "s:group"))
    assert group.status == "reinforced" and group.belief_id == shared.belief_id
