"""Questions asked while memory's CPU thread is busy (a household talking at once) wait for it
together and are embedded in one call: each asker still gets their own question's vector, a
failure fails every waiting question at once, and memory closing never leaves one waiting."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import numpy as np
import pytest

from memory.embedder import Vectors
from memory.errors import InvalidRequest
from tests.helpers import HashEmbedder, make_household


class HeldEmbedder(HashEmbedder):
    """Holds its first question call until released, and records each call's questions."""

    symmetric = False

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.started = threading.Event()
        self.release = threading.Event()
        self.fail = fail

    def embed_query(self, texts: list[str]) -> Vectors:
        self.calls.append(list(texts))
        if len(self.calls) == 1:
            self.started.set()
            self.release.wait(10)
        if self.fail:
            raise RuntimeError("the model fell over")
        return super().embed(texts)


async def started(embedder: HeldEmbedder) -> None:
    assert await asyncio.to_thread(embedder.started.wait, 10), "the first question never ran"


async def test_questions_asked_while_one_embeds_are_embedded_together_each_its_own(
    tmp_path: Path,
) -> None:
    embedder = HeldEmbedder()
    home = await make_household(tmp_path / "hearth.db", embedder=embedder)
    try:
        book = home.memory.vectors
        first = asyncio.ensure_future(book.question("when are the bins out", asker="bob"))
        await started(embedder)
        asked = {"alice": "where is the spare key", "olivia": "what does the cat eat",
                 "bob": "who fixes the boiler"}
        waiting = {who: asyncio.ensure_future(book.question(q, asker=who))
                   for who, q in asked.items()}
        await asyncio.sleep(0.05)
        embedder.release.set()
        got = {who: await made for who, made in waiting.items()}
        await first
        assert embedder.calls == [["when are the bins out"], list(asked.values())]
        for who, question in asked.items():
            assert np.allclose(got[who], HashEmbedder().embed([question])[0])
    finally:
        embedder.release.set()
        await home.memory.close()


async def test_a_failing_model_fails_every_waiting_question_and_the_next_is_asked_again(
    tmp_path: Path,
) -> None:
    embedder = HeldEmbedder(fail=True)
    home = await make_household(tmp_path / "hearth.db", embedder=embedder)
    try:
        book = home.memory.vectors
        first = asyncio.ensure_future(book.question("when are the bins out", asker="bob"))
        await started(embedder)
        second = asyncio.ensure_future(book.question("where is the key", asker="alice"))
        await asyncio.sleep(0.05)
        embedder.release.set()
        for made in (first, second):
            with pytest.raises(RuntimeError, match="fell over"):
                await asyncio.wait_for(made, 5)
        embedder.fail = False
        again = await asyncio.wait_for(book.question("where is the key", asker="alice"), 5)
        assert np.allclose(again, HashEmbedder().embed(["where is the key"])[0])
    finally:
        embedder.release.set()
        await home.memory.close()


async def test_a_question_still_waiting_when_memory_closes_is_refused_not_left_waiting(
    tmp_path: Path,
) -> None:
    embedder = HeldEmbedder()
    home = await make_household(tmp_path / "hearth.db", embedder=embedder)
    book = home.memory.vectors
    first = asyncio.ensure_future(book.question("when are the bins out", asker="bob"))
    try:
        await started(embedder)
        waiting = asyncio.ensure_future(book.question("where is the key", asker="alice"))
        await asyncio.sleep(0.05)
        book.close()
        with pytest.raises(InvalidRequest, match="closed"):
            await asyncio.wait_for(waiting, 5)
    finally:
        embedder.release.set()
        await first
        await home.memory.close()
