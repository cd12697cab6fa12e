"""Recall: what it hands back and receipts, a blended rank, keyword-only mode, backfill, and a
ranking that nothing behind the wall can shape."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from memory import (
    SHARED,
    AccessContext,
    Activity,
    Memory,
    Person,
    Recalled,
    Verdict,
    private_scope,
)
from memory.recall import LIMIT
from memory.vectors import Spread, VectorIndex
from tests.helpers import HashEmbedder

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

FACTS = [
    "Bob's favourite tea is lapsang souchong",
    "The family dog is called Biscuit",
    "Olivia is learning to play the cello",
    "The recycling goes out on Thursday mornings",
    "Bob is allergic to cats",
]


@dataclass
class Home:
    memory: Memory
    owner: Person
    bob: Person
    alice: Person

    def dm(
        self,
        person: Person,
        activity: Activity = Activity.DM_CONVERSATION,
        *,
        actor: str | None = None,
    ) -> AccessContext:
        ctx = AccessContext.for_member(person.person_id, activity, "a recall test")
        return ctx if actor is None else ctx.model_copy(update={"actor": actor})

    def group(self, actor: str = "hearth") -> AccessContext:
        return AccessContext.for_group(Activity.GROUP_CONVERSATION, "a recall test", actor)


async def open_home(path: Path, *, embedder: HashEmbedder | None,
                    clock: Callable[[], datetime] = lambda: T0) -> Home:
    memory = await Memory.open(path, embedder=embedder, create=True, clock=clock)
    owner = await memory.people.add("Olivia", telegram_id=1001, owner=True)
    bob = await memory.people.add("Bob", telegram_id=1002)
    alice = await memory.people.add("Alice", telegram_id=1003)
    return Home(memory, owner, bob, alice)


@pytest.fixture
async def home(tmp_path: Path) -> AsyncIterator[Home]:
    built = await open_home(tmp_path / "hearth.db", embedder=HashEmbedder())
    try:
        yield built
    finally:
        await built.memory.close()


@pytest.fixture
async def keyword_home(tmp_path: Path) -> AsyncIterator[Home]:
    built = await open_home(tmp_path / "keywords.db", embedder=None)
    try:
        yield built
    finally:
        await built.memory.close()


async def seed(home: Home) -> dict[str, int]:
    ids: dict[str, int] = {}
    for text in FACTS:
        outcome = await home.memory.beliefs.remember(home.owner.person_id, text, shared=True)
        assert outcome.belief_id is not None
        ids[text] = outcome.belief_id
    return ids


def shape(found: list[Recalled]) -> list[tuple[int, float, float, float]]:
    return [(r.belief.belief_id, r.score, r.semantic, r.keyword) for r in found]


# --- threshold and rank --------------------------------------------------------------------


@pytest.mark.parametrize("text", FACTS)
async def test_an_exact_query_ranks_its_belief_first(home: Home, text: str) -> None:
    ids = await seed(home)
    found = await home.memory.recall.search(home.dm(home.bob), text)
    assert found, text
    assert found[0].belief.belief_id == ids[text]
    assert found[0].keyword == 1.0
    assert found == sorted(found, key=lambda r: -r.score)


async def test_keyword_only_mode_recalls_by_keywords(keyword_home: Home) -> None:
    ids = await seed(keyword_home)
    ctx = keyword_home.dm(keyword_home.bob)
    found = await keyword_home.memory.recall.search(ctx, "what is the dog called")
    assert [r.belief.belief_id for r in found] == [ids["The family dog is called Biscuit"]]
    assert found[0].semantic == 0.0
    assert found[0].keyword == 1.0
    tea = await keyword_home.memory.recall.search(ctx, "lapsang souchong")
    assert [r.belief.belief_id for r in tea] == [ids["Bob's favourite tea is lapsang souchong"]]


@pytest.mark.parametrize("query", ["quantum chromodynamics lecture notes", "", "?!", "the of is"])
async def test_keyword_only_mode_returns_nothing_for_unrelated_text(
    keyword_home: Home, query: str
) -> None:
    await seed(keyword_home)
    assert await keyword_home.memory.recall.search(keyword_home.dm(keyword_home.bob), query) == []


@pytest.mark.parametrize("query", ["dogs", "the dog's biscuits"])
async def test_keyword_only_mode_meets_a_word_in_another_form_by_its_stem(
    keyword_home: Home, query: str
) -> None:
    ids = await seed(keyword_home)
    found = await keyword_home.memory.recall.search(keyword_home.dm(keyword_home.bob), query)
    assert [r.belief.belief_id for r in found][:1] == [ids["The family dog is called Biscuit"]]


async def test_a_belief_written_without_an_embedder_is_embedded_when_reopened_with_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "hearth.db"
    plain = await open_home(path, embedder=None)
    try:
        outcome = await plain.memory.beliefs.remember(plain.bob.person_id, "Bob loves gardening")
        assert outcome.belief_id is not None
        bob = plain.bob
        # "rake" shares no word with the belief, only a meaning the embedder would need
        assert await plain.memory.recall.search(plain.dm(bob), "rake") == []
    finally:
        await plain.memory.close()

    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT count(*) FROM belief_vectors").fetchone() == (0,)
    finally:
        conn.close()

    memory = await Memory.open(path, embedder=HashEmbedder(), clock=lambda: T0)
    try:
        ctx = AccessContext.for_member(bob.person_id, Activity.DM_CONVERSATION, "backfill")
        # "gardenia" shares no stem with "gardening", only the hash the test embedder gives it
        found = await memory.recall.search(ctx, "gardenia")
        assert [r.belief.belief_id for r in found] == [outcome.belief_id]
        assert found[0].keyword == 0.0
        assert found[0].semantic > 0.5
    finally:
        await memory.close()

    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT belief_id, model FROM belief_vectors").fetchall() == [
            (outcome.belief_id, HashEmbedder.name)
        ]
    finally:
        conn.close()


# --- what a recall hands back, and what it receipts ------------------------------------------


async def test_a_recall_may_hand_back_the_unrelated_too_marked_so_and_receipts_what_it_handed(
    home: Home,
) -> None:
    ids = await seed(home)
    ctx = home.dm(home.bob)
    found = await home.memory.recall.search(ctx, "the family dog Biscuit")
    assert found[0].belief.belief_id == ids["The family dog is called Biscuit"]
    every = await home.memory.recall.recollect(ctx, "the family dog Biscuit", unrelated=True)
    assert len(every) > len(found)  # what is unrelated comes too, after the rest
    assert [r.verdict for r in every] == sorted(
        (r.verdict for r in every), key=[Verdict.ANSWERS, Verdict.RELATED,
                                         Verdict.UNRELATED].index)
    assert all(r.why.startswith(r.verdict.value) for r in every)
    with sqlite3.connect(home.memory.path) as conn:
        receipted = [json.loads(ids_json) for (ids_json,) in conn.execute(
            "SELECT returned_ids FROM receipts WHERE method = 'recall' ORDER BY seq")]
    assert sorted(receipted[-1]) == sorted(r.belief.belief_id for r in every
                                           if isinstance(r, Recalled))


# --- nothing behind the wall shapes what a member sees -------------------------------------


async def _crowd_bobs_private_scope(home: Home, n: int = 40) -> None:
    for i in range(n):
        await home.memory.beliefs.remember(
            home.bob.person_id, f"The family dog Biscuit chewed Bob's slipper number {i}"
        )


@pytest.mark.parametrize("embedded", [True, False], ids=["semantic", "keyword-only"])
async def test_another_members_private_beliefs_never_change_what_a_member_sees(
    tmp_path: Path, embedded: bool
) -> None:
    home = await open_home(tmp_path / "hearth.db", embedder=HashEmbedder() if embedded else None)
    try:
        await seed(home)
        await home.memory.beliefs.remember(home.alice.person_id,
                "Alice walks the family dog at dawn")
        query = "the family dog Biscuit"
        alice_before = await home.memory.recall.search(home.dm(home.alice, actor="probe-1"), query)
        group_before = await home.memory.recall.search(home.group(actor="probe-1"), query)
        assert alice_before and group_before

        await _crowd_bobs_private_scope(home)
        bobs = await home.memory.recall.search(home.dm(home.bob, actor="probe-0"), query)
        assert len(bobs) == LIMIT

        alice_after = await home.memory.recall.search(home.dm(home.alice, actor="probe-2"), query)
        group_after = await home.memory.recall.search(home.group(actor="probe-2"), query)
        assert shape(alice_after) == shape(alice_before)
        assert shape(group_after) == shape(group_before)
    finally:
        await home.memory.close()


async def test_keyword_statistics_of_hidden_beliefs_never_change_what_a_member_sees(
    tmp_path: Path,
) -> None:
    # More of Alice's beliefs match than the keyword stage fetches, so which ones it keeps
    # must not depend on anything she cannot see (such as the lengths of Bob's beliefs).
    home = await open_home(tmp_path / "hearth.db", embedder=None)
    try:
        m = home.memory
        await m.beliefs.remember(
            home.alice.person_id,
            "Alice took her kayak to the lake, the kayak leaked a little",
        )
        for i in range(70):
            await m.beliefs.remember(home.alice.person_id, f"kayak trip {i}")
        before = await m.recall.search(home.dm(home.alice, actor="probe-1"), "kayak")
        for i in range(150):
            await m.beliefs.remember(
                home.bob.person_id,
                f"Bob wrote entry {i} in his private diary: " + " ".join(
                    f"word{j}" for j in range(60)
                ),
            )
        after = await m.recall.search(home.dm(home.alice, actor="probe-2"), "kayak")
        assert shape(after) == shape(before)
    finally:
        await m.close()


async def test_a_lane_acting_for_one_member_is_not_penalised_by_another_members_lane(
    tmp_path: Path,
) -> None:
    # Background lanes share the actor "hearth". What Bob's lane recalled (shaped by Bob's
    # private beliefs) must not change the scores Alice's lane sees.
    query = "the family dog Biscuit"

    async def alices_lane_after_bobs(path: Path, *, bob_has_private: bool) -> list[Recalled]:
        home = await open_home(path, embedder=HashEmbedder())
        try:
            await seed(home)
            if bob_has_private:
                await home.memory.beliefs.remember(home.bob.person_id, "The family dog Biscuit")
            await home.memory.recall.search(home.dm(home.bob, Activity.PROACTIVE), query, limit=1)
            return await home.memory.recall.search(home.dm(home.alice, Activity.PROACTIVE), query)
        finally:
            await home.memory.close()

    without = await alices_lane_after_bobs(tmp_path / "a.db", bob_has_private=False)
    with_private = await alices_lane_after_bobs(tmp_path / "b.db", bob_has_private=True)
    assert [(r.belief.proposition, r.score) for r in with_private] == [
        (r.belief.proposition, r.score) for r in without
    ]


# --- limits and syntax ---------------------------------------------------------------------


async def test_limit_is_honoured(home: Home) -> None:
    for i in range(12):
        await home.memory.beliefs.remember(home.bob.person_id,
                f"Bob planted tulip bulb number {i}")
    ctx = home.dm(home.bob)
    every = await home.memory.recall.recollect(ctx, "tulip bulb", limit=50, unrelated=True)
    assert len(every) == 12
    assert len(await home.memory.recall.recollect(ctx, "tulip bulb", limit=3,
                                                  unrelated=True)) == 3
    for i in range(12, 20):
        await home.memory.beliefs.remember(home.bob.person_id,
                f"Bob planted tulip bulb number {i}")
    assert len(await home.memory.recall.recollect(ctx, "tulip bulb", unrelated=True)) == LIMIT
    assert await home.memory.recall.search(ctx, "tulip bulb", limit=0) == []


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced quote',
        'tea"',
        "tea*",
        "*",
        "NEAR(tea dog",
        "NEAR(",
        "-tea",
        "tea - dog",
        "proposition:tea",
        ":",
        "tea AND OR NOT dog",
        "NOT",
        "^tea",
        "(tea OR",
        "{proposition}: tea",
        "tea + dog",
        "'; DROP TABLE beliefs; --",
        "\x00tea",
    ],
)
@pytest.mark.parametrize("embedded", [True, False], ids=["semantic", "keyword-only"])
async def test_fts_syntax_in_a_query_does_not_raise(
    tmp_path: Path, query: str, embedded: bool
) -> None:
    home = await open_home(tmp_path / "hearth.db", embedder=HashEmbedder() if embedded else None)
    try:
        await seed(home)
        found = await home.memory.recall.search(home.dm(home.bob), query)
        assert all(isinstance(r, Recalled) for r in found)
        assert len(await home.memory.recall.search(home.dm(home.bob), "lapsang tea")) >= 1
    finally:
        await home.memory.close()


@pytest.mark.parametrize("embedded", [True, False], ids=["semantic", "keyword-only"])
async def test_a_pasted_page_of_a_thousand_distinct_words_is_recalled_against_without_failing(
    tmp_path: Path, embedded: bool
) -> None:
    # Every query word was one subquery of the keyword statement: past a thousand of them,
    # SQLite refused it ("too many columns") and the member's turn failed.
    home = await open_home(tmp_path / "hearth.db", embedder=HashEmbedder() if embedded else None)
    try:
        ids = await seed(home)
        filler = [f"w{i:04d}" for i in range(1500)]
        page = " ".join([*filler[:700], "Remember my lapsang souchong?", *filler[700:]])
        found = await home.memory.recall.recollect(home.dm(home.bob), page)
        assert all(isinstance(item, Recalled) for item in found)
        tea = await home.memory.recall.search(home.dm(home.bob), "lapsang souchong")
        assert [r.belief.belief_id for r in tea][:1] == [ids[FACTS[0]]]
    finally:
        await home.memory.close()


async def test_beliefs_another_process_wrote_join_semantic_recall_after_a_sync(
    tmp_path: Path,
) -> None:
    db = tmp_path / "shared.db"
    bot = await Memory.open(db, embedder=HashEmbedder(), create=True)
    shell = await Memory.open(db, embedder=HashEmbedder())
    try:
        ana = await bot.people.add("Ana", owner=True)
        await shell.beliefs.remember(ana.person_id, "Ana keeps bees in the orchard")
        ctx = AccessContext.for_member(ana.person_id, Activity.DM_CONVERSATION, "test")
        await bot.vectors.sync()
        found = await bot.recall.search(ctx, "beekeeping orchard hives bees")
        assert [r.belief.proposition for r in found] == ["Ana keeps bees in the orchard"]
    finally:
        await shell.close()
        await bot.close()


async def test_recall_leaves_numpy_on_one_blas_thread_and_still_works_where_it_cannot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    # A BLAS worker left to itself spins after each product and held a core beside every
    # recall; where the BLAS refuses to be set, recall must go on all the same.
    home = await open_home(tmp_path / "one.db", embedder=HashEmbedder())
    try:
        ids = await seed(home)
        found = await home.memory.recall.search(home.dm(home.bob), FACTS[1])
        assert found[0].belief.belief_id == ids[FACTS[1]]
        assert {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"} <= {1}
    finally:
        await home.memory.close()

    def refused(**_: object) -> None:
        raise RuntimeError("this BLAS cannot be set")

    monkeypatch.setattr("memory.vectors.threadpool_limits", refused)
    home = await open_home(tmp_path / "refused.db", embedder=HashEmbedder())
    try:
        ids = await seed(home)
        found = await home.memory.recall.search(home.dm(home.bob), FACTS[1])
        assert found[0].belief.belief_id == ids[FACTS[1]]
        assert "BLAS threads could not be limited" in caplog.text
    finally:
        await home.memory.close()


def test_a_readers_nearest_rows_are_the_nearest_across_their_scopes_not_a_quota_of_each() -> None:
    # Each scope's matrix is searched on its own; the reader gets the `top` nearest of all of
    # them, not `top` from each (twice the rows to read and rank for a member's DM), and never
    # one from a scope they cannot see, however near.
    index, spread = VectorIndex(dim=2), Spread()
    bobs, alices = private_scope("bob"), private_scope("alice")
    angle = {SHARED: [0.1, 0.2, 0.3], bobs: [0.15, 1.0, 1.2], alices: [0.11, 0.12, 0.13]}
    ids = iter(range(1, 100))
    where: dict[int, str] = {}
    for scope, angles in angle.items():
        rows = [next(ids) for _ in angles]
        where.update(dict.fromkeys(rows, scope))
        index.add(scope, rows, np.array([[np.cos(a), np.sin(a)] for a in angles],
                                        dtype=np.float32))
    bob = AccessContext.for_member("bob", Activity.DM_CONVERSATION, "a recall test")
    found = index.search(bob, np.array([1.0, 0.0], dtype=np.float32), 3, spread)
    assert [where[i] for i in sorted(found, key=lambda i: -found[i])] == [SHARED, bobs, SHARED]
    assert spread.count == 6  # every row the reader sees measures the query, hidden rows not
