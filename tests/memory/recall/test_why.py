"""A member's /why reads back what her last reply drew on, through the wall: never a row the
reader may not see, even were the turn log to name one, and always receipted."""

from __future__ import annotations

import sqlite3

from memory import SHARED, AccessContext, Activity, Quoted, Recalled, Role, dm_chat, group_chat
from tests.helpers import Household


async def test_why_reads_the_last_replys_memories_through_the_wall(home: Household) -> None:
    m = home.memory
    private = await m.beliefs.remember(home.bob.person_id, "Bob is allergic to cats")
    shared = await m.beliefs.remember(home.owner.person_id, "The dog is called Biscuit",
                                      shared=True)
    line = await m.transcript.append(chat_id=group_chat(), speaker_id=home.alice.person_id,
                                     role=Role.USER, scope=SHARED, text="Biscuit needs a walk")
    assert private.belief_id is not None and shared.belief_id is not None
    # A group reply whose log names Bob's private belief too: it must never come back.
    await m.transcript.record_reply(
        chat_id=group_chat(), scope=SHARED, text="Biscuit it is.", template_version="t",
        tokens={}, belief_ids=(shared.belief_id,),
        memories=(("beliefs", private.belief_id, "answers", "answers (90%): a test"),
                  ("beliefs", shared.belief_id, "answers", "answers (80%): a test"),
                  ("turns", line, "related", "related (30%): a test")))
    in_group = AccessContext.for_group(Activity.GROUP_CONVERSATION, "why",
                                       actor=home.alice.person_id)
    found = await m.recall.why(in_group, group_chat())
    assert [type(f).__name__ for f in found] == ["Recalled", "Quoted"]
    assert isinstance(found[0], Recalled) and found[0].belief.belief_id == shared.belief_id
    assert found[0].why == "answers (80%): a test"
    assert isinstance(found[1], Quoted) and found[1].turn.turn_id == line
    # Alice's own chat has had no reply: nothing, and nothing of the group's.
    alice = AccessContext.for_member(home.alice.person_id, Activity.MEMBER_INSPECT, "why")
    assert await m.recall.why(alice, dm_chat(home.alice)) == []
    with sqlite3.connect(m.path) as conn:
        receipted = conn.execute("SELECT method, returned_ids FROM receipts"
                                 " WHERE method LIKE 'why%' ORDER BY seq").fetchall()
    assert ("why", f"[{shared.belief_id}]") in receipted
    assert ("why_lines", f"[{line}]") in receipted
