"""The model gateway: owns every call to a language model. Retries live here and only here.

One `Gateway` over the official `openai` client, pointed at anything OpenAI-compatible (OpenAI,
Ollama, llama.cpp, vLLM, or the embedded model below). The client's own retries are off
(`max_retries=0`) so they never multiply with ours: tenacity retries transient errors only
(connection, timeout, 429, 5xx) with short, jittered backoff, and one deadline bounds a whole
call, retries included. A 429 that says when to come back (`Retry-After`) is waited out as asked
when that fits the deadline, and fails at once when it does not; a 429 for an exhausted quota is
not retried. Everything else becomes a `ModelError` at once.

Rules this module keeps:
- a `ModelError` message is one line and never carries prompt text, model output, a server's
  error text (servers echo prompts and keys back) or the API key; the openai exception is not
  chained for the same reason, and logs name the error class and status only;
- importing it has no side effects: the client and the embedded server are built by the caller at
  start-up and closed at shutdown;
- nothing here blocks the event loop (file-system look-ups run in a worker thread).

The embedded model (`soul.embedded`) is served on loopback by an OpenAI-compatible server, so the
same gateway is used either way; the strict JSON schemas structured output sends are made in
`soul.structured`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import datetime as dt
import email.utils
import functools
import logging
import math
import re
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, TypeVar, cast

import httpx
import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
from openai.types.shared_params import ResponseFormatJSONSchema
from pydantic import BaseModel, ValidationError
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from memory import HearthError
from soul.files import Sampling
from soul.structured import strict_schema, unfenced

__all__ = [
    "Gateway",
    "Listing",
    "ModelConfig",
    "ModelError",
    "UnusableAnswer",
    "model_config_from",
]

T = TypeVar("T", bound=BaseModel)

log = logging.getLogger(__name__)

# Errors worth another attempt: the request may well succeed a moment later. A 4xx other than
# 429 means the request itself is wrong (bad key, unknown model, bad schema): retrying only
# repeats it. A 429 is a rate limit (retried, after its Retry-After when it sends one) unless it
# says the account's quota is used up (`insufficient_quota`, OpenAI's), which no wait fixes.
# APITimeoutError is an APIConnectionError; it is named for the reader.
_TRANSIENT: tuple[type[openai.APIError], ...] = (
    openai.APIConnectionError,
    openai.APITimeoutError,
    openai.RateLimitError,
    openai.InternalServerError,
)
# Rejections that may mean "this server speaks another structured-output dialect" (see extract).
_REJECTED: tuple[type[openai.APIStatusError], ...] = (
    openai.BadRequestError,
    openai.UnprocessableEntityError,
)
# ... and llama-cpp-python's 500, which some versions put around that validation error.
_NOT_THIS_DIALECT: tuple[type[openai.APIStatusError], ...] = (
    *_REJECTED,
    openai.InternalServerError,
)

# Backoff: about 0.2-0.4 s, then 0.4-0.6 s, ... capped at 2 s. Short, because a person is waiting
# for the reply; jitter, so the household's concurrent chats do not retry in lock-step.
_BACKOFF_MULTIPLIER_S = 0.2
_BACKOFF_JITTER_S = 0.2
_BACKOFF_MAX_S = 2.0
# Room for scheduling and for the response body after the last byte timer: small on purpose.
_DEADLINE_SLACK_S = 0.5
_REPLY_GRACE_S = 3.0
# The error code of a 429 that is not a rate limit: the quota (credit) is spent.
_NO_QUOTA = "insufficient_quota"
# A placeholder for servers that want no key (Ollama, llama.cpp): the openai client needs one.
_NO_KEY = "no-key"
# OpenAI's rule for a json_schema name.
_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]")


@functools.cache
def _strict_schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    """A schema class's strict JSON schema, made once per class and only read after: pydantic
    builds `model_json_schema` anew on every call, about a fifth of the Python a consolidation
    call ran on the event loop (sampled with py-spy while five members talked)."""
    return strict_schema(schema.model_json_schema())


class ModelError(HearthError):
    """The model could not give a usable answer (down, refused, garbled, or not installed)."""


class UnusableAnswer(ModelError):
    """The model answered, but not in the shape asked for (structured output: twice), or with
    only its thinking: asking again later is unlikely to help with the same input."""


Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class ModelConfig:
    """Where the model is and how long to wait for it."""

    base_url: str
    # Kept out of repr so a logged config never shows the key.
    api_key: str = field(repr=False)
    model: str
    timeout_s: float = 30.0
    attempts: int = 3
    # True for a server known to speak only llama-cpp-python's json_object schemas (the
    # embedded one); others are found out on first use (see `Gateway.extract`).
    json_object_dialect: bool = False


def model_config_from(
    base_url: str | None, api_key: str | None, model: str | None
) -> ModelConfig | None:
    """The configured endpoint, or None when there is none (the caller starts the embedded model).

    A server without keys (Ollama, llama.cpp) gets a placeholder key. Without HEARTH_MODEL the
    model is left empty, for `with_model` to ask the server which one it serves.
    """
    if base_url is None or not base_url.strip():
        return None
    key = api_key.strip() if api_key and api_key.strip() else _NO_KEY
    return ModelConfig(base_url=base_url.strip(), api_key=key, model=(model or "").strip())


@dataclass(frozen=True)
class Listing:
    """What GET /models said: its HTTP status and, when it listed any, the model ids."""

    status: int
    ids: list[str] | None = None


async def probe_models(base_url: str, api_key: str | None, timeout_s: float = 5.0) -> Listing:
    """One GET of {base_url}/models, with the key when there is one: what `hearth init` and
    `hearth doctor` check a server by, and what `with_model` asks. ModelError, in one line,
    when nothing answers there; any HTTP answer is a `Listing` (the server's own error text is
    never kept: servers echo requests, and keys, back)."""
    url = base_url.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with httpx.AsyncClient(timeout=timeout_s) as client:
            response = await client.get(url, headers=headers)
    except httpx.HTTPError as exc:
        raise ModelError(f"cannot reach {base_url} ({type(exc).__name__}): is the server "
                         "running, and is the address right?") from None
    if response.status_code != httpx.codes.OK:
        return Listing(response.status_code)
    try:
        data = response.json().get("data")
        ids = [str(item["id"]) for item in data] if isinstance(data, list) else None
    except (ValueError, KeyError, TypeError, AttributeError):
        ids = None
    return Listing(response.status_code, ids)


async def listed_models(config: ModelConfig, timeout_s: float = 5.0) -> list[str]:
    """The model ids the endpoint lists (one GET of /models); ModelError, in one line, when it
    cannot be reached or refuses."""
    listing = await probe_models(config.base_url, config.api_key, timeout_s)
    if listing.status >= httpx.codes.BAD_REQUEST:
        raise ModelError(f"{config.base_url} answered HTTP {listing.status}")
    return listing.ids or []


async def answers_once(config: ModelConfig) -> None:
    """One tiny chat completion (one token, one attempt) through the gateway: for a server that
    lists no models, whether it answers as `config.model`. ModelError, in one line, when not."""
    gateway = Gateway(dataclasses.replace(config, attempts=1))
    try:
        await gateway.reply([{"role": "user", "content": "Say OK."}], max_tokens=1)
    except UnusableAnswer:
        pass  # it answered, as that model; one token need not be a sayable reply
    finally:
        await gateway.aclose()


async def with_model(config: ModelConfig, timeout_s: float = 5.0) -> ModelConfig:
    """The config with a model name: the configured one, else the first the server lists."""
    if config.model:
        return config
    try:
        ids = await listed_models(config, timeout_s)
    except ModelError as exc:
        raise ModelError(f"HEARTH_MODEL is not set and {exc}") from None
    if not ids:
        raise ModelError(f"HEARTH_MODEL is not set and {config.base_url} lists no model")
    return dataclasses.replace(config, model=ids[0])


class Gateway:
    """Every call to a language model goes through here.

    Takes ownership of `http_client` when given one (tests pass an `httpx.MockTransport` client):
    `aclose()` closes it. `sleep` waits between attempts (backoff and Retry-After) and
    `wall_clock` (seconds since the epoch) reads a Retry-After given as an HTTP date; tests
    inject both. The deadline itself is the event loop's. `sampling` is the soul's profile for
    this model (`Soul.manifest.sampling`): every `reply` is sampled by it; `extract` is not
    (penalties on repeated tokens would break the JSON it asks for).
    """

    def __init__(
        self,
        config: ModelConfig,
        http_client: httpx.AsyncClient | None = None,
        *,
        sleep: Sleep = asyncio.sleep,
        wall_clock: Callable[[], float] = time.time,
        sampling: Sampling | None = None,
    ) -> None:
        if config.attempts < 1:
            raise ModelError("a model needs at least one attempt")
        if config.timeout_s <= 0:
            raise ModelError("a model timeout must be positive")
        self._config = config
        self._sampling = sampling or Sampling()
        self._sleep = sleep
        self._wall_clock = wall_clock
        self._client = openai.AsyncOpenAI(
            base_url=config.base_url,
            api_key=config.api_key,
            timeout=config.timeout_s,
            max_retries=0,  # our retries, not the client's: they would multiply
            # openai 3.x types http_client as httpx2.AsyncClient but accepts an httpx.AsyncClient
            # at run time (it checks for both); hearth uses httpx and its MockTransport.
            http_client=http_client,  # type: ignore[arg-type]
        )
        # Learnt on first use: llama-cpp-python's server rejects response_format "json_schema" and
        # knows only {"type": "json_object", "schema": ...} (see `extract`).
        self._json_object_dialect = config.json_object_dialect

    @property
    def config(self) -> ModelConfig:
        return self._config

    @property
    def sampling(self) -> Sampling:
        return self._sampling

    @property
    def deadline_s(self) -> float:
        """The most one call may take, retries and backoff included."""
        waits = sum(
            min(_BACKOFF_MULTIPLIER_S * 2.0 ** (n - 1) + _BACKOFF_JITTER_S, _BACKOFF_MAX_S)
            for n in range(1, self._config.attempts)
        )
        return self._config.timeout_s * self._config.attempts + waits + _DEADLINE_SLACK_S

    @property
    def reply_deadline_s(self) -> float:
        """The most a member waits for a conversational reply: one attempt's timeout, plus
        room for quick retries of fast failures."""
        return min(self.deadline_s, self._config.timeout_s + _REPLY_GRACE_S)

    async def reply(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int = 400,
        temperature: float | None = None,
        patient: bool = False,
        stop: Sequence[str] = (),
        within_s: float | None = None,
    ) -> str:
        """The model's reply to `messages`, stripped. Raises ModelError when there is none.

        A member is waiting for a reply, so by default it gets one attempt's timeout (quick
        retries of fast failures fit inside it, a hanging server does not get three chances),
        or less when the turn says what is left of it (`within_s`); `patient` work in the
        background (summaries) gets the whole retry deadline.

        Sampled by the gateway's profile: its temperature unless the caller names one, at most
        its `max_tokens`, its penalties, and its stops besides the caller's `stop` (the prompt's
        speaker lines). A reply that a profile's cap cut off mid-sentence ends at its last
        finished sentence, when it has one.
        """
        deadline = self.deadline_s if patient else self.reply_deadline_s
        if within_s is not None and not patient:
            deadline = min(deadline, within_s)
        with _as_model_error():
            completion = await self._create(
                messages=_chat(messages), deadline_s=deadline,
                **self._sampled(max_tokens, temperature, stop),
            )
        text = _text_of(completion)
        if self._sampling.max_tokens is not None and _was_cut_off(completion):
            return _finished(text)
        return text

    def _sampled(
        self, max_tokens: int, temperature: float | None, stop: Sequence[str]
    ) -> dict[str, Any]:
        """The request's sampling parameters. Only what the profile sets is sent, so the full
        profile asks exactly what any OpenAI-compatible server understands."""
        sampling = self._sampling
        cap = sampling.max_tokens
        params: dict[str, Any] = {
            "max_tokens": max_tokens if cap is None else min(max_tokens, cap),
            "temperature": sampling.temperature if temperature is None else temperature,
        }
        if sampling.frequency_penalty is not None:
            params["frequency_penalty"] = sampling.frequency_penalty
        if sampling.presence_penalty is not None:
            params["presence_penalty"] = sampling.presence_penalty
        stops = list(dict.fromkeys([*sampling.stop, *stop]))
        if stops:
            params["stop"] = stops
        if sampling.repeat_penalty is not None:
            # llama.cpp's own parameter: not in the openai client's signature.
            params["extra_body"] = {"repeat_penalty": sampling.repeat_penalty}
        return params

    async def extract(
        self,
        messages: list[dict[str, str]],
        schema: type[T],
        *,
        max_tokens: int = 800,
        temperature: float = 0.0,
    ) -> T:
        """Structured output: the model's answer validated as `schema`.

        Sends a strict json_schema response format. An answer that is not valid JSON for the
        schema is asked for once more (small models sometimes break off or wrap the JSON), at a
        slightly higher temperature so a deterministic server does not repeat the same mistake;
        a second failure is a ModelError.
        """
        strict = _strict_schema_of(schema)
        name = _SCHEMA_NAME.sub("_", schema.__name__)[:64] or "answer"
        problems = 0
        for temp in (temperature, max(temperature, 0.3)):
            with _as_model_error():
                completion = await self._create_structured(
                    messages, name, strict, max_tokens=max_tokens, temperature=temp
                )
            try:
                return schema.model_validate_json(unfenced(_text_of(completion)))
            except ValidationError as exc:
                problems = exc.error_count()
                log.warning("model answer did not fit %s (%d problems)", name, problems)
        raise UnusableAnswer(
            f"the model's answer did not fit {name} twice ({problems} problems the last time)"
        )

    async def transcribe(self, audio: bytes, filename: str, *, model: str) -> str:
        """What a voice note says, by the server's transcription endpoint with `model`. One
        attempt within the deadline: a failure is a ModelError, and the note waits for the
        next try (`memory.media`), so nothing is lost by not retrying here."""
        with _as_model_error(), _in_time():
            async with asyncio.timeout(self.deadline_s):
                done = await self._client.audio.transcriptions.create(
                    model=model, file=(filename, audio))
        text = getattr(done, "text", None)
        if not isinstance(text, str):
            raise UnusableAnswer("the transcription server sent no text")
        return " ".join(text.split())

    async def describe(self, image: bytes, mime: str, *, model: str, caption: str = "",
                       max_tokens: int = 120) -> str:
        """A short description of a photo, by a `model` that takes images. One attempt within
        the deadline, as `transcribe`."""
        ask = ("Describe this photo in one or two plain sentences, for someone who cannot see "
               "it: what and who is in it, and any text it shows.")
        if caption:
            ask += f' The sender wrote with it: "{caption}"'
        url = f"data:{mime};base64," + base64.b64encode(image).decode("ascii")
        with _as_model_error(), _in_time():
            async with asyncio.timeout(self.deadline_s):
                completion = await self._client.chat.completions.create(
                    model=model, max_tokens=max_tokens, temperature=0.2,
                    messages=[{"role": "user", "content": [
                        {"type": "text", "text": ask},
                        {"type": "image_url", "image_url": {"url": url}},
                    ]}],
                )
        return " ".join(_text_of(completion).split())

    async def aclose(self) -> None:
        await self._client.close()

    async def __aenter__(self) -> Gateway:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _create_structured(
        self,
        messages: list[dict[str, str]],
        name: str,
        strict: dict[str, Any],
        *,
        max_tokens: int,
        temperature: float,
    ) -> ChatCompletion:
        chat = _chat(messages)
        # llama-cpp-python's dialect, sent as extra_body: the typed param has no "schema" key.
        json_object = {"response_format": {"type": "json_object", "schema": strict}}
        if self._json_object_dialect:
            return await self._create(
                messages=chat, max_tokens=max_tokens, temperature=temperature,
                extra_body=json_object,
            )
        response_format: ResponseFormatJSONSchema = {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": strict, "strict": True},
        }
        try:
            return await self._create(
                messages=chat, max_tokens=max_tokens, temperature=temperature,
                response_format=response_format,
            )
        except _NOT_THIS_DIALECT as rejection:
            # Perhaps the server only speaks json_object (llama-cpp-python answers 422, or 500
            # from versions that wrap its validation error). Switch for good only if that works,
            # so an OpenAI 400 or a broken server never flips us.
            try:
                completion = await self._create(
                    messages=chat, max_tokens=max_tokens, temperature=temperature,
                    extra_body=json_object,
                )
            except _NOT_THIS_DIALECT:
                raise rejection from None
            log.info("model server takes json_object schemas, not json_schema; using those")
            self._json_object_dialect = True
            return completion

    async def _create(self, *, deadline_s: float | None = None, **params: Any) -> ChatCompletion:
        """One chat completion, with retries on transient errors, inside one deadline.

        Raises the openai errors as they are (`_as_model_error` turns them into ModelErrors), so
        `_create_structured` can still tell a rejection apart; the deadline is a ModelError, and
        so is a Retry-After that asks for a longer wait than the deadline has left (raised at
        once: sleeping into the deadline would only fail later).
        """
        backoff = wait_exponential_jitter(
            multiplier=_BACKOFF_MULTIPLIER_S, jitter=_BACKOFF_JITTER_S, max=_BACKOFF_MAX_S
        )

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            asked = self._retry_after_s(exc) if isinstance(exc, openai.RateLimitError) else None
            return backoff(state) if asked is None else asked

        retrying = AsyncRetrying(
            sleep=self._sleep,
            stop=stop_after_attempt(self._config.attempts),
            wait=wait,
            retry=retry_if_exception(_is_transient),
            before_sleep=_log_retry,
            reraise=True,
        )
        completion: ChatCompletion | None = None
        deadline = self.deadline_s if deadline_s is None else deadline_s
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(deadline) as scope:
                async for attempt in retrying:
                    with attempt:
                        try:
                            completion = await self._client.post(
                                "/chat/completions", cast_to=ChatCompletion,
                                body=_body(self._config.model, params),
                                options={"security": {"bearer_auth": True}},  # as create's
                            )
                        except openai.RateLimitError as exc:
                            asked = self._retry_after_s(exc)
                            left = (scope.when() or math.inf) - loop.time()
                            if asked is not None and asked >= left:
                                log.warning(
                                    "model rate limited (HTTP 429) for %.1f s, more than the "
                                    "%.1f s left; giving up", asked, max(left, 0.0),
                                )
                                raise ModelError(
                                    "the model did not answer: rate limited (HTTP 429) for "
                                    f"longer than the {max(left, 0.0):.1f} s left"
                                ) from None
                            raise
        except TimeoutError:
            raise ModelError(
                f"the model did not answer: no answer within {deadline:.1f} s"
            ) from None
        if completion is None:  # tenacity either returned a result or raised; never neither
            raise ModelError("the model did not answer: no attempt was made")
        return completion

    def _retry_after_s(self, exc: openai.RateLimitError) -> float | None:
        """How long a 429 asks us to wait, in seconds, or None when it does not say.

        `retry-after-ms` (OpenAI's), then `Retry-After` as seconds or as an HTTP date; a date
        in the past means now. A value that cannot be read is as good as none.
        """
        headers = exc.response.headers
        for name, per_second in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
            value = headers.get(name)
            if value is None:
                continue
            try:
                seconds = float(value.strip()) / per_second
            except ValueError:
                continue
            return None if math.isnan(seconds) else max(seconds, 0.0)
        value = headers.get("retry-after")
        if not value:
            return None
        try:
            when = email.utils.parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:  # an HTTP date is GMT; "-0000" parses as naive
            when = when.replace(tzinfo=dt.UTC)
        return max(when.timestamp() - self._wall_clock(), 0.0)


def _is_transient(exc: BaseException) -> bool:
    """Worth another attempt: a transient error, but not a 429 for a spent quota (unless the
    server still says when to come back)."""
    if isinstance(exc, openai.RateLimitError):
        return not _out_of_quota(exc) or _says_when(exc)
    return isinstance(exc, _TRANSIENT)


def _out_of_quota(exc: openai.RateLimitError) -> bool:
    return _NO_QUOTA in (exc.code, exc.type)


def _says_when(exc: openai.RateLimitError) -> bool:
    headers = exc.response.headers
    return "retry-after" in headers or "retry-after-ms" in headers


@contextlib.contextmanager
def _as_model_error() -> Iterator[None]:
    """Turn whatever the openai client raised into one safe line.

    `from None`: the openai exception's text is the server's, which may quote the prompt or
    part of the key, and a chained cause would put it in every logged traceback.
    """
    try:
        yield
    except openai.APITimeoutError:
        raise ModelError("the model did not answer: it timed out on every attempt") from None
    except openai.APIConnectionError:
        raise ModelError("the model did not answer: could not connect to it") from None
    except openai.RateLimitError as exc:
        if _out_of_quota(exc) and not _says_when(exc):
            raise ModelError("the model refused the request: out of quota (HTTP 429)") from None
        raise ModelError("the model did not answer: rate limited (HTTP 429)") from None
    except openai.InternalServerError as exc:
        raise ModelError(
            f"the model did not answer: server error (HTTP {exc.status_code})"
        ) from None
    except openai.APIStatusError as exc:
        raise ModelError(
            f"the model refused the request: HTTP {exc.status_code} ({type(exc).__name__})"
        ) from None
    except (openai.OpenAIError, ValueError):
        # A body that is not JSON reaches us as a JSONDecodeError (a ValueError).
        raise ModelError("the model sent a reply that is not a chat completion") from None


@contextlib.contextmanager
def _in_time() -> Iterator[None]:
    """A call the deadline cut short is a ModelError like any other that did not answer."""
    try:
        yield
    except TimeoutError:
        raise ModelError("the model did not answer: it took longer than its deadline") from None


def _log_retry(state: RetryCallState) -> None:
    # The class and status only: the exception's text may quote the prompt.
    exc = state.outcome.exception() if state.outcome else None
    status = getattr(exc, "status_code", None)
    wait = state.next_action.sleep if state.next_action else 0.0
    log.warning(
        "model call failed (%s%s), attempt %d; retrying in %.1f s",
        type(exc).__name__,
        f" HTTP {status}" if status else "",
        state.attempt_number,
        wait,
    )


def _chat(messages: list[dict[str, str]]) -> list[ChatCompletionMessageParam]:
    # The assembler builds plain role/content dicts; the client's TypedDicts are the same shape.
    return cast("list[ChatCompletionMessageParam]", messages)


def _body(model: str, params: dict[str, Any]) -> dict[str, Any]:
    """The chat completion's JSON as `chat.completions.create` would send it: the model, the
    parameters given, and `extra_body` merged in. Sent through the client's own `post`, with
    the same base URL, key, errors and parsed `ChatCompletion`: `create` first walks every
    message through its typed-dict transform, 6-8 ms of the event loop per call for a
    reply's prompt, to hand back the same plain dicts the assembler built."""
    body = {"model": model, **params}
    body.update(body.pop("extra_body", None) or {})
    return body


_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"


def _text_of(completion: object) -> str:
    # Without strict validation the client hands back whatever the body held (a str, a list, a
    # completion with no choices), so check the shape instead of trusting the annotation.
    choices = completion.choices if isinstance(completion, ChatCompletion) else None
    if not choices:
        raise ModelError("the model sent an empty or malformed reply")
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    if not isinstance(content, str) or not content.strip():
        if getattr(message, "refusal", None):
            raise ModelError("the model declined to answer")
        raise ModelError("the model sent an empty reply")
    return _without_thinking(content).strip()


def _without_thinking(content: str) -> str:
    """The answer without the thinking a reasoning model may write before it. Most servers put
    it in a field of its own; some (llama.cpp without a reasoning format, older Ollama) leave
    it in the content as `<think>...</think>`, where it would reach a member's chat or break
    the JSON asked for. Thinking that never ends (cut off by the token limit) is no answer."""
    if not content.lstrip().startswith(_THINK_OPEN):
        return content
    _thought, closed, answer = content.partition(_THINK_CLOSE)
    if not closed:
        raise UnusableAnswer("the model ran out of room while thinking, before its answer")
    if not answer.strip():
        raise UnusableAnswer("the model sent its thinking and no answer")
    return answer


def _was_cut_off(completion: ChatCompletion) -> bool:
    return getattr(completion.choices[0], "finish_reason", None) == "length"


# The end of a sentence: its mark, then any closing quote or bracket, then a space or the end.
_SENTENCE_END = re.compile("[.!?\u2026][\"'\u2019\u201d)\\]]*(?=\\s|$)")


def _finished(text: str) -> str:
    """`text` up to the end of its last finished sentence; all of it when none has ended."""
    ends = [match.end() for match in _SENTENCE_END.finditer(text)]
    return text[: ends[-1]] if ends else text
