"""Episodic recall: members' own lines are found beside beliefs, behind the same wall, lens,
receipts and forgetting, and nothing behind the wall shapes what a reader gets: its ranking,
its scores or the judge's verdicts."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from memory import (
    SHARED,
    AccessContext,
    Grant,
    Memory,
    Quoted,
    Recalled,
    Role,
    Sensitivity,
    dm_chat,
    group_chat,
    private_scope,
)
from memory.embedder import Vectors
from memory.models import Activity, Person
from tests.helpers import HashEmbedder
from tests.memory.test_recall import T0, Home, open_home


@pytest.fixture(params=["semantic", "keywords"])
async def home(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Home]:
    embedder = HashEmbedder() if request.param == "semantic" else None
    built = await open_home(tmp_path / "hearth.db", embedder=embedder)
    try:
        yield built
    finally:
        await built.memory.close()


async def say(home: Home, person: Person, text: str, *, group: bool = False) -> int:
    return await say_as(home.memory, person, text, group=group)


async def ranked(memory: Memory, ctx: AccessContext, query: str) -> list[Recalled | Quoted]:
    """Every candidate recall judged, in its ranking's order, whatever its verdict: what these
    tests look at is what the wall, the lens and forgetting let recall find."""
    return [e.item for e in await memory.recall.explain(ctx, query)]


def lines(found: list[Recalled | Quoted]) -> list[str]:
    return [f.turn.text for f in found if isinstance(f, Quoted)]


def shape(found: list[Recalled | Quoted]) -> list[tuple[str, float, float, float, float]]:
    return [(f.turn.text if isinstance(f, Quoted) else f.belief.proposition, f.score,
             f.semantic, f.keyword, f.chance) for f in found]


async def test_a_members_words_are_recalled_the_moment_they_are_said(home: Home) -> None:
    await say(home, home.bob, "The boiler engineer Gary comes on Thursday at noon")
    found = await ranked(home.memory, home.dm(home.bob), "when is the boiler engineer")
    assert lines(found) == ["The boiler engineer Gary comes on Thursday at noon"]
    assert isinstance(found[0], Quoted) and found[0].turn.ref  # named by an opaque ref


async def test_a_line_that_tells_then_asks_is_recalled_and_one_that_only_asks_is_not(
    home: Home,
) -> None:
    tells = "Sunflowers mean warmth and happiness to me. What do flowers mean to you?"
    await say(home, home.bob, tells)
    await say(home, home.bob, "Do sunflowers mean anything to you? What about daisies?")
    found = await ranked(home.memory, home.dm(home.bob), "what do sunflowers mean")
    assert lines(found) == [tells]


async def test_another_members_private_line_is_never_recalled(home: Home) -> None:
    await say(home, home.alice, "I left my umbrella under the blue mat at the gym")
    query = "where is the umbrella"
    assert lines(await ranked(home.memory, home.dm(home.alice), query))  # control
    assert lines(await ranked(home.memory, home.dm(home.bob), query)) == []
    assert lines(await ranked(home.memory, home.group(), query)) == []


async def test_a_dm_line_is_not_recalled_in_the_group_even_for_its_speaker(home: Home) -> None:
    await say(home, home.bob, "I booked the tapas place for our anniversary")
    await say(home, home.bob, "The tapas place in the group chat is closed on Mondays", group=True)
    found = lines(await ranked(home.memory, home.group(), "the tapas place"))
    assert found == ["The tapas place in the group chat is closed on Mondays"]


async def test_a_health_line_said_in_the_group_needs_a_grant_for_the_groups_conversation(
    home: Home,
) -> None:
    await say(home, home.owner, "Grandad's heart medication is now twice a day", group=True)
    query = "grandad's heart medication"
    ctx = home.group()
    assert lines(await ranked(home.memory, ctx, query)) == []
    grant: Grant = await home.memory.grants.give(
        home.owner.person_id, Activity.GROUP_CONVERSATION, Sensitivity.HEALTH, shared=True)
    assert grant.grant_id
    assert lines(await ranked(home.memory, ctx, query)) == [
        "Grandad's heart medication is now twice a day"]


async def test_recalled_lines_are_receipted_under_their_own_method(home: Home) -> None:
    turn_id = await say(home, home.bob, "The spare bike lock key hangs by the back door")
    await home.memory.recall.recollect(home.dm(home.bob), "bike lock key", unrelated=True)
    conn = sqlite3.connect(home.memory.path)
    try:
        rows = conn.execute("SELECT method, returned_ids, scopes FROM receipts"
                            " WHERE method LIKE 'recall%' ORDER BY seq").fetchall()
    finally:
        conn.close()
    assert ("recall_lines", f"[{turn_id}]",
            f'["{private_scope(home.bob.person_id)}"]') in rows


async def test_a_forgotten_line_is_neither_recalled_nor_kept_as_a_vector(home: Home) -> None:
    await say(home, home.bob, "I am seeing a counsellor about my anxiety every Friday")
    await home.memory.beliefs.remember(home.bob.person_id,
                                       "I am seeing a counsellor about my anxiety every Friday")
    query = "counsellor about my anxiety"
    before = await ranked(home.memory, home.dm(home.bob), query)
    assert before  # control: the belief (or its line) is recalled
    assert await home.memory.forgetting.forget(home.dm(home.bob, Activity.MEMBER_INSPECT),
                                               "counsellor") == 1
    assert await ranked(home.memory, home.dm(home.bob), query) == []
    conn = sqlite3.connect(home.memory.path)
    try:
        assert conn.execute("SELECT count(*) FROM turn_vectors").fetchone() == (0,)
    finally:
        conn.close()


async def test_a_line_that_is_a_beliefs_own_words_is_told_once_as_the_belief(home: Home) -> None:
    await say(home, home.bob, "My sister Jane lives in Leeds")
    await home.memory.beliefs.remember(home.bob.person_id, "My sister Jane lives in Leeds")
    found = await ranked(home.memory, home.dm(home.bob), "where does my sister live")
    assert [type(f).__name__ for f in found] == ["Recalled"]


async def test_hidden_rows_never_change_the_order_or_scores_a_reader_gets(home: Home) -> None:
    for text in ("The bins go out on Tuesday night", "Tuesday is pottery night at the hall",
                 "The dog's vet appointment is on Tuesday"):
        await say(home, home.owner, text, group=True)
    await say(home, home.bob, "I moved my pottery class to Tuesday")
    query = "pottery on Tuesday night"
    bob_before = shape(await ranked(home.memory, home.dm(home.bob, actor="p1"), query))
    group_before = shape(await ranked(home.memory, home.group(actor="p1"), query))
    assert bob_before and group_before
    # Alice says a great deal that matches, in her own DM: lines and beliefs alike.
    for i in range(60):
        await say(home, home.alice, f"Tuesday night {i}: pottery, bins and the vet again")
        await home.memory.beliefs.remember(home.alice.person_id,
                                           f"Alice has Tuesday night plan {i}")
    assert lines(await ranked(home.memory,   # control: they match, for her
        home.dm(home.alice), "pottery bins and the vet on Tuesday night"))
    bob_after = shape(await ranked(home.memory, home.dm(home.bob, actor="p2"), query))
    group_after = shape(await ranked(home.memory, home.group(actor="p2"), query))
    assert bob_after == bob_before
    assert group_after == group_before


async def test_a_forgotten_line_leaves_no_copy_in_recalls_word_cache(home: Home) -> None:
    from memory.terms import cached_texts  # noqa: PLC0415 -- the caches are what is checked

    await say(home, home.bob, "My locker code at the pool is behind the green towel")
    assert lines(await ranked(home.memory, home.dm(home.bob), "locker at the pool"))
    assert cached_texts() > 0  # control: recall did cache the line's words
    await home.memory.forgetting.forget(home.dm(home.bob, Activity.MEMBER_INSPECT), "locker code")
    assert cached_texts() == 0  # the text was a key of the caches: gone
    assert lines(await ranked(home.memory, home.dm(home.bob), "locker at the pool")) == []



async def test_what_another_process_forgot_leaves_this_one_at_its_next_sync(
    tmp_path: Path,
) -> None:
    from memory.terms import cached_texts, document  # noqa: PLC0415 -- the caches are checked

    bot = await open_home(tmp_path / "hearth.db", embedder=HashEmbedder())
    cli = await Memory.open(tmp_path / "hearth.db", embedder=HashEmbedder(), clock=lambda: T0)
    try:
        said = await say(bot, bot.bob, "My locker code at the pool is behind the green towel")
        await ranked(bot.memory, bot.dm(bot.bob), "locker at the pool")
        assert bot.memory.vectors.lines is not None and bot.memory.vectors.lines.has(said)
        await bot.memory.vectors.sync()
        document("words the bot process read since")
        await bot.memory.vectors.sync()
        assert cached_texts() > 0  # control: a sync with nothing forgotten keeps the caches
        await cli.forgetting.forget(bot.dm(bot.bob, Activity.MEMBER_INSPECT), "locker code")
        document("words the bot process read since")  # the caches are the process's own
        assert bot.memory.vectors.lines.has(said)  # the bot has not looked yet
        await bot.memory.vectors.sync()
        assert not bot.memory.vectors.lines.has(said)
        assert cached_texts() == 0
    finally:
        await cli.close()
        await bot.memory.close()


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed(self, texts: list[str]) -> Vectors:
        self.embedded += texts
        return super().embed(texts)


async def test_the_reply_to_a_line_recalls_with_its_vector_and_no_one_else_takes_it(
    tmp_path: Path,
) -> None:
    embedder = CountingEmbedder()
    built = await open_home(tmp_path / "hearth.db", embedder=embedder)
    try:
        said = "Is the green kettle still broken"
        await say(built, built.bob, "The green kettle is broken again")
        await say(built, built.bob, said)
        found = await ranked(built.memory, built.dm(built.bob), said)
        assert lines(found)[:1] == ["The green kettle is broken again"]
        assert embedder.embedded.count(said) == 1  # stored and recalled with one embedding
        await say(built, built.bob, said)
        # Alice may not see Bob's line, so her recall with his very words embeds its own.
        await ranked(built.memory, built.dm(built.alice), said)
        assert embedder.embedded.count(said) == 3
        # And Bob's, whose line it is, takes the vector that waited for him.
        found = await ranked(built.memory, built.dm(built.bob), said)
        assert lines(found)[:1] == ["The green kettle is broken again"]
        assert embedder.embedded.count(said) == 3
    finally:
        await built.memory.close()


async def say_as(memory: Memory, person: Person, text: str, *, group: bool = False) -> int:
    return await memory.transcript.append(
        chat_id=group_chat() if group else dm_chat(person), speaker_id=person.person_id,
        role=Role.USER, scope=SHARED if group else private_scope(person.person_id), text=text)


async def test_a_query_is_embedded_without_the_names_of_members_added_since_the_last_recall(
    tmp_path: Path,
) -> None:
    recording = CountingEmbedder()
    home = await open_home(tmp_path / "hearth.db", embedder=recording)
    try:
        memory = home.memory
        await ranked(memory, home.dm(home.bob), "Did Alice fix the bike?")
        assert recording.embedded[-1] == "Did fix the bike?"
        carol = await memory.people.add("Carol", telegram_id=1009)
        await say_as(memory, carol, "I fixed the bike chain on Sunday", group=True)
        found = await ranked(memory, home.dm(home.bob), "When did Carol fix the bike?")
        assert recording.embedded[-1] == "When did fix the bike?"  # Carol is known now
        assert lines(found)[:1] == ["I fixed the bike chain on Sunday"]
    finally:
        await home.memory.close()


async def _promotion_exchange(tmp_path: Path, *, gap: timedelta, reply: str,
                              grant_health: bool = False) -> list[str]:
    """Alice asks Bob about his promotion in the group, Bob answers `gap` later in words of
    his own; what the owner's DM recalls for what he was promoted to (keyword recall alone, so
    only the question's words find a line)."""
    now = [T0]
    home = await open_home(tmp_path / "hearth.db", embedder=None, clock=lambda: now[0])
    try:
        await say(home, home.alice, "Congrats on the promotion, Bob! What's the new job?",
                  group=True)
        now[0] += gap
        await say(home, home.bob, reply, group=True)
        if grant_health:
            await home.memory.grants.give(home.owner.person_id, Activity.GROUP_CONVERSATION,
                                          Sensitivity.HEALTH, shared=True)
        return lines(await ranked(home.memory, home.group(),
                                                        "What was Bob promoted to?"))
    finally:
        await home.memory.close()


async def test_the_reply_to_a_line_that_answers_ranks_with_it(tmp_path: Path) -> None:
    reply = "Thanks! Assistant manager at the depot from Monday."
    assert lines_of(await _promotion_exchange(tmp_path / "a", gap=timedelta(minutes=1),
                                              reply=reply)) == {reply}
    # control: said two hours on, it answers nothing said just before, and shares no word
    assert lines_of(await _promotion_exchange(tmp_path / "b", gap=timedelta(hours=2),
                                              reply=reply)) == set()


async def test_a_reply_the_reader_may_not_use_is_not_brought_in(tmp_path: Path) -> None:
    reply = "Thanks! Though my back pain means a desk job now, physio twice a week."  # health
    assert lines_of(await _promotion_exchange(tmp_path / "a", gap=timedelta(minutes=1),
                                              reply=reply)) == set()
    # control: once the group's conversation may use health lines, it is
    assert lines_of(await _promotion_exchange(tmp_path / "b", gap=timedelta(minutes=1),
                                              reply=reply, grant_health=True)) == {reply}


def lines_of(found: list[str]) -> set[str]:
    """The recalled lines besides Alice's question (which the keywords find by themselves)."""
    return {text for text in found if not text.startswith("Congrats")}

