"""A faulty network between the bot and the Telegram emulator, for end-to-end fault tests.

Standard library and httpx only: asyncio streams speaking just enough HTTP/1.1 (keep-alive
included) on loopback, forwarding every Bot API request to the emulator unchanged, except the
faults a test queued for a method:

- `Fault.flood(n)`: answer 429 with `parameters.retry_after = n`, as Telegram's flood control;
- `Fault.status(502)`: answer that status without forwarding (a gateway in trouble);
- `Fault.drop()`: close the connection without an answer, before forwarding (a network cut);
- `Fault.hold()`: forward the request (Telegram takes it), then never answer: the bot waits on
  a reply Telegram already has, as it does for a moment after every send;
- `Fault.cut()`: forward the request (Telegram takes it), then close the connection without an
  answer: a network cut after the send arrived.

Faults are taken in order, one per request of that method; once a method's list is empty its
requests pass. Each forwarded request is counted by method, so a test can tell how many sends
reached "Telegram". The emulator itself keeps an update until a later `getUpdates` offset
confirms it, as real Telegram does (tests/e2e/emulator/server.js), so a bot killed before it
confirms gets the update again; the proxy passes `getUpdates` through untouched.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import Counter, deque
from dataclasses import dataclass
from types import TracebackType

import httpx

_REASONS = {200: "OK", 400: "Bad Request", 429: "Too Many Requests", 500: "Internal Server Error",
            502: "Bad Gateway", 503: "Service Unavailable"}  # fmt: skip


@dataclass(frozen=True)
class Fault:
    kind: str  # "flood", "status", "drop", "hold" or "cut"
    value: int = 0

    @classmethod
    def flood(cls, retry_after: int) -> Fault:
        return cls("flood", retry_after)

    @classmethod
    def status(cls, code: int) -> Fault:
        return cls("status", code)

    @classmethod
    def drop(cls) -> Fault:
        return cls("drop")

    @classmethod
    def hold(cls) -> Fault:
        return cls("hold")

    @classmethod
    def cut(cls) -> Fault:
        return cls("cut")


class FaultyProxy:
    """`base_url` is what the bot's TELEGRAM_BASE_URL points at."""

    def __init__(self, upstream_root: str) -> None:
        self._upstream = upstream_root.rstrip("/")
        self._faults: dict[str, deque[Fault]] = {}
        self.forwarded: Counter[str] = Counter()
        self.faulted: Counter[str] = Counter()
        self._server: asyncio.Server | None = None
        self._http: httpx.AsyncClient | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def port(self) -> int:
        assert self._server is not None, "the proxy is not started"
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bot"

    def inject(self, method: str, *faults: Fault) -> None:
        self._faults.setdefault(method.lower(), deque()).extend(faults)

    def faults_left(self, method: str) -> int:
        return len(self._faults.get(method.lower(), ()))

    async def __aenter__(self) -> FaultyProxy:
        self._http = httpx.AsyncClient(timeout=60.0, trust_env=False)
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
        if self._http is not None:
            await self._http.aclose()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # type: ignore[arg-type]
        try:
            while await self._serve_one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._tasks.discard(task)  # type: ignore[arg-type]
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
                         ) -> bool:
        line = await reader.readline()
        if not line:
            return False
        method, path, _ = line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while True:
            header = await reader.readline()
            if header in (b"\r\n", b"\n", b""):
                break
            name, _, value = header.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
        api_method = path.rsplit("/", 1)[-1].split("?", 1)[0].lower()
        queue = self._faults.get(api_method)
        fault = queue.popleft() if queue else None
        if fault is not None and fault.kind == "cut":
            await self._forward(method, path, headers, body)
            self.forwarded[api_method] += 1
            self.faulted[api_method] += 1
            return False  # Telegram has it; the connection closes with no answer
        if fault is not None and fault.kind == "hold":
            await self._forward(method, path, headers, body)
            self.forwarded[api_method] += 1
            self.faulted[api_method] += 1
            await reader.read()  # no answer, until the bot closes the connection (or dies)
            return False
        if fault is not None:
            self.faulted[api_method] += 1
            if fault.kind == "drop":
                return False  # the connection closes with no answer
            if fault.kind == "flood":
                payload = {"ok": False, "error_code": 429,
                           "description": f"Too Many Requests: retry after {fault.value}",
                           "parameters": {"retry_after": fault.value}}
                await _write(writer, 429, json.dumps(payload).encode())
                return True
            payload = {"ok": False, "error_code": fault.value, "description": "Bad Gateway"}
            await _write(writer, fault.value, json.dumps(payload).encode())
            return True
        answer = await self._forward(method, path, headers, body)
        self.forwarded[api_method] += 1
        await _write(writer, answer.status_code, answer.content,
                     answer.headers.get("content-type", "application/json"))
        return True

    async def _forward(self, method: str, path: str, headers: dict[str, str], body: bytes
                       ) -> httpx.Response:
        assert self._http is not None
        forward = {k: v for k, v in headers.items() if k in ("content-type", "accept")}
        return await self._http.request(method, self._upstream + path, content=body,
                                        headers=forward)


async def _write(writer: asyncio.StreamWriter, status: int, body: bytes,
                 content_type: str = "application/json") -> None:
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}\r\n"
        f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
        "Connection: keep-alive\r\n\r\n"
    )
    writer.write(head.encode("latin-1") + body)
    await writer.drain()
