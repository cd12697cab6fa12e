"""The `hearth` command line, run in-process as a household would type it."""

from __future__ import annotations

import asyncio
import io
import json
import os
import pwd
import shutil
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pexpect
import pytest

from bot.cli import main
from bot.settings import load_settings
from memory import Memory, Role, private_scope
from tests.helpers import raw_bytes
from tests.support.model_server import (
    ModelServer,
    ResponsePlan,
    household_responder,
    scripted,
)


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
    monkeypatch.chdir(tmp_path)
    return Shell(tmp_path / "home.db", capsys)


@pytest.fixture
def household(hearth: Shell) -> Shell:
    assert hearth("people", "add", "Olivia", "--telegram-id", "1001", "--owner")[0] == 0
    assert hearth("people", "add", "Bob", "--telegram-id", "1002")[0] == 0
    assert hearth("people", "add", "Alice")[0] == 0
    return hearth


def test_people_are_added_and_listed_with_the_owner_flagged(household: Shell) -> None:
    code, out, _ = household("people")
    assert code == 0
    lines = out.strip().splitlines()
    assert [line.split("\t")[0] for line in lines] == ["Olivia", "Bob", "Alice"]
    assert lines[0].endswith("owner") and lines[1].endswith("member")
    assert "1002" not in lines[1].split("\t")[1]  # the person id is not the telegram id


def test_a_second_owner_is_refused_with_one_line(household: Shell) -> None:
    code, out, err = household("people", "add", "Mallory", "--owner")
    assert code == 1 and out == ""
    assert err.strip().count("\n") == 0 and "already has an owner" in err


def test_a_fact_told_privately_is_recalled_by_its_teller_only(household: Shell) -> None:
    assert household("remember", "--as", "Bob", "Bob's", "allotment", "is", "plot", "14")[0] == 0
    code, out, _ = household("recall", "--as", "Bob", "allotment plot")
    assert code == 0 and "Bob's allotment is plot 14" in out
    for args in (("--as", "Alice"), ("--as", "Olivia"), ("--as", "Bob", "--group")):
        code, out, _ = household("recall", *args, "allotment plot")
        assert code == 0 and out.strip() == "nothing recalled"


def test_recall_explain_shows_every_candidate_with_its_verdict_why_and_signals(
    household: Shell,
) -> None:
    household("remember", "--as", "Bob", "Bob's allotment is plot 14")
    household("remember", "--as", "Bob", "Bob's bike is green")
    code, out, _ = household("recall", "--as", "Bob", "--explain", "allotment plot")
    assert code == 0
    first, why, signals = out.splitlines()[:3]
    assert first.startswith("1. ") and "Bob's allotment is plot 14" in first
    assert why.strip().startswith(("answers (", "related ("))
    assert "lead=" in signals and "coverage=" in signals
    code, out, _ = household("recall", "--as", "Alice", "--explain", "allotment plot")
    assert code == 0 and "allotment" not in out  # another member's note, never weighed


def test_a_health_fact_needs_a_grant_for_proactive_work_and_revoke_closes_it(
    household: Shell,
) -> None:
    household("remember", "--as", "Bob", "Bob takes insulin for his diabetes")
    query = ("recall", "--as", "Bob", "--activity", "proactive", "insulin diabetes")
    assert household(*query)[1].strip() == "nothing recalled"
    code, out, _ = household("grant", "--as", "Bob", "proactive", "health", "--days", "7")
    assert code == 0 and "granted proactive health" in out
    assert "insulin" in household(*query)[1]
    assert "active" in household("grants", "--as", "Bob")[1]
    assert household("revoke", "--as", "Bob", "proactive", "health")[0] == 0
    assert household(*query)[1].strip() == "nothing recalled"
    assert "revoked" in household("grants", "--as", "Bob")[1]


def test_credentials_cannot_be_granted(household: Shell) -> None:
    code, out, err = household("grant", "--as", "Bob", "proactive", "credentials")
    assert code == 1 and "never granted" in err and out == ""
    code, out, err = household("grant", "--as", "Bob", "all", "credentials")
    assert code == 1 and out == ""


def test_a_wildcard_grant_opens_health_and_finance_but_never_credentials(
    household: Shell,
) -> None:
    household("remember", "--as", "Bob", "Bob's phone PIN is 5820")
    household("remember", "--as", "Bob", "Bob's salary went up this year")
    code, out, _ = household("grant", "--as", "Bob", "all", "all")
    assert code == 0 and out.count("granted") == 8
    assert "credentials" not in out
    code, out, _ = household("recall", "--as", "Bob", "--activity", "proactive", "Bob's salary")
    assert "salary" in out
    code, out, _ = household("recall", "--as", "Bob", "--activity", "proactive",
                             "Bob's phone PIN")
    assert "PIN" not in out and "5820" not in out
    code, out, _ = household("revoke", "--as", "Bob", "all", "all")
    assert code == 0 and out.strip() == "revoked 8 grant(s)"


def test_inspect_and_export_show_a_members_own_view(household: Shell) -> None:
    household("remember", "--as", "Bob", "Bob is allergic to cats")
    household("remember", "--as", "Alice", "Alice is afraid of spiders")
    code, out, _ = household("inspect", "--as", "Bob")
    assert code == 0 and "allergic to cats" in out and "spiders" not in out
    code, out, _ = household("export", "--as", "Bob")
    document = json.loads(out)
    assert [b["proposition"] for b in document["beliefs"]] == ["Bob is allergic to cats"]
    assert "spiders" not in out


def test_inspect_explain_says_how_each_beliefs_class_was_given(household: Shell) -> None:
    household("remember", "--as", "Bob", "Bob is allergic to cats")
    code, out, _ = household("inspect", "--as", "Bob", "--explain")
    assert code == 0
    (line,) = out.strip().splitlines()
    assert line.endswith("health by its words")  # keyword-only here: the word rules decide
    assert "by its words" not in household("inspect", "--as", "Bob")[1]


def test_forget_with_yes_prints_the_count_and_the_fact_is_gone(household: Shell) -> None:
    household("remember", "--as", "Bob", "Bob hides chocolate in the piano")
    code, out, _ = household("forget", "--as", "Bob", "--yes", "chocolate")
    assert code == 0 and out.strip() == "forgot 1 belief(s)"
    assert household("recall", "--as", "Bob", "chocolate piano")[1].strip() == "nothing recalled"


@pytest.mark.parametrize(("answer", "gone"), [("y\n", True), ("n\n", False), ("", False)])
def test_forget_shows_what_will_go_and_asks_first(
    household: Shell, monkeypatch: pytest.MonkeyPatch, answer: str, gone: bool
) -> None:
    household("remember", "--as", "Bob", "Bob hides chocolate in the piano")
    monkeypatch.setattr("sys.stdin", io.StringIO(answer))
    code, out, _ = household("forget", "--as", "Bob", "chocolate")
    assert code == 0
    assert "Bob hides chocolate in the piano" in out and "[y/N]" in out
    assert ("forgot 1 belief(s)" in out) is gone
    assert ("nothing was forgotten" in out) is not gone
    recalled = household("recall", "--as", "Bob", "chocolate piano")[1].strip()
    assert (recalled == "nothing recalled") is gone


def bob_said(household: Shell, text: str) -> None:
    """A line Bob said in his DM, stored as the bot stores it, before any tick."""
    async def say() -> None:
        memory = await Memory.open(household.db)
        try:
            bob = await memory.people.by_name("Bob")
            await memory.transcript.append(chat_id="dm:1002", speaker_id=bob.person_id,
                                           role=Role.USER, scope=private_scope(bob.person_id),
                                           text=text)
        finally:
            await memory.close()

    asyncio.run(say())


def test_forget_shows_that_what_was_said_loses_the_words_too(
    household: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    bob_said(household, "I hide chocolate in the piano")
    household("remember", "--as", "Bob", "Bob hides chocolate in the piano")
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    code, out, _ = household("forget", "--as", "Bob", "chocolate")
    assert code == 0
    assert "Bob hides chocolate in the piano" in out
    assert "and the same words in 1 thing(s) said" in out


def test_forget_before_the_tick_asks_about_what_was_said_and_scrubs_it(
    household: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    bob_said(household, "I keep the spare key under the gnome")  # not consolidated yet
    monkeypatch.setattr("sys.stdin", io.StringIO("yes\n"))
    code, out, _ = household("forget", "--as", "Bob", "spare key under the gnome")
    assert code == 0 and "thing(s) said mention it" in out and "forgot 0 belief(s)" in out
    assert "gnome" not in household("export", "--as", "Bob")[1]


def test_receipts_list_reads_and_verify_names_the_first_broken_link(household: Shell) -> None:
    household("remember", "--as", "Bob", "Bob likes jazz")
    household("recall", "--as", "Bob", "jazz")
    household("recall", "--as", "Alice", "jazz")
    code, out, _ = household("receipts")
    assert code == 0 and out.count("recall") == 2
    code, out, _ = household("receipts", "--as", "Alice")
    assert out.count("\n") == 1  # her own recall; listing it is a read, receipted after it
    assert household("receipts", "verify")[1].startswith("ledger intact: 4 receipt(s)")
    conn = sqlite3.connect(household.db)
    with conn:
        conn.execute("UPDATE receipts SET actor = 'someone' WHERE seq = 2")
    conn.close()
    code, out, _ = household("receipts", "verify")
    assert code == 1 and out.startswith("ledger broken at receipt #2")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (("recall", "--as", "Nobody", "x"), "no member named"),
        (("remember", "--as", "Bob", "   "), "empty"),
        (("recall", "--as", "Bob", " "), "empty"),
        (("forget", "--as", "Bob", "..."), "empty"),
        (("recall", "--as", "Bob", "--activity", "snooping", "x"), "invalid choice"),
        (("grant", "--as", "Bob", "dm_conversation", "health"), "does not take grants"),
        (("grant", "--as", "Bob", "proactive", "gossip"), "unknown class"),
        (("grant", "--as", "Bob", "proactive", "health", "--shared"), "owner"),
        (("forget", "--as", "Bob", "--shared", "x"), "owner"),
        (("recall", "--as", "Bob", "--group", "--activity", "dm_conversation", "x"),
         "not a read"),
        (("remember", "--as", "Bob", "my key is sk-proj-9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c"),
         "secret token"),
        (("frobnicate",), "invalid choice"),
    ],
)
def test_bad_input_gets_one_clear_line_and_a_non_zero_exit(
    household: Shell, argv: tuple[str, ...], needle: str
) -> None:
    code, out, err = household(*argv)
    assert code != 0
    assert needle in err
    assert err.strip().count("\n") == 0
    assert "Traceback" not in err + out
    assert "sk-proj" not in err + out


def test_a_missing_database_is_one_clear_line(hearth: Shell) -> None:
    code, _, err = hearth("recall", "--as", "Bob", "x")
    assert code == 1 and "no database at" in err and "Traceback" not in err


def test_a_corrupt_database_is_one_clear_line(hearth: Shell) -> None:
    hearth.db.write_bytes(b"this is not sqlite at all" * 100)
    code, _, err = hearth("inspect", "--as", "Bob")
    assert code == 1 and "not a usable hearth database" in err
    assert err.strip().count("\n") == 0


def test_a_malformed_setting_is_one_clear_line(
    household: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HEARTH_EMBEDDER", "word2vec")
    code, _, err = household("recall", "--as", "Bob", "x")
    assert code == 1 and "HEARTH_EMBEDDER" in err and err.strip().count("\n") == 0


def test_the_embedder_setting_defaults_to_e5_and_a_bad_one_names_the_three_choices(
    household: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HEARTH_EMBEDDER")
    assert load_settings(_env_file=None).embedder == "e5"
    monkeypatch.setenv("HEARTH_EMBEDDER", "word2vec")
    code, _, err = household("recall", "--as", "Bob", "x")
    assert code == 1 and err.strip().count("\n") == 0
    assert "HEARTH_EMBEDDER" in err and "'e5', 'minilm' or 'none'" in err


def test_doctor_loads_the_default_embedder_offline_and_says_which(
    hearth: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HEARTH_EMBEDDER")
    code, out, _ = hearth("doctor")
    assert code == 0, out
    assert "ok    embedder multilingual-e5-small-q4: loaded offline, 384 dimensions" in out


def test_backup_and_restore_round_trip_the_household_but_not_what_was_forgotten_since(
    household: Shell, tmp_path: Path
) -> None:
    household("remember", "--as", "Bob", "Bob's bike lock code is on a sticky note")
    household("remember", "--as", "Bob", "Bob plays the tuba on Sundays")
    copy = tmp_path / "copy.db"
    assert household("backup", str(copy))[0] == 0
    household("remember", "--as", "Bob", "Bob grows tomatoes")  # after the backup: gone
    household("forget", "--as", "Bob", "--yes", "bike lock")
    assert household("restore", str(copy))[0] == 0
    shown = household("inspect", "--as", "Bob")[1]
    assert "tuba" in shown  # the backup comes back...
    assert "tomatoes" not in shown  # ...as it was...
    assert "bike lock" not in shown  # ...less what was forgotten since it was made
    assert household("receipts", "verify")[0] == 0
    assert b"bike lock" not in raw_bytes(household.db)


def test_a_backup_into_a_folder_that_does_not_exist_says_so_in_one_line(
    household: Shell, tmp_path: Path
) -> None:
    code, out, err = household("backup", str(tmp_path / "nowhere" / "copy.db"))
    assert code == 1 and out == ""
    assert "no folder" in err and "nowhere" in err and err.strip().count("\n") == 0
    assert not (tmp_path / "nowhere").exists()


def test_doctor_on_a_fresh_machine_notes_what_is_missing_and_succeeds(
    hearth: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    code, out, _ = hearth("doctor")
    assert code == 0
    assert "note  TELEGRAM_BOT_TOKEN: not set" in out
    assert "note  database: none yet" in out
    assert "ok    embedder: none (keyword-only recall)" in out
    assert out.splitlines()[-1].startswith("next: `hearth init` asks for the bot token")
    assert "hearth chat" not in out  # `make run` talks in this terminal anyway


def test_once_a_token_is_configured_doctor_says_how_to_talk_in_the_terminal_again(
    household: Shell, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("TELEGRAM_BOT_TOKEN", "HEARTH_OWNER_TELEGRAM_ID", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".env").write_text(f"TELEGRAM_BOT_TOKEN={BOT_TOKEN}\n"
                                   "HEARTH_OWNER_TELEGRAM_ID=1001\n")
    code, out, _ = household("doctor")
    assert code == 0, out
    *_, hint, next_step = out.splitlines()
    assert hint == ("to talk with her in this terminal instead: `hearth chat --as Olivia`, "
                    "or `TELEGRAM_BOT_TOKEN= make run`")
    assert next_step == "next: `make run` starts her on Telegram (or `hearth run`)"
    assert BOT_TOKEN not in out
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "")  # how `make run` is sent back to the terminal
    code, out, _ = household("doctor")
    assert "note  TELEGRAM_BOT_TOKEN: not set" in out and "hearth chat" not in out


def test_doctor_fails_on_a_broken_ledger(household: Shell) -> None:
    household("remember", "--as", "Bob", "Bob likes jazz")
    household("recall", "--as", "Bob", "jazz")
    conn = sqlite3.connect(household.db)
    with conn:
        conn.execute("UPDATE receipts SET suppressed = 9 WHERE seq = 1")
    conn.close()
    code, out, _ = household("doctor")
    assert code == 1 and "FAIL  ledger: broken at receipt #1" in out
    assert out.splitlines()[-1] == ("next: put right what the FAIL line(s) above say, then "
                                    "`hearth doctor` again")


# --- hearth run and hearth init ----------------------------------------------------------------

BOT_TOKEN = "123456:" + "A" * 30
_BOT_SETTINGS = ("TELEGRAM_BOT_TOKEN", "HEARTH_OWNER_TELEGRAM_ID", "TELEGRAM_BASE_URL",
                 "HEARTH_WEBHOOK_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "HEARTH_MODEL")


@pytest.fixture
def bare(hearth: Shell, monkeypatch: pytest.MonkeyPatch) -> Shell:
    for name in _BOT_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    return hearth


def test_run_without_a_token_or_an_owner_is_one_clear_line(
    bare: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = bare("run")
    assert code == 1 and out == "" and "TELEGRAM_BOT_TOKEN is not set" in err
    assert err.strip().count("\n") == 0
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", BOT_TOKEN)
    code, _, err = bare("run")
    assert code == 1 and "HEARTH_OWNER_TELEGRAM_ID is not set" in err
    assert BOT_TOKEN not in err
    assert not bare.db.exists()  # nothing was opened before the configuration was checked


def test_run_wires_the_bot_to_memory_the_model_and_telegram_then_closes_them(
    bare: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("HEARTH_OWNER_TELEGRAM_ID", "1001")
    monkeypatch.setenv("TELEGRAM_BASE_URL", "http://127.0.0.1:9/bot")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("HEARTH_MODEL", "test-model")
    seen: dict[str, Any] = {}

    async def fake_serve(app: Any, config: Any, *, on_ready: Any = None, **_: Any) -> None:
        seen["base_url"] = app.bot.base_url
        seen["base_file_url"] = app.bot.base_file_url
        seen["jobs"] = sorted(job.name for job in app.job_queue.jobs())
        seen["owner"] = app.bot_data.hearth.owner_telegram_id
        seen["model"] = app.bot_data.hearth.model.config.model
        on_ready("hearth_test_bot")

    monkeypatch.setattr("bot.app.serve", fake_serve)
    code, _, err = bare("run")
    assert code == 0, err
    assert err == "hearth: running as @hearth_test_bot\n"
    assert seen == {
        "base_url": f"http://127.0.0.1:9/bot{BOT_TOKEN}",
        "base_file_url": f"http://127.0.0.1:9/file/bot{BOT_TOKEN}",
        "jobs": ["dream", "proactive", "resume", "tick"],
        "owner": 1001,
        "model": "test-model",
    }
    assert bare.db.exists()
    assert bare("people")[0] == 0  # memory was closed and opens again


def _answers(monkeypatch: pytest.MonkeyPatch, *replies: str) -> None:
    pending = iter(replies)

    def answer(prompt: str = "") -> str:
        try:
            return next(pending)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr("builtins.input", answer)


@pytest.fixture
def newcomer(bare: Shell, monkeypatch: pytest.MonkeyPatch) -> Shell:
    """`hearth init` on a machine where no Ollama answers (whatever the developer runs)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    monkeypatch.setenv("HEARTH_OLLAMA_URL", f"http://127.0.0.1:{closed}")
    return bare


def test_init_asks_checks_and_writes_an_env_file_only_its_owner_can_read(
    newcomer: Shell, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _answers(monkeypatch, BOT_TOKEN, "1001", "3", "http://127.0.0.1:11434/v1", "", "")
    code, out, err = newcomer("init", "--no-check")
    assert code == 0, err
    env = tmp_path / ".env"
    assert env.stat().st_mode & 0o777 == 0o600
    lines = env.read_text().splitlines()
    assert f"TELEGRAM_BOT_TOKEN={BOT_TOKEN}" in lines
    assert "HEARTH_OWNER_TELEGRAM_ID=1001" in lines
    assert "OPENAI_BASE_URL=http://127.0.0.1:11434/v1" in lines
    assert not any(line.startswith(("OPENAI_API_KEY", "HEARTH_MODEL")) for line in lines)
    assert f"HEARTH_DB={newcomer.db}" in lines
    assert "hearth run" in out and "hearth chat --as NAME" in out

    code, _, err = newcomer("init", "--no-check")
    assert code == 1 and "--force" in err and "hearth chat --as NAME" in err
    _one_line(err)
    env.chmod(0o644)
    _answers(monkeypatch, BOT_TOKEN, "2002", "1")
    assert newcomer("init", "--no-check", "--force")[0] == 0
    assert "HEARTH_OWNER_TELEGRAM_ID=2002" in env.read_text()
    assert "OPENAI_BASE_URL" not in env.read_text()
    assert env.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == [".env"]  # no temporary file left


@pytest.mark.parametrize(
    ("wrong", "needle"),
    [
        (("not a token",), "does not look like a bot token"),
        ((BOT_TOKEN, "@olivia"), "not a Telegram user id"),
        ((BOT_TOKEN, "1001", "4"), "answer 1, 2 or 3"),
        ((BOT_TOKEN, "1001", "2"), "no Ollama answers at"),
        ((BOT_TOKEN, "1001", "3", "ftp://example.org"), "not an http(s) address"),
    ],
)
def test_init_says_what_is_wrong_with_an_answer_and_asks_it_again(
    newcomer: Shell, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    wrong: tuple[str, ...], needle: str,
) -> None:
    good = (BOT_TOKEN, "1001", "3", "http://127.0.0.1:8080/v1", "", "local-model")
    # The wrong answer, then the good one to the same question, then the rest.
    _answers(monkeypatch, *wrong, *good[len(wrong) - 1:])
    code, out, err = newcomer("init", "--no-check")
    assert code == 0, err
    said = [line for line in out.splitlines() if needle in line]
    assert len(said) == 1 and said[0].startswith("  ")  # said once, under its question
    assert "HEARTH_MODEL=local-model" in (tmp_path / ".env").read_text()
    assert BOT_TOKEN not in out + err


def test_init_left_before_its_last_answer_writes_nothing(
    newcomer: Shell, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _answers(monkeypatch, BOT_TOKEN, "1001")
    code, _, err = newcomer("init", "--no-check")
    assert code == 1 and "nothing was written" in err
    _one_line(err)
    assert list(tmp_path.iterdir()) == []


def test_init_keeps_an_address_it_cannot_reach_when_it_is_given_twice(
    newcomer: Shell, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    offline = os.environ["HEARTH_OLLAMA_URL"] + "/v1"  # nothing answers there
    _answers(monkeypatch, BOT_TOKEN, "1001", "3", offline, offline, "sk-later", "gpt-4o-mini")
    monkeypatch.setattr("bot.init._token_owner", _offline_owner)
    code, out, _ = newcomer("init")
    assert code == 0
    assert "cannot reach" in out and "keeping it unchecked" in out
    written = (tmp_path / ".env").read_text()
    assert f"OPENAI_BASE_URL={offline}" in written and "HEARTH_MODEL=gpt-4o-mini" in written
    assert "OPENAI_API_KEY=sk-later" in written and "sk-later" not in out


async def _offline_owner(token: str, base_url: str | None) -> str:
    raise OSError("no network")


def test_init_checks_the_token_with_telegram_and_only_warns_when_it_cannot(
    newcomer: Shell, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    async def owner_of(token: str, base_url: str | None) -> str:
        return "hearth_home_bot"

    monkeypatch.setattr("bot.init._token_owner", owner_of)
    _answers(monkeypatch, BOT_TOKEN, "1001", "1")
    code, out, _ = newcomer("init")
    assert code == 0 and "the token belongs to @hearth_home_bot" in out

    monkeypatch.setattr("bot.init._token_owner", _offline_owner)
    _answers(monkeypatch, BOT_TOKEN, "1001", "1")
    code, out, err = newcomer("init", "--force")
    assert code == 0 and "could not check the token with Telegram (OSError)" in out
    assert BOT_TOKEN not in out + err
    assert (tmp_path / ".env").exists()


# --- files that are not what they seem ---------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def _child_env(db: Path, **extra: str) -> dict[str, str]:
    """The environment of a `hearth` process of its own: no setting of the developer's."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "HEARTH_", "TELEGRAM_"))}
    env.update({"HEARTH_DB": str(db), "HEARTH_EMBEDDER": "none", "PYTHONPATH": str(ROOT),
                "OPENAI_API_KEY": "test-key", "HEARTH_MODEL": "test-model"})
    env.update(extra)
    return env


def _hearth_process(*argv: str, env: dict[str, str], cwd: Path,
                    user: Sequence[str] = ()) -> tuple[int, str, str]:
    done = subprocess.run(  # noqa: S603 -- our own interpreter, our own arguments
        [*user, sys.executable, "-m", "bot.cli", *argv], env=env, cwd=cwd,
        capture_output=True, text=True, timeout=120, check=False,
    )
    return done.returncode, done.stdout, done.stderr


def _one_line(err: str) -> None:
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err and "Exception in thread" not in err


@pytest.mark.parametrize(
    ("make", "argv", "needle"),
    [
        ("folder", ("inspect", "--as", "Bob"), "is a folder"),
        ("folder", ("people", "add", "Bob"), "is a folder"),
        ("no-parent", ("inspect", "--as", "Bob"), "no database at"),
        ("text", ("people", "add", "Bob"), "not a SQLite file"),
        ("empty", ("people", "add", "Bob"), "is an empty file"),
        ("foreign", ("people", "add", "Bob"), "not hearth's"),
    ],
)
def test_a_path_that_is_not_a_hearth_database_is_one_line_and_no_thread_traceback(
    tmp_path: Path, make: str, argv: tuple[str, ...], needle: str
) -> None:
    db = tmp_path / "home.db"
    if make == "folder":
        db.mkdir()
    elif make == "no-parent":
        db = tmp_path / "missing" / "home.db"
    elif make == "text":
        db.write_text("shopping: eggs, milk\n")
    elif make == "empty":
        db.touch()
    else:
        conn = sqlite3.connect(db)
        with conn:
            conn.execute("CREATE TABLE recipes(name TEXT)")
        conn.close()
    before = db.read_bytes() if db.is_file() else None
    code, out, err = _hearth_process(*argv, env=_child_env(db), cwd=tmp_path)
    assert code == 1 and out == ""
    _one_line(err)
    assert needle in err
    assert (db.read_bytes() if db.is_file() else None) == before
    assert not (tmp_path / "home.db.secret").exists()


def test_a_database_whose_secret_is_lost_is_refused_with_how_to_restore_it(
    household: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = household.db.with_name("home.db.secret")
    secret.unlink()
    for argv in (("people", "add", "Zed"), ("inspect", "--as", "Bob"), ("run",)):
        if argv == ("run",):
            monkeypatch.setenv("TELEGRAM_BOT_TOKEN", BOT_TOKEN)
            monkeypatch.setenv("HEARTH_OWNER_TELEGRAM_ID", "1001")
            monkeypatch.setattr("bot.cli.model_gateway", None)  # never reached: refused before
        code, out, err = household(*argv)
        assert code == 1 and out == "", argv
        _one_line(err)
        assert "home.db.secret" in err and "restore it from your backup" in err
        assert not secret.exists()  # no new secret beside the old ledger
    code, out, _ = household("doctor")
    assert code == 1 and "FAIL  database: the install secret for home.db is missing" in out


@pytest.fixture
def nobody_folder() -> Iterator[Path]:
    """A folder outside pytest's (root-only) temporary tree, for running hearth as nobody."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run hearth as nobody")
    probe = subprocess.run(  # noqa: S603
        [*_AS_NOBODY, sys.executable, "-c", "import bot.cli"], cwd="/", env=_child_env(
            Path("/nonexistent")), capture_output=True, check=False, timeout=60)
    if probe.returncode != 0:
        pytest.skip("nobody cannot read this checkout")
    folder = Path(tempfile.mkdtemp(prefix="hearth-nobody-"))
    try:
        yield folder
    finally:
        folder.chmod(0o700)
        shutil.rmtree(folder)


_AS_NOBODY = ("setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups")


@pytest.mark.parametrize("read_only", ["file", "folder"])
def test_doctor_and_run_refuse_a_database_they_may_not_write_in_one_line(
    nobody_folder: Path, read_only: str
) -> None:
    db = nobody_folder / "home.db"
    assert main(["people", "add", "Olivia", "--owner", "--db", str(db)]) == 0
    nobody = pwd.getpwnam("nobody")
    for path in (nobody_folder, db, db.with_name("home.db.secret")):
        os.chown(path, nobody.pw_uid, nobody.pw_gid)
    if read_only == "file":
        db.chmod(0o444)
        needle = "home.db is read-only"
    else:
        nobody_folder.chmod(0o555)
        needle = "is read-only"
    before = db.read_bytes()
    env = _child_env(db)
    code, out, err = _hearth_process("doctor", env=env, cwd=nobody_folder, user=_AS_NOBODY)
    assert code == 1, out + err
    failures = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert len(failures) == 1 and failures[0].startswith("FAIL  database:")
    assert needle in failures[0] and "Traceback" not in out + err
    run_env = _child_env(db, TELEGRAM_BOT_TOKEN=BOT_TOKEN, HEARTH_OWNER_TELEGRAM_ID="1001",
                         TELEGRAM_BASE_URL="http://127.0.0.1:9/bot",
                         OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    code, out, err = _hearth_process("run", env=run_env, cwd=nobody_folder, user=_AS_NOBODY)
    assert code == 1 and out == ""
    _one_line(err)
    assert needle in err and ("SQLite" in err or read_only == "file")
    assert db.read_bytes() == before
    assert sorted(p.name for p in nobody_folder.iterdir()) == (
        ["home.db", "home.db.lock", "home.db.secret"] if read_only == "file"
        else ["home.db", "home.db.secret"]
    )


# --- one bot per database --------------------------------------------------------------------


class _Telegram:
    """Just enough of the Bot API on loopback for `hearth run` to start and poll: getMe answers
    the bot, getUpdates waits a little and has nothing, every other method says yes."""

    def __init__(self) -> None:
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/bot"

    async def __aenter__(self) -> _Telegram:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
                length = 0
                for line in head.split("\r\n")[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip() or 0)
                await reader.readexactly(length)
                method = head.split(" ", 2)[1].split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
                result: object = True
                if method == "getMe":
                    result = {"id": 7000, "is_bot": True, "first_name": "Wren",
                              "username": "hearth_test_bot"}
                elif method in ("getUpdates", "getMyCommands"):
                    if method == "getUpdates":
                        await asyncio.sleep(0.5)
                    result = []
                body = json.dumps({"ok": True, "result": result}).encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()


async def _hearth_async(*argv: str, env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", *argv, env=env, cwd=cwd,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    return int(process.returncode or 0), out.decode(), err.decode()


async def test_while_a_bot_serves_a_database_a_second_run_and_a_restore_are_refused(
    household: Shell, tmp_path: Path
) -> None:
    async with _Telegram() as telegram, ModelServer(scripted()) as model:
        env = _child_env(household.db, TELEGRAM_BOT_TOKEN=BOT_TOKEN,
                         HEARTH_OWNER_TELEGRAM_ID="1001",
                         TELEGRAM_BASE_URL=telegram.base_url,
                         OPENAI_BASE_URL=model.base_url)
        bot = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "run", env=env, cwd=tmp_path,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )
        try:
            assert bot.stderr is not None
            started = b""
            while b"running as @" not in started:  # a retried call may log a line first
                started = await asyncio.wait_for(bot.stderr.readline(), timeout=60)
                assert started, "the bot exited before it was running"
            assert b"running as @hearth_test_bot" in started
            lock = household.db.with_name("home.db.lock")
            assert stat.S_IMODE(lock.stat().st_mode) == 0o600

            code, out, err = await _hearth_async("run", env=env, cwd=tmp_path)
            assert code == 1 and out == ""
            _one_line(err)
            assert "is in use" in err and "stop the other one first" in err

            copy = tmp_path / "copy.db"
            assert (await _hearth_async("backup", str(copy), env=env, cwd=tmp_path))[0] == 0
            before = household.db.read_bytes()
            code, out, err = await _hearth_async("restore", str(copy), env=env, cwd=tmp_path)
            assert code == 1 and out == ""
            _one_line(err)
            assert "is in use" in err and "before restoring" in err
            assert household.db.read_bytes() == before
        finally:
            bot.kill()  # a crash: the OS lets go of the lock with the process
            await bot.wait()
        code, out, err = await _hearth_async("restore", str(copy), env=env, cwd=tmp_path)
        assert code == 0, err
        assert out.startswith("restored")


# --- the terminal chat ---------------------------------------------------------------------------


class _Terminal:
    """`hearth chat` in a pseudo-terminal, as a person at a keyboard runs it."""

    def __init__(self, env: dict[str, str], cwd: Path, *argv: str) -> None:
        self.child = pexpect.spawn(
            sys.executable, ["-m", "bot.cli", "chat", *argv], env=env, cwd=str(cwd),
            encoding="utf-8", timeout=60, dimensions=(40, 200),
        )
        self.seen = ""

    async def expect(self, text: str) -> None:
        await self.child.expect_exact(text, timeout=60, async_=True)
        self.seen += f"{self.child.before}{self.child.after}"

    async def ended(self) -> tuple[int | None, float]:
        """(exit status, seconds it took) once the chat has ended."""
        started = time.monotonic()
        await self.child.expect(pexpect.EOF, timeout=10, async_=True)
        took = time.monotonic() - started
        self.seen += str(self.child.before)
        self.child.close()
        return self.child.exitstatus, took

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


@pytest.fixture
def terminal(household: Shell, tmp_path: Path) -> Iterator[Callable[..., _Terminal]]:
    opened: list[_Terminal] = []

    def start(model: ModelServer, *argv: str, **extra: str) -> _Terminal:
        env = _child_env(household.db, OPENAI_BASE_URL=model.base_url, **extra)
        opened.append(_Terminal(env, tmp_path, *argv))
        return opened[-1]

    yield start
    for term in opened:
        term.close()


async def test_the_chat_says_how_to_leave_and_ctrl_c_at_the_prompt_leaves_at_once(
    terminal: Callable[..., _Terminal],
) -> None:
    async with ModelServer(scripted("Hello Bob!")) as model:
        chat = terminal(model, "--as", "Bob")
        await chat.expect("/quit or Ctrl-D to leave")
        await chat.expect("Bob> ")
        chat.child.sendline("hi")
        await chat.expect("Wren: Hello Bob!")
        await chat.expect("Bob> ")
        chat.child.sendintr()
        status, took = await chat.ended()
    assert status in (0, 130)
    assert took < 5
    # The shell's prompt gets a line of its own: her last output is a newline. The terminal's
    # own "^C" echo is the kernel's to place; she waits for it (INTERRUPT_ECHO_S), but a stalled
    # machine may still deliver it after her newline, once in a while.
    assert chat.seen.removesuffix("^C").endswith("\r\n")
    assert "Traceback" not in chat.seen and "Exception" not in chat.seen


async def test_ctrl_c_while_she_is_still_thinking_leaves_at_once(
    terminal: Callable[..., _Terminal],
) -> None:
    async with ModelServer(scripted(ResponsePlan(reply="too late", delay_s=30))) as model:
        chat = terminal(model, "--as", "Bob")
        await chat.expect("Bob> ")
        chat.child.sendline("what is for dinner?")
        for _ in range(100):  # until the question has reached the model
            if model.requests:
                break
            await asyncio.sleep(0.1)
        chat.child.sendintr()
        status, took = await chat.ended()
    assert status in (0, 130) and took < 5
    assert "too late" not in chat.seen and "Traceback" not in chat.seen


@pytest.mark.parametrize("leave", ["/quit", "Ctrl-D"])
async def test_quit_and_ctrl_d_leave_the_chat_cleanly(
    terminal: Callable[..., _Terminal], leave: str
) -> None:
    async with ModelServer(scripted("Hi Alice.")) as model:
        chat = terminal(model, "--as", "Alice")
        await chat.expect("Alice> ")
        chat.child.sendline("hello")
        await chat.expect("Wren: Hi Alice.")
        await chat.expect("Alice> ")
        if leave == "/quit":
            chat.child.sendline("/quit")
        else:
            chat.child.sendeof()
        status, took = await chat.ended()
        assert len(model.requests) == 1  # "/quit" is not a message to her
    assert status == 0 and took < 5
    assert "Traceback" not in chat.seen


async def test_what_is_said_in_the_chat_becomes_memory_on_the_tick_schedule(
    terminal: Callable[..., _Terminal], tmp_path: Path, household: Shell
) -> None:
    async with ModelServer(household_responder) as model:
        chat = terminal(model, "--as", "Alice", HEARTH_TICK_SECONDS="1")
        await chat.expect("Alice> ")
        chat.child.sendline("I am training for a triathlon in May")
        await chat.expect("Wren: Noted:")
        await chat.expect("Alice> ")
        for _ in range(300):  # the tick runs every second, once the chat has been quiet
            if any("worth remembering" in r["messages"][0]["content"] for r in model.requests):
                break
            await asyncio.sleep(0.1)
        else:
            pytest.fail("no tick consolidated the chat")
        await asyncio.sleep(0.5)  # the consolidation's answer is written
        chat.child.sendline("/quit")
        status, _ = await chat.ended()
        assert status == 0
        code, out, err = await _hearth_async("inspect", "--as", "Alice",
                                             env=_child_env(household.db), cwd=tmp_path)
    assert code == 0, err
    assert "Alice is training for a triathlon in May" in out
    assert "consolidated" not in chat.seen and "tick" not in chat.seen  # nothing said aloud


# --- grant notes, as the household would try them ---------------------------------------------


def test_a_grant_note_is_listed_only_for_its_grantor_and_masked(household: Shell) -> None:
    token = "sk-proj-9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c"
    assert household("grant", "--as", "Bob", "proactive", "health",
                     "--note", f"clinic reminders, portal key {token}")[0] == 0
    code, out, _ = household("grants")  # everyone's grants, for whoever is at the terminal
    assert code == 0 and "Bob" in out and "clinic" not in out
    code, out, _ = household("grants", "--as", "Bob")
    assert code == 0 and "clinic reminders" in out and token not in out
    assert "clinic" not in household("grants", "--as", "Alice")[1]


# --- the ledger, as the household would try it ---------------------------------------------


def _reads_through_the_cli(household: Shell, n: int) -> None:
    household("remember", "--as", "Bob", "Bob keeps his passport in the desk")
    for i in range(n):
        assert household("recall", "--as", "Bob", f"passport {i}")[0] == 0


def test_receipts_verify_says_in_one_line_where_the_ledger_was_cut(household: Shell) -> None:
    _reads_through_the_cli(household, 6)
    assert household("receipts", "verify")[0] == 0  # the control: untouched, it holds
    conn = sqlite3.connect(household.db)
    with conn:
        conn.execute("DELETE FROM receipts WHERE seq > 3")
    conn.close()
    code, out, _ = household("receipts", "verify")
    assert code == 1 and out.count("\n") == 1
    assert out.strip() == ("ledger broken at receipt #4: the ledger was cut after receipt 3; "
                           "the anchor says 6")


def test_receipts_verify_fails_without_the_anchor_until_it_is_anchored_anew(
    household: Shell,
) -> None:
    _reads_through_the_cli(household, 2)
    household.db.with_name("home.db.ledger-head").unlink()
    code, out, _ = household("receipts", "verify")
    assert code == 1 and "home.db.ledger-head is missing" in out and out.count("\n") == 1
    assert household("doctor")[0] == 1
    code, out, _ = household("receipts", "anchor")
    assert code == 0 and out.strip() == "ledger anchored at receipt #2"
    assert household("receipts", "verify")[0] == 0


# --- files, as the household would find them ------------------------------------------------


@pytest.mark.usefixtures("default_umask")
def test_the_cli_makes_the_database_its_backup_and_their_files_0600(
    hearth: Shell, tmp_path: Path
) -> None:
    assert hearth("people", "add", "Olivia", "--owner")[0] == 0
    assert hearth("remember", "--as", "Olivia", "Olivia waters the ferns on Sunday")[0] == 0
    assert hearth("recall", "--as", "Olivia", "ferns")[0] == 0
    code, out, _ = hearth("export", "--as", "Olivia")  # written to stdout, no file of its own
    assert code == 0 and json.loads(out)["person"]["name"] == "Olivia"
    assert hearth("backup", str(tmp_path / "copy.db"))[0] == 0
    made = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    assert {"home.db", "home.db.secret", "home.db.ledger-head", "copy.db", "copy.db.secret",
            "copy.db.ledger-head"} <= set(made)
    assert all(name.startswith(("home.db", "copy.db")) for name in made)  # no export file
    assert made == dict.fromkeys(made, 0o600)
    assert hearth("restore", str(tmp_path / "copy.db"))[0] == 0
    assert stat.S_IMODE(hearth.db.stat().st_mode) == 0o600
    assert hearth("receipts", "verify")[0] == 0


def test_remember_under_another_programs_write_lock_fails_with_one_clear_line(
    household: Shell, tmp_path: Path,
) -> None:
    other = sqlite3.connect(household.db, isolation_level=None)  # another program, writing
    other.execute("BEGIN IMMEDIATE")
    try:
        code, out, err = _hearth_process("remember", "--as", "Bob", "Bob likes rooibos",
                                         env=_child_env(household.db), cwd=tmp_path)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert code == 1 and out == ""
    _one_line(err)
    assert err.startswith("hearth: the database is locked by another program")
    assert "nothing was written" in err
    code, out, _ = household("inspect", "--as", "Bob")  # once the lock is gone, nothing half-done
    assert code == 0 and "rooibos" not in out
    assert household("remember", "--as", "Bob", "Bob likes rooibos")[0] == 0
