"""A real Telegram Bot API peer on loopback, for end-to-end tests.

`Emulator` runs `tests/e2e/emulator/server.js` (the npm package `telegram-test-api` 4.2.1 with
hearth's patches, see the note at the top of that file) in its own process group, and is at the
same time the *user side* of Telegram for one bot token: it sends what people type and press, and
reads back what the bot sent. python-telegram-bot talks to it over real HTTP::

    async with Emulator() as emu:
        app = (ApplicationBuilder().token(emu.token)
               .base_url(emu.base_url).base_file_url(emu.base_file_url).build())
        ...  # start the app, poll with a small poll_interval
        alice = TgUser(1, "Alice")
        await emu.send_text(alice, TgChat.private(alice), "hi")
        replies = await emu.wait_for_messages(alice.id, 1)

Install the Node side once with ``npm ci --prefix tests/e2e/emulator`` (Node 20).

What can reach the bot: text messages and commands (`send_text`, `send_command`), button presses
on the bot's own messages (`send_callback`), and any other update as is through `send_raw`:
edited messages (`kind="edited_message"`, or `edit_text`), stickers, photos, documents, voice,
locations, `my_chat_member`, ... A file the bot should be able to download is stored first with
`upload_file`, whose file_id then goes into a photo or document in `send_raw`. Updates are
queued until the bot confirms them with a later `offset`, as Telegram does, so a bot restarted
against the same emulator loses nothing.

What the bot can do: getMe, getUpdates (long polling honoured), sendMessage, editMessageText /
editMessageCaption / editMessageReplyMarkup, deleteMessage, sendDocument (multipart upload; the
file name and bytes are kept), getFile and file download, sendChatAction, set/get/deleteMyCommands,
answerCallbackQuery, getChat, set/deleteWebhook, getWebhookInfo, and a few setters. Any other
method is refused with HTTP 400 (`telegram.error.BadRequest`), never a network error. Photos,
voice and other media the *bot* sends are not emulated; inline mode and payments neither.

Emulated Telegram rules: empty text and texts over 4096 characters (captions over 1024) are
refused, editing a message without changing it answers "message is not modified", editing a
message the bot never sent answers "message to edit not found", command names must be
`[a-z0-9_]{1,32}`. Sending to a chat nobody wrote from is allowed (Telegram would refuse it).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

import httpx

ROOT = Path(__file__).resolve().parents[2]
EMULATOR_DIR = ROOT / "tests" / "e2e" / "emulator"
INSTALL_COMMAND = "npm ci --prefix tests/e2e/emulator"
DEFAULT_TOKEN = "123456789:hearth-emulated-token"
DEFAULT_BOT_USERNAME = "hearth_test_bot"
DEFAULT_BOT_FIRST_NAME = "Hearth"

ChatType = Literal["private", "group", "supergroup"]
Json = dict[str, Any]


class EmulatorError(RuntimeError):
    """The emulator could not start, or refused a client request."""


@dataclass(frozen=True)
class TgUser:
    """A person writing to the bot."""

    id: int
    first_name: str
    username: str | None = None

    def to_dict(self) -> Json:
        user: Json = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        if self.username is not None:
            user["username"] = self.username
        return user


@dataclass(frozen=True)
class TgChat:
    """A chat: a private one (id = the user's id) or a group (negative id, with a title)."""

    id: int
    type: ChatType = "private"
    title: str | None = None

    @classmethod
    def private(cls, user: TgUser) -> TgChat:
        return cls(user.id, "private")

    @classmethod
    def group(cls, id: int, title: str = "Household") -> TgChat:
        if id >= 0:
            raise ValueError(f"a group chat id is negative, got {id}")
        return cls(id, "group", title)

    def to_dict(self, user: TgUser) -> Json:
        """The `chat` object of a message `user` sends here."""
        chat: Json = {"id": self.id, "type": self.type}
        if self.type == "private":
            chat["first_name"] = user.first_name
            if user.username is not None:
                chat["username"] = user.username
        else:
            chat["title"] = self.title if self.title is not None else f"Chat {self.id}"
        return chat


@dataclass(frozen=True)
class SentDocument:
    """A file the bot sent with sendDocument, as the user would download it."""

    chat_id: int
    message_id: int
    file_id: str
    file_name: str
    mime_type: str
    content: bytes
    caption: str | None


@dataclass(frozen=True)
class ChatAction:
    """A sendChatAction the bot made ("typing", "upload_document", ...)."""

    chat_id: int
    action: str
    time: float  # seconds since the epoch, as the emulator received it


def _command_entity(text: str) -> Json:
    command = text.split(maxsplit=1)[0] if text.strip() else ""
    if not command.startswith("/"):
        raise ValueError(f"a command starts with '/', got {text!r}")
    # Entity offsets count UTF-16 code units, as Telegram does.
    return {
        "type": "bot_command",
        "offset": len(text[: text.index(command)].encode("utf-16-le")) // 2,
        "length": len(command.encode("utf-16-le")) // 2,
    }


class EmulatorClient:
    """The user side of the emulator for one bot token (see the module docstring)."""

    def __init__(self, emulator: Emulator, token: str) -> None:
        self._emulator = emulator
        self.token = token

    # -- what people do -------------------------------------------------------------------------

    async def send_text(
        self, user: TgUser, chat: TgChat, text: str, *, reply_to: int | None = None
    ) -> int:
        """`user` writes `text` in `chat`; returns the new message's id."""
        message = self._message(user, chat, text=text)
        if reply_to is not None:
            message["reply_to_message"] = await self._message_to_quote(chat.id, reply_to)
        result = await self._client_call("/sendMessage", message)
        return int(result["message_id"])

    async def send_text_timed(self, user: TgUser, chat: TgChat, text: str) -> float:
        """As `send_text`; returns when the emulator queued the message, in milliseconds on
        its own clock (what `wait_bot_times` measures against)."""
        result = await self._client_call("/sendMessage", self._message(user, chat, text=text))
        return float(result["queued_ms"])

    async def wait_bot_times(self, chat_id: int, count: int, timeout: float) -> list[float]:  # noqa: ASYNC109 - a deadline for the bench, sent to the emulator
        """Wait, on the emulator's side, until the bot has sent `count` messages into `chat_id`
        in all; when each arrived there (milliseconds on its clock). Raises TimeoutError after
        `timeout` s. Nothing is polled: one request waits for the bot."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            # Each wait stays within the HTTP client's own timeout (10 s).
            result = await self._client_call(
                "/waitBotMessages", {"token": self.token, "chatId": chat_id, "count": count,
                                     "timeout": max(0.0, min(left, 8.0))})
            if int(result["count"]) >= count:
                return [float(t) for t in result["received_ms"]]
            if time.monotonic() >= deadline:
                raise TimeoutError(f"chat {chat_id}: waited {timeout} s for {count} bot"
                                   f" message(s), got {result['count']}")

    async def send_command(self, user: TgUser, chat: TgChat, text: str) -> int:
        """`user` sends a command (`"/start abc"`, `"/start@hearth_test_bot"`) with its
        `bot_command` entity; returns the message id."""
        message = self._message(user, chat, text=text, entities=[_command_entity(text)])
        result = await self._client_call("/sendCommand", message)
        return int(result["message_id"])

    async def send_callback(self, user: TgUser, chat: TgChat, message_id: int, data: str) -> str:
        """`user` presses the button carrying `data` under the bot's message `message_id` in
        `chat`; returns the callback query id. The emulator does not check that such a button
        exists (Telegram clients only send what is on screen; assert on the markup yourself)."""
        result = await self._client_call(
            "/sendCallback",
            {"botToken": self.token, "from": user.to_dict(), "chat_id": chat.id,
             "message_id": message_id, "data": data},
        )  # fmt: skip
        return str(result["callback_query_id"])

    async def edit_text(self, user: TgUser, chat: TgChat, message_id: int, text: str) -> None:
        """`user` edits their message `message_id` (the bot gets an `edited_message`)."""
        message = self._message(user, chat, text=text)
        message["message_id"] = message_id
        message["edit_date"] = int(time.time())
        await self.send_raw(message, kind="edited_message")

    async def send_raw(self, message: Mapping[str, Any], *, kind: str = "message") -> int | None:
        """Queue one update `{kind: message}` exactly as given: stickers, photos, documents,
        locations, `edited_message`, `my_chat_member`, ... `message_id` and `date` are filled in
        when the payload has a `chat` and lacks them. Returns the payload's message id (None for
        payloads without a chat)."""
        result = await self._client_call(
            "/sendUpdate", {"botToken": self.token, "update": {kind: dict(message)}}
        )
        message_id = result.get("message_id")
        return None if message_id is None else int(message_id)

    async def upload_file(
        self, content: bytes, file_name: str, mime_type: str = "application/octet-stream"
    ) -> str:
        """Store a file a user is about to send; returns its file_id. Put it in a `document` or
        `photo` of a `send_raw` message, and the bot's getFile and download will find it."""
        result = await self._client_call(
            "/uploadFile",
            {"botToken": self.token, "file_name": file_name, "mime_type": mime_type,
             "content_base64": base64.b64encode(content).decode("ascii")},
        )  # fmt: skip
        return str(result["file_id"])

    # -- what the bot did -----------------------------------------------------------------------

    async def history(self) -> list[Json]:
        """Every stored entry for this bot, user and bot side, oldest first (raw emulator form)."""
        result = await self._client_call("/getUpdatesHistory", {"token": self.token})
        return list(result)

    async def bot_messages(self, chat_id: int) -> list[Json]:
        """Everything the bot has sent into `chat_id`, oldest first, as Telegram Message dicts
        (`message_id`, `date`, `chat`, `from`, `text` or `document` + `caption`, `entities`,
        `reply_markup`, ...) in their current state: edits are applied (with `edit_date`), and
        deleted messages are gone."""
        return [
            entry["result"]
            for entry in await self.history()
            if "result" in entry and str(entry["message"].get("chat_id")) == str(chat_id)
        ]

    async def wait_for_messages(
        self,
        chat_id: int,
        count: int,
        timeout: float = 5.0,  # noqa: ASYNC109 - a deadline for the test, not an I/O timeout
    ) -> list[Json]:
        """Wait until the bot has sent at least `count` messages into `chat_id` in all, and
        return all of them. Raises TimeoutError (showing what did arrive) after `timeout` s."""
        deadline = time.monotonic() + timeout
        while True:
            messages = await self.bot_messages(chat_id)
            if len(messages) >= count:
                return messages
            if time.monotonic() >= deadline:
                texts = [m.get("text", m.get("caption")) for m in messages]
                raise TimeoutError(
                    f"chat {chat_id}: waited {timeout} s for {count} bot message(s), "
                    f"got {len(messages)}: {texts!r}"
                )
            await asyncio.sleep(0.02)

    async def documents(self, chat_id: int) -> list[SentDocument]:
        """The files the bot sent into `chat_id` with sendDocument, oldest first."""
        result = await self._client_call("/getDocuments", {"token": self.token, "chatId": chat_id})
        return [
            SentDocument(
                chat_id=int(item["chat_id"]),
                message_id=int(item["message_id"]),
                file_id=str(item["file_id"]),
                file_name=str(item["file_name"]),
                mime_type=str(item["mime_type"]),
                content=base64.b64decode(item["content_base64"]),
                caption=item.get("caption"),
            )
            for item in result
        ]

    async def chat_actions(self, chat_id: int) -> list[ChatAction]:
        """The chat actions ("typing", ...) the bot sent into `chat_id`, oldest first."""
        result = await self._client_call(
            "/getChatActions", {"token": self.token, "chatId": chat_id}
        )
        return [
            ChatAction(chat_id=int(a["chat_id"]), action=str(a["action"]), time=a["time"] / 1000)
            for a in result
        ]

    async def my_commands(
        self, scope: Mapping[str, Any] | None = None, language_code: str = ""
    ) -> list[Json]:
        """The command list the bot set with setMyCommands for `scope` (default scope)."""
        body: Json = {"token": self.token, "language_code": language_code}
        if scope is not None:
            body["scope"] = dict(scope)
        return list(await self._client_call("/getMyCommands", body))

    async def callback_answers(self) -> list[Json]:
        """Every answerCallbackQuery the bot made: `callback_query_id`, `text`, `show_alert`."""
        return list(await self._client_call("/getCallbackAnswers", {"token": self.token}))

    # -- plumbing -------------------------------------------------------------------------------

    def _message(self, user: TgUser, chat: TgChat, **fields: Any) -> Json:
        return {
            "botToken": self.token,
            "from": user.to_dict(),
            "chat": chat.to_dict(user),
            "date": int(time.time()),
            **fields,
        }

    async def _message_to_quote(self, chat_id: int, message_id: int) -> Json:
        for message in await self.bot_messages(chat_id):
            if message["message_id"] == message_id:
                return message
        for entry in await self.history():
            message = entry.get("message", {})
            chat = message.get("chat", {})
            is_user_message = "result" not in entry and chat.get("id") == chat_id
            if is_user_message and entry.get("messageId") == message_id:
                quoted = {k: v for k, v in message.items() if k != "botToken"}
                return {**quoted, "message_id": message_id}
        raise EmulatorError(f"no message {message_id} in chat {chat_id} to reply to")

    async def _client_call(self, path: str, body: Json) -> Any:
        response = await self._emulator._post(path, body)
        try:
            payload = response.json()
        except ValueError:
            payload = {}
        if response.status_code != 200 or not payload.get("ok"):
            raise EmulatorError(
                f"emulator {path} answered {response.status_code}: "
                f"{payload.get('description', response.text)}"
            )
        return payload["result"]


class Emulator(EmulatorClient):
    """The emulator process, and the user side for its default bot token.

    Use ``async with Emulator() as emu`` (or ``emu.start()`` / ``emu.stop()`` from synchronous
    code, e.g. a session fixture). `client(token)` gives the user side for another bot.
    """

    def __init__(
        self,
        token: str = DEFAULT_TOKEN,
        *,
        bot_username: str = DEFAULT_BOT_USERNAME,
        bot_first_name: str = DEFAULT_BOT_FIRST_NAME,
        port: int = 0,
        startup_timeout: float = 15.0,
        emulator_dir: Path = EMULATOR_DIR,
    ) -> None:
        super().__init__(self, token)
        self.bot_username = bot_username
        self.bot_first_name = bot_first_name
        self._requested_port = port
        self._startup_timeout = startup_timeout
        self._dir = emulator_dir
        self._process: subprocess.Popen[bytes] | None = None
        self._port: int | None = None
        self._http: httpx.AsyncClient | None = None
        self._http_loop: asyncio.AbstractEventLoop | None = None

    # -- addresses ------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise EmulatorError("the emulator is not running")
        return self._port

    @property
    def root_url(self) -> str:
        """Where the client routes live: `http://127.0.0.1:PORT`."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """For `ApplicationBuilder().base_url(...)`."""
        return f"{self.root_url}/bot"

    @property
    def base_file_url(self) -> str:
        """For `ApplicationBuilder().base_file_url(...)`."""
        return f"{self.root_url}/file/bot"

    @property
    def bot_id(self) -> int:
        """The bot's user id, as getMe reports it (the token's numeric prefix)."""
        prefix = self.token.split(":", 1)[0]
        return int(prefix) if prefix.isdigit() else 666

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def client(self, token: str) -> EmulatorClient:
        """The user side for another bot token on the same emulator."""
        return EmulatorClient(self, token)

    # -- process --------------------------------------------------------------------------------

    def start(self) -> None:
        """Start node and wait until it listens. Blocking; idempotent."""
        if self._process is not None:
            return
        script = self._dir / "server.js"
        if not (self._dir / "node_modules" / "telegram-test-api").is_dir():
            raise EmulatorError(
                f"the Telegram emulator's npm packages are not installed in {self._dir}: "
                f"run `{INSTALL_COMMAND}` from the repository root"
            )
        node = shutil.which("node")
        if node is None:
            raise EmulatorError("`node` (Node.js 20) is not on PATH; the emulator needs it")
        env = {
            **os.environ,
            "BOT_USERNAME": self.bot_username,
            "BOT_FIRST_NAME": self.bot_first_name,
        }
        process = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
            [node, str(script), "--host", "127.0.0.1", "--port", str(self._requested_port),
             "--parent-pipe"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,  # its own process group, killed as one in stop()
        )  # fmt: skip
        self._process = process
        try:
            self._port = self._await_ready(process)
        except BaseException:
            self.stop()
            raise

    def _await_ready(self, process: subprocess.Popen[bytes]) -> int:
        assert process.stdout is not None
        deadline = time.monotonic() + self._startup_timeout
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise EmulatorError(
                        f"the Telegram emulator did not say READY within {self._startup_timeout} s"
                    )
                if not selector.select(remaining):
                    continue
                line = process.stdout.readline().decode("utf-8", "replace").strip()
                if line.startswith("READY "):
                    return int(line.split()[1])
                if not line and process.poll() is not None:
                    raise EmulatorError(
                        f"the Telegram emulator exited with code {process.returncode} before it "
                        "was ready (its stderr is in the test output)"
                    )

    def stop(self) -> None:
        """Terminate the emulator's process group and reap it. Blocking; idempotent."""
        process, self._process, self._port = self._process, None, None
        if process is None:
            return
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        await asyncio.to_thread(self.start)
        self._http = httpx.AsyncClient(base_url=self.root_url, timeout=10.0, trust_env=False)
        self._http_loop = asyncio.get_running_loop()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        http, self._http, self._http_loop = self._http, None, None
        try:
            if http is not None:
                await http.aclose()
        finally:
            await asyncio.to_thread(self.stop)

    async def _post(self, path: str, body: Json) -> httpx.Response:
        # One pooled client inside `async with`; a short-lived one per call otherwise (after a
        # synchronous start(), every test may run on its own event loop).
        if self._http is not None and self._http_loop is asyncio.get_running_loop():
            return await self._http.post(path, json=body)
        async with httpx.AsyncClient(
            base_url=self.root_url, timeout=10.0, trust_env=False
        ) as http:
            return await http.post(path, json=body)
