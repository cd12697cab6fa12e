"""The README's `.env` examples for a better model work as written.

Each `dotenv` block under "Use a better model" (Ollama, llama.cpp's server, vLLM, OpenAI) is
written to a `.env`, with only its scheme, host and port swapped for the project's own
OpenAI-compatible test server (the path, `/v1`, is kept: the server answers there only).
hearth's settings read it from the working directory as they would on the reader's machine,
and the model is reached the way `hearth run` reaches it: the endpoint from the settings, a
model name (the block's, else the first the server lists), then one real chat completion
through the gateway's `openai` client. For Ollama and OpenAI, `hearth doctor` itself is run
in that folder too and must say the model is ok.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from bot.settings import Settings, load_settings
from soul.model import Gateway, model_config_from, with_model
from tests.support import markdown
from tests.support.model_server import ModelServer, ResponsePlan

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
SERVED = "the-served-model"
REPLY = "Hello from the model the README points at."
EXAMPLES = ("Ollama", "llama.cpp's server", "vLLM", "OpenAI")
_SETTING_NAMES = [str(name) for field in Settings.model_fields.values()
                  for name in getattr(field.validation_alias, "choices", [])]


def _example(heading: str) -> str:
    found = [b.text for b in markdown.blocks(README)
             if b.heading == heading and b.info == "dotenv"]
    assert len(found) == 1, f"one dotenv block under the heading {heading!r}, not {len(found)}"
    return found[0]


def _values(dotenv: str) -> dict[str, str]:
    pairs = [line.split("=", 1) for line in dotenv.splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    return {name.strip(): value.strip() for name, value in pairs}


def _pointed_at(dotenv: str, port: int) -> str:
    """The block with its address's origin replaced by the test server's."""
    return re.sub(r"(?m)^(OPENAI_BASE_URL=)https?://[^/\s]+", rf"\g<1>http://127.0.0.1:{port}",
                  dotenv)


def _answer(request: dict[str, Any]) -> ResponsePlan:
    return ResponsePlan(reply=REPLY)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A working directory of its own, and no hearth setting from the test's environment."""
    for name in _SETTING_NAMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("heading", EXAMPLES)
def test_the_example_names_only_real_settings_and_an_openai_style_address(heading: str) -> None:
    values = _values(_example(heading))
    assert set(values) <= set(_SETTING_NAMES), heading
    address = urlsplit(values["OPENAI_BASE_URL"])
    assert address.scheme in ("http", "https")
    assert address.path == "/v1", "the test server answers under /v1, as these servers do"


@pytest.mark.parametrize("heading", EXAMPLES)
async def test_the_readmes_env_example_reaches_a_model_and_gets_a_reply(
    heading: str, clean_env: Path
) -> None:
    example = _example(heading)
    seen: list[httpx.Request] = []

    async def keep(request: httpx.Request) -> None:
        seen.append(request)

    async with ModelServer(_answer, model=SERVED) as server:
        (clean_env / ".env").write_text(_pointed_at(example, server.port))
        settings = load_settings()
        assert settings.openai_base_url == server.base_url

        key = settings.openai_api_key
        config = model_config_from(settings.openai_base_url,
                                   key.get_secret_value() if key else None, settings.model)
        assert config is not None
        config = await with_model(config)  # as `hearth run` and `hearth doctor` do
        http = httpx.AsyncClient(trust_env=False, event_hooks={"request": [keep]})
        async with Gateway(config, http_client=http) as gateway:
            reply = await gateway.reply([{"role": "user", "content": "Hello, Wren"}])

    assert reply == REPLY
    values = _values(example)
    assert server.requests[-1]["model"] == values.get("HEARTH_MODEL", SERVED)
    assert server.requests[-1]["messages"][-1]["content"] == "Hello, Wren"
    authorization = seen[-1].headers.get("authorization", "")
    if "OPENAI_API_KEY" in values:
        assert authorization == f"Bearer {values['OPENAI_API_KEY']}"
    else:
        assert authorization.startswith("Bearer ")  # a placeholder: the client needs one


@pytest.mark.parametrize("heading", ["Ollama", "OpenAI"])
async def test_hearth_doctor_says_the_readmes_model_is_ok(heading: str, clean_env: Path) -> None:
    async with ModelServer(_answer, model=SERVED) as server:
        (clean_env / ".env").write_text(_pointed_at(_example(heading), server.port))
        env = {**os.environ, "HEARTH_EMBEDDER": "none", "HF_HUB_OFFLINE": "1",
               "PYTHONPATH": str(ROOT)}
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "--db", str(clean_env / "hearth.db"), "doctor",
            cwd=clean_env, env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await asyncio.wait_for(process.communicate(), timeout=120)
        address = server.base_url
    report = out.decode()
    model_lines = [line for line in report.splitlines() if re.match(r"\w+ +model\b", line)]
    assert process.returncode == 0, report
    assert [line.split()[0] for line in model_lines] == ["ok"], report
    assert address in model_lines[0], report
