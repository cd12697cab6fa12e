"""`hearth chat` end to end: the real CLI process, the real openai client over HTTP, our
OpenAI-compatible test server on loopback."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from bot.cli import main
from soul.files import default_soul_dir
from tests.support.model_server import (
    ModelServer,
    ResponsePlan,
    echo_responder,
    household_responder,
    scripted,
)

ROOT = Path(__file__).resolve().parents[2]


async def hearth(*argv: str, env: dict[str, str], stdin: str = "") -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", *argv,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env, cwd=ROOT,
    )
    out, err = await asyncio.wait_for(process.communicate(stdin.encode()), timeout=120)
    return int(process.returncode or 0), out.decode(), err.decode()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    values = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HEARTH_"))}
    values.update({
        "HEARTH_DB": str(tmp_path / "home.db"),
        "HEARTH_EMBEDDER": "none",
        "OPENAI_API_KEY": "test-key",
        "HEARTH_MODEL": "test-model",
        "PYTHONPATH": str(ROOT),
    })
    return values


@pytest.fixture
def household(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    for args in (["people", "add", "Olivia", "--owner"], ["people", "add", "Bob"],
                 ["people", "add", "Alice"]):
        assert main([*args, "--db", env["HEARTH_DB"]]) == 0
    main(["remember", "--as", "Bob", "Bob is secretly learning the bagpipes",
          "--db", env["HEARTH_DB"]])
    capsys.readouterr()
    return env


async def test_each_piped_line_is_one_message_and_each_reply_is_printed(
    household: dict[str, str],
) -> None:
    async with ModelServer(scripted("Hello Bob!", "Noted.\nI'll remember.")) as server:
        household["OPENAI_BASE_URL"] = server.base_url
        code, out, err = await hearth("chat", "--as", "Bob", env=household,
                                      stdin="hi there\nI like tea\n")
        assert code == 0, err
        assert out.splitlines() == ["Hello Bob!", "Noted. I'll remember."]
        assert len(server.requests) == 2
        assert server.requests[1]["messages"][-1]["content"] == "I like tea"


async def test_a_members_private_fact_reaches_their_own_chat_and_no_one_elses(
    household: dict[str, str],
) -> None:
    async with ModelServer(echo_responder) as server:
        household["OPENAI_BASE_URL"] = server.base_url
        _, bob, _ = await hearth("chat", "--as", "Bob", env=household,
                                 stdin="what am I learning? bagpipes?\n")
        _, alice, _ = await hearth("chat", "--as", "Alice", env=household,
                                   stdin="is anyone learning the bagpipes?\n")
        _, owner, _ = await hearth("chat", "--as", "Olivia", env=household,
                                   stdin="what is Bob learning? bagpipes?\n")
        _, group, _ = await hearth("chat", "--as", "Bob", "--group", env=household,
                                   stdin="tell everyone about my bagpipes\n")
    secret = "Bob is secretly learning the bagpipes"
    assert secret in bob
    for other in (alice, owner, group):
        assert secret not in other


async def test_a_down_model_gets_an_honest_reply_and_the_line_is_kept(
    household: dict[str, str],
) -> None:
    async with ModelServer(lambda request: ResponsePlan(status=503)) as server:
        household["OPENAI_BASE_URL"] = server.base_url
        code, out, err = await hearth("chat", "--as", "Bob", env=household,
                                      stdin="my sister visits on Sunday\n")
    assert code == 0
    assert "can't think straight" in out
    assert "Traceback" not in out + err
    code, out, _ = await hearth("export", "--as", "Bob", env=household)
    assert code == 0 and "my sister visits on Sunday" in out
    assert "can't think straight" not in out  # the apology is not kept as something she said


async def test_a_one_byte_change_to_the_constitution_stops_chat_with_one_line(
    household: dict[str, str], tmp_path: Path
) -> None:
    soul = tmp_path / "soul"
    shutil.copytree(default_soul_dir(), soul)
    constitution = soul / "CONSTITUTION.md"
    data = bytearray(constitution.read_bytes())
    data[-2] = ord("!") if data[-2] != ord("!") else ord("?")
    constitution.write_bytes(bytes(data))
    household["HEARTH_SOUL_DIR"] = str(soul)
    household["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"
    code, out, err = await hearth("chat", "--as", "Bob", env=household, stdin="hello\n")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "CONSTITUTION.md" in err
    assert "Traceback" not in err


async def test_remind_me_creates_a_goal_once_and_the_owner_gates_persona_edits(
    household: dict[str, str],
) -> None:
    async with ModelServer(scripted("Will do.", "Already on my list.")) as server:
        household["OPENAI_BASE_URL"] = server.base_url
        await hearth("chat", "--as", "Bob", env=household,
                     stdin="remind me to call the plumber\nplease remind me to call the plumber\n")
    code, out, _ = await hearth("export", "--as", "Bob", env=household)
    assert code == 0
    assert [g["text"] for g in json.loads(out)["goals"]] == ["Call the plumber"]
    code, _, err = await hearth("persona", "approve", "1", env=household)
    assert code == 1 and "no pending persona proposal #1" in err
    code, out, _ = await hearth("persona", "proposals", env=household)
    assert code == 0 and out.strip() == "no persona proposals"


async def test_chat_confirms_a_reminder_in_the_members_zone_without_asking_the_model(
    household: dict[str, str],
) -> None:
    household["HEARTH_TIMEZONE"] = "Europe/Berlin"
    async with ModelServer(scripted()) as server:  # asked once more than scripted: a failure
        household["OPENAI_BASE_URL"] = server.base_url
        code, out, err = await hearth(
            "chat", "--as", "Bob", env=household,
            stdin="remind me tomorrow at 9 to call the dentist\nremind me to water the plants\n",
        )
    assert code == 0, err
    assert out.splitlines() == [
        "I'll remind you tomorrow at 09:00: call the dentist",
        "When should I remind you: water the plants? Tell me a day and a time, like "
        "“tomorrow at 9” or “in 2 hours”.",
    ]


async def test_doctor_checks_the_soul_pin_and_reaches_the_model_endpoint(
    household: dict[str, str],
) -> None:
    async with ModelServer(scripted()) as server:
        household["OPENAI_BASE_URL"] = base_url = server.base_url
        code, out, _ = await hearth("doctor", env=household)
    assert code == 0, out
    assert "ok    soul Wren: constitution matches its pin" in out
    assert f"ok    model test-model at {base_url}" in out
    household["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"
    code, out, _ = await hearth("doctor", env=household)
    assert code == 1 and "FAIL  model: cannot reach" in out


async def test_without_hearth_model_chat_uses_the_model_the_server_lists(
    household: dict[str, str],
) -> None:
    del household["HEARTH_MODEL"]
    async with ModelServer(scripted("Hi!")) as server:
        household["OPENAI_BASE_URL"] = server.base_url
        code, out, err = await hearth("chat", "--as", "Bob", env=household, stdin="hello\n")
        assert code == 0, err
        assert out.strip() == "Hi!"
        assert server.requests[0]["model"] == "test-model"


async def test_hearth_tick_consolidates_each_chat_into_its_own_scope_and_dream_reports(
    household: dict[str, str],
) -> None:
    async with ModelServer(household_responder) as server:
        household["OPENAI_BASE_URL"] = server.base_url
        await hearth("chat", "--as", "Alice", env=household,
                     stdin="I am training for a triathlon in May\n")
        await hearth("chat", "--as", "Bob", "--group", env=household,
                     stdin="The boiler is serviced on Friday morning\n")
        code, out, err = await hearth("tick", env=household)
        assert code == 0, err
        assert "consolidated 2 batch(es) into 2 belief(s)" in out
        again = await hearth("tick", env=household)
        assert "consolidated 0 batch(es)" in again[1]  # nothing is consolidated twice
        _, alice, _ = await hearth("inspect", "--as", "Alice", env=household)
        _, bob, _ = await hearth("inspect", "--as", "Bob", env=household)
        _, boiler, _ = await hearth("recall", "--as", "Alice", "boiler serviced", env=household)
        code, dream, err = await hearth("dream", env=household)
        assert code == 0, err
    assert "Alice is training for a triathlon in May" in alice
    assert "triathlon" not in bob
    assert "The boiler is serviced on Friday morning" in boiler  # shared: every member's
    assert dream.startswith("dream report #1") and "deduped: 0" in dream
    consolidation = [r for r in server.requests if "worth remembering" in
                     r["messages"][0]["content"]]
    assert len(consolidation) == 2
    assert all(("triathlon" in r["messages"][-1]["content"]) !=
               ("boiler" in r["messages"][-1]["content"]) for r in consolidation)
