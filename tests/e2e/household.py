"""Shared helpers for hearth's end-to-end tests: the real bot process, a household on Telegram,
and ways to read back what reached the model.

The bot runs exactly as a user runs it: `python -m bot.cli run` in its own process, configured
only through the environment (DESIGN §10), talking to the Telegram emulator over HTTP and to a
`ModelServer` (inside the test's event loop) through the real `openai` client. Nothing of the
bot is imported here except, after it has stopped, `memory` to look at what it kept.

Markers: every line a test sends carries the marker word of its *scope* (one per member's
private chat, one for the household group), so any prompt can be told apart by the markers it
holds, and a prompt holding two scopes' markers is a prompt that mixed them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.consolidation import BATCH_LINES
from tests.support.extractor import is_compaction, is_consolidation, numbered_lines
from tests.support.model_server import ModelServer, ResponsePlan, Switch, household_responder
from tests.support.telegram_emulator import Emulator, EmulatorClient, TgChat, TgUser

ROOT = Path(__file__).resolve().parents[2]

# The tick period the tests run the bot with. HEARTH_TICK_SECONDS refuses anything below 5
# (bot/settings.py: `ge=5`), so 5 is the fastest a scheduled tick can be.
TICK_SECONDS = 5
# A scheduled tick consolidates a scope once BATCH_LINES lines wait (or its chat has been quiet
# for minutes); a DM exchange is two lines (hers and the reply), so 16 messages fill a batch.
MESSAGES_PER_BATCH = BATCH_LINES // 2
# How long a test waits for the bot to start (Python, the database, getMe, the command menu).
START_TIMEOUT_S = 30.0
# SIGTERM must end the process cleanly within this.
STOP_TIMEOUT_S = 10.0
# Enough for a tick to come round (every TICK_SECONDS) and finish.
TICK_WAIT_S = 3 * TICK_SECONDS + 5.0

# What the bot says (or must say the gist of) that tests recognise.
FALLBACK_WORDS = "can't think straight"
READY_LINE = "hearth: running as @"

Json = dict[str, Any]


# --- people, chats and markers -----------------------------------------------------------------


@dataclass(frozen=True)
class Member:
    """A person in the household: their Telegram user, their DM, and their scope's marker."""

    user: TgUser
    marker: str  # a word carried by every line of this member's private chat

    @property
    def name(self) -> str:
        return self.user.first_name

    @property
    def dm(self) -> TgChat:
        return TgChat.private(self.user)


OLGA = Member(TgUser(5001, "Olga"), "pelican")  # the owner
ANA = Member(TgUser(5002, "Ana"), "quokka")
BEN = Member(TgUser(5003, "Ben"), "wombat")
STRANGER = TgUser(5099, "Mallory")
GROUP = TgChat.group(-100123, title="Household")
GROUP_MARKER = "heron"  # every line said in the household group carries it
MEMBERS = (OLGA, ANA, BEN)
ALL_MARKERS = (OLGA.marker, ANA.marker, BEN.marker, GROUP_MARKER)


def markers_in(text: str, markers: Iterable[str] = ALL_MARKERS) -> set[str]:
    """The scope markers `text` holds (whole words, any case)."""
    lowered = text.lower()
    return {m for m in markers if re.search(rf"\b{re.escape(m)}\b", lowered)}


# --- what reached the model --------------------------------------------------------------------


def messages_of(request: Json) -> list[Json]:
    return list(request.get("messages", []))


def prompt_text(request: Json) -> str:
    """Every message of one completion request, joined: all that reached the model."""
    parts = []
    for message in messages_of(request):
        content = message.get("content")
        parts.append(content if isinstance(content, str) else repr(content))
    return "\n".join(parts)


def last_user_text(request: Json) -> str:
    messages = messages_of(request)
    return str(messages[-1].get("content", "")) if messages else ""


def is_background(request: Json) -> bool:
    """A consolidation or compaction request (the tick's), not a conversation turn."""
    messages = messages_of(request)
    return is_consolidation(messages) or is_compaction(messages)


def consolidations(requests: Sequence[Json]) -> list[Json]:
    return [r for r in requests if is_consolidation(messages_of(r))]


def compactions(requests: Sequence[Json]) -> list[Json]:
    return [r for r in requests if is_compaction(messages_of(r))]


def conversations(requests: Sequence[Json]) -> list[Json]:
    return [r for r in requests if not is_background(r)]


def turn_prompt(requests: Sequence[Json], text: str) -> Json:
    """The one conversation request whose final message is (or, in a group, ends with) `text`.

    Fails when there is none or more than one: a test must know which prompt it reads."""
    found = [
        r
        for r in conversations(requests)
        if last_user_text(r) == text or last_user_text(r).endswith(f": {text}")
    ]
    assert len(found) == 1, f"expected one prompt for the turn {text!r}, found {len(found)}"
    return found[0]


def background_lines(request: Json) -> list[tuple[int, str, str]]:
    """(number, speaker, text) of each transcript line in a consolidation/compaction prompt."""
    return numbered_lines(last_user_text(request))


# --- the bot process ---------------------------------------------------------------------------


def bot_environment(
    *,
    token: str,
    base_url: str,
    owner_id: int,
    db: Path,
    model_url: str,
    home: Path,
    embedder: str = "e5",
    extra: dict[str, str] | None = None,
) -> dict[str, str]:
    """The bot's environment: the parent's minus anything hearth, Telegram or OpenAI related
    (a developer's own settings must not leak in), plus the test's configuration."""
    keep = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HEARTH_", "TELEGRAM_", "OPENAI_"))
        and k not in ("PORT", "PYTHONPATH")
    }
    env = {
        **keep,
        "HOME": str(home),
        "PYTHONPATH": str(ROOT),
        "PYTHONUNBUFFERED": "1",
        "HF_HUB_OFFLINE": "1",
        "TELEGRAM_BOT_TOKEN": token,
        "TELEGRAM_BASE_URL": base_url,
        "HEARTH_OWNER_TELEGRAM_ID": str(owner_id),
        "HEARTH_DB": str(db),
        "OPENAI_BASE_URL": model_url,
        "OPENAI_API_KEY": "test",
        "HEARTH_MODEL": "test-model",
        "HEARTH_TICK_SECONDS": str(TICK_SECONDS),
        "HEARTH_EMBEDDER": embedder,
    }
    env.update(extra or {})
    return env


class BotProcess:
    """`python -m bot.cli run` as a child process; its stdout and stderr go to one log file."""

    def __init__(self, env: dict[str, str], workdir: Path, log_path: Path) -> None:
        self.env = env
        self.workdir = workdir
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self.returncode: int | None = None

    def start(self) -> None:
        assert self.process is None, "this bot process was already started"
        self.workdir.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            log.write(f"--- starting the bot at {time.strftime('%H:%M:%S')} ---\n".encode())
            log.flush()
            self.process = subprocess.Popen(
                [sys.executable, "-m", "bot.cli", "run"],
                cwd=self.workdir,  # no .env here: only the environment configures the bot
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log(self) -> str:
        if not self.log_path.exists():
            return ""
        return self.log_path.read_text("utf-8", errors="replace")

    async def wait_ready(self, timeout: float = START_TIMEOUT_S) -> None:  # noqa: ASYNC109
        """Until the bot says it runs; fails at once, with its log, if it exits instead."""
        deadline = time.monotonic() + timeout
        while True:
            if READY_LINE in self.log():
                return
            if self.process is None or self.process.poll() is not None:
                code = None if self.process is None else self.process.returncode
                raise AssertionError(
                    f"the bot exited (code {code}) before it was ready; its log:\n{self.log()}"
                )
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the bot did not print {READY_LINE!r} within {timeout} s; "
                    f"its log:\n{self.log()}"
                )
            await asyncio.sleep(0.05)

    async def stop(self, timeout: float = STOP_TIMEOUT_S) -> int:  # noqa: ASYNC109
        """SIGTERM, then wait; returns the exit code (SIGKILL and an AssertionError when the
        process outlives `timeout`)."""
        process = self.process
        assert process is not None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.to_thread(process.wait, timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            await asyncio.to_thread(process.wait)
            raise AssertionError(
                f"the bot did not exit within {timeout} s of SIGTERM; its log:\n{self.log()}"
            ) from None
        self.returncode = code
        return code

    async def kill(self) -> None:
        """SIGKILL: the machine lost power, as far as the bot can tell."""
        process = self.process
        assert process is not None
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        self.returncode = await asyncio.to_thread(process.wait)

    def reap(self) -> None:
        """Teardown: whatever state the test left it in, no process survives."""
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        process.wait()


# --- the model server and the launcher ---------------------------------------------------------


@dataclass
class Model:
    """The model server and the switch its answers go through."""

    server: ModelServer
    switch: Switch

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self.server.requests

    @property
    def base_url(self) -> str:
        return self.server.base_url


class HangingConsolidation:
    """The household's model, except that while `on` every consolidation request hangs for
    `delay_s` and then fails (503), so a tick is caught in the middle of its model call."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.on = True

    def __call__(self, request: dict[str, Any]) -> ResponsePlan:
        if self.on and is_consolidation(request.get("messages", [])):
            return ResponsePlan(status=503, delay_s=self.delay_s)
        return household_responder(request)


@dataclass
class Launcher:
    """Starts the real bot (`python -m bot.cli run`) against this test's emulator token, model
    server and database; every process it started is reaped at teardown."""

    emulator: Emulator
    tg: Telegram
    model: Model
    tmp: Path
    owner_id: int = 5001
    processes: list[BotProcess] = field(default_factory=list)

    @property
    def db(self) -> Path:
        return self.tmp / "data" / "hearth.db"

    @property
    def log_path(self) -> Path:
        return self.tmp / "bot.log"

    def process(self, *, embedder: str = "e5",
                extra: dict[str, str] | None = None) -> BotProcess:
        self.db.parent.mkdir(parents=True, exist_ok=True)
        env = bot_environment(
            token=self.tg.token,
            base_url=self.emulator.base_url,
            owner_id=self.owner_id,
            db=self.db,
            model_url=self.model.base_url,
            home=self.tmp / "home",
            embedder=embedder,
            extra=extra,
        )
        (self.tmp / "home").mkdir(exist_ok=True)
        bot = BotProcess(env, self.tmp / "cwd", self.log_path)
        self.processes.append(bot)
        return bot

    async def start(self, *, embedder: str = "e5",
                    extra: dict[str, str] | None = None) -> BotProcess:
        """A running bot, ready for updates."""
        bot = self.process(embedder=embedder, extra=extra)
        bot.start()
        await bot.wait_ready()
        return bot

    def reap(self) -> None:
        for bot in self.processes:
            bot.reap()


# --- waiting -----------------------------------------------------------------------------------


async def eventually(
    check: Callable[[], Awaitable[bool]] | Callable[[], bool],
    *,
    timeout: float = TICK_WAIT_S,  # noqa: ASYNC109
    interval: float = 0.1,
    what: str = "the condition",
) -> None:
    """Poll `check` (sync or async) until it is true; AssertionError naming `what` otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if not isinstance(result, bool):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}")
        await asyncio.sleep(interval)


def text_of(message: Json) -> str:
    return str(message.get("text") or message.get("caption") or "")


@dataclass
class Telegram:
    """The user side of the emulator for one test's bot token, with waiting helpers."""

    client: EmulatorClient
    token: str

    async def messages(self, chat: TgChat | int) -> list[Json]:
        chat_id = chat if isinstance(chat, int) else chat.id
        return await self.client.bot_messages(chat_id)

    async def texts(self, chat: TgChat | int) -> list[str]:
        return [text_of(m) for m in await self.messages(chat)]

    async def count(self, chat: TgChat | int) -> int:
        return len(await self.messages(chat))

    async def wait_for(
        self,
        chat: TgChat | int,
        predicate: Callable[[Json], bool] | str,
        *,
        after: int = 0,
        timeout: float = 15.0,  # noqa: ASYNC109
    ) -> Json:
        """The first bot message in `chat`, at index `after` or later, that matches
        (a predicate, or a substring of its text)."""
        test: Callable[[Json], bool] = (
            (lambda m: predicate in text_of(m)) if isinstance(predicate, str) else predicate
        )
        deadline = time.monotonic() + timeout
        while True:
            messages = await self.messages(chat)
            for message in messages[after:]:
                if test(message):
                    return message
            if time.monotonic() > deadline:
                shown = [text_of(m)[:120] for m in messages[after:]]
                raise AssertionError(
                    f"chat {chat if isinstance(chat, int) else chat.id}: no bot message "
                    f"matching {predicate!r} within {timeout} s after #{after}; got {shown!r}"
                )
            await asyncio.sleep(0.05)

    async def wait_count(
        self, chat: TgChat | int, count: int, timeout: float = 15.0  # noqa: ASYNC109
    ) -> list[Json]:
        chat_id = chat if isinstance(chat, int) else chat.id
        try:
            return await self.client.wait_for_messages(chat_id, count, timeout)
        except TimeoutError as exc:
            raise AssertionError(str(exc)) from None

    async def say(
        self, user: TgUser, chat: TgChat, text: str, *, timeout: float = 15.0  # noqa: ASYNC109
    ) -> Json:
        """`user` writes `text` (a command when it starts with '/') and waits for the bot's next
        message in that chat, which it returns. Only for chats where nothing else is pending."""
        before = await self.count(chat)
        if text.startswith("/"):
            await self.client.send_command(user, chat, text)
        else:
            await self.client.send_text(user, chat, text)
        messages = await self.wait_count(chat, before + 1, timeout)
        return messages[before]


# --- a household -------------------------------------------------------------------------------

INVITE_CODE = re.compile(r"\?start=([A-Za-z0-9_-]+)")


@dataclass
class Household:
    """The owner, two members who joined with invites, and the enabled household group."""

    tg: Telegram
    owner: Member = OLGA
    members: tuple[Member, ...] = MEMBERS
    group: TgChat = GROUP
    invites: list[str] = field(default_factory=list)


async def invite(tg: Telegram, owner: Member, newcomer: Member) -> str:
    """The owner sends /invite, the newcomer redeems the code from the link; returns the code."""
    reply = await tg.say(owner.user, owner.dm, "/invite")
    found = INVITE_CODE.search(text_of(reply))
    assert found, f"/invite answered without a t.me start link: {text_of(reply)!r}"
    code = found.group(1)
    assert f"https://t.me/hearth_test_bot?start={code}" in text_of(reply)
    owner_count = await tg.count(owner.dm)
    welcome = await tg.say(newcomer.user, newcomer.dm, f"/start {code}")
    assert "Welcome" in text_of(welcome) or newcomer.name in text_of(welcome), text_of(welcome)
    # The owner hears about the newcomer; wait for it so it cannot land between later replies.
    await tg.wait_for(owner.dm, newcomer.name, after=owner_count)
    return code


async def make_household(tg: Telegram) -> Household:
    """Olga (the owner, by HEARTH_OWNER_TELEGRAM_ID) says /start; Ana and Ben join with
    invites; Olga enables the group with /household."""
    hello = await tg.say(OLGA.user, OLGA.dm, "/start")
    assert text_of(hello), "the owner's /start got an empty answer"
    house = Household(tg)
    for newcomer in (ANA, BEN):
        house.invites.append(await invite(tg, OLGA, newcomer))
    enabled = await tg.say(OLGA.user, GROUP, "/household")
    assert "household group" in text_of(enabled).lower(), text_of(enabled)
    return house


def filler(marker: str, n: int) -> str:
    """A line of small talk in a scope: a question, so a careful model extracts nothing."""
    return f"{marker} small talk {n}?"


async def send_all(tg: Telegram, script: Sequence[tuple[TgUser, TgChat, str]]) -> None:
    """Send every (user, chat, text) in order, without waiting for replies in between."""
    for user, chat, text in script:
        await tg.client.send_text(user, chat, text)


def interleave(*scripts: Sequence[tuple[TgUser, TgChat, str]]) -> list[tuple[TgUser, TgChat, str]]:
    """Round-robin over several chats' scripts, so lines of different scopes alternate."""
    out: list[tuple[TgUser, TgChat, str]] = []
    longest = max((len(s) for s in scripts), default=0)
    for i in range(longest):
        out.extend(s[i] for s in scripts if i < len(s))
    return out


def dm_script(member: Member, facts: Sequence[str], total: int = MESSAGES_PER_BATCH
              ) -> list[tuple[TgUser, TgChat, str]]:
    """`facts` (each already carrying the member's marker), then small talk up to `total`."""
    lines = list(facts) + [filler(member.marker, n) for n in range(len(facts), total)]
    return [(member.user, member.dm, line) for line in lines]


def group_script(lines: Sequence[tuple[Member, str]], total: int = MESSAGES_PER_BATCH
                 ) -> list[tuple[TgUser, TgChat, str]]:
    """Group `lines` (speaker, text with the group marker), then small talk by everyone in
    turn up to `total`."""
    script = [(m.user, GROUP, text) for m, text in lines]
    for n in range(len(lines), total):
        speaker = MEMBERS[n % len(MEMBERS)]
        script.append((speaker.user, GROUP, filler(GROUP_MARKER, n)))
    return script


async def wait_replies(tg: Telegram, expected: dict[int, int], timeout: float = 60.0  # noqa: ASYNC109
                       ) -> None:
    """Until each chat id has at least its expected number of bot messages."""
    for chat_id, count in expected.items():
        await tg.wait_count(chat_id, count, timeout)


def explain_requests(requests: Sequence[Json], limit: int = 400) -> str:
    """A short listing of the requests, for an assertion message."""
    out = []
    for n, request in enumerate(requests):
        kind = (
            "consolidation" if is_consolidation(messages_of(request))
            else "compaction" if is_compaction(messages_of(request))
            else "turn"
        )
        out.append(f"#{n} {kind}: {last_user_text(request)[:limit]!r}")
    return "\n".join(out)
