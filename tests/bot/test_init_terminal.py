"""`hearth init` in a pseudo-terminal, as a newcomer types it at a keyboard.

Telegram is a small fake Bot API answering getMe (a known token and an unknown one), a local
Ollama is a small fake answering /api/tags and /v1/models, and "any OpenAI-compatible server"
is the project's own model server. Nothing here leaves loopback.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import socket
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pexpect
import pytest

from bot.settings import load_settings
from tests.support.model_server import ModelServer, scripted

ROOT = Path(__file__).resolve().parents[2]
BOT_TOKEN = "123456789:" + "AAHearthKnownTokenSecretPart1234"
REVOKED_TOKEN = "123456789:" + "AARevokedTokenNobodyKnows99999"
API_KEY = "sk-hearth-test-key-must-stay-secret"


# --- fakes on loopback ---------------------------------------------------------------------------


Route = Callable[[str, str, dict[str, str]], tuple[int, Any]]


class _Fake:
    """A tiny HTTP server in a thread: `route(method, path, headers)` gives (status, JSON)."""

    def __init__(self, route: Route) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, body = outer.route(self.command, self.path.split("?")[0], headers)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer  # http.server's own method names

            def log_message(self, *_: object) -> None:
                pass

        self.route = route
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> _Fake:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def _telegram(method: str, path: str, headers: dict[str, str]) -> tuple[int, Any]:
    if path == f"/bot{BOT_TOKEN}/getMe":
        return 200, {"ok": True, "result": {"id": 42, "is_bot": True, "first_name": "Wren",
                                            "username": "hearth_home_bot"}}
    return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}


OLLAMA_MODELS = [("llama3.2:latest", "3.2B"), ("qwen2.5:7b", "7.6B")]


def _ollama(method: str, path: str, headers: dict[str, str]) -> tuple[int, Any]:
    if path == "/api/tags":
        return 200, {"models": [{"name": name, "model": name, "details": {"parameter_size": size}}
                                for name, size in OLLAMA_MODELS]}
    if path == "/v1/models":
        return 200, {"object": "list", "data": [{"id": name, "object": "model"}
                                                for name, _ in OLLAMA_MODELS]}
    return 404, {"error": "not found"}


def _keyed(method: str, path: str, headers: dict[str, str]) -> tuple[int, Any]:
    """A server behind a key, as OpenAI is."""
    if headers.get("authorization") != f"Bearer {API_KEY}":
        return 401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
    if path == "/v1/models":
        return 200, {"object": "list", "data": [{"id": "gpt-4o-mini"}, {"id": "gpt-4o"}]}
    return 404, {"error": {"message": "not found"}}


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def telegram() -> Iterator[_Fake]:
    with _Fake(_telegram) as fake:
        yield fake


# --- the terminal --------------------------------------------------------------------------------


class _Init:
    """`hearth init` in a pseudo-terminal; `seen` is everything it showed."""

    def __init__(self, cwd: Path, env: dict[str, str], *argv: str) -> None:
        self.log = io.StringIO()
        self.child = pexpect.spawn(
            sys.executable, ["-m", "bot.cli", "init", *argv], env=env, cwd=str(cwd),
            encoding="utf-8", timeout=60, dimensions=(40, 200),  # two busy cores: be patient
            # A suite started in the background (`.ci/run &`) inherits SIGINT ignored, and so
            # would init: Ctrl-C reaches a terminal's program with the default disposition.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        self.child.logfile_read = self.log

    @property
    def seen(self) -> str:
        return self.log.getvalue()

    async def expect(self, text: str) -> None:
        await self.child.expect_exact(text, async_=True)

    async def answer(self, prompt: str, reply: str) -> None:
        await self.expect(prompt)
        self.child.sendline(reply)

    async def ended(self) -> int | None:
        await self.child.expect(pexpect.EOF, async_=True)
        self.child.close()
        return self.child.exitstatus

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
        # pexpect's async expect keeps a pipe transport on the child; a test that stopped
        # before the end would leave it to be collected, unclosed, in a later test.
        waiter = getattr(self.child, "async_pw_transport", None)
        if waiter is not None:
            waiter[1].close()


def _own_environment() -> dict[str, str]:
    """A `hearth` process's environment without any setting of the developer's."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "HEARTH_", "TELEGRAM_"))}
    return {**env, "PYTHONPATH": str(ROOT)}


@pytest.fixture
def init(tmp_path: Path, telegram: _Fake) -> Iterator[Callable[..., _Init]]:
    opened: list[_Init] = []

    def start(*argv: str, ollama: str | None = None) -> _Init:
        env = {**_own_environment(), "TELEGRAM_BASE_URL": f"{telegram.url}/bot",
               "HEARTH_OLLAMA_URL": ollama or f"http://127.0.0.1:{_closed_port()}"}
        opened.append(_Init(tmp_path, env, *argv))
        return opened[-1]

    yield start
    for child in opened:
        child.close()


TOKEN_PROMPT = "Telegram bot token"
ID_PROMPT = "Your Telegram user id"
CHOICE_PROMPT = "Choose 1, 2 or 3"


def _written(folder: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The .env as bot.settings reads it (nothing of the test's own environment)."""
    env = folder / ".env"
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
    for name in ("TELEGRAM_BOT_TOKEN", "HEARTH_OWNER_TELEGRAM_ID", "TELEGRAM_BASE_URL",
                 "OPENAI_BASE_URL", "OPENAI_API_KEY", "HEARTH_MODEL", "HEARTH_DB"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(folder)
    settings = load_settings()
    token, key = settings.telegram_bot_token, settings.openai_api_key
    return {
        "token": token.get_secret_value() if token else "",
        "owner": str(settings.owner_telegram_id),
        "base_url": settings.openai_base_url or "",
        "key": key.get_secret_value() if key else "",
        "model": settings.model or "",
    }


# --- the tests -----------------------------------------------------------------------------------


async def test_init_never_shows_the_token_and_asks_again_after_each_wrong_answer(
    init: Callable[..., _Init], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with ModelServer(scripted()) as model:
        child = init()
        await child.answer(TOKEN_PROMPT, "not a token")
        await child.expect("does not look like a bot token")
        await child.answer(TOKEN_PROMPT, REVOKED_TOKEN)
        await child.expect("Telegram does not know that token")
        await child.answer(TOKEN_PROMPT, BOT_TOKEN)
        await child.expect("the token belongs to @hearth_home_bot")
        await child.answer(ID_PROMPT, "@olivia")
        await child.expect("not a Telegram user id")
        await child.answer(ID_PROMPT, "1001")
        await child.expect("none answers at")  # no Ollama on this machine
        await child.answer(f"{CHOICE_PROMPT} [1]: ", "2")
        await child.expect("no Ollama answers")
        await child.answer(CHOICE_PROMPT, "3")
        await child.answer("Its address", f"http://127.0.0.1:{_closed_port()}/v1")
        await child.expect("cannot reach")
        base_url = model.base_url
        await child.answer("Its address", base_url)
        await child.answer("Its API key", API_KEY)
        await child.expect("1  test-model")
        await child.answer("Which model?", "")
        await child.expect("wrote .env (readable by you only)")
        await child.expect("next: `make run` starts her on Telegram")
        await child.expect("hearth chat --as")
        assert await child.ended() == 0
    assert BOT_TOKEN not in child.seen and REVOKED_TOKEN not in child.seen
    assert API_KEY not in child.seen and "Traceback" not in child.seen
    assert _written(tmp_path, monkeypatch) == {
        "token": BOT_TOKEN, "owner": "1001", "base_url": base_url, "key": API_KEY,
        "model": "test-model",
    }
    assert model.requests == []  # the models list was the check: nothing was generated


async def test_init_finds_ollama_on_this_machine_and_offers_its_models_by_number(
    init: Callable[..., _Init], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _Fake(_ollama) as ollama:
        child = init(ollama=ollama.url)
        await child.answer(TOKEN_PROMPT, BOT_TOKEN)
        await child.answer(ID_PROMPT, "1001")
        await child.expect(f"2  Ollama on this machine, 2 model(s) at {ollama.url}")
        await child.answer(f"{CHOICE_PROMPT} [2]: ", "")  # found: it is the default
        await child.expect("1  llama3.2:latest (3.2B)")
        await child.expect("2  qwen2.5:7b (7.6B)")
        await child.answer("Which one? [1]: ", "5")
        await child.expect("answer a number from 1 to 2")
        await child.answer("Which one? [1]: ", "2")
        await child.expect("wrote .env")
        assert await child.ended() == 0
        assert _written(tmp_path, monkeypatch) == {
            "token": BOT_TOKEN, "owner": "1001", "base_url": f"{ollama.url}/v1", "key": "",
            "model": "qwen2.5:7b",
        }
        doctor = pexpect.run(
            f"{sys.executable} -m bot.cli doctor", cwd=str(tmp_path), encoding="utf-8",
            env={**_own_environment(), "HEARTH_EMBEDDER": "none"}, timeout=60)
    assert f"ok    model qwen2.5:7b at {ollama.url}/v1" in doctor
    lines = doctor.strip().splitlines()
    assert lines[-2].startswith("to talk with her in this terminal instead: `hearth chat")
    assert lines[-1] == "next: `make run` starts her on Telegram (or `hearth run`)"
    assert BOT_TOKEN not in doctor


async def test_a_key_the_server_refuses_is_asked_for_again_without_being_shown(
    init: Callable[..., _Init], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _Fake(_keyed) as server:
        child = init()
        await child.answer(TOKEN_PROMPT, BOT_TOKEN)
        await child.answer(ID_PROMPT, "1001")
        await child.answer(CHOICE_PROMPT, "3")
        await child.answer("Its address", server.url)  # without /v1: found there
        await child.expect(f"its OpenAI-compatible API is at {server.url}/v1")
        await child.answer("Its API key", "sk-wrong-key")
        await child.expect("refused that key (HTTP 401)")
        await child.answer("Its API key", API_KEY)
        await child.answer("Which model?", "gpt-4o")
        await child.expect("wrote .env")
        assert await child.ended() == 0
    assert "sk-wrong-key" not in child.seen and API_KEY not in child.seen
    written = _written(tmp_path, monkeypatch)
    assert (written["base_url"], written["key"], written["model"]) == (
        f"{server.url}/v1", API_KEY, "gpt-4o")


@pytest.mark.parametrize(("keys", "status"), [("ctrl-c", 130), ("ctrl-d", 1)])
async def test_leaving_init_half_way_writes_nothing_and_says_so_in_one_line(
    init: Callable[..., _Init], tmp_path: Path, keys: str, status: int
) -> None:
    child = init("--no-check")
    await child.answer(TOKEN_PROMPT, BOT_TOKEN)
    await child.answer(ID_PROMPT, "1001")
    await child.expect(CHOICE_PROMPT)
    # As a person would: a moment after the question shows. A SIGINT that lands between the
    # prompt's writing and input()'s read of the terminal is taken only at the next key
    # (CPython checks for signals when that read is interrupted, and it was not yet reading),
    # and on a loaded machine the test's ^C landed there once.
    await asyncio.sleep(0.5)
    if keys == "ctrl-c":
        child.child.sendintr()
    else:
        child.child.sendeof()
    await child.expect("init stopped before its end; nothing was written")
    assert await child.ended() == status
    assert os.listdir(tmp_path) == []  # no .env, and no temporary file either
    assert "Traceback" not in child.seen and BOT_TOKEN not in child.seen


async def test_init_with_the_bundled_model_writes_no_model_endpoint(
    init: Callable[..., _Init], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    child = init("--no-check")
    await child.answer(TOKEN_PROMPT, BOT_TOKEN)
    await child.answer(ID_PROMPT, "1001")
    await child.answer(CHOICE_PROMPT, "")
    await child.expect("the bundled model is")
    assert await child.ended() == 0
    assert _written(tmp_path, monkeypatch) == {
        "token": BOT_TOKEN, "owner": "1001", "base_url": "", "key": "", "model": "",
    }
    child = init()
    await child.expect("already exists here (`hearth init --force` replaces it); "
                       "to talk with her in this terminal instead")
    assert await child.ended() == 1
