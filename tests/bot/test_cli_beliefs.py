"""`hearth beliefs --as NAME [--as-of DATE]`: a member's visible beliefs as they stood on a day."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.cli import main
from memory import AccessContext, Activity, Memory
from tests.helpers import TestClock

JAN = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)
MAY = datetime(2026, 5, 4, 18, 0, tzinfo=UTC)


class Shell:
    def __init__(self, db: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.db = db
        self.capsys = capsys

    def __call__(self, *argv: str) -> tuple[int, str, str]:
        code = main([*argv, "--db", str(self.db)])
        out, err = self.capsys.readouterr()
        return code, out, err


@pytest.fixture
def hearth(tmp_path: Path, capsys: pytest.CaptureFixture[str],
           monkeypatch: pytest.MonkeyPatch) -> Shell:
    monkeypatch.setenv("HEARTH_EMBEDDER", "none")
    monkeypatch.setenv("HEARTH_TIMEZONE", "Europe/Berlin")
    monkeypatch.chdir(tmp_path)
    return Shell(tmp_path / "home.db", capsys)


def _job_change(db: Path) -> None:
    """Bob works at the bakery from 10 January; on 4 May he starts at the library (the newer
    belief supersedes the older); Alice keeps a private note; the household shares one."""

    async def write() -> None:
        clock = TestClock(JAN)
        memory = await Memory.open(db, create=True, clock=clock)
        try:
            await memory.people.add("Olivia", telegram_id=1001, owner=True)
            bob = await memory.people.add("Bob", telegram_id=1002)
            alice = await memory.people.add("Alice", telegram_id=1003)
            old = await memory.beliefs.remember(bob.person_id, "Bob works at the bakery")
            await memory.beliefs.remember(alice.person_id, "Alice is learning the cello")
            await memory.beliefs.remember(bob.person_id, "The bins go out on Tuesday",
                                          shared=True)
            clock.set(MAY)
            new = await memory.beliefs.remember(bob.person_id, "Bob works at the library")
            ctx = AccessContext.for_member(bob.person_id, Activity.DM_CONVERSATION, "a test")
            assert old.belief_id is not None and new.belief_id is not None
            assert await memory.beliefs.supersede(ctx, old.belief_id, new.belief_id)
        finally:
            await memory.close()

    asyncio.run(write())


def test_beliefs_as_of_a_day_show_what_held_then_with_its_validity(hearth: Shell) -> None:
    _job_change(hearth.db)
    code, out, err = hearth("beliefs", "--as", "Bob", "--as-of", "2026-03-15")
    assert code == 0 and err == ""
    rows = [line.split("\t") for line in out.strip().splitlines()]
    assert [r[5] for r in rows] == ["Bob works at the bakery", "The bins go out on Tuesday"]
    assert rows[0][2] == "active" and rows[0][3] == "private" and rows[1][3] == "shared"
    assert rows[0][6] == "(from 2026-01-10 until 2026-05-04)"
    assert rows[1][6] == "(from 2026-01-10)"
    # The day he changed jobs ends with the library, in the household's time zone.
    code, out, _ = hearth("beliefs", "--as", "Bob", "--as-of", "2026-05-04")
    assert code == 0
    assert "Bob works at the library\t(from 2026-05-04)" in out and "bakery" not in out


def test_beliefs_never_show_another_members_private_note(hearth: Shell) -> None:
    _job_change(hearth.db)
    code, out, _ = hearth("beliefs", "--as", "Alice", "--as-of", "2026-03-15")
    assert code == 0
    assert "cello" in out and "Tuesday" in out
    assert "Bob works" not in out
    code, out, _ = hearth("beliefs", "--as", "Bob", "--as-of", "2026-03-15")
    assert "cello" not in out


def test_before_anything_was_said_no_belief_held(hearth: Shell) -> None:
    _job_change(hearth.db)
    code, out, _ = hearth("beliefs", "--as", "Bob", "--as-of", "2025-12-31")
    assert code == 0
    assert out.strip() == "no belief Bob may see held on 2025-12-31"


def test_without_a_date_beliefs_show_what_holds_now(hearth: Shell) -> None:
    assert hearth("people", "add", "Olivia", "--owner")[0] == 0
    assert hearth("remember", "--as", "Olivia", "Olivia", "plays", "the", "oboe")[0] == 0
    code, out, _ = hearth("beliefs", "--as", "Olivia")
    assert code == 0
    assert out.count("\n") == 1 and "Olivia plays the oboe" in out


@pytest.mark.parametrize("day", ["2026-13-01", "15/03/2026", "yesterday", "2026-3-15", "",
                                 "2026-W11-1", "2026-02-30"])
def test_a_bad_date_exits_non_zero_with_one_clear_line(hearth: Shell, day: str) -> None:
    _job_change(hearth.db)
    code, out, err = hearth("beliefs", "--as", "Bob", "--as-of", day)
    assert code != 0 and out == ""
    assert err.strip().count("\n") == 0
    assert "is not a day like 2026-03-15" in err


def test_an_unknown_member_exits_non_zero_with_one_line(hearth: Shell) -> None:
    _job_change(hearth.db)
    code, out, err = hearth("beliefs", "--as", "Mallory", "--as-of", "2026-03-15")
    assert code != 0 and out == ""
    assert err.strip().count("\n") == 0 and "Mallory" in err


def test_explain_says_how_each_beliefs_class_was_given(hearth: Shell) -> None:
    assert hearth("people", "add", "Olivia", "--owner")[0] == 0
    assert hearth("remember", "--as", "Olivia", "Olivia", "plays", "the", "oboe")[0] == 0
    assert hearth("remember", "--as", "Olivia", "Olivia's", "PIN", "is", "private")[0] == 0
    code, out, _ = hearth("beliefs", "--as", "Olivia", "--explain")
    assert code == 0
    lines = {line.split("\t")[5]: line.split("\t")[-1] for line in out.splitlines()}
    assert lines["Olivia plays the oboe"] == "ordinary by its words"
    assert lines["Olivia's PIN is private"] == "credentials by its words"
    plain = hearth("beliefs", "--as", "Olivia")[1]
    assert "by its words" not in plain  # only asked for
