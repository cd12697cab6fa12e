"""The `hearth` command line, run in-process as a household would type it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main


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
    code, out, _ = household("recall", "--as", "Bob", "--activity", "proactive",
                             "Bob's phone PIN salary")
    assert "salary" in out and "PIN" not in out
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


def test_forget_prints_the_count_and_the_fact_is_gone(household: Shell) -> None:
    household("remember", "--as", "Bob", "Bob hides chocolate in the piano")
    code, out, _ = household("forget", "--as", "Bob", "chocolate")
    assert code == 0 and out.strip() == "forgot 1 belief(s)"
    assert household("recall", "--as", "Bob", "chocolate piano")[1].strip() == "nothing recalled"


def test_receipts_list_reads_and_verify_names_the_first_broken_link(household: Shell) -> None:
    household("remember", "--as", "Bob", "Bob likes jazz")
    household("recall", "--as", "Bob", "jazz")
    household("recall", "--as", "Alice", "jazz")
    code, out, _ = household("receipts")
    assert code == 0 and out.count("recall") == 2
    code, out, _ = household("receipts", "--as", "Alice")
    assert out.count("\n") == 1
    assert household("receipts", "verify")[1].startswith("ledger intact: 3 receipt(s)")
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


def test_backup_and_restore_round_trip_the_household(household: Shell, tmp_path: Path) -> None:
    household("remember", "--as", "Bob", "Bob's bike lock code is on a sticky note")
    copy = tmp_path / "copy.db"
    assert household("backup", str(copy))[0] == 0
    household("forget", "--as", "Bob", "bike lock")
    assert household("restore", str(copy))[0] == 0
    assert "bike lock" in household("inspect", "--as", "Bob")[1]
    assert household("receipts", "verify")[0] == 0


def test_doctor_on_a_fresh_machine_notes_what_is_missing_and_succeeds(hearth: Shell) -> None:
    code, out, _ = hearth("doctor")
    assert code == 0
    assert "note  TELEGRAM_BOT_TOKEN: not set" in out
    assert "note  database: none yet" in out
    assert "ok    embedder: none (keyword-only recall)" in out


def test_doctor_fails_on_a_broken_ledger(household: Shell) -> None:
    household("remember", "--as", "Bob", "Bob likes jazz")
    household("recall", "--as", "Bob", "jazz")
    conn = sqlite3.connect(household.db)
    with conn:
        conn.execute("UPDATE receipts SET suppressed = 9 WHERE seq = 1")
    conn.close()
    code, out, _ = household("doctor")
    assert code == 1 and "FAIL  ledger: broken at receipt #1" in out


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
        "jobs": ["dream", "tick"],
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


def test_init_asks_checks_and_writes_an_env_file_only_its_owner_can_read(
    bare: Shell, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _answers(monkeypatch, BOT_TOKEN, "1001", "http://127.0.0.1:11434/v1")
    code, out, err = bare("init", "--no-check")
    assert code == 0, err
    env = tmp_path / ".env"
    assert env.stat().st_mode & 0o777 == 0o600
    lines = env.read_text().splitlines()
    assert f"TELEGRAM_BOT_TOKEN={BOT_TOKEN}" in lines
    assert "HEARTH_OWNER_TELEGRAM_ID=1001" in lines
    assert "OPENAI_BASE_URL=http://127.0.0.1:11434/v1" in lines
    assert f"HEARTH_DB={bare.db}" in lines
    assert "hearth run" in out

    _answers(monkeypatch, BOT_TOKEN, "1001", "")
    code, _, err = bare("init", "--no-check")
    assert code == 1 and "--force" in err
    env.chmod(0o644)
    _answers(monkeypatch, BOT_TOKEN, "2002", "")
    assert bare("init", "--no-check", "--force")[0] == 0
    assert "HEARTH_OWNER_TELEGRAM_ID=2002" in env.read_text()
    assert "OPENAI_BASE_URL" not in env.read_text()
    assert env.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("replies", "needle"),
    [
        (("not a token", "1001", ""), "does not look like a bot token"),
        ((BOT_TOKEN, "@olivia", ""), "not a Telegram user id"),
        ((BOT_TOKEN, "1001", "ftp://example.org"), "not an http(s) URL"),
        ((BOT_TOKEN,), "no answer given"),
    ],
)
def test_init_refuses_answers_of_the_wrong_shape_and_writes_nothing(
    bare: Shell, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    replies: tuple[str, ...], needle: str,
) -> None:
    _answers(monkeypatch, *replies)
    code, _, err = bare("init", "--no-check")
    assert code == 1 and needle in err and err.strip().count("\n") == 0
    assert not (tmp_path / ".env").exists()


def test_init_checks_the_token_with_telegram_and_only_warns_when_it_cannot(
    bare: Shell, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    async def owner_of(token: str, base_url: str | None) -> str:
        return "hearth_home_bot"

    monkeypatch.setattr("bot.cli._token_owner", owner_of)
    _answers(monkeypatch, BOT_TOKEN, "1001", "")
    code, out, _ = bare("init")
    assert code == 0 and "the token belongs to @hearth_home_bot" in out

    async def offline(token: str, base_url: str | None) -> str:
        raise OSError("no network")

    monkeypatch.setattr("bot.cli._token_owner", offline)
    _answers(monkeypatch, BOT_TOKEN, "1001", "")
    code, _, err = bare("init", "--force")
    assert code == 0 and "warning: could not check the token" in err
    assert BOT_TOKEN not in err
    assert (tmp_path / ".env").exists()
