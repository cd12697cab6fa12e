"""The vector book: vectors carry the model that made them, another model's are re-embedded
before recall uses them, and a question is embedded as a question."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from memory import (
    Assertion,
    E5Embedder,
    Memory,
    MiniLMEmbedder,
    Provenance,
    private_scope,
)
from tests.helpers import TwoWayEmbedder, make_household
from tests.memory.test_episodic_recall import say_as

FACTS = ("Bob's birthday is on the 2nd of May.", "Bob is allergic to penicillin.",
         "Bob's car fails its MOT in September.", "Bob plays the tuba on Sundays.",
         "Bob's allotment is plot 14.")
SAID = ("The bins go out on Tuesday nights.", "The boiler makes a clicking noise again.",
        "My dentist moved to the high street.", "We ran out of oat milk.",
        "The cat sleeps on the radiator.", "The bus was packed this morning.")


def vectors_by_model(db: Path) -> dict[str, dict[str, int]]:
    """How many vectors each table holds, by the model that made them."""
    conn = sqlite3.connect(db)
    try:
        return {table: dict(conn.execute(
                    f"SELECT model, count(*) FROM {table} GROUP BY model").fetchall())
                for table in ("belief_vectors", "turn_vectors")}
    finally:
        conn.close()


def proposition_of(db: Path, belief_id: int) -> str:
    conn = sqlite3.connect(db)
    try:
        row = conn.execute("SELECT proposition FROM beliefs WHERE belief_id = ?",
                           (belief_id,)).fetchone()
        return str(row[0])
    finally:
        conn.close()


async def test_a_database_filled_with_minilm_is_re_embedded_by_e5_before_recall_uses_it(
    tmp_path: Path, minilm: MiniLMEmbedder, e5: E5Embedder,
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("memory.vectors.BLOCK", 4)  # a few rows make several blocks
    db = tmp_path / "hearth.db"
    home = await make_household(db, embedder=minilm)
    for fact in FACTS:
        await home.memory.beliefs.remember(home.bob.person_id, fact)
    for text in SAID:
        await say_as(home.memory, home.bob, text)
    await home.memory.close()
    assert vectors_by_model(db) == {"belief_vectors": {minilm.name: 5},
                                    "turn_vectors": {minilm.name: 6}}

    caplog.set_level(logging.INFO, logger="hearth.vectors")
    memory = await Memory.open(db, embedder=e5)
    try:
        # MiniLM's vectors are replaced, one for one, not kept beside e5's.
        assert vectors_by_model(db) == {"belief_vectors": {e5.name: 5},
                                        "turn_vectors": {e5.name: 6}}
        said = [r.getMessage() for r in caplog.records if r.name == "hearth.vectors"]
        assert said == [
            f"5 beliefs have vectors of {minilm.name}: re-embedding them for {e5.name}"
            " before recall uses them",
            f"re-embedding 4/5 beliefs for {e5.name}", f"re-embedding 5/5 beliefs for {e5.name}",
            f"6 lines have vectors of {minilm.name}: re-embedding them for {e5.name}"
            " before recall uses them",
            f"re-embedding 4/6 lines for {e5.name}", f"re-embedding 6/6 lines for {e5.name}",
        ]
        # The matrices recall searches hold e5's vectors: a German question finds the fact.
        found = await memory.vectors.similar(home.dm(home.bob), "Wann hat Bob Geburtstag?", 1)
        assert found is not None and len(found.beliefs) == 1
        assert proposition_of(db, next(iter(found.beliefs))) == FACTS[0]
    finally:
        await memory.close()

    caplog.clear()
    memory = await Memory.open(db, embedder=e5)  # the same model again: nothing to redo
    await memory.close()
    assert [r for r in caplog.records if r.name == "hearth.vectors"] == []


async def test_a_line_is_embedded_as_a_row_and_the_recall_with_its_words_as_a_question(
    tmp_path: Path,
) -> None:
    embedder = TwoWayEmbedder()
    home = await make_household(tmp_path / "hearth.db", embedder=embedder)
    try:
        said = "Is the green kettle still broken"
        await say_as(home.memory, home.bob, "The green kettle is broken again")
        await say_as(home.memory, home.bob, said)
        await home.memory.recall.recollect(home.dm(home.bob), said)
        # The stored line's vector is a row's, not a question's: the recall embeds its own.
        assert embedder.rows.count(said) == 1
        assert embedder.questions.count(said) == 1
    finally:
        await home.memory.close()


async def test_under_e5_the_dream_keeps_two_alike_facts_apart_and_merges_one_said_twice(
    tmp_path: Path, e5: E5Embedder,
) -> None:
    # e5 scores any two sentences of one topic high: "applied for" and "was offered" the same
    # job are 0.93 or more alike, which MiniLM's bar for "the same thing" would merge.
    memory = await Memory.open(tmp_path / "h.db", embedder=e5, create=True)
    try:
        bob = await memory.people.add("Bob", telegram_id=2, owner=True)
        scope = private_scope(bob.person_id)
        told = [Assertion(proposition=text, scope=scope, provenance=Provenance.TOLD,
                          source=f"s{i}")
                for i, text in enumerate(("Bob applied for the job at the bakery",
                                          "Bob was offered the job at the bakery",
                                          "Bob's dog is called Pepper",
                                          "Bob's dog is really called Pepper"))]
        await memory.beliefs.assert_all(told)
        assert memory.vectors.same_thing > 0.93
        _, counts = await memory.dream.run()
        assert counts["deduped"] == 1  # Pepper, said twice; the two job facts stay apart
    finally:
        await memory.close()
