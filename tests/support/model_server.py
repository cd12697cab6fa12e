"""A scripted OpenAI-compatible model server on loopback, for end-to-end tests.

Standard library only (asyncio streams speaking just enough HTTP/1.1, keep-alive included), so the
real `openai` client talks to it over real sockets exactly as it would to a model server. It
answers `POST /v1/chat/completions` and `GET /v1/models`, and plays a server that hears and sees:
`POST /v1/audio/transcriptions` returns the words a test's stand-in audio carries after
`spoken:` (`spoken_audio`), and a completion given an image returns what the stand-in image
carries after `seen:` (`seen_image`). What any other completion says is decided by a
responder: the request JSON goes in, a `ResponsePlan` comes out (a reply, an HTTP status, a delay
to play a hanging server, or a raw body to play a broken one). Every completion request body is
kept in `requests`, so a test can assert on exactly what reached the model.

A responder that raises (a script that ran out, say) makes the server answer 500 and is
re-raised when the `async with` block ends, so a test cannot pass by accident.

Run as a script (`python model_server.py --port N --reply TEXT`) it serves one fixed reply until
it is terminated: a stand-in for a model server process.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import itertools
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class ResponsePlan:
    """What the server does with one completion request.

    `reply` becomes the message content (a dict is JSON-encoded, as a structured-output answer);
    a `status` other than 200 sends an OpenAI-style error body instead, whose `code` and `type`
    are `error_code` when given (OpenAI's "insufficient_quota", say); `delay_s` waits before
    answering; `raw` replaces the whole body (garbage, an empty `choices`, ...); `headers` are
    sent as well (a 429's `Retry-After`).
    """

    reply: str | dict[str, Any] = ""
    status: int = 200
    delay_s: float = 0.0
    raw: bytes | None = None
    content_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)
    error_code: str | None = None


Responder = Callable[[dict[str, Any]], ResponsePlan]

_REASONS = {
    200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
    411: "Length Required", 422: "Unprocessable Entity", 429: "Too Many Requests",
    500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
}  # fmt: skip


def spoken_audio(words: str) -> bytes:
    """Stand-in voice-note bytes that the server transcribes as `words`."""
    return b"OggS\x00\x02" + b"spoken: " + words.encode("utf-8")


def seen_image(description: str) -> bytes:
    """Stand-in photo bytes that the server describes as `description`."""
    return b"\xff\xd8\xff\xe0" + b"seen: " + description.encode("utf-8")


def _after(marker: bytes, data: bytes) -> str:
    found = data.find(marker)
    if found < 0:
        return ""
    rest = data[found + len(marker):]
    end = rest.find(b"\r\n--")  # a multipart body's next boundary
    return (rest if end < 0 else rest[:end]).decode("utf-8", errors="replace").strip()


def _image_of(request: dict[str, Any]) -> bytes | None:
    """The first image a completion request carries (a data: URL), decoded."""
    for message in request.get("messages", []):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            url = (part.get("image_url") or {}).get("url", "") if isinstance(part, dict) else ""
            if url.startswith("data:") and "," in url:
                return base64.b64decode(url.split(",", 1)[1])
    return None


def echo_responder(request: dict[str, Any]) -> ResponsePlan:
    """Reply with the whole prompt: every message's content, joined by newlines.

    Whatever reaches the model comes back in the reply, so a test can prove what was (and was
    not) sent at the last step before the model.
    """
    parts = []
    for message in request.get("messages", []):
        content = message.get("content")
        parts.append(content if isinstance(content, str) else json.dumps(content))
    return ResponsePlan(reply="\n".join(parts))


def household_responder(request: dict[str, Any]) -> ResponsePlan:
    """A household's model: consolidation, compaction and recall's judging answered by rule
    (see `extractor`), a conversation answered with a short line that quotes the member's
    message."""
    # Imported here: this file also runs as a script, outside the package.
    from tests.support.extractor import (  # noqa: PLC0415
        extraction_for,
        is_compaction,
        is_consolidation,
        is_judging,
        summary_for,
        verdicts_for,
    )

    messages = request.get("messages", [])
    if is_consolidation(messages):
        return ResponsePlan(reply=extraction_for(messages))
    if is_judging(messages):
        return ResponsePlan(reply=verdicts_for(messages))
    if is_compaction(messages):
        return ResponsePlan(reply=summary_for(messages))
    last = str(messages[-1].get("content", "")) if messages else ""
    return ResponsePlan(reply=f"Noted: {' '.join(last.split())[:300]}")


class Switch:
    """A responder whose behaviour a test flips while the bot runs: answer (through `inner`),
    fail with an HTTP status, or hang for `delay_s` seconds before failing."""

    def __init__(self, inner: Responder = household_responder) -> None:
        self.inner = inner
        self.status = 200
        self.delay_s = 0.0

    def __call__(self, request: dict[str, Any]) -> ResponsePlan:
        if self.delay_s:
            return ResponsePlan(status=503, delay_s=self.delay_s)
        if self.status != 200:
            return ResponsePlan(status=self.status)
        return self.inner(request)


def scripted(*replies: str | dict[str, Any] | ResponsePlan) -> Responder:
    """A responder that answers with `replies` in order, and fails the test if asked once more."""
    script = iter(replies)
    given = len(replies)

    def respond(_request: dict[str, Any]) -> ResponsePlan:
        try:
            reply = next(script)
        except StopIteration:
            raise AssertionError(
                f"the model was asked more than the {given} scripted times"
            ) from None
        return reply if isinstance(reply, ResponsePlan) else ResponsePlan(reply=reply)

    return respond


class ModelServer:
    """`async with ModelServer(responder) as server:` then point a client at `server.base_url`."""

    def __init__(self, responder: Responder, *, model: str = "test-model", port: int = 0) -> None:
        self.responder = responder
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.errors: list[BaseException] = []
        self.transcriptions = 0  # voice notes heard
        self.images = 0  # photos seen
        self._port = port
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._ids = itertools.count(1)

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the model server is not running")
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self._port)

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        # A delayed answer may still be sleeping for a client that gave up: cancel it, or
        # closing would wait for it (and its socket would outlive the test).
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await server.wait_closed()

    async def __aenter__(self) -> ModelServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
        if exc_type is None and self.errors:
            raise self.errors[0]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            while await self._serve_one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # the client went away or sent something we do not speak
        except asyncio.CancelledError:
            # `stop` ends idle keep-alive connections this way. The task ends normally, or
            # asyncio's stream callback would log the cancellation as an error.
            pass
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False when the connection should close."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False  # closed between requests: the normal end of keep-alive
        request_line, *header_lines = head.decode("latin-1").rstrip("\r\n").split("\r\n")
        method, target, _version = request_line.split(" ", 2)
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        keep_alive = headers.get("connection", "").lower() != "close"
        if "chunked" in headers.get("transfer-encoding", "").lower():
            await _write(writer, 411, _error_body(411), "application/json", keep_alive=False)
            return False
        length = int(headers.get("content-length", "0") or "0")
        body = await reader.readexactly(length) if length else b""
        path = target.split("?", 1)[0].rstrip("/")

        plan = self._route(method, path, body)
        if plan.delay_s:
            await asyncio.sleep(plan.delay_s)
        await _write(writer, plan.status, plan.raw or b"", plan.content_type,
                     keep_alive=keep_alive, headers=plan.headers)
        return keep_alive

    def _route(self, method: str, path: str, body: bytes) -> ResponsePlan:
        """What to send back, as a plan whose `raw` is the body."""
        if method == "GET" and path == "/v1/models":
            models = {
                "object": "list",
                "data": [{"id": self.model, "object": "model", "created": 0, "owned_by": "tests"}],
            }
            return ResponsePlan(raw=json.dumps(models).encode())
        if method == "POST" and path == "/v1/audio/transcriptions":
            self.transcriptions += 1
            return ResponsePlan(raw=json.dumps({"text": _after(b"spoken:", body)}).encode())
        if method != "POST" or path != "/v1/chat/completions":
            return ResponsePlan(status=404, raw=_error_body(404))
        try:
            request = json.loads(body)
        except ValueError:
            return ResponsePlan(status=400, raw=_error_body(400))
        image = _image_of(request)
        if image is not None:
            self.images += 1
            seen = ResponsePlan(reply=_after(b"seen:", image) or "a photo")
            return replace(seen, raw=self._completion(request, seen))
        self.requests.append(request)
        try:
            plan = self.responder(request)
        except Exception as exc:  # noqa: BLE001 -- kept and re-raised at exit; the client gets a 500
            self.errors.append(exc)
            return ResponsePlan(status=500, raw=_error_body(500))
        if plan.raw is not None:
            return plan
        if plan.status != 200:
            error = _error_body(plan.status, plan.error_code)
            return replace(plan, raw=error, content_type="application/json")
        return replace(
            plan, raw=self._completion(request, plan), content_type="application/json"
        )

    def _completion(self, request: dict[str, Any], plan: ResponsePlan) -> bytes:
        content = plan.reply if isinstance(plan.reply, str) else json.dumps(plan.reply)
        completion = {
            "id": f"chatcmpl-test-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }
        return json.dumps(completion).encode()


def _error_body(status: int, code: str | None = None) -> bytes:
    error = {
        "message": f"scripted HTTP {status}",
        "type": code or "scripted_error",
        "code": code or status,
    }
    return json.dumps({"error": error}).encode()


async def _write(
    writer: asyncio.StreamWriter,
    status: int,
    body: bytes,
    content_type: str,
    *,
    keep_alive: bool,
    headers: Mapping[str, str] | None = None,
) -> None:
    extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}\r\n"
        f"Content-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"Connection: {'keep-alive' if keep_alive else 'close'}\r\n"
        f"{extra}"
        "\r\n"
    )
    writer.write(head.encode("latin-1") + body)
    await writer.drain()


async def _serve_forever(port: int, reply: str) -> None:
    async with ModelServer(lambda _request: ResponsePlan(reply=reply), port=port):
        await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description="a scripted OpenAI-compatible model server")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--reply", default="hello from the stand-in model")
    args = parser.parse_args()
    asyncio.run(_serve_forever(args.port, args.reply))


if __name__ == "__main__":
    main()
