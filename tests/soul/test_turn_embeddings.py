"""A turn embeds its question once: begun as soon as the line is stored (`foresee`), and
taken by recall and the shelf alike; the line's own vector is made after the reply."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from memory import AccessContext, Activity, Memory, Quoted
from soul.files import load_soul
from soul.turn import respond
from tests.helpers import TestClock, TwoWayEmbedder


class Instant:
    async def reply(self, messages: list[dict[str, str]], **_: object) -> str:
        return "Noted."


async def test_each_turn_embeds_its_question_once_and_files_its_line_after_the_reply(
    tmp_path: Path,
) -> None:
    clock = TestClock(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))
    embedder = TwoWayEmbedder()
    memory = await Memory.open(tmp_path / "h.db", embedder=embedder, create=True, clock=clock)
    try:
        bob = await memory.people.add("Bob")
        await memory.shelf.put(bob.person_id, "bins.md", b"# Bins\nThe bins go out on Tuesday.")
        soul = load_soul(None)
        for text in ("The recycling goes out on Tuesday nights",
                     "When do the bins go out this week?"):
            embedder.questions.clear()
            embedder.rows.clear()
            await respond(memory, soul, Instant(), speaker=bob, chat_id="dm:b", group=False,
                          text=text, now=clock())
            # Her recall and the shelf asked the same words: one embedding between them.
            assert embedder.questions == [text]
            assert embedder.rows == []  # the line waits to be filed, after the reply
            await memory.vectors.file_waiting()
            assert embedder.rows == [text]
    finally:
        await memory.close()


async def test_a_foreseen_question_is_embedded_before_recall_asks_and_not_again(
    tmp_path: Path,
) -> None:
    embedder = TwoWayEmbedder()
    memory = await Memory.open(tmp_path / "h.db", embedder=embedder, create=True)
    try:
        bob = await memory.people.add("Bob")
        alice = await memory.people.add("Alice")
        ctx = AccessContext.for_member(bob.person_id, Activity.DM_CONVERSATION, "a test")
        await memory.recall.recollect(ctx, "anything about the garden")  # names now known
        embedder.questions.clear()
        memory.recall.foresee(ctx, "Did Alice water the tomatoes")
        await memory.vectors.question("Did water the tomatoes", asker=ctx.actor)  # the same one
        assert embedder.questions == ["Did water the tomatoes"]  # asked without the name
        await memory.recall.recollect(ctx, "Did Alice water the tomatoes")
        assert embedder.questions == ["Did water the tomatoes"]
        # The same words from Alice are embedded for her.
        alices = AccessContext.for_member(alice.person_id, Activity.DM_CONVERSATION, "a test")
        await memory.recall.recollect(alices, "Did Alice water the tomatoes")
        assert embedder.questions == ["Did water the tomatoes"] * 2
    finally:
        await memory.close()


class OneWay(TwoWayEmbedder):
    """Counts as TwoWayEmbedder does, but reads a question and a row alike (as MiniLM)."""

    symmetric = True


async def test_with_a_symmetric_embedder_the_line_is_filed_with_its_questions_vector(
    tmp_path: Path,
) -> None:
    clock = TestClock(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))
    embedder = OneWay()
    memory = await Memory.open(tmp_path / "h.db", embedder=embedder, create=True, clock=clock)
    try:
        bob = await memory.people.add("Bob")
        text = "The recycling goes out on Tuesday nights"
        await respond(memory, load_soul(None), Instant(), speaker=bob, chat_id="dm:b",
                      group=False, text=text, now=clock())
        await memory.vectors.file_waiting()
        assert embedder.questions == [text]
        assert embedder.rows == []  # filed with the question's vector, not embedded again
        found = await memory.recall.recollect(
            AccessContext.for_member(bob.person_id, Activity.DM_CONVERSATION, "a test"),
            "recycling nights", unrelated=True)
        assert any(isinstance(r, Quoted) and r.turn.text == text for r in found)
    finally:
        await memory.close()
