"""The embedders, loaded offline: multilingual-e5-small (the default) finding what was said in
another language, and the bundled MiniLM driving real semantic recall."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from memory import (
    AccessContext,
    Activity,
    E5Embedder,
    Embedder,
    InvalidRequest,
    Memory,
    MiniLMEmbedder,
    Quoted,
    make_embedder,
)
from memory.embedder import BF16_AGREEMENT, MAX_EMBEDDED_CHARS, Precision
from tests.helpers import Household, make_household
from tests.memory.test_episodic_recall import say_as


@pytest.fixture
async def real_home(tmp_path: Path, minilm: MiniLMEmbedder) -> AsyncIterator[Household]:
    home = await make_household(tmp_path / "hearth.db", embedder=minilm)
    try:
        yield home
    finally:
        await home.memory.close()


def test_the_model_loads_offline_and_gives_unit_vectors(minilm: MiniLMEmbedder) -> None:
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    vectors = minilm.embed(["the kettle is broken", "the tea maker does not work", "taxes"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])


def test_an_unknown_embedder_choice_is_refused_with_a_message_naming_the_three() -> None:
    with pytest.raises(InvalidRequest, match="'e5', 'minilm' or 'none', not 'word2vec'"):
        make_embedder("word2vec")
    assert make_embedder("none") is None
    assert isinstance(make_embedder(" E5 "), E5Embedder)


def test_e5_gives_unit_vectors_of_384_dimensions_to_rows_and_questions(e5: E5Embedder) -> None:
    texts = ["the kettle is broken", "der Wasserkocher ist kaputt", "", "taxes"]
    for vectors in (e5.embed(texts), e5.embed_query(texts)):
        assert vectors.shape == (4, 384) and vectors.dtype == np.float32
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert e5.embed([]).shape == (0, 384)
    assert e5.name == "multilingual-e5-small-q4" and e5.dim == 384


def test_e5_loads_without_torch_the_network_or_a_change_to_the_environment() -> None:
    """In a fresh process whose sockets refuse to connect: the model is a file in the wheel."""
    script = """
import os, socket, sys
def refuse(*args, **kwargs):
    raise OSError("no network in this test")
socket.socket.connect = refuse
socket.create_connection = refuse
from memory.embedder import E5Embedder
before = dict(os.environ)
embedder = E5Embedder()
assert embedder.embed_query(["Wann hat Tom Geburtstag?"]).shape == (1, 384)
assert dict(os.environ) == before, "the environment changed"
assert "torch" not in sys.modules, "torch was loaded"
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    done = subprocess.run(  # noqa: S603 -- our own interpreter, our own script
        [sys.executable, "-c", script], capture_output=True, text=True, env=env,
        cwd=Path(__file__).resolve().parents[2], timeout=120, check=False)
    assert done.returncode == 0, done.stderr


FACTS = ("Tom's birthday is on the 2nd of May.", "The bins go out on Tuesday nights.",
         "Ellie has a dentist appointment on Friday at four.",
         "Maya is allergic to penicillin.", "The car's MOT runs out in September.")
FAKTEN = ("Toms Geburtstag ist am 2. Mai.", "Die Mülltonnen kommen dienstagabends raus.",
          "Ellie hat am Freitag um vier einen Zahnarzttermin.",
          "Maya ist allergisch gegen Penicillin.", "Der TÜV vom Auto läuft im September ab.")


@pytest.mark.parametrize(("question", "facts", "answer"), [
    ("Wann hat Tom Geburtstag?", FACTS, 0),
    ("Gegen welches Medikament ist Maya allergisch?", FACTS, 3),
    ("When do the bins go out?", FAKTEN, 1),
    ("When is Ellie's dentist appointment?", FAKTEN, 2),
])
def test_with_e5_a_question_is_nearest_its_fact_told_in_another_language(
    e5: E5Embedder, question: str, facts: tuple[str, ...], answer: int,
) -> None:
    sims = e5.embed(list(facts)) @ e5.embed_query([question])[0]
    assert int(np.argmax(sims)) == answer


def test_e5_embeds_a_question_apart_from_a_stored_row_and_says_so(e5: E5Embedder) -> None:
    """Rows are e5 passages and questions e5 queries: the pairing that found the evidence more
    often on the project's households (`memory.embedder.E5Embedder`)."""
    text = ["When is Tom's birthday?"]
    assert e5.symmetric is False
    assert float(e5.embed(text)[0] @ e5.embed_query(text)[0]) < 0.99


def test_minilm_embeds_a_question_as_it_embeds_a_stored_row(minilm: MiniLMEmbedder) -> None:
    text = ["When is Tom's birthday?"]
    assert minilm.symmetric is True
    assert np.array_equal(minilm.embed(text), minilm.embed_query(text))


@pytest.mark.parametrize("model", ["e5", "minilm"])
def test_only_the_opening_of_a_long_text_is_embedded(
    model: str, request: pytest.FixtureRequest,
) -> None:
    embedder: Embedder = request.getfixturevalue(model)
    opening = ("Notes from the allotment: the beans are up, the slugs are winning, and the "
               "shed roof leaks again. ") * 20
    opening = opening[:MAX_EMBEDDED_CHARS]
    for way in (embedder.embed, embedder.embed_query):
        capped = way([opening])[0]
        for tail in (" Completely different: the tax return is due.", "x" * 20_000):
            assert float(way([opening + tail])[0] @ capped) > 0.9999


async def test_a_paraphrase_is_recalled_without_sharing_a_keyword(real_home: Household) -> None:
    m = real_home.memory
    await m.beliefs.remember(real_home.bob.person_id, "Bob is allergic to peanuts")
    await m.beliefs.remember(real_home.bob.person_id, "Bob's car is a green estate")
    found = await m.recall.search(real_home.dm(real_home.bob), "nut allergy")
    assert [r.belief.proposition for r in found][:1] == ["Bob is allergic to peanuts"]
    assert found[0].keyword == 0.0 and found[0].semantic > 0.4


async def test_an_unrelated_question_recalls_nothing(real_home: Household) -> None:
    m = real_home.memory
    await m.beliefs.remember(real_home.bob.person_id, "Bob is allergic to peanuts")
    await m.beliefs.remember(real_home.bob.person_id, "Bob's car is a green estate")
    assert await m.recall.search(real_home.dm(real_home.bob), "what is the capital of Peru") == []


async def test_vectors_survive_a_restart_and_are_searched_only_behind_the_wall(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    db = tmp_path / "hearth.db"
    home = await make_household(db, embedder=minilm)
    await home.memory.beliefs.remember(home.alice.person_id,
            "Alice is pregnant with her second child")
    await home.memory.close()
    memory = await Memory.open(db, embedder=minilm)
    try:
        alice = await memory.people.by_name("Alice")
        bob = await memory.people.by_name("Bob")
        def ctx(pid: str) -> AccessContext:
            return AccessContext.for_member(pid, Activity.DM_CONVERSATION, "test")

        found = await memory.recall.search(ctx(alice.person_id), "is she expecting a baby")
        assert len(found) == 1 and found[0].semantic > 0.5  # found by its reloaded vector
        assert await memory.recall.search(ctx(bob.person_id), "is she expecting a baby") == []
    finally:
        await memory.close()


# One text's vector against the batch's: float32 is the same graph's arithmetic, bfloat16
# its rounding (`memory.embedder.BF16_AGREEMENT`).
SAME = {"float32": 0.99999, "bfloat16": BF16_AGREEMENT}


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_a_fresh_models_first_text_alone_gets_the_vector_a_batch_gives_it(
    precision: Precision,
) -> None:
    fresh = MiniLMEmbedder(one_text=precision)  # nothing has run through its tokenizer yet
    assert fresh.precision == precision
    texts = ["Who is my GP?", "a long line " + "about the garden and the shed " * 80]
    alone = [fresh.embed([text])[0] for text in texts]
    together = fresh.embed(texts)
    assert [float(a @ b) > SAME[precision]
            for a, b in zip(alone, together, strict=True)] == [True, True]


def test_a_query_is_embedded_in_bfloat16_only_where_that_is_quicker_and_agrees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("memory.embedder.BF16_QUICKER", 0.0)  # never quicker enough
    assert MiniLMEmbedder().precision == "float32"
    monkeypatch.setattr("memory.embedder.BF16_QUICKER", 100.0)  # always
    assert MiniLMEmbedder().precision == "bfloat16"
    monkeypatch.setattr("memory.embedder.BF16_AGREEMENT", 1.01)  # no rounding is that close
    assert MiniLMEmbedder().precision == "float32"


def test_one_text_alone_gets_the_vector_it_gets_among_others(minilm: MiniLMEmbedder) -> None:
    texts = ["When is Maya's German oral exam?", "the kettle is broken", "",
             "Ich vermisse die Käsespätzle von meiner Oma 🧀 so sehr.",
             "a long line " + "about the garden and the shed and the fence " * 60]
    import torch  # noqa: PLC0415 -- loaded with the model

    threads = torch.get_num_threads()
    together = minilm.embed(texts)
    for i, text in enumerate(texts):
        alone = minilm.embed([text])
        assert alone.shape == (1, 384) and alone.dtype == np.float32
        assert float(alone[0] @ together[i]) > SAME[minilm.precision]
    assert torch.get_num_threads() == threads  # one text runs on one; batches keep them all


async def told_to_bob(home: Household, question: str) -> tuple[list[str], list[str]]:
    """The lines recalled for Bob's question in his DM, and those of them told as sure."""
    found = [f for f in await home.memory.recall.recollect(home.dm(home.bob), question)
             if isinstance(f, Quoted)]
    return [f.turn.text for f in found], [f.turn.text for f in found if f.sure]


BUSES = tuple(f"The {hour} o'clock bus was late again." for hour in range(1, 21))


async def bob_says(home: Household, *lines: str) -> None:
    """Bob's lines in his DM, then a dozen alike that bear on nothing asked: a question then
    scores against his DM's lines rather than the prior a small scope leans on."""
    for text in (*lines, *BUSES):
        await say_as(home.memory, home.bob, text)

