"""Patient calls to the Bot API: flood control and passing trouble are waited out, within a bound.

Owns: `PatientRequest`, the request object every Bot API call except `getUpdates` goes through.
On 429 it waits the `retry_after` Telegram asked for; on 5xx, a dropped connection or a timeout
it backs off exponentially with jitter (tenacity); a refusal that will not change (400, 403,
401) is raised at once. Past the bound the last error is raised and the caller decides: a
reply in the outbox stays pending for a later try. Must not: retry `getUpdates` (the polling
loop has its own retries and must stay responsive to a stop) or "typing..." (cosmetic).

A connection dropped after Telegram received the request cannot be told apart from one dropped
before: a retry then sends that one message twice. That, and a kill in the moment between
Telegram's answer and the outbox's record of it (`bot.outbox`), are the only ways a part repeats.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import Awaitable, Callable
from http import HTTPStatus

from telegram._utils.defaultvalue import DEFAULT_NONE
from telegram._utils.types import ODVInput
from telegram.error import BadRequest, NetworkError, RetryAfter, TimedOut
from telegram.request import BaseRequest, RequestData
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    retry_if_result,
    stop_before_delay,
)

log = logging.getLogger("hearth.bot")

# How long one call keeps trying before its caller hears the error.
PATIENCE_SECONDS = 60.0
_NO_RETRY = frozenset({"getupdates", "sendchataction"})
_BACKOFF_FIRST_S = 0.5
_BACKOFF_MAX_S = 8.0
# Telegram's retry_after is a floor: a little slack so the retry does not land a hair early.
_SLACK_S = 0.2

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


class PatientRequest(BaseRequest):
    """Wraps another request object (python-telegram-bot's HTTPXRequest, or a test's fake)."""

    def __init__(self, inner: BaseRequest, *, patience: float = PATIENCE_SECONDS,
                 sleep: Sleep | None = None) -> None:
        self._inner = inner
        self._patience = patience
        self._sleep: Sleep = sleep or asyncio.sleep

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
