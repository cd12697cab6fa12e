"""Patient calls to the Bot API: flood control and passing trouble are waited out, within a bound.

Owns: `PatientRequest`, the request object every Bot API call except `getUpdates` goes through.
On 429 it waits the `retry_after` Telegram asked for; on 5xx, a dropped connection or a timeout
it backs off exponentially with jitter (tenacity); a refusal that will not change (400, 403,
401) is raised at once. Past the bound the last error is raised and the caller decides: a
reply in the outbox stays pending for a later try. Must not: retry `getUpdates` (the polling
loop has its own retries and must stay responsive to a stop) or "typing..." (cosmetic).

A connection dropped after Telegram received the request looks like one dropped before. Before
a `sendMessage` goes again after a dropped connection or a timeout, Telegram is asked whether it
already has it (`bot.sightings`): when it does, that message is the answer and nothing is sent
twice. When it cannot tell, the message goes again. That, and a kill in the moment between
Telegram's answer and the outbox's record of it (`bot.outbox`), are the only ways a part repeats.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any

from telegram._utils.defaultvalue import DEFAULT_NONE
from telegram._utils.types import ODVInput
from telegram.error import BadRequest, NetworkError, RetryAfter, TimedOut
from telegram.request import BaseRequest, RequestData
from telegram.request._requestparameter import RequestParameter
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    retry_if_result,
    stop_before_delay,
)

from bot.sightings import Sightings

log = logging.getLogger("hearth.bot")

# How long one call keeps trying before its caller hears the error.
PATIENCE_SECONDS = 60.0
_NO_RETRY = frozenset({"getupdates", "sendchataction"})
_BACKOFF_FIRST_S = 0.5
_BACKOFF_MAX_S = 8.0
# Telegram's retry_after is a floor: a little slack so the retry does not land a hair early.
_SLACK_S = 0.2
# How many message ids above a chat's floor a lost send is looked for (`bot.sightings`): the
# ids of a bot's private chats are shared with its other chats, so hers may be a few ahead.
CHECKED_IDS = 20
# What an edit may carry that decides whether it would change a message.
_EDIT_FIELDS = ("chat_id", "text", "parse_mode", "entities", "link_preview_options",
                "reply_markup")

Sleep = Callable[[float], Awaitable[None]]


def is_transient(exc: BaseException | None) -> bool:
    """A dropped connection or a timeout; not a refusal (BadRequest is a NetworkError in
    python-telegram-bot's tree, and is final)."""
    if isinstance(exc, RetryAfter | TimedOut):
        return True
    return isinstance(exc, NetworkError) and not isinstance(exc, BadRequest)


def _retry_after(answer: tuple[int, bytes]) -> float | None:
    """Telegram's `parameters.retry_after` in a 429 answer, in seconds."""
    code, payload = answer
    if code != HTTPStatus.TOO_MANY_REQUESTS:
        return None
    try:
        value = json.loads(payload)["parameters"]["retry_after"]
    except (ValueError, KeyError, TypeError):
        return None
    return float(value) if isinstance(value, int | float) else None


def _is_busy(answer: tuple[int, bytes]) -> bool:
    """Flood control (429) or the server's trouble (5xx): the same call may work later."""
    code = answer[0]
    return code == HTTPStatus.TOO_MANY_REQUESTS or code >= HTTPStatus.INTERNAL_SERVER_ERROR


def _wait(state: RetryCallState) -> float:
    outcome = state.outcome
    if outcome is not None and not outcome.failed:
        after = _retry_after(outcome.result())
        if after is not None:
            return after + _SLACK_S
    step = min(_BACKOFF_MAX_S, _BACKOFF_FIRST_S * 2 ** (state.attempt_number - 1))
    return float(step * (0.5 + random.random() / 2))  # noqa: S311 -- jitter, not a secret


def _what(state: RetryCallState) -> str:
    outcome = state.outcome
    if outcome is None:
        return "?"
    if outcome.failed:
        return type(outcome.exception()).__name__
    return f"HTTP {outcome.result()[0]}"


def _logger(api_method: str) -> Callable[[RetryCallState], None]:
    def log_retry(state: RetryCallState) -> None:
        wait = state.next_action.sleep if state.next_action is not None else 0.0
        log.warning("Telegram %s failed (%s), attempt %d; retrying in %.1f s",
                    api_method, _what(state), state.attempt_number, wait)

    return log_retry


def _give_up(state: RetryCallState) -> tuple[int, bytes]:
    """Past the bound: Telegram's last answer goes to python-telegram-bot, which raises the
    matching error (RetryAfter, NetworkError) for the caller; a last exception is re-raised."""
    outcome = state.outcome
    if outcome is None:
        raise NetworkError("no attempt was made")
    answer: tuple[int, bytes] = outcome.result()  # re-raises the exception of a failed one
    return answer


def _makes_message(api_method: str) -> bool:
    name = api_method.lower()
    return name != "sendchataction" and name.startswith(("send", "copy", "forward"))


def _chat_of(request_data: RequestData | None) -> int | None:
    value = None if request_data is None else request_data.parameters.get("chat_id")
    try:
        return None if value is None else int(str(value))
    except ValueError:
        return None  # a channel's @name: not checked


def _message_ids(answer: tuple[int, bytes]) -> list[int]:
    """The ids of the messages a successful send made."""
    code, payload = answer
    if code != HTTPStatus.OK:
        return []
    try:
        result = json.loads(payload).get("result")
    except (ValueError, AttributeError):
        return []
    found = result if isinstance(result, list) else [result]
    return [int(r["message_id"]) for r in found
            if isinstance(r, dict) and isinstance(r.get("message_id"), int)]


def _found(chat: int, message_id: int, params: dict[str, Any]) -> tuple[int, bytes]:
    """The answer the lost send would have had, for the caller: the message Telegram has."""
    kind = "private" if chat > 0 else "supergroup" if str(chat).startswith("-100") else "group"
    message = {"message_id": message_id, "date": int(time.time()),
               "chat": {"id": chat, "type": kind}, "text": str(params.get("text", ""))}
    return HTTPStatus.OK, json.dumps({"ok": True, "result": message}).encode()


class PatientRequest(BaseRequest):
    """Wraps another request object (python-telegram-bot's HTTPXRequest, or a test's fake)."""

    def __init__(self, inner: BaseRequest, *, patience: float = PATIENCE_SECONDS,
                 sleep: Sleep | None = None, sightings: Sightings | None = None) -> None:
        self._inner = inner
        self._patience = patience
        self._sleep: Sleep = sleep or asyncio.sleep
        self.sightings = sightings or Sightings()

    @property
    def read_timeout(self) -> float | None:
        return self._inner.read_timeout

    async def initialize(self) -> None:
        await self._inner.initialize()

    async def shutdown(self) -> None:
        await self._inner.shutdown()

    async def do_request(  # noqa: PLR0917 -- python-telegram-bot's own signature
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = DEFAULT_NONE,
        write_timeout: ODVInput[float] = DEFAULT_NONE,
        connect_timeout: ODVInput[float] = DEFAULT_NONE,
        pool_timeout: ODVInput[float] = DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        async def once() -> tuple[int, bytes]:
            return await self._inner.do_request(
                url, method, request_data, read_timeout, write_timeout, connect_timeout,
                pool_timeout,
            )

        api_method = url.rsplit("/", 1)[-1]
        if api_method.lower() in _NO_RETRY:
            return await once()
        chat = _chat_of(request_data) if _makes_message(api_method) else None
        if chat is None:
            return await self._patiently(api_method, once)
        async with self.sightings.lock(chat):  # one send to a chat at a time
            floor = self.sightings.floor(chat)
            params = request_data.parameters if request_data is not None else {}
            dropped = False

            async def checked() -> tuple[int, bytes]:
                nonlocal dropped
                if dropped and floor is not None and api_method == "sendMessage":
                    message_id = await self._look_for(url, chat, params, floor)
                    if message_id is not None:
                        log.info("a message to chat %s whose answer was lost had arrived;"
                                 " it is not sent again", chat)
                        return _found(chat, message_id, params)
                try:
                    return await once()
                except Exception as exc:
                    dropped = dropped or is_transient(exc)
                    raise

            try:
                answer = await self._patiently(api_method, checked)
            except BaseException:
                self.sightings.doubt(chat)  # lost on the way, or cut off while on its way
                raise
            made = _message_ids(answer)
            for message_id in made:
                self.sightings.sent(chat, message_id)
            if dropped and not made:  # Telegram refused the last try; an earlier one may be there
                self.sightings.doubt(chat)
            return answer

    async def _look_for(self, url: str, chat: int, params: dict[str, Any],
                        floor: int) -> int | None:
        """The id of her message in `chat` above `floor` that says exactly `params`' text (see
        `bot.sightings`), or None when none is found or Telegram cannot tell just now."""
        edit = f"{url.rsplit('/', 1)[0]}/editMessageText"
        fields = {k: params[k] for k in _EDIT_FIELDS if k in params}
        for message_id in range(floor + 1, floor + 1 + CHECKED_IDS):
            data = RequestData([RequestParameter(name=k, value=v, input_files=None)
                                for k, v in {**fields, "message_id": message_id}.items()])
            try:
                code, payload = await self._inner.do_request(edit, "POST", data)
            except Exception:  # noqa: BLE001 -- any trouble: it cannot tell, the send goes again
                return None
            if code == HTTPStatus.OK:
                # Never expected: an edit that changed a message of hers. Stop asking.
                log.error("checking chat %s for a lost message changed message %s",
                          chat, message_id)
                self.sightings.doubt(chat)
                return None
            if code != HTTPStatus.BAD_REQUEST:
                return None  # flood control or the server's trouble: it cannot tell now
            try:
                said = str(json.loads(payload).get("description", "")).lower()
            except (ValueError, AttributeError):
                said = ""
            if "message is not modified" in said:
                return message_id
        return None

    async def _patiently(self, api_method: str,
                         once: Callable[[], Awaitable[tuple[int, bytes]]]) -> tuple[int, bytes]:
        retrying = AsyncRetrying(
            stop=stop_before_delay(self._patience),
            wait=_wait,
            retry=retry_if_exception(is_transient) | retry_if_result(_is_busy),
            before_sleep=_logger(api_method),
            retry_error_callback=_give_up,
            sleep=self._sleep,
        )
        answer: tuple[int, bytes] = await retrying(once)
        return answer
