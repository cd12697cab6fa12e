"""Goals, summaries and her own per-member state: content behind the gate, state beside it."""

from __future__ import annotations

import pytest

from memory import SHARED, Activity, InvalidRequest, Role, private_scope
from tests.helpers import Household, raw_bytes


async def test_a_goal_is_created_once_and_read_only_by_its_member(home: Household) -> None:
    m = home.memory
    bob = home.bob.person_id
    first = await m.goals.add(bob, "Call the dentist", scope=private_scope(bob), provenance="told")
    again = await m.goals.add(bob, "call the dentist.", scope=private_scope(bob),
                             provenance="told")
    assert first[1] is True and again == (first[0], False)
    assert [g.text for g in await m.goals.open(home.dm(home.bob))] == ["Call the dentist"]
    assert await m.goals.open(home.dm(home.alice)) == []
    assert await m.goals.open(home.group()) == []


async def test_a_finished_goal_can_be_made_again(home: Household) -> None:
    m = home.memory
    bob = home.bob.person_id
    goal_id, _ = await m.goals.add(bob, "Water the plants", scope=private_scope(bob),
                                  provenance="told")
    assert await m.goals.set_state(bob, goal_id, "done")
    assert not await m.goals.set_state(home.alice.person_id, goal_id, "open")
    _, created = await m.goals.add(bob, "Water the plants", scope=private_scope(bob),
                                  provenance="told")
    assert created


async def test_a_goal_in_another_members_scope_is_refused(home: Household) -> None:
    with pytest.raises(InvalidRequest):
        await home.memory.goals.add(home.bob.person_id, "Snoop",
                                   scope=private_scope(home.alice.person_id), provenance="told")


async def test_a_health_goal_is_kept_from_proactive_work_without_a_grant(
    home: Household,
) -> None:
    m = home.memory
    bob = home.bob.person_id
    await m.goals.add(bob, "Refill the insulin prescription", scope=private_scope(bob),
                     provenance="told")
    assert await m.goals.open(home.dm(home.bob, Activity.PROACTIVE)) == []
    assert len(await m.goals.open(home.dm(home.bob))) == 1


async def test_a_private_summary_is_shown_only_in_its_members_view(home: Household) -> None:
    m = home.memory
    bob = home.bob.person_id
    await m.summaries.write(private_scope(bob), "dm:1002", "Bob is nervous about his exam", 3)
    await m.summaries.write(SHARED, "group:-1", "The family is planning a picnic", 5)
    mine = await m.summaries.get(home.dm(home.bob), "dm:1002")
    assert mine is not None and mine.scope == private_scope(bob)
    assert await m.summaries.get(home.dm(home.alice), "dm:1002") is None
    assert await m.summaries.get(home.group(), "dm:1002") is None
    group = await m.summaries.get(home.group(), "group:-1")
    assert group is not None and group.text == "The family is planning a picnic"


async def test_forgetting_scrubs_summaries_and_goals_that_repeat_the_words(
    home: Household,
) -> None:
    m = home.memory
    bob = home.bob.person_id
    scope = private_scope(bob)
    await m.beliefs.remember(bob, "Bob is applying for a job at the observatory")
    await m.summaries.write(scope, "dm:1002",
                          "Lately: bob is applying for a job at the observatory.", 2)
    await m.goals.add(bob, "Finish: Bob is applying for a job at the observatory",
                     scope=scope, provenance="told")
    inspect = home.dm(home.bob, Activity.MEMBER_INSPECT)
    assert await m.forgetting.forget(inspect, "job at the observatory") == 1
    summary = await m.summaries.get(home.dm(home.bob), "dm:1002")
    assert summary is not None and "observatory" not in summary.text
    assert await m.goals.open(home.dm(home.bob)) == []
    await m.checkpoint()
    assert b"observatory" not in raw_bytes(m.path)


async def test_persona_edits_wait_for_the_owner_and_only_approved_ones_apply(
    home: Household,
) -> None:
    state = home.memory.state
    keep = await state.propose_persona("Use fewer exclamation marks.", "members find them loud",
                                       "dream")
    drop = await state.propose_persona("Speak only in rhyme.", "fun", "dream")
    assert await state.approved_persona_edits() == []
    assert await state.decide_persona(keep, approve=True, by=home.owner.person_id)
    assert await state.decide_persona(drop, approve=False, by=home.owner.person_id)
    assert not await state.decide_persona(drop, approve=True, by=home.owner.person_id)
    assert await state.approved_persona_edits() == ["Use fewer exclamation marks."]
    with pytest.raises(InvalidRequest):
        await state.propose_persona("Be terse.", "  ", "dream")


async def test_affect_bootstrap_and_the_turn_log_round_trip(home: Household) -> None:
    state = home.memory.state
    key = f"person:{home.bob.person_id}"
    assert await state.affect(key) is None
    await state.save_affect(key, 0.3, 0.4, {"care": 0.8}, "2026-11-30T10:00:00+00:00")
    row = await state.affect(key)
    assert row is not None and row.valence == 0.3 and row.drives == {"care": 0.8}
    assert not await state.is_introduced(home.bob.person_id)
    await state.retire_bootstrap(home.bob.person_id)
    assert await state.is_introduced(home.bob.person_id)
    turn = await home.memory.transcript.append(chat_id="dm:1002", speaker_id=home.bob.person_id,
                                         role=Role.USER,
                                         scope=private_scope(home.bob.person_id), text="hi")
    await state.log_turn(turn, "abc123", {"constitution": 700}, [4, 5])
    assert await state.turn_log(turn) == ("abc123", {"constitution": 700}, [4, 5])


async def test_an_approved_persona_edit_can_be_withdrawn_and_stops_shaping_her_at_once(
    home: Household,
) -> None:
    state = home.memory.state
    edit = await state.propose_persona("Call everyone 'darling'.", "the group laughed", "dream")
    assert await state.decide_persona(edit, approve=True, by=home.owner.person_id)
    assert await state.approved_persona_edits() == ["Call everyone 'darling'."]
    assert await state.decide_persona(edit, approve=False, by=home.owner.person_id)
    assert await state.approved_persona_edits() == []
    assert not await state.decide_persona(edit, approve=True, by=home.owner.person_id)


async def test_forgetting_a_shared_preference_withdraws_a_persona_edit_that_quotes_it(
    home: Household,
) -> None:
    m = home.memory
    await m.beliefs.remember(home.owner.person_id, "The household likes jokes about penguins",
                     shared=True)
    quoting = await m.state.propose_persona("Tell a joke about penguins now and then.",
                                            "the household likes jokes about penguins", "dream")
    other = await m.state.propose_persona("Use fewer exclamation marks.", "they are loud",
                                          "dream")
    for proposal in (quoting, other):
        assert await m.state.decide_persona(proposal, approve=True, by=home.owner.person_id)
    owner = home.dm(home.owner, Activity.MEMBER_INSPECT)
    assert await m.forgetting.forget(owner, "jokes about penguins", shared=True) == 1
    assert await m.state.approved_persona_edits() == ["Use fewer exclamation marks."]
    await m.checkpoint()
    assert b"penguins" not in raw_bytes(m.path)
