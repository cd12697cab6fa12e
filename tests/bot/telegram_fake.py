"""An in-process Telegram: a `BaseRequest` that answers the Bot API methods hearth uses, records
every call, and fails loudly on any other; plus factories for the updates people send.

No ports, no HTTP: python-telegram-bot builds its requests as usual and hands them here.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from telegram import Update
from telegram.ext import Application
from telegram.request import BaseRequest, RequestData

BOT_ID = 7000
BOT_USERNAME = "hearth_test_bot"
BOT_USER = {"id": BOT_ID, "is_bot": True, "first_name": "Wren", "username": BOT_USERNAME,
            "can_join_groups": True, "can_read_all_group_messages": True,
            "supports_inline_queries": False}
DATE = 1_700_000_000


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    files: dict[str, Any] = field(default_factory=dict)

    @property
    def chat_id(self) -> int | None:
        value = self.params.get("chat_id")
        return None if value is None else int(value)

    @property
    def text(self) -> str:
        return str(self.params.get("text", ""))


class UnexpectedMethod(AssertionError):
    pass


class FakeTelegram(BaseRequest):
    """The Bot API, in process. `fail[method]` makes that method answer an error."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.fail: dict[str, str] = {}
        self.inbox: list[dict[str, Any]] = []  # updates getUpdates hands out
        self._ids = itertools.count(1)
        # What each message she sent says now, by (chat, message id): what an edit compares.
        self._said: dict[tuple[int, int], tuple[str, str]] = {}
        self._update_ids = itertools.count(1)

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    @property
    def read_timeout(self) -> float | None:
        return 1.0

    async def do_request(  # noqa: PLR0917 -- BaseRequest's own signature
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = None,
        write_timeout: Any = None,
        connect_timeout: Any = None,
        pool_timeout: Any = None,
    ) -> tuple[int, bytes]:
        name = url.rsplit("/", 1)[-1]
        params = dict(request_data.parameters) if request_data else {}
        files = dict(request_data.multipart_data) if request_data and (
            request_data.contains_files) else {}
        self.calls.append(Call(name, params, files))
        if name in self.fail:
            body = {"ok": False, "error_code": 400, "description": self.fail[name]}
            return 400, json.dumps(body).encode()
        answer: Callable[[dict[str, Any]], Any] | None = getattr(self, f"_{name}", None)
        if answer is None:
            raise UnexpectedMethod(f"the test did not expect Telegram method {name}")
        result = answer(params)
        if asyncio.iscoroutine(result):
            result = await result
        if isinstance(result, tuple):  # a refusal: (status, description)
            code, description = result
            return code, json.dumps({"ok": False, "error_code": code,
                                     "description": description}).encode()
        return 200, json.dumps({"ok": True, "result": result}).encode()

    # --- what is recorded ------------------------------------------------------------------------

    def sent(self, chat_id: int | None = None, method: str = "sendMessage") -> list[Call]:
        return [c for c in self.calls
                if c.method == method and (chat_id is None or c.chat_id == chat_id)]

    def texts(self, chat_id: int | None = None) -> list[str]:
        return [c.text for c in self.sent(chat_id)]

    def methods(self) -> list[str]:
        return [c.method for c in self.calls]

    def clear(self) -> None:
        self.calls.clear()

    # --- the Bot API methods hearth uses ---------------------------------------------------------

    def _message(self, params: dict[str, Any], **extra: Any) -> dict[str, Any]:
        chat_id = int(params["chat_id"])
        chat = ({"id": chat_id, "type": "private", "first_name": "Someone"} if chat_id > 0
                else {"id": chat_id, "type": "group", "title": "Home"})
        return {"message_id": next(self._ids), "date": DATE, "chat": chat, "from": BOT_USER,
                **extra}

    def _getMe(self, params: dict[str, Any]) -> dict[str, Any]:
        return BOT_USER

    def _sendMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self._message(params, text=params["text"])
        self._said[(int(params["chat_id"]), int(message["message_id"]))] = (
            str(params["text"]), json.dumps(params.get("reply_markup"), sort_keys=True))
        return message

    def _sendChatAction(self, params: dict[str, Any]) -> bool:
        return True

    def _setMyCommands(self, params: dict[str, Any]) -> bool:
        return True

    def _answerCallbackQuery(self, params: dict[str, Any]) -> bool:
        return True

    def _editMessageText(self, params: dict[str, Any]) -> dict[str, Any] | tuple[int, str]:
        """As Telegram: an edit to what the message already says is refused, and so is one of
        a message she never sent."""
        key = (int(params["chat_id"]), int(params["message_id"]))
        said = self._said.get(key)
        if said is None:
            return 400, "Bad Request: message to edit not found"
        now = (str(params["text"]), json.dumps(params.get("reply_markup"), sort_keys=True))
        if said == now:
            return 400, ("Bad Request: message is not modified: specified new message content"
                         " and reply markup are exactly the same as a current content and reply"
                         " markup of the message")
        self._said[key] = now
        return {**self._message(params, text=params["text"]), "message_id": key[1]}

    def _sendDocument(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._message(params, document={"file_id": "doc", "file_unique_id": "doc"})

    def _deleteWebhook(self, params: dict[str, Any]) -> bool:
        return True

    def _setWebhook(self, params: dict[str, Any]) -> bool:
        return True

    async def _getUpdates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset", 0))
        ready = [u for u in self.inbox if u["update_id"] >= offset]
        if not ready:
            await asyncio.sleep(0.01)
        return ready

    # --- people writing ------------------------------------------------------------------------

    def next_update_id(self) -> int:
        return next(self._update_ids)


class People:
    """Factories for what a person does in Telegram, as Bot API update JSON."""

    def __init__(self, telegram: FakeTelegram) -> None:
        self.telegram = telegram
        self._message_ids = itertools.count(10_000)

    @staticmethod
    def user(user_id: int, first_name: str = "Sam", username: str | None = None
             ) -> dict[str, Any]:
        user: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": first_name}
        if username:
            user["username"] = username
        return user

    @staticmethod
    def chat(chat_id: int, first_name: str = "Sam") -> dict[str, Any]:
        if chat_id < 0:
            return {"id": chat_id, "type": "group", "title": "Home"}
        return {"id": chat_id, "type": "private", "first_name": first_name}

    def message(self, user_id: int, text: str | None = None, *, chat_id: int | None = None,
                name: str = "Sam", kind: str = "message", reply_to_bot: bool = False,
                **extra: Any) -> dict[str, Any]:
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "date": DATE,
            "chat": self.chat(chat_id if chat_id is not None else user_id, name),
            "from": self.user(user_id, name),
            **extra,
        }
        if text is not None:
            message["text"] = text
            if text.startswith("/"):
                length = len(text.split()[0])
                message["entities"] = [{"type": "bot_command", "offset": 0, "length": length}]
        if reply_to_bot:
            message["reply_to_message"] = {"message_id": 1, "date": DATE, "text": "hi",
                                           "chat": message["chat"], "from": BOT_USER}
        if kind == "edited_message":
            message["edit_date"] = DATE + 60
        return {"update_id": self.telegram.next_update_id(), kind: message}

    def press(self, user_id: int, data: str, *, chat_id: int | None = None,
              name: str = "Sam") -> dict[str, Any]:
        chat = self.chat(chat_id if chat_id is not None else user_id, name)
        return {
            "update_id": self.telegram.next_update_id(),
            "callback_query": {
                "id": str(next(self._message_ids)),
                "from": self.user(user_id, name),
                "chat_instance": "ci",
                "data": data,
                "message": {"message_id": 1, "date": DATE, "chat": chat, "from": BOT_USER,
                            "text": "a question"},
            },
        }


def as_update(data: dict[str, Any], app: Application[Any, Any, Any, Any, Any, Any]) -> Update:
    update = Update.de_json(data, app.bot)
    assert update is not None
    return update
