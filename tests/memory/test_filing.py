"""Filing a turn's line after the reply: the reply does not wait for the line's embedding, the
line is filed once memory is quiet (or within a bound, however busy), and until then its
meaning is unread, so it is used only where the most private class could be."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest

from memory import (
    SHARED,
    Activity,
    E5Embedder,
    Memory,
    Quoted,
    Recalled,
    Role,
    Sensitivity,
    private_scope,
)
from memory.embedder import Vectors
from tests.helpers import HashEmbedder, Household, make_household


def _text(recalled: Recalled | Quoted) -> str:
    return (recalled.turn.text if isinstance(recalled, Quoted)
            else recalled.belief.proposition)


def filed(db: Path) -> set[int]:
    """The lines that have a vector."""
    conn = sqlite3.connect(db)
    try:
        return {int(r[0]) for r in conn.execute("SELECT turn_id FROM turn_vectors")}
    finally:
        conn.close()


async def said_in_a_turn(memory: Memory, speaker_id: str, text: str, *,
                         scope: str = SHARED) -> int:
    turn_id, fresh = await memory.transcript.receive(
        chat_id="group:1" if scope == SHARED else f"dm:{speaker_id}", speaker_id=speaker_id,
        role=Role.USER, scope=scope, text=text, source_update=None, file_later=True)
    assert fresh
    return turn_id


async def until(predicate: object, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "it never happened"
        await asyncio.sleep(0.02)


async def test_a_line_said_in_a_turn_is_filed_once_memory_is_quiet(
    home: Household, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("memory.vectors.FILE_QUIET_S", 0.2)
    line = await said_in_a_turn(home.memory, home.bob.person_id, "The bins go out on Tuesday")
    assert line not in filed(tmp_path / "hearth.db")  # the turn's reply did not wait for it
    assert home.memory.vectors.unfiled == {line}
    # A line leaves `unfiled` only after its vector is stored: waited for in that order, since
    # the filer may be between the two when the file is read.
    await until(lambda: not home.memory.vectors.unfiled)
    assert line in filed(tmp_path / "hearth.db")


async def test_a_line_is_filed_within_the_bound_while_questions_keep_coming(
    home: Household, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("memory.vectors.FILE_QUIET_S", 60.0)
    monkeypatch.setattr("memory.vectors.FILE_WITHIN_S", 0.3)
    line = await said_in_a_turn(home.memory, home.bob.person_id, "The boiler clicks again")
    started = time.monotonic()
    while line not in filed(tmp_path / "hearth.db"):
        assert time.monotonic() - started < 5, "a busy household kept the line unfiled"
        await home.memory.vectors.question("what about the boiler?")  # never quiet
        await asyncio.sleep(0.01)


async def test_a_line_forgotten_before_it_is_filed_gets_no_vector(
    home: Household, tmp_path: Path,
) -> None:
    m = home.memory
    line = await said_in_a_turn(m, home.bob.person_id, "My brother owes me forty pounds",
                                scope=private_scope(home.bob.person_id))
    await m.forgetting.forget(home.dm(home.bob, Activity.MEMBER_INSPECT), "brother owes")
    assert m.vectors.unfiled == frozenset()  # its words left the queue with the forget
    await m.vectors.file_waiting()
    assert line not in filed(tmp_path / "hearth.db")


async def test_a_line_left_unfiled_at_a_stop_is_filed_when_memory_opens_again(
    tmp_path: Path,
) -> None:
    db = tmp_path / "hearth.db"
    home = await make_household(db)
    line = await said_in_a_turn(home.memory, home.bob.person_id, "We ran out of oat milk")
    await home.memory.close()
    assert line not in filed(db)
    reopened = await Memory.open(db, embedder=home.memory.vectors.embedder)
    try:
        assert line in filed(db)
        found = await reopened.recall.recollect(home.dm(home.bob), "oat milk", unrelated=True)
        assert any("oat milk" in _text(r) for r in found)
    finally:
        await reopened.close()


async def test_taking_in_another_process_lines_files_this_ones_first(
    home: Household, tmp_path: Path,
) -> None:
    line = await said_in_a_turn(home.memory, home.bob.person_id, "The cat sleeps on the radiator")
    await home.memory.vectors.sync()  # the tick's first step
    assert line in filed(tmp_path / "hearth.db")
    assert home.memory.vectors.unfiled == frozenset()


async def test_an_unfiled_line_is_recalled_in_its_members_chat_but_not_for_the_group(
    tmp_path: Path, e5: E5Embedder,
) -> None:
    home = await make_household(tmp_path / "hearth.db", embedder=e5)
    m = home.memory
    try:
        text = "Bob was treated for chlamydia at the walk-in on Friday"
        await said_in_a_turn(m, home.bob.person_id, text)
        question = "What happened to Bob at the walk-in on Friday?"
        # Unread, the line could hold anything: the group, which may not use a credential,
        # is not handed it; Bob's own chat, which may use any class, is.
        in_group = await m.recall.recollect(home.group(), question, unrelated=True)
        assert all("chlamydia" not in _text(r) for r in in_group)
        in_dm = await m.recall.recollect(home.dm(home.bob), question, unrelated=True)
        assert any("chlamydia" in _text(r) for r in in_dm)
        await m.vectors.file_waiting()
        (line,) = [t for t in await m.transcript.lines(home.dm(home.bob, Activity.MEMBER_INSPECT))
                   if t.text == text]
        assert line.sensitivity is Sensitivity.HEALTH  # read by its meaning once filed
        in_group = await m.recall.recollect(home.group(), question, unrelated=True)
        assert all("chlamydia" not in _text(r) for r in in_group)
    finally:
        await m.close()


class ChokingEmbedder(HashEmbedder):
    """Fails on one text, as an embedder might on something it cannot read."""

    def embed(self, texts: list[str]) -> Vectors:
        if any("choke" in t for t in texts):
            raise ValueError("cannot embed this")
        return super().embed(texts)


async def test_a_line_that_cannot_be_filed_does_not_hold_up_the_lines_after_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    home = await make_household(tmp_path / "hearth.db", embedder=ChokingEmbedder())
    m = home.memory
    try:
        bad = await said_in_a_turn(m, home.bob.person_id, "this line will choke the embedder")
        good = await said_in_a_turn(m, home.bob.person_id, "The bins go out on Tuesday")
        await m.vectors.file_waiting()
        assert filed(tmp_path / "hearth.db") >= {good}
        assert bad not in filed(tmp_path / "hearth.db")
        assert m.vectors.unfiled == frozenset()
        assert "could not be filed" in caplog.text
    finally:
        await m.close()


class CountingEmbedder(HashEmbedder):
    """Records the texts of each call that embeds stored rows."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> Vectors:
        self.calls.append(list(texts))
        return super().embed(texts)


async def test_lines_waiting_together_are_filed_in_one_pass_of_the_model(
    tmp_path: Path,
) -> None:
    embedder = CountingEmbedder()
    home = await make_household(tmp_path / "hearth.db", embedder=embedder)
    m = home.memory
    try:
        said = ["The bins go out on Tuesday", "Grandma visits at Easter",
                "The boiler clicks again", "Bob's bike has a flat tyre"]
        embedder.calls.clear()
        lines = [await said_in_a_turn(m, home.bob.person_id, text) for text in said]
        await m.vectors.file_waiting()
        assert filed(tmp_path / "hearth.db") >= set(lines)
        assert [call for call in embedder.calls if call] == [said]
    finally:
        await m.close()
