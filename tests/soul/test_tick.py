"""The tick: isolated consolidation per scope, per-member compaction, and the nightly dream."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

from memory import (
    SHARED,
    AccessContext,
    Activity,
    Assertion,
    BeliefStatus,
    Kind,
    Provenance,
    Role,
    Sensitivity,
    private_scope,
)
from memory.consolidation import BATCH_LINES
from soul.files import load_soul
from soul.model import ModelError, UnusableAnswer
from soul.tick import run_dream, run_tick
from tests.helpers import Household, TestClock, make_household
from tests.support.extractor import extraction_for, is_consolidation, summary_for

T = TypeVar("T", bound=BaseModel)
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class ScriptedModel:
    """Answers consolidation and compaction prompts by rule; records every prompt it saw."""

    def __init__(self) -> None:
        self.prompts: list[list[dict[str, str]]] = []
        self.down = False
        self.garbled = False

    async def reply(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int = 400,
        temperature: float = 0.7,
        patient: bool = False,
    ) -> str:
        self.prompts.append(messages)
        if self.down:
            raise ModelError("the model is not answering (test)")
        return summary_for(messages)  # type: ignore[arg-type]

    async def extract(self, messages: list[dict[str, str]], schema: type[T]) -> T:
        self.prompts.append(messages)
        if self.garbled:
            raise UnusableAnswer("the answer did not fit (test)")
        if self.down:
            raise ModelError("the model is not answering (test)")
        return schema.model_validate(extraction_for(messages))  # type: ignore[arg-type]

    def consolidation_prompts(self) -> list[str]:
        return [m[-1]["content"] for m in self.prompts if is_consolidation(m)]  # type: ignore[arg-type]


@pytest.fixture
def clock() -> TestClock:
    """The one clock of a test: rows are stamped by it and every tick is run at a time on it."""
    return TestClock(NOW)


@pytest.fixture
async def house(tmp_path: Path, clock: TestClock) -> AsyncIterator[Household]:
    household = await make_household(tmp_path / "hearth.db", clock=clock)
    try:
        yield household
    finally:
        await household.memory.close()


async def say(house: Household, who: Any, text: str, *, group: bool = False) -> int:
    chat = "group:-100" if group else f"dm:{who.telegram_id}"
    scope = SHARED if group else private_scope(who.person_id)
    return await house.memory.transcript.append(
        chat_id=chat, speaker_id=who.person_id, role=Role.USER, scope=scope, text=text
    )


async def her(house: Household, who: Any, text: str, *, group: bool = False) -> int:
    chat = "group:-100" if group else f"dm:{who.telegram_id}"
    scope = SHARED if group else private_scope(who.person_id)
    return await house.memory.transcript.append(
        chat_id=chat, speaker_id=None, role=Role.ASSISTANT, scope=scope, text=text
    )


async def facts(house: Household, who: Any) -> list[str]:
    ctx = AccessContext.for_member(who.person_id, Activity.MEMBER_INSPECT, "test")
    return [b.proposition for b in await house.memory.beliefs.inspect(ctx)]


async def tick(house: Household, model: ScriptedModel, **kw: Any) -> Any:
    kw.setdefault("drain", True)
    return await run_tick(house.memory, model, now=house.clock(), assistant="Wren", **kw)


async def test_each_batch_sent_to_the_model_holds_lines_of_one_scope_only(
    house: Household,
) -> None:
    await say(house, house.bob, "I am training for the Lisbon marathon")
    await say(house, house.alice, "My sister Maya lives in Porto")
    await say(house, house.owner, "The boiler service is on Friday", group=True)
    await say(house, house.bob, "I have a knee injury from football")
    await her(house, house.alice, "How lovely, Porto is beautiful.")
    model = ScriptedModel()
    report = await tick(house, model)
    prompts = model.consolidation_prompts()
    assert report.batches == 3 and len(prompts) == 3
    for prompt in prompts:
        speakers = {line.split(": ")[0].split(". ")[1] for line in prompt.splitlines()[1:]}
        assert len(speakers - {"Wren"}) == 1, prompt
    assert "Lisbon" not in next(p for p in prompts if "Porto" in p)
    assert "boiler" not in next(p for p in prompts if "marathon" in p)


async def test_a_members_dm_facts_land_in_their_scope_and_reach_no_one_else(
    house: Household,
) -> None:
    await say(house, house.bob, "I am allergic to penicillin")
    await say(house, house.alice, "My PIN hint is the cat's name")
    await tick(house, ScriptedModel())
    assert await facts(house, house.bob) == ["Bob is allergic to penicillin"]
    assert "Bob is allergic to penicillin" not in await facts(house, house.alice)
    assert "Bob is allergic to penicillin" not in await facts(house, house.owner)
    group = AccessContext.for_group(Activity.GROUP_CONVERSATION, "test")
    assert await house.memory.recall.search(group, "allergic penicillin") == []
    mine = await house.memory.recall.search(
        AccessContext.for_member(house.bob.person_id, Activity.DM_CONVERSATION, "test"),
        "is Bob allergic to penicillin",
    )
    assert [r.belief.proposition for r in mine] == ["Bob is allergic to penicillin"]
    (belief,) = await house.memory.beliefs.inspect(
        AccessContext.for_member(house.bob.person_id, Activity.MEMBER_INSPECT, "test")
    )
    assert belief.scope == private_scope(house.bob.person_id)
    assert belief.status == BeliefStatus.ACTIVE


async def test_extracted_beliefs_carry_extracted_provenance_and_their_source_lines(
    house: Household,
) -> None:
    line = await say(house, house.bob, "I am learning the cello")
    await tick(house, ScriptedModel())
    ctx = AccessContext.for_member(house.bob.person_id, Activity.MEMBER_INSPECT, "test")
    (belief,) = await house.memory.beliefs.inspect(ctx)
    explanation = await house.memory.beliefs.explain(ctx, belief.belief_id)
    assert explanation is not None
    (evidence,) = explanation.evidence
    assert evidence.provenance == Provenance.EXTRACTED
    # The line is linked as its source: forgetting the belief redacts exactly that line.
    await say(house, house.bob, "The weather is grey today")
    assert await house.memory.forgetting.forget(ctx, "cello") == 1
    dm = AccessContext.for_member(house.bob.person_id, Activity.DM_CONVERSATION, "test")
    lines = {t.turn_id: t.text for t in await house.memory.transcript.lines(dm)}
    assert "cello" not in lines[line] and lines[max(lines)] == "The weather is grey today"


async def test_what_one_member_says_about_another_waits_in_quarantine(house: Household) -> None:
    await say(house, house.bob, "Alice is pregnant with twins")
    await tick(house, ScriptedModel())
    ctx = AccessContext.for_member(house.bob.person_id, Activity.MEMBER_INSPECT, "test")
    (belief,) = await house.memory.beliefs.inspect(ctx)
    assert belief.subject_id == house.alice.person_id
    assert belief.status == BeliefStatus.QUARANTINED
    assert "Alice is pregnant with twins" not in await facts(house, house.alice)


async def test_a_model_failure_leaves_the_batch_pending_and_the_next_tick_stores_it_once(
    house: Household,
) -> None:
    await say(house, house.bob, "I am saving for a sailing boat")
    model = ScriptedModel()
    model.down = True
    failed = await tick(house, model)
    assert (failed.batches, failed.failed) == (0, 1)
    assert await facts(house, house.bob) == []
    model.down = False
    done = await tick(house, model)
    assert done.batches == 1
    again = await tick(house, model)
    assert again.batches == 0
    assert await facts(house, house.bob) == ["Bob is saving for a sailing boat"]
    assert (await house.memory.stats())["beliefs"] == 1


async def test_a_batch_the_model_cannot_read_is_passed_over_after_three_tries_not_forever(
    house: Household,
) -> None:
    line = await say(house, house.bob, "I am restoring an old lighthouse lamp")
    model = ScriptedModel()
    model.garbled = True
    reports = [await tick(house, model) for _ in range(3)]
    assert [(r.failed, r.skipped) for r in reports] == [(1, 0), (1, 0), (0, 1)]
    assert await house.memory.consolidation.pending_scopes() == []
    assert len(model.consolidation_prompts()) == 3
    await tick(house, model)
    assert len(model.consolidation_prompts()) == 3  # passed over: never asked again
    # The line itself is kept; later lines of the scope are consolidated as usual.
    dm = AccessContext.for_member(house.bob.person_id, Activity.DM_CONVERSATION, "test")
    assert [t.turn_id for t in await house.memory.transcript.lines(dm)] == [line]
    model.garbled = False
    await say(house, house.bob, "I am repainting the garden shed blue")
    await tick(house, model)
    assert await facts(house, house.bob) == ["Bob is repainting the garden shed blue"]


async def test_a_batch_stored_once_is_never_stored_again(house: Household) -> None:
    await say(house, house.bob, "I am vegetarian since last spring")
    batch = await house.memory.consolidation.next_batch(private_scope(house.bob.person_id))
    assert batch is not None
    item = Assertion(proposition="Bob is vegetarian", scope=batch.scope,
                     provenance=Provenance.EXTRACTED, source="consolidation:test",
                     turn_ids=(batch.turns[0].turn_id,))
    assert await house.memory.consolidation.commit(batch, [item]) is not None
    assert await house.memory.consolidation.commit(batch, [item]) is None  # a re-run after a crash
    assert await house.memory.consolidation.next_batch(batch.scope) is None
    assert (await house.memory.stats())["beliefs"] == 1


async def test_a_batch_cannot_store_beliefs_in_another_scope(house: Household) -> None:
    await say(house, house.bob, "I am vegetarian since last spring")
    batch = await house.memory.consolidation.next_batch(private_scope(house.bob.person_id))
    assert batch is not None
    stray = Assertion(proposition="Bob is vegetarian", scope=SHARED,
                      provenance=Provenance.EXTRACTED, source="x")
    with pytest.raises(Exception, match="own scope"):
        await house.memory.consolidation.commit(batch, [stray])


async def test_a_scheduled_tick_waits_for_a_full_batch_or_a_quiet_chat(
    house: Household, clock: TestClock
) -> None:
    await say(house, house.bob, "I am planting tulips this weekend")
    model = ScriptedModel()
    busy = await run_tick(house.memory, model, now=clock.advance(timedelta(minutes=1)),
                          assistant="Wren", quiet_after=timedelta(minutes=5))
    assert (busy.batches, busy.pending_lines) == (0, 1)
    quiet = await run_tick(house.memory, model, now=clock.advance(timedelta(hours=1)),
                           assistant="Wren", quiet_after=timedelta(minutes=5))
    assert quiet.batches == 1
    for i in range(BATCH_LINES):
        await say(house, house.alice, f"I am counting sheep number {i}")
    full = await run_tick(house.memory, model, now=clock.advance(timedelta(minutes=1)),
                          assistant="Wren", quiet_after=timedelta(minutes=5))
    assert full.batches == 1
    assert len(model.consolidation_prompts()) == 2  # one call per batch, not per line


async def test_each_member_gets_a_summary_from_their_own_dm_and_the_group_one_from_its_lines(
    house: Household,
) -> None:
    await say(house, house.bob, "I am worried about the exam on Monday")
    await say(house, house.alice, "I am painting the spare room green")
    await say(house, house.owner, "Dinner is at seven tonight", group=True)
    model = ScriptedModel()
    report = await tick(house, model)
    assert report.summaries == 3
    bob = AccessContext.for_member(house.bob.person_id, Activity.DM_CONVERSATION, "test")
    alice = AccessContext.for_member(house.alice.person_id, Activity.DM_CONVERSATION, "test")
    group = AccessContext.for_group(Activity.GROUP_CONVERSATION, "test")
    bobs = await house.memory.summaries.get(bob, f"dm:{house.bob.telegram_id}")
    assert bobs is not None and "exam" in bobs.text and "painting" not in bobs.text
    assert bobs.scope == private_scope(house.bob.person_id)
    assert await house.memory.summaries.get(alice, f"dm:{house.bob.telegram_id}") is None
    assert await house.memory.summaries.get(group, f"dm:{house.bob.telegram_id}") is None
    shared = await house.memory.summaries.get(group, "group:-100")
    assert shared is not None and "seven" in shared.text and "exam" not in shared.text


async def test_compaction_leaves_out_health_lines_unless_the_member_granted_it(
    house: Household,
) -> None:
    await say(house, house.bob, "I am on antidepressants for my depression")
    await say(house, house.bob, "I am building a treehouse for the kids")
    model = ScriptedModel()
    await tick(house, model)
    ctx = AccessContext.for_member(house.bob.person_id, Activity.DM_CONVERSATION, "test")
    summary = await house.memory.summaries.get(ctx, f"dm:{house.bob.telegram_id}")
    assert summary is not None and "treehouse" in summary.text
    assert "antidepressants" not in summary.text
    compaction_prompts = [m[-1]["content"] for m in model.prompts if "running summary" in
                          m[0]["content"]]
    assert compaction_prompts and all("antidepressants" not in p for p in compaction_prompts)


async def test_the_dream_merges_duplicates_within_a_scope_but_never_across(
    house: Household,
) -> None:
    bob, alice = private_scope(house.bob.person_id), private_scope(house.alice.person_id)
    await house.memory.beliefs.assert_all([
        Assertion(proposition="The cat is called Miso", scope=bob, provenance=Provenance.TOLD,
                  source="s1"),
        Assertion(proposition="The cat is really called Miso", scope=bob,
                  provenance=Provenance.TOLD, source="s2"),
        Assertion(proposition="The cat is called Miso", scope=alice,
                  provenance=Provenance.TOLD, source="s3"),
    ])
    report = await run_dream(house.memory, load_soul(), now=house.clock())
    assert report.counts["deduped"] == 1
    bob_ctx = AccessContext.for_member(house.bob.person_id, Activity.MEMBER_INSPECT, "test")
    live = [b for b in await house.memory.beliefs.inspect(bob_ctx) if b.status != "superseded"]
    assert len(live) == 1 and live[0].evidence_count == 2
    assert await facts(house, house.alice) == ["The cat is called Miso"]
    (latest,) = await house.memory.dream.reports(limit=1)
    assert latest[0] == report.report_id and latest[2]["deduped"] == 1


async def test_the_dream_lets_the_newer_of_two_contradicting_beliefs_supersede(
    house: Household,
) -> None:
    bob = private_scope(house.bob.person_id)
    old, new = await house.memory.beliefs.assert_all([
        Assertion(proposition="Bob works at the bakery", scope=bob, provenance=Provenance.TOLD,
                  source="s1", valid_from="2025-01-01T00:00:00+00:00"),
        Assertion(proposition="Bob works at the library", scope=bob, provenance=Provenance.TOLD,
                  source="s2", valid_from="2026-06-01T00:00:00+00:00"),
    ])
    ctx = AccessContext.for_member(house.bob.person_id, Activity.MEMBER_INSPECT, "test")
    assert old.belief_id and new.belief_id
    assert await house.memory.beliefs.link_contradiction(ctx, old.belief_id, new.belief_id)
    report = await run_dream(house.memory, load_soul(), now=house.clock())
    assert report.counts["reconciled"] == 1
    statuses = {b.proposition: b.status for b in await house.memory.beliefs.inspect(ctx)}
    assert statuses == {"Bob works at the bakery": BeliefStatus.SUPERSEDED,
                        "Bob works at the library": BeliefStatus.ACTIVE}


async def test_the_dream_promotes_quarantine_once_a_second_source_agrees(
    house: Household,
) -> None:
    bob = private_scope(house.bob.person_id)
    await house.memory.beliefs.assert_all([
        Assertion(proposition="Alice is moving to Leeds", scope=bob,
                  provenance=Provenance.EXTRACTED, source="c1", weight=0.8),
        Assertion(proposition="Alice is really moving to Leeds", scope=bob,
                  provenance=Provenance.EXTRACTED, source="c2", weight=0.8),
    ])
    ctx = AccessContext.for_member(house.bob.person_id, Activity.MEMBER_INSPECT, "test")
    seen = await house.memory.beliefs.inspect(ctx)
    assert {b.status for b in seen} == {BeliefStatus.QUARANTINED}
    report = await run_dream(house.memory, load_soul(), now=house.clock())
    assert report.counts["promoted"] >= 1
    live = [b for b in await house.memory.beliefs.inspect(ctx) if b.status != "superseded"]
    assert [b.status for b in live] == [BeliefStatus.ACTIVE]


async def test_the_dream_decays_unreinforced_beliefs_but_not_health_ones_without_a_grant(
    house: Household,
) -> None:
    bob = private_scope(house.bob.person_id)
    await house.memory.beliefs.assert_all([
        Assertion(proposition="Bob likes jazz", scope=bob, provenance=Provenance.TOLD,
                  source="s1"),
        Assertion(proposition="Bob has asthma", scope=bob, provenance=Provenance.TOLD,
                  source="s2"),
    ])
    ctx = AccessContext.for_member(house.bob.person_id, Activity.MEMBER_INSPECT, "test")
    before = {b.proposition: (b.confidence, b.sensitivity) for b in
              await house.memory.beliefs.inspect(ctx)}
    assert before["Bob has asthma"][1] == Sensitivity.HEALTH
    report = await run_dream(house.memory, load_soul(), now=house.clock() + timedelta(days=60))
    assert report.counts["decayed"] == 1
    after = {b.proposition: b.confidence for b in await house.memory.beliefs.inspect(ctx)}
    assert after["Bob likes jazz"] < before["Bob likes jazz"][0]
    assert after["Bob has asthma"] == before["Bob has asthma"][0]


async def test_the_dream_proposes_persona_edits_only_from_shared_preferences(
    house: Household,
) -> None:
    await house.memory.beliefs.assert_all([
        Assertion(proposition="The household wants you to reply in short messages",
                  scope=SHARED, provenance=Provenance.TOLD, source="s1", kind=Kind.PREFERENCE),
        Assertion(proposition="Bob wants you to reply only in French",
                  scope=private_scope(house.bob.person_id), provenance=Provenance.TOLD,
                  source="s2", kind=Kind.PREFERENCE),
    ])
    report = await run_dream(house.memory, load_soul(), now=house.clock())
    assert report.counts["persona_proposed"] == 1
    (proposal,) = await house.memory.state.persona_proposals("pending")
    assert "short messages" in proposal.text and "French" not in proposal.text
    again = await run_dream(house.memory, load_soul(), now=house.clock())
    assert again.counts["persona_proposed"] == 0


async def test_a_forgotten_fact_is_not_re_extracted_from_older_lines(
    house: Household, clock: TestClock
) -> None:
    first = await say(house, house.bob, "I am secretly applying for a job in Oslo")
    model = ScriptedModel()
    await tick(house, model)
    ctx = AccessContext.for_member(house.bob.person_id, Activity.MEMBER_INSPECT, "test")
    assert await house.memory.forgetting.forget(ctx, "job in Oslo") == 1
    # Background work re-reading material from before the forget is refused.
    stale = Assertion(proposition="Bob is secretly applying for a job in Oslo",
                      scope=private_scope(house.bob.person_id), provenance=Provenance.EXTRACTED,
                      source="consolidation:replay", turn_ids=(first,))
    (outcome,) = await house.memory.beliefs.assert_all([stale])
    assert outcome.status == "refused"
    assert "Oslo" not in " ".join(await facts(house, house.bob))
    # Saying it again afterwards, on purpose, is new material: the next tick keeps it.
    clock.advance(timedelta(minutes=1))
    await say(house, house.bob, "I am secretly applying for a job in Oslo")
    await tick(house, model)
    assert await facts(house, house.bob) == ["Bob is secretly applying for a job in Oslo"]


async def test_a_small_models_empty_or_one_word_statements_are_dropped_not_fatal(
    house: Household,
) -> None:
    await say(house, house.bob, "I am building a kayak in the garage")

    class Sloppy(ScriptedModel):
        async def extract(self, messages: list[dict[str, str]], schema: type[T]) -> T:
            self.prompts.append(messages)
            return schema.model_validate({"items": [
                {"statement": "...", "kind": "fact", "about": None, "lines": [1]},
                {"statement": "Bob", "kind": "person", "about": "Bob", "lines": [9]},
                {"statement": "Bob is building a kayak", "kind": "fact", "about": "Bob is",
                 "lines": [1, 7]},
            ]})

    report = await tick(house, Sloppy())
    assert (report.batches, report.beliefs) == (1, 1)
    assert await facts(house, house.bob) == ["Bob is building a kayak"]


async def test_what_only_she_said_is_not_evidence_and_an_uncited_item_waits_in_quarantine(
    house: Household,
) -> None:
    await say(house, house.bob, "I am building a kayak in the garage")
    await her(house, house.bob, "Your cousin Mia lives in Porto, doesn't she!")

    class Inventive(ScriptedModel):
        async def extract(self, messages: list[dict[str, str]], schema: type[T]) -> T:
            self.prompts.append(messages)
            return schema.model_validate({"items": [
                {"statement": "Bob's cousin Mia lives in Porto", "kind": "person",
                 "about": "Bob", "lines": [2]},
                {"statement": "Bob owns a red canoe", "kind": "fact", "about": "Bob",
                 "lines": []},
                {"statement": "Bob is building a kayak", "kind": "fact", "about": "Bob",
                 "lines": [1]},
            ]})

    await tick(house, Inventive())
    ctx = AccessContext.for_member(house.bob.person_id, Activity.MEMBER_INSPECT, "test")
    statuses = {b.proposition: b.status for b in await house.memory.beliefs.inspect(ctx)}
    assert statuses == {"Bob is building a kayak": BeliefStatus.ACTIVE,
                        "Bob owns a red canoe": BeliefStatus.QUARANTINED}


class AnswersAs(ScriptedModel):
    """Answers consolidation with `answer` (or by rule while it is None), read as the gateway
    reads a model's JSON: an answer that does not fit the schema is an UnusableAnswer
    (tests/soul/test_model.py shows the real gateway doing so for `Extraction`)."""

    def __init__(self, answer: Any) -> None:
        super().__init__()
        self.answer = answer

    async def extract(self, messages: list[dict[str, str]], schema: type[T]) -> T:
        if self.answer is None:
            return await super().extract(messages, schema)
        self.prompts.append(messages)
        try:
            return schema.model_validate(self.answer)
        except ValueError:  # pydantic's ValidationError
            raise UnusableAnswer("the answer did not fit (test)") from None


WRONG_SHAPES = [
    {},
    {"facts": [{"statement": "Bob is restoring a lamp", "kind": "fact", "about": "Bob",
                "lines": [1]}]},
    {"items": [{"statement": "Bob is restoring a lamp", "kind": "fact"}]},
]
WRONG_SHAPE_IDS = ["empty-object", "other-key", "item-missing-fields"]


async def pending(house: Household) -> list[tuple[str, int]]:
    return [(scope, n) for scope, n, _newest in await house.memory.consolidation.pending_scopes()]


@pytest.mark.parametrize("answer", WRONG_SHAPES, ids=WRONG_SHAPE_IDS)
async def test_an_extraction_of_the_wrong_shape_leaves_the_lines_pending_for_the_next_tick(
    house: Household, answer: dict[str, Any]
) -> None:
    await say(house, house.bob, "I am restoring an old lighthouse lamp")
    bobs = private_scope(house.bob.person_id)
    model = AnswersAs(answer)
    first = await tick(house, model)
    assert (first.batches, first.failed, first.skipped) == (0, 1, 0)
    assert await pending(house) == [(bobs, 1)]  # not taken as "nothing to remember"
    assert await facts(house, house.bob) == []
    model.answer = None  # the model answers properly at the next tick
    second = await tick(house, model)
    assert (second.batches, second.failed) == (1, 0)
    assert all("lighthouse" in p for p in model.consolidation_prompts())
    assert await facts(house, house.bob) == ["Bob is restoring an old lighthouse lamp"]
    assert await pending(house) == []


@pytest.mark.parametrize("answer", WRONG_SHAPES, ids=WRONG_SHAPE_IDS)
async def test_an_extraction_that_keeps_the_wrong_shape_is_passed_over_with_its_lines_kept(
    house: Household, answer: dict[str, Any]
) -> None:
    line = await say(house, house.bob, "I am restoring an old lighthouse lamp")
    model = AnswersAs(answer)
    reports = [await tick(house, model) for _ in range(3)]
    assert [(r.failed, r.skipped) for r in reports] == [(1, 0), (1, 0), (0, 1)]
    assert await pending(house) == []
    await tick(house, model)
    assert len(model.consolidation_prompts()) == 3  # passed over: never asked again
    assert await facts(house, house.bob) == []
    dm = AccessContext.for_member(house.bob.person_id, Activity.DM_CONVERSATION, "test")
    assert [t.turn_id for t in await house.memory.transcript.lines(dm)] == [line]


async def test_an_empty_list_of_items_means_nothing_to_remember_and_the_scope_moves_on(
    house: Household,
) -> None:
    await say(house, house.bob, "The weather is grey again today")
    model = AnswersAs({"items": []})
    report = await tick(house, model)
    assert (report.batches, report.beliefs, report.failed, report.skipped) == (1, 0, 0, 0)
    assert await pending(house) == []
    await tick(house, model)
    assert len(model.consolidation_prompts()) == 1  # that batch is done
    assert await facts(house, house.bob) == []


# With the bundled tiny model, consolidation answers nothing usable: an empty list, an echo of the
# prompt's examples, or JSON that does not fit. Plain first-person statements are still learnt.

EIGHT_TURN_CHAT = [
    "Hi! I just got back from work.",
    "Long day. I work as a nurse at the Royal Infirmary.",
    "My sister is called Ruth and she lives nearby.",
    "I have a dog called Biscuit.",
    "A beagle. Also I'm allergic to peanuts, so no satay for me.",
    "My birthday is on 14 March.",
    "I live in Leeds, by the way.",
    "Anyway, what a grey day it is.",
]


async def test_an_eight_turn_chat_the_model_reads_nothing_in_still_leaves_its_plain_facts(
    house: Household,
) -> None:
    for text in EIGHT_TURN_CHAT:
        await say(house, house.bob, text)
        await her(house, house.bob, "I see! I live in the cloud myself, ha.")
    report = await tick(house, AnswersAs({"items": []}))
    assert (report.batches, report.beliefs, report.plain) == (1, 6, 1)
    assert sorted(await facts(house, house.bob)) == [
        "Bob has a dog called Biscuit",
        "Bob is allergic to peanuts",
        "Bob lives in Leeds",
        "Bob works as a nurse at the Royal Infirmary",
        "Bob's birthday is on 14 March",
        "Bob's sister is called Ruth",
    ]


async def test_plain_facts_learnt_without_the_model_stay_in_the_members_dm_scope(
    house: Household,
) -> None:
    line = await say(house, house.bob, "I'm allergic to peanuts")
    await say(house, house.bob, "Is my flat in Leeds?")
    await say(house, house.bob, "If I moved to York I would be happier")
    await tick(house, AnswersAs({"items": []}))
    ctx = AccessContext.for_member(house.bob.person_id, Activity.MEMBER_INSPECT, "test")
    (belief,) = await house.memory.beliefs.inspect(ctx)
    assert belief.proposition == "Bob is allergic to peanuts"
    assert belief.scope == private_scope(house.bob.person_id)
    assert belief.subject_id == house.bob.person_id
    assert belief.status == BeliefStatus.ACTIVE
    explanation = await house.memory.beliefs.explain(ctx, belief.belief_id)
    assert explanation is not None
    assert [e.provenance for e in explanation.evidence] == [Provenance.EXTRACTED]
    assert await facts(house, house.alice) == [] and await facts(house, house.owner) == []
    group = AccessContext.for_group(Activity.GROUP_CONVERSATION, "test")
    assert await house.memory.recall.search(group, "allergic peanuts") == []
    # Its line is linked as its source: forgetting the belief redacts exactly that line.
    assert await house.memory.forgetting.forget(ctx, "peanuts") == 1
    dm = AccessContext.for_member(house.bob.person_id, Activity.DM_CONVERSATION, "test")
    lines = {t.turn_id: t.text for t in await house.memory.transcript.lines(dm)}
    assert "peanuts" not in lines[line] and "Leeds" in lines[line + 1]


async def test_a_plain_fact_said_in_the_group_is_shared_and_about_whoever_said_it(
    house: Household,
) -> None:
    await say(house, house.alice, "I work as a vet in Harrogate", group=True)
    await tick(house, AnswersAs({"items": []}))
    group = AccessContext.for_group(Activity.GROUP_CONVERSATION, "test")
    (belief,) = await house.memory.beliefs.in_scope(group, SHARED)
    assert belief.proposition == "Alice works as a vet in Harrogate"
    assert belief.subject_id == house.alice.person_id
    assert belief.status == BeliefStatus.ACTIVE


async def test_a_batch_the_model_cannot_read_is_learnt_from_its_plain_statements_when_passed_over(
    house: Household,
) -> None:
    await say(house, house.bob, "I'm allergic to penicillin")
    model = ScriptedModel()
    model.garbled = True
    reports = [await tick(house, model) for _ in range(3)]
    assert [(r.failed, r.skipped, r.plain) for r in reports] == [(1, 0, 0), (1, 0, 0), (0, 1, 1)]
    assert await facts(house, house.bob) == ["Bob is allergic to penicillin"]
    assert await pending(house) == []


async def test_the_models_usable_answer_is_kept_instead_of_the_plain_statements(
    house: Household,
) -> None:
    await say(house, house.bob, "My sister is called Ruth")
    model = AnswersAs({"items": [
        {"statement": "Bob has a sister named Ruth", "kind": "person", "about": "Bob",
         "lines": [1]},
    ]})
    report = await tick(house, model)
    assert report.plain == 0
    assert await facts(house, house.bob) == ["Bob has a sister named Ruth"]


async def test_a_model_echoing_the_prompts_examples_is_not_remembered_but_the_member_is(
    house: Household,
) -> None:
    await say(house, house.bob, "I live in Leeds")
    model = AnswersAs({"items": [
        {"statement": "Kofi is allergic to shellfish", "kind": "fact", "about": "Kofi",
         "lines": [1]},
    ]})
    await tick(house, model)
    assert await facts(house, house.bob) == ["Bob lives in Leeds"]
    (prompt,) = [m for m in model.prompts if is_consolidation(m)]  # type: ignore[arg-type]
    assert "Kofi" in json.dumps(prompt[:-1]) and "Kofi" not in prompt[-1]["content"]


class ClassingModel(ScriptedModel):
    """A capable model's stand-in that also classes what it extracts: health for lithium."""

    async def extract(self, messages: list[dict[str, str]], schema: type[T]) -> T:
        answer = extraction_for(messages)  # type: ignore[arg-type]
        for item in answer["items"]:
            item["private"] = "health" if "lithium" in item["statement"] else None
        self.prompts.append(messages)
        return schema.model_validate(answer)


@pytest.mark.parametrize("capable", [True, False])
async def test_the_class_a_capable_model_gives_at_consolidation_raises_the_belief(
    house: Household, capable: bool,
) -> None:
    await say(house, house.bob, "since my last episode I take lithium every morning")
    await say(house, house.bob, "I repainted the shed on Saturday")
    await tick(house, ClassingModel(), model_classes=capable)

    ctx = AccessContext.for_member(house.bob.person_id, Activity.MEMBER_INSPECT, "test")
    got = {b.proposition: (b.sensitivity, b.sensitivity_by)
           for b in await house.memory.beliefs.inspect(ctx)}
    lithium = next(p for p in got if "lithium" in p)
    shed = next(p for p in got if "shed" in p)
    assert got[shed] == (Sensitivity.ORDINARY, None)
    # The embedded small model's class is not taken: the words alone say ordinary here.
    assert got[lithium] == ((Sensitivity.HEALTH, "the model") if capable
                            else (Sensitivity.ORDINARY, None))
    proactive = AccessContext.for_member(house.bob.person_id, Activity.PROACTIVE, "test")
    used = [b.proposition for b in await house.memory.beliefs.inspect(proactive)]
    assert (lithium in used) is not capable and shed in used
