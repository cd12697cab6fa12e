"""Episodic recall: members' own lines are recalled beside beliefs, behind the same wall, lens,
receipts and forgetting, and nothing behind the wall shapes what a reader gets."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from memory import (
    SHARED,
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


def lines(found: list[Recalled | Quoted]) -> list[str]:
    return [f.turn.text for f in found if isinstance(f, Quoted)]


def shape(found: list[Recalled | Quoted]) -> list[tuple[str, float, float, float, bool]]:
    return [(f.turn.text if isinstance(f, Quoted) else f.belief.proposition, f.score,
             f.semantic, f.keyword, f.sure) for f in found]


async def test_a_members_words_are_recalled_the_moment_they_are_said(home: Home) -> None:
    await say(home, home.bob, "The boiler engineer Gary comes on Thursday at noon")
    found = await home.memory.recall.recollect(home.dm(home.bob), "when is the boiler engineer")
    assert lines(found) == ["The boiler engineer Gary comes on Thursday at noon"]
    assert found[0].sure
    assert isinstance(found[0], Quoted) and found[0].turn.ref  # named by an opaque ref


async def test_a_line_that_tells_then_asks_is_recalled_and_one_that_only_asks_is_not(
    home: Home,
) -> None:
    tells = "Sunflowers mean warmth and happiness to me. What do flowers mean to you?"
    await say(home, home.bob, tells)
    await say(home, home.bob, "Do sunflowers mean anything to you? What about daisies?")
    found = await home.memory.recall.recollect(home.dm(home.bob), "what do sunflowers mean")
    assert lines(found) == [tells]
    assert found[0].sure


async def test_a_line_is_not_told_for_its_question_alone(home: Home) -> None:
    asks = "Lovely weather today. What got you into marathon running?"
    await say(home, home.alice, asks, group=True)
    await say(home, home.bob, "My sister got me into marathon running", group=True)
    found = await home.memory.recall.recollect(home.dm(home.bob),
                                               "what got me into marathon running")
    assert lines(found) == ["My sister got me into marathon running", asks]
    assert not found[1].sure  # what only asks tells nothing


async def test_another_members_private_line_is_never_recalled(home: Home) -> None:
    await say(home, home.alice, "I left my umbrella under the blue mat at the gym")
    query = "where is the umbrella"
    assert lines(await home.memory.recall.recollect(home.dm(home.alice), query))  # control
    assert lines(await home.memory.recall.recollect(home.dm(home.bob), query)) == []
    assert lines(await home.memory.recall.recollect(home.group(), query)) == []


async def test_a_dm_line_is_not_recalled_in_the_group_even_for_its_speaker(home: Home) -> None:
    await say(home, home.bob, "I booked the tapas place for our anniversary")
    await say(home, home.bob, "The tapas place in the group chat is closed on Mondays", group=True)
    found = lines(await home.memory.recall.recollect(home.group(), "the tapas place"))
    assert found == ["The tapas place in the group chat is closed on Mondays"]


async def test_a_health_line_said_in_the_group_needs_a_grant_for_the_groups_conversation(
    home: Home,
) -> None:
    await say(home, home.owner, "Grandad's heart medication is now twice a day", group=True)
    query = "grandad's heart medication"
    ctx = home.group()
    assert lines(await home.memory.recall.recollect(ctx, query)) == []
    grant: Grant = await home.memory.grants.give(
        home.owner.person_id, Activity.GROUP_CONVERSATION, Sensitivity.HEALTH, shared=True)
    assert grant.grant_id
    assert lines(await home.memory.recall.recollect(ctx, query)) == [
        "Grandad's heart medication is now twice a day"]


async def test_recalled_lines_are_receipted_under_their_own_method(home: Home) -> None:
    turn_id = await say(home, home.bob, "The spare bike lock key hangs by the back door")
    await home.memory.recall.recollect(home.dm(home.bob), "bike lock key")
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
    before = await home.memory.recall.recollect(home.dm(home.bob), query)
    assert before  # control: the belief (or its line) is recalled
    assert await home.memory.forgetting.forget(home.dm(home.bob, Activity.MEMBER_INSPECT),
                                               "counsellor") == 1
    assert await home.memory.recall.recollect(home.dm(home.bob), query) == []
    conn = sqlite3.connect(home.memory.path)
    try:
        assert conn.execute("SELECT count(*) FROM turn_vectors").fetchone() == (0,)
    finally:
        conn.close()


async def test_a_line_that_is_a_beliefs_own_words_is_told_once_as_the_belief(home: Home) -> None:
    await say(home, home.bob, "My sister Jane lives in Leeds")
    await home.memory.beliefs.remember(home.bob.person_id, "My sister Jane lives in Leeds")
    found = await home.memory.recall.recollect(home.dm(home.bob), "where does my sister live")
    assert [type(f).__name__ for f in found] == ["Recalled"]


async def test_hidden_rows_never_change_the_order_or_scores_a_reader_gets(home: Home) -> None:
    for text in ("The bins go out on Tuesday night", "Tuesday is pottery night at the hall",
                 "The dog's vet appointment is on Tuesday"):
        await say(home, home.owner, text, group=True)
    await say(home, home.bob, "I moved my pottery class to Tuesday")
    query = "pottery on Tuesday night"
    bob_before = shape(await home.memory.recall.recollect(home.dm(home.bob, actor="p1"), query))
    group_before = shape(await home.memory.recall.recollect(home.group(actor="p1"), query))
    assert bob_before and group_before
    # Alice says a great deal that matches, in her own DM: lines and beliefs alike.
    for i in range(60):
        await say(home, home.alice, f"Tuesday night {i}: pottery, bins and the vet again")
        await home.memory.beliefs.remember(home.alice.person_id,
                                           f"Alice has Tuesday night plan {i}")
    assert lines(await home.memory.recall.recollect(  # control: they match, for her
        home.dm(home.alice), "pottery bins and the vet on Tuesday night"))
    bob_after = shape(await home.memory.recall.recollect(home.dm(home.bob, actor="p2"), query))
    group_after = shape(await home.memory.recall.recollect(home.group(actor="p2"), query))
    assert bob_after == bob_before
    assert group_after == group_before


async def test_a_line_about_another_member_is_not_told_as_the_answer(home: Home) -> None:
    await say(home, home.alice, "My half marathon time was two hours and five minutes",
              group=True)
    found = await home.memory.recall.recollect(
        home.dm(home.owner), "what was Bob's time in the half marathon")
    assert lines(found) == ["My half marathon time was two hours and five minutes"]
    assert not found[0].sure  # Alice's own time, not Bob's
    control = await home.memory.recall.recollect(
        home.dm(home.owner), "what was Alice's time in the half marathon")
    assert lines(control) == lines(found)
    assert control[0].sure


async def test_the_member_asked_after_ranks_above_another_saying_the_same(home: Home) -> None:
    await say(home, home.bob, "I went to the climbing wall on Saturday with my cousin",
              group=True)
    await say(home, home.alice, "I went to the climbing wall on Saturday too", group=True)
    for name, speaker in (("Alice", "Alice"), ("Bob", "Bob")):
        found = await home.memory.recall.recollect(
            home.dm(home.owner), f"when was {name} at the climbing wall")
        first = found[0]
        assert isinstance(first, Quoted)
        said_by = {home.bob.person_id: "Bob", home.alice.person_id: "Alice"}
        assert said_by[first.turn.speaker_id or ""] == speaker


class NearEmbedder(HashEmbedder):
    """HashEmbedder, except that the texts in `near` are given almost the query's direction:
    alike in meaning as a model would find them, without a word in common."""

    def __init__(self, query: str, near: tuple[str, ...]) -> None:
        self.query, self.near = query, near

    def embed(self, texts: list[str]) -> Vectors:
        out = super().embed(texts)
        anchor = super().embed([self.query])[0]
        for row, text in enumerate(texts):
            if text in self.near or text == self.query:
                noise = super().embed([text])[0] * (0.0 if text == self.query else 0.05)
                vector = anchor + noise
                out[row] = vector / np.linalg.norm(vector)
        return out


async def test_a_line_alike_in_meaning_alone_is_related_but_not_told_as_a_memory(
    tmp_path: Path,
) -> None:
    query = "what did I have for breakfast today"
    said = "Made soup, ate it at noon"
    found: dict[str, list[Recalled | Quoted]] = {}
    for tier in ("line", "belief"):
        built = await open_home(tmp_path / f"{tier}.db", embedder=NearEmbedder(query, (said,)))
        try:
            for i in range(20):
                await say(built, built.bob, f"Unrelated chatter number {i} about the weather")
            if tier == "line":
                await say(built, built.bob, said)
            else:  # the control: the same closeness in what she concluded is told
                await built.memory.beliefs.remember(built.bob.person_id, said)
            found[tier] = await built.memory.recall.recollect(built.dm(built.bob), query)
        finally:
            await built.memory.close()
    assert lines(found["line"])[:1] == [said] and not found["line"][0].sure
    assert isinstance(found["belief"][0], Recalled) and found["belief"][0].sure


async def test_a_forgotten_line_leaves_no_copy_in_recalls_word_cache(home: Home) -> None:
    from memory.terms import cached_texts  # noqa: PLC0415 -- the caches are what is checked

    await say(home, home.bob, "My locker code at the pool is behind the green towel")
    assert lines(await home.memory.recall.recollect(home.dm(home.bob), "locker at the pool"))
    assert cached_texts() > 0  # control: recall did cache the line's words
    await home.memory.forgetting.forget(home.dm(home.bob, Activity.MEMBER_INSPECT), "locker code")
    assert cached_texts() == 0  # the text was a key of the caches: gone
    assert lines(await home.memory.recall.recollect(home.dm(home.bob), "locker at the pool")) == []



async def test_what_another_process_forgot_leaves_this_one_at_its_next_sync(
    tmp_path: Path,
) -> None:
    from memory.terms import cached_texts, document  # noqa: PLC0415 -- the caches are checked

    bot = await open_home(tmp_path / "hearth.db", embedder=HashEmbedder())
    cli = await Memory.open(tmp_path / "hearth.db", embedder=HashEmbedder(), clock=lambda: T0)
    try:
        said = await say(bot, bot.bob, "My locker code at the pool is behind the green towel")
        await bot.memory.recall.recollect(bot.dm(bot.bob), "locker at the pool")
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
        found = await built.memory.recall.recollect(built.dm(built.bob), said)
        assert lines(found)[:1] == ["The green kettle is broken again"]
        assert embedder.embedded.count(said) == 1  # stored and recalled with one embedding
        await say(built, built.bob, said)
        # Alice may not see Bob's line, so her recall with his very words embeds its own.
        await built.memory.recall.recollect(built.dm(built.alice), said)
        assert embedder.embedded.count(said) == 3
        # And Bob's, whose line it is, takes the vector that waited for him.
        found = await built.memory.recall.recollect(built.dm(built.bob), said)
        assert lines(found)[:1] == ["The green kettle is broken again"]
        assert embedder.embedded.count(said) == 3
    finally:
        await built.memory.close()


@pytest.fixture
async def plumber(tmp_path: Path) -> AsyncIterator[Home]:
    """Bob's chatter, his word that the plumber comes on Monday, and the clock two days on."""
    now = [T0]
    home = await open_home(tmp_path / "hearth.db", embedder=HashEmbedder(),
                           clock=lambda: now[0])
    try:
        for i in range(20):  # what an unrelated line scores, for the margin to stand out from
            await say_as(home.memory, home.bob, f"Unrelated chatter number {i} about the weather")
        await home.memory.beliefs.remember(home.bob.person_id,
                                           "The plumber is coming on Monday to fix the shower")
        now[0] = now[0] + timedelta(days=2)
        yield home
    finally:
        await home.memory.close()


def told(found: list[Recalled | Quoted]) -> list[str]:
    """What a recall tells as memories, in order."""
    return [f.turn.text if isinstance(f, Quoted) else f.belief.proposition
            for f in found if f.sure]


MONDAY = "The plumber is coming on Monday to fix the shower"
WEDNESDAY = "The plumber is coming on Wednesday to fix the shower"


@pytest.mark.parametrize("who", ["bob", "alice"])
async def test_a_members_newer_word_on_a_thing_is_told_before_the_older(
    plumber: Home, who: str
) -> None:
    if who == "bob":
        await say_as(plumber.memory, plumber.bob, WEDNESDAY)
    else:  # the control: another member's word, in the group, is not Bob's update
        await say_as(plumber.memory, plumber.alice, WEDNESDAY, group=True)
    found = await plumber.memory.recall.recollect(
        plumber.dm(plumber.bob), "When is the plumber coming to fix the shower?")
    assert told(found) == ([WEDNESDAY, MONDAY] if who == "bob" else [MONDAY, WEDNESDAY])


@pytest.mark.parametrize("question", [
    "When was the plumber originally coming to fix the shower?",
    "At first, when was the plumber coming to fix the shower?",
])
async def test_a_question_asking_what_held_before_is_told_the_older_word_first(
    plumber: Home, question: str,
) -> None:
    await say_as(plumber.memory, plumber.bob, WEDNESDAY)
    found = await plumber.memory.recall.recollect(plumber.dm(plumber.bob), question)
    # asked what holds now, Wednesday comes first (above)
    assert told(found) == [MONDAY, WEDNESDAY]


@pytest.mark.parametrize("who", ["bob", "alice"])
async def test_a_members_update_in_fewer_of_the_questions_words_is_told_first(
    plumber: Home, who: str,
) -> None:
    update = ("Change of plan: the plumber fixes the shower on Wednesday, the Monday slot"
              " fell through")
    # Bob's own update, or (the control) Alice's word in the group, which is not his
    await plumber.memory.beliefs.remember(
        (plumber.bob if who == "bob" else plumber.alice).person_id, update,
        shared=who == "alice")
    found = await plumber.memory.recall.recollect(
        plumber.dm(plumber.bob), "When is the plumber coming to fix the shower?")
    if who == "bob":
        assert told(found) == [update, MONDAY]
    else:
        assert told(found) == [MONDAY]
        assert update in [item.belief.proposition for item in found
                          if isinstance(item, Recalled)]  # found, not told


async def test_a_question_naming_the_day_of_the_older_word_is_told_that_word_first(
    plumber: Home,
) -> None:
    await say_as(plumber.memory, plumber.bob, WEDNESDAY)
    ctx = plumber.dm(plumber.bob)
    said_then = f"{T0:%d %B}: when is the plumber coming to fix the shower?"
    assert told(await plumber.memory.recall.recollect(ctx, said_then)) == [MONDAY, WEDNESDAY]
    # control: asked with no day, the newer word is told first
    assert told(await plumber.memory.recall.recollect(
        ctx, "When is the plumber coming to fix the shower?")) == [WEDNESDAY, MONDAY]


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
        await memory.recall.recollect(home.dm(home.bob), "Did Alice fix the bike?")
        assert recording.embedded[-1] == "Did fix the bike?"
        carol = await memory.people.add("Carol", telegram_id=1009)
        await say_as(memory, carol, "I fixed the bike chain on Sunday", group=True)
        found = await memory.recall.recollect(home.dm(home.bob), "When did Carol fix the bike?")
        assert recording.embedded[-1] == "When did fix the bike?"  # Carol is known now
        assert lines(found)[:1] == ["I fixed the bike chain on Sunday"]
    finally:
        await home.memory.close()


# Bob's line answers the member who spoke just before him. "Your" speaks of them: told to
# Olivia, it is her hair. "We" is his side, not theirs: answering Olivia, it is not her camping
# trip; answering Alice, it may be anyone's.
@pytest.mark.parametrize("case", [
    ("Wow, your new hair colour looks amazing!", "owner", "How does my new hair colour look?",
     "owner"),
    ("We always look forward to our family camping trip by the lake", "alice",
     "Where is Olivia's family camping trip?", "alice"),
])
@pytest.mark.parametrize("answered", ["owner", "alice"])
async def test_whom_a_line_answers_decides_whose_it_is(
    home: Home, answered: str, case: tuple[str, str, str, str],
) -> None:
    line, reader, question, told_when_answering = case
    members = {"owner": home.owner, "alice": home.alice}
    await say(home, members[answered], "I dyed my hair copper on Saturday", group=True)
    await say(home, home.bob, line, group=True)
    found = await home.memory.recall.recollect(home.dm(members[reader]), question)
    assert lines(found)[:1] == [line]
    assert found[0].sure == (answered == told_when_answering)


@pytest.mark.parametrize("alices_line", ["held back", "forgotten", "usable"])
async def test_a_line_hidden_from_the_reader_does_not_decide_whom_the_next_one_answers(
    home: Home, alices_line: str,
) -> None:
    await say(home, home.owner, "I dyed my hair copper on Saturday", group=True)
    await say(home, home.alice, "My knee physio is on Thursday", group=True)  # health
    praise = "Wow, your new hair colour looks amazing!"
    await say(home, home.bob, praise, group=True)
    if alices_line != "held back":  # the group may use it (the control: Bob answered her)
        await home.memory.grants.give(home.owner.person_id, Activity.GROUP_CONVERSATION,
                                      Sensitivity.HEALTH, shared=True)
    if alices_line == "forgotten":
        inspect = home.dm(home.owner, Activity.MEMBER_INSPECT)
        await home.memory.forgetting.forget(inspect, "knee physio", shared=True)
    found = await home.memory.recall.recollect(home.group(),
                                               "How does Olivia's new hair colour look?")
    assert lines(found)[:1] == [praise]
    # Held back or forgotten, Alice's line is as if unsaid: Bob answered Olivia's.
    assert found[0].sure == (alices_line != "usable")


async def test_a_line_answering_no_one_recently_may_be_about_anyone(tmp_path: Path) -> None:
    now = [T0]
    home = await open_home(tmp_path / "hearth.db", embedder=None, clock=lambda: now[0])
    try:
        await say(home, home.alice, "I dyed my hair copper on Saturday", group=True)
        now[0] = T0 + timedelta(hours=2)  # Bob's line answers no line of the last half hour
        await say(home, home.bob, "Wow, your new hair colour looks amazing!", group=True)
        found = await home.memory.recall.recollect(home.dm(home.owner),
                                                   "How does my new hair colour look?")
        assert lines(found)[:1] == ["Wow, your new hair colour looks amazing!"]
        assert found[0].sure
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
        return lines(await home.memory.recall.recollect(home.group(),
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


async def test_another_members_line_that_gives_a_thing_no_owner_is_not_told_as_the_askers(
    home: Home,
) -> None:
    line = "The spare room is getting painted sage green, such a calm colour"
    await say(home, home.alice, line, group=True)
    question = "What colour is my spare room getting painted?"
    # Alice's line neither says whose room nor speaks to or of Bob: found, not told as his.
    found = await home.memory.recall.recollect(home.dm(home.bob), question)
    assert lines(found)[:1] == [line]
    assert not found[0].sure
    # The control: asked by Alice, it is her own line.
    found = await home.memory.recall.recollect(home.dm(home.alice), question)
    assert lines(found)[:1] == [line]
    assert found[0].sure


async def test_without_a_model_a_line_naming_another_kind_of_the_thing_is_not_told(
    tmp_path: Path,
) -> None:
    # Nothing tells whether "theory" means "practical" without the model: found, not told.
    home = await open_home(tmp_path / "hearth.db", embedder=None)
    try:
        line = "Passed my driving theory test today!!!"
        for text in (line, *(f"The {hour} o'clock bus was late again." for hour in range(1, 21))):
            await say(home, home.bob, text)
        found = await home.memory.recall.recollect(home.dm(home.bob),
                                                   "When did I pass my practical driving test?")
        assert [(f.turn.text, f.sure) for f in found if isinstance(f, Quoted)] == [(line, False)]
        found = await home.memory.recall.recollect(home.dm(home.bob),
                                                   "When did I pass my driving theory test?")
        assert [(f.turn.text, f.sure) for f in found if isinstance(f, Quoted)] == [(line, True)]
    finally:
        await home.memory.close()
