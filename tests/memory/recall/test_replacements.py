"""A member's newer word on a thing is marked when it is stored, and the judge reads the mark:
the newer is told first, nothing crosses a scope or a voice, and a forget takes the mark too."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memory import AccessContext, Activity, E5Embedder, Memory, Role, dm_chat, private_scope
from tests.helpers import TestClock

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def marks(db: Path) -> list[tuple[str, int, int]]:
    with sqlite3.connect(db) as conn:
        return [(str(t), int(o), int(n)) for t, o, n in conn.execute(
            "SELECT tier, old_id, new_id FROM replacements ORDER BY old_id, new_id")]


async def test_a_members_newer_word_replaces_the_older_and_is_told_first(
    tmp_path: Path, e5: E5Embedder,
) -> None:
    clock = TestClock(T0)
    db = tmp_path / "h.db"
    memory = await Memory.open(db, embedder=e5, create=True, clock=clock)
    try:
        bob = await memory.people.add("Bob", telegram_id=2, owner=True)
        alice = await memory.people.add("Alice", telegram_id=3)

        async def say(person: object, text: str) -> int:
            clock.advance(timedelta(days=1))
            who = person.person_id  # type: ignore[attr-defined]
            return await memory.transcript.append(
                chat_id=dm_chat(person), speaker_id=who,  # type: ignore[arg-type]
                role=Role.USER, scope=private_scope(who), text=text)

        older = await say(bob, "The plumber is coming on Monday to fix the kitchen sink.")
        await say(bob, "I made a lasagne for dinner tonight.")
        newer = await say(bob, "The plumber is coming on Wednesday to fix the kitchen sink now.")
        alices = await say(alice, "The plumber is coming on Friday to fix the kitchen sink.")
        assert marks(db) == [("turns", older, newer)]  # not Alice's: another scope, another voice

        clock.advance(timedelta(days=1))
        ctx = AccessContext.for_member(bob.person_id, Activity.DM_CONVERSATION, "a test")
        explained = {e.item.turn.turn_id: e.signals  # type: ignore[union-attr]
                     for e in await memory.recall.explain(ctx, "When is the plumber coming?")}
        assert explained[older]["replaced"] == 1.0 and explained[older]["replaces"] == 0.0
        assert explained[newer]["replaces"] == 1.0 and explained[newer]["replaced"] == 0.0
        assert alices not in explained
        found = [m.turn.turn_id for m in await memory.recall.recollect(  # type: ignore[union-attr]
            ctx, "When is the plumber coming?") if m.turn.turn_id in (older, newer)]  # type: ignore[union-attr]
        assert found.index(newer) < found.index(older) if len(found) == 2 else found == [newer]

        await memory.forgetting.forget(
            AccessContext.for_member(bob.person_id, Activity.MEMBER_INSPECT, "a test"),
            "Wednesday")
        assert marks(db) == []  # the mark goes with the forgotten line
    finally:
        await memory.close()
