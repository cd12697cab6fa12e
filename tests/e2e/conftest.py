"""Fixtures for the end-to-end tests: one Telegram emulator for the session (each test talks to
it with its own bot token, so no test sees another's chats), one model server per test (inside
the test's event loop, so a test can flip it while the bot runs), and a launcher for the real
bot process with its own database.

The bot's log is printed at teardown; pytest shows it only when the test failed.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.household import Launcher, Model, Telegram
from tests.support.model_server import ModelServer, Switch, household_responder
from tests.support.telegram_emulator import Emulator, EmulatorError

_TOKENS = itertools.count(710_000_001)


@pytest.fixture(scope="session")
def emulator() -> Iterator[Emulator]:
    """The Telegram Bot API emulator (Node), started once for every end-to-end test."""
    emu = Emulator()
    try:
        emu.start()
    except EmulatorError as exc:  # a missing `npm ci` is a failure to fix, never a skip
        pytest.fail(str(exc))
    try:
        yield emu
    finally:
        emu.stop()


@pytest.fixture
async def tg(emulator: Emulator) -> AsyncIterator[Telegram]:
    """The user side of Telegram for this test's own bot token.

    The emulator keeps one pooled HTTP client for the event loop it is used from; each test has
    its own loop, so each test lends it a client for its duration.
    """
    http = httpx.AsyncClient(base_url=emulator.root_url, timeout=10.0, trust_env=False)
    emulator._http, emulator._http_loop = http, asyncio.get_running_loop()
    token = f"{next(_TOKENS)}:e2e-{secrets.token_hex(8)}"
    try:
        yield Telegram(emulator.client(token), token)
    finally:
        emulator._http, emulator._http_loop = None, None
        await http.aclose()


@pytest.fixture
async def model() -> AsyncIterator[Model]:
    switch = Switch(household_responder)
    async with ModelServer(switch) as server:
        yield Model(server, switch)


@pytest.fixture
async def hearth(
    emulator: Emulator, tg: Telegram, model: Model, tmp_path: Path
) -> AsyncIterator[Launcher]:
    launcher = Launcher(emulator, tg, model, tmp_path)
    try:
        yield launcher
    finally:
        launcher.reap()
        # Let the model server see the killed bot's sockets close before it stops, so its
        # connections end on their own rather than by cancellation.
        await asyncio.sleep(0.2)
        if launcher.log_path.exists():
            print(f"--- the bot's log ({launcher.log_path}) ---")
            print(launcher.log_path.read_text("utf-8", errors="replace")[-30_000:])
