"""A member is shown rows by opaque names: no number they see counts what others said."""

from __future__ import annotations

import json
import re
from typing import Any

from memory import Activity, Assertion, Provenance, Role, Sensitivity, private_scope
from memory.consolidation import Batch
from tests.helpers import Household

INTERNAL_KEYS = {"belief_id", "turn_id", "goal_id", "grant_id", "seq", "returned_ids",
                 "source_turn_id", "through_turn_id"}


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


async def _chatter(home: Household, lines: int) -> None:
    """Alice talks to her in private: lines, a belief, a goal, a grant and reads of her own."""
    m, alice = home.memory, home.alice
    for i in range(lines):
        await m.transcript.append(chat_id="alice-dm", speaker_id=alice.person_id, role=Role.USER,
                                  scope=private_scope(alice.person_id), text=f"thought {i}")
    await m.beliefs.remember(alice.person_id, "Alice is learning the cello")
    await m.goals.add(alice.person_id, "book a cello lesson",
                      scope=private_scope(alice.person_id), provenance="told")
    await m.grants.give(alice.person_id, Activity.PROACTIVE, Sensitivity.HEALTH)
    await m.recall.search(home.dm(alice), "cello")


async def _bob_speaks(home: Household, text: str) -> None:
    m, bob = home.memory, home.bob
    scope = private_scope(bob.person_id)
    turn = await m.transcript.append(chat_id="bob-dm", speaker_id=bob.person_id, role=Role.USER,
                                     scope=scope, text=text)
    batch = await m.consolidation.next_batch(scope)
    assert isinstance(batch, Batch)
    item = Assertion(proposition=text, scope=scope, provenance=Provenance.EXTRACTED,
                     source=f"consolidation:{scope}:{batch.after_turn_id + 1}-{turn}",
                     turn_ids=(turn,))
    await m.consolidation.commit(batch, [item])
    await m.goals.add(bob.person_id, f"remember: {text}", scope=scope, provenance="told")


async def test_bobs_export_names_nothing_by_a_number_that_alices_private_talk_moved(
    home: Household,
) -> None:
    m, bob = home.memory, home.bob
    await _bob_speaks(home, "I keep bees on the roof")
    await _chatter(home, 30)
    await _bob_speaks(home, "I repair old radios")
    await m.grants.give(bob.person_id, Activity.PROACTIVE, Sensitivity.HEALTH)
    inspect = home.dm(bob, Activity.MEMBER_INSPECT)
    await m.recall.search(home.dm(bob), "bees")

    # The positive control: memory's own keys for Bob's rows do have Alice's gap in them.
    mine = await m.beliefs.inspect(inspect)
    ids = sorted(b.belief_id for b in mine)
    assert len(ids) == 2 and ids[1] - ids[0] > 1

    document = await m.export.document(inspect)
    assert _keys(document) & INTERNAL_KEYS == set()
    text = json.dumps(document)
    assert not re.search(r"consolidation:[^\"]*:\d+-\d+", text)  # no line range in a source
    refs = [b["ref"] for b in document["beliefs"]]
    assert len(set(refs)) == 2 and all(re.fullmatch(r"b[0-9a-f]{8}", r) for r in refs)
    assert all(t["ref"].startswith("l") for t in document["transcript"])
    assert all(g["ref"].startswith("g") for g in document["goals"])
    assert [g["ref"][:1] for g in document["grants_given"]] == ["g"]
    assert {b.ref for b in mine} == set(refs)  # the same name wherever she shows it


async def test_a_rows_name_is_the_same_in_every_listing_and_unlike_its_neighbours(
    home: Household,
) -> None:
    m, bob = home.memory, home.bob
    first = await m.beliefs.remember(bob.person_id, "Bob's bike is green")
    second = await m.beliefs.remember(bob.person_id, "Bob's kayak is yellow")
    assert first.ref and second.ref and first.ref != second.ref
    found = await m.recall.search(home.dm(bob), "green bike")
    assert [r.belief.ref for r in found][:1] == [first.ref]
    again = await m.beliefs.remember(bob.person_id, "Bob's bike is green")
    assert again.ref == first.ref  # reinforcing names the same belief
