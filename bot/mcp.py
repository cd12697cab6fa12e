"""The MCP door: other minds remember and recall through hearth, as a face like Telegram.

`hearth mcp` serves six tools over the official MCP SDK (`mcp`), on stdio (a desktop client
starts it and talks over its pipes) or on streamable HTTP (`--http HOST:PORT`, the endpoint is
`/mcp`). Every call names a mind by its token, and every answer is what that mind may read:

- over HTTP the token is the request's `Authorization: Bearer <token>` header, checked before
  the request reaches the protocol (anything else is a 401 with one line) and again by the tool
  it calls;
- over stdio it is `HEARTH_MIND_TOKEN` in the server's environment, checked at start and at
  every call, so a revoke stops a running server too (within `memory.minds.CACHE_SECONDS`).

Unknown, revoked and malformed tokens get the same one line. A tool never takes a member, a
scope or a speaker from the caller: the mind acts for its member, and what it writes is stamped
with its own name by memory.

The database is shared the way `hearth chat` shares it with a running bot: each write is one
SQLite transaction (`BEGIN IMMEDIATE`, waited for within a bound), so a bot, a chat and this
door never interleave one write; beliefs written by another process reach this one's semantic
index every `SYNC_SECONDS`. It does not take the run lock, so it serves beside `hearth run`.

Owns: the tools' shapes, the bearer check on HTTP, and starting and stopping both transports.
Must not: hold SQL or decide what may be seen (`memory` does, with the mind's `AccessContext`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime
from typing import Any, Literal

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from starlette.types import ASGIApp, Receive, Scope, Send

from memory import (
    SHARED,
    Belief,
    HearthError,
    InvalidRequest,
    Memory,
    Mind,
    Quoted,
    Recalled,
    StoreBusy,
    UnknownMind,
    dm_chat,
    private_scope,
    utc_now,
)
from memory.minds import REFUSED
from soul.reminders import member_zone, read_time
from soul.when import zone_of

log = logging.getLogger("hearth.mcp")

TOKEN_ENV = "HEARTH_MIND_TOKEN"  # noqa: S105 -- the variable's name, not a token
PATH = "/mcp"
SYNC_SECONDS = 10.0
MOST = 50  # the most rows one call hands back
BUSY = "the household's memory is busy just now; try the same call again in a moment"
FAILED = "hearth could not do that (an internal error; it is in the server's log)"
INSTRUCTIONS = (
    "hearth is a household's memory. You act for one member: you see what they see in their"
    " own chat with hearth, less what they did not grant you. `recall` finds what bears on a"
    " question (each memory with a ref and why it was chosen), `beliefs` lists what hearth"
    " believes for your member, `explain` gives one belief's evidence by its ref, `remember`"
    " tells hearth something (it waits, quarantined, until something else confirms it),"
    " `forget` takes back what you wrote, `reminders` lists or adds your member's reminders."
)

Transport = Literal["stdio", "http"]


class Door:
    """The tools over one open memory, for the minds whose tokens the calls present."""

    def __init__(self, memory: Memory, *, transport: Transport, household_zone: str,
                 token: str | None = None, clock: Callable[[], datetime] = utc_now) -> None:
        if transport == "http" and token is not None:
            raise ValueError("over HTTP each request presents its own token")
        self.memory = memory
        self.transport = transport
        self.household_zone = household_zone
        self._token = token
        self._clock = clock

    async def mind(self, headers: Any) -> Mind:
        """The mind this call is made by: the HTTP request's bearer token, or the stdio
        server's own. UnknownMind (one message) for anything else."""
        if self.transport == "http":
            return await self.memory.minds.resolve(bearer(headers) or "")
        return await self.memory.minds.resolve(self._token or "")

    # --- the tools -------------------------------------------------------------------------

    async def remember(self, mind: Mind, text: str) -> dict[str, Any]:
        belief = await self.memory.minds.remember(mind, text)
        if belief is None:
            return {"accepted": True, "belief": None,
                    "note": "kept for your member; it is not something you may read back"}
        return {"accepted": True, "belief": await self._belief(belief),
                "note": "kept as second-hand: quarantined until something else confirms it"
                if belief.status.value == "quarantined" else "kept"}

    async def recall(self, mind: Mind, query: str, limit: int) -> dict[str, Any]:
        if not query.strip():
            raise InvalidRequest("say what to recall: the query is empty")
        ctx = mind.context("recall for a mind's question")
        found = await self.memory.recall.recollect(ctx, query, limit=_bounded(limit))
        names = await self._names()
        return {"memories": [self._recalled(item, names) for item in found]}

    async def beliefs(self, mind: Mind, limit: int) -> dict[str, Any]:
        ctx = mind.context("list what hearth believes for a mind's member")
        found = await self.memory.beliefs.inspect(ctx)
        names = await self._names()
        return {"beliefs": [_belief_view(b, names) for b in found[: _bounded(limit)]]}

    async def explain(self, mind: Mind, ref: str) -> dict[str, Any]:
        explained = await self.memory.minds.explain(mind, ref)
        if explained is None:
            return {"found": False, "note": "no belief you may read has that ref"}
        return {
            "found": True,
            "belief": await self._belief(explained.belief),
            "evidence": [{"source": _source_words(e.source), "provenance": e.provenance.value,
                          "sign": e.sign, "weight": e.weight, "at": e.at}
                         for e in explained.evidence],
            "contradicted_by": len(explained.contradicts),
            "superseded": explained.superseded_by is not None,
        }

    async def forget(self, mind: Mind, text: str) -> dict[str, Any]:
        count = await self.memory.minds.forget(mind, text)
        return {"forgotten": count,
                "note": "only what you wrote is taken back; your member's own words stay"}

    async def reminders(self, mind: Mind, action: str, what: str | None,
                        when: str | None) -> dict[str, Any]:
        if action == "list":
            ctx = mind.context("list a mind's member's reminders")
            listed = await self.memory.reminders.mine(ctx)
            return {"reminders": [
                {"ref": item.ref, "what": item.text, "due": item.reminder.due_at,
                 "zone": item.reminder.zone, "recurrence": item.reminder.recurrence,
                 "state": item.reminder.state}
                for item in listed if item.reminder.kind == "reminder"]}
        if action != "add":
            raise InvalidRequest("action is list or add")
        if not (what or "").strip() or not (when or "").strip():
            raise InvalidRequest("to add a reminder, say what (`what`) and when (`when`: words"
                                 " such as 'tomorrow at 9', or an ISO 8601 time)")
        person = await self.memory.people.get(mind.person_id)
        zone_name = member_zone(await self.memory.preferences.get(person.person_id),
                                self.household_zone)
        now = self._clock()
        due, recurrence, wall, exact = await _when(str(when), now, zone_name)
        reminder, _ = await self.memory.reminders.add(
            person.person_id, str(what), scope=private_scope(person.person_id),
            chat_id=dm_chat(person), telegram_chat=person.telegram_id, zone=zone_name,
            due=due, recurrence=recurrence, wall=wall, exact=exact)
        return {"reminder": {"what": str(what).strip(), "due": reminder.due_at,
                             "zone": reminder.zone, "recurrence": reminder.recurrence,
                             "state": reminder.state},
                "note": "hearth will remind your member in their private chat"}

    # --- views -----------------------------------------------------------------------------

    async def _names(self) -> dict[str, str]:
        return {p.person_id: p.name for p in await self.memory.people.list()}

    async def _belief(self, belief: Belief) -> dict[str, Any]:
        return _belief_view(belief, await self._names())

    @staticmethod
    def _recalled(item: Recalled | Quoted, names: dict[str, str]) -> dict[str, Any]:
        if isinstance(item, Quoted):
            turn = item.turn
            said_by = (names.get(turn.speaker_id or "", "a member")
                       if turn.role.value == "user" else "hearth")
            return {"ref": turn.ref, "tier": "line", "text": turn.text, "said_by": said_by,
                    "at": turn.at, "shared": turn.scope == SHARED,
                    "class": turn.sensitivity.value, "verdict": item.verdict.value,
                    "why": item.why}
        view = _belief_view(item.belief, names)
        return {**view, "tier": "belief", "verdict": item.verdict.value, "why": item.why}


def _belief_view(belief: Belief, names: dict[str, str]) -> dict[str, Any]:
    return {
        "ref": belief.ref,
        "text": belief.proposition,
        "status": belief.status.value,
        "confidence": belief.confidence,
        "kind": belief.kind.value,
        "class": belief.sensitivity.value,
        "shared": belief.scope == SHARED,
        "about": names.get(belief.subject_id or ""),
        "since": belief.valid_from or belief.created_at,
    }


def _source_words(source: str) -> str:
    """Who gave a piece of evidence, in words: a member's statement, a mind, a conversation."""
    if source.startswith("statement:"):
        return "told by the member"
    if source.startswith("mind:"):
        return source
    return source.split(":", 1)[0]


def _bounded(limit: int) -> int:
    return max(1, min(int(limit), MOST))


async def _when(words: str, now: datetime, zone_name: str) -> tuple[
        datetime, str | None, str | None, bool]:
    """A reminder's time: an ISO 8601 instant (a bare one is in the member's zone), or words
    read as in a chat ("tomorrow at 9", "every Monday"). InvalidRequest when neither."""
    zone = zone_of(zone_name)
    with contextlib.suppress(ValueError):
        moment = datetime.fromisoformat(words.strip())
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=zone)
        if moment <= now:
            raise InvalidRequest("that time has passed: give one in the future")
        return moment.astimezone(UTC), None, None, True
    when = await read_time(words, now, zone, None)
    if when is None:
        raise InvalidRequest(f"could not place {words!r} in time: say it as 'tomorrow at 9',"
                             " 'in 2 hours', 'every Monday at 8', or an ISO 8601 time")
    return when.due, when.recurrence, when.wall, when.exact


def bearer(headers: Any) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None."""
    if headers is None:
        return None
    value = str(headers.get("authorization") or "")
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def _guarded(call: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """One tool call, its failures as one line each; nothing else of them leaves hearth."""
    try:
        return await call()
    except UnknownMind:
        raise ToolError(REFUSED) from None
    except StoreBusy:
        raise ToolError(BUSY) from None
    except HearthError as exc:
        raise ToolError(str(exc)) from None
    except Exception:
        log.exception("a tool call failed")
        raise ToolError(FAILED) from None


def build_server(door: Door) -> MCPServer:
    """The MCP server: six tools, each resolving its mind before anything else."""
    server: MCPServer = MCPServer("hearth", instructions=INSTRUCTIONS, log_level="WARNING")

    async def as_mind(ctx: Context, work: Callable[[Mind], Awaitable[dict[str, Any]]]) -> dict[
            str, Any]:
        async def call() -> dict[str, Any]:
            return await work(await door.mind(ctx.headers))
        return await _guarded(call)

    @server.tool()
    async def remember(text: str, ctx: Context) -> dict[str, Any]:
        """Tell hearth something about the member you act for. It is kept in their private
        memory as second-hand, stamped with your name, and waits (quarantined) until the
        member or something else confirms it."""
        return await as_mind(ctx, lambda mind: door.remember(mind, text))

    @server.tool()
    async def recall(query: str, ctx: Context, limit: int = 12) -> dict[str, Any]:
        """What hearth remembers that bears on a question: beliefs and your member's own
        lines, each with an opaque ref, a verdict (answers or related) and why it was chosen."""
        return await as_mind(ctx, lambda mind: door.recall(mind, query, limit))

    @server.tool()
    async def beliefs(ctx: Context, limit: int = 50) -> dict[str, Any]:
        """What hearth believes about and for your member that you may read, strongest
        first, with confidence and status."""
        return await as_mind(ctx, lambda mind: door.beliefs(mind, limit))

    @server.tool()
    async def explain(ref: str, ctx: Context) -> dict[str, Any]:
        """One belief, by the ref recall or beliefs gave, with the evidence it rests on."""
        return await as_mind(ctx, lambda mind: door.explain(mind, ref))

    @server.tool()
    async def forget(text: str, ctx: Context) -> dict[str, Any]:
        """Take back what you remembered whose words contain `text`. Only your own writing
        is touched: the member's words and anything else stay."""
        return await as_mind(ctx, lambda mind: door.forget(mind, text))

    @server.tool()
    async def reminders(ctx: Context, action: Literal["list", "add"] = "list",
                        what: str | None = None, when: str | None = None) -> dict[str, Any]:
        """List your member's reminders, or add one (`what`, and `when`: words such as
        'tomorrow at 9' or 'every Monday at 8', or an ISO 8601 time). Hearth reminds the
        member in their private chat."""
        return await as_mind(ctx, lambda mind: door.reminders(mind, action, what, when))

    return server


# --- transports ------------------------------------------------------------------------------


async def _keep_synced(memory: Memory) -> None:
    """Beliefs and lines other processes (the bot, `hearth chat`) wrote join this process's
    semantic index, every SYNC_SECONDS."""
    while True:
        await asyncio.sleep(SYNC_SECONDS)
        try:
            await memory.vectors.sync()
        except StoreBusy:
            continue


@contextlib.asynccontextmanager
async def _syncing(memory: Memory) -> AsyncIterator[None]:
    task = asyncio.create_task(_keep_synced(memory))
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def serve_stdio(door: Door) -> None:
    """Serve one client over this process's stdin and stdout until it closes them."""
    await door.mind(None)  # a server started with no live token says so at once
    async with _syncing(door.memory):
        await build_server(door).run_stdio_async()


class BearerGate:
    """ASGI middleware: an HTTP request without a live mind's bearer token is a 401 with one
    line, before the MCP layer reads a byte of it."""

    def __init__(self, app: ASGIApp, door: Door) -> None:
        self.app = app
        self.door = door

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        try:
            await self.door.mind(headers)
        except UnknownMind:
            await _refuse(send, 401, "invalid_token", REFUSED)
            return
        except StoreBusy:
            await _refuse(send, 503, "temporarily_unavailable", BUSY)
            return
        await self.app(scope, receive, send)


async def _refuse(send: Send, status: int, error: str, description: str) -> None:
    body = json.dumps({"error": error, "error_description": description}).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate",
                        f'Bearer error="{error}", error_description="{description}"'.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _Server(uvicorn.Server):
    """uvicorn's server, stopped by hearth (`HttpDoor.__aexit__`) rather than by the signal
    handlers uvicorn would install and re-raise: the command line stops on SIGINT or SIGTERM
    and exits 0, and a test's loop keeps its own handlers."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class HttpDoor:
    """The door on streamable HTTP at http://HOST:PORT/mcp, as a context: entered, it serves
    (port 0 takes a free one, `url` says which); left, it stops."""

    def __init__(self, door: Door, host: str, port: int) -> None:
        app = BearerGate(build_server(door).streamable_http_app(
            streamable_http_path=PATH, host=host), door)
        self.door = door
        self.host = host
        self._server = _Server(uvicorn.Config(
            app, host=host, port=port, log_level="warning", lifespan="on",
            access_log=False))
        self._task: asyncio.Task[None] | None = None
        self.url = ""

    async def __aenter__(self) -> HttpDoor:
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if self._task.done():
                self._task.result()  # the error that stopped it (a port in use)
                raise HearthError(f"the MCP door could not listen on {self.host}")
            await asyncio.sleep(0.02)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.url = f"http://{host}:{port}{PATH}"
        return self

    async def until(self, stop: asyncio.Event) -> None:
        """Serve until `stop` is set (or the server fails)."""
        if self._task is None:
            return
        stopping = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait([stopping, self._task], return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
        if self._task.done():
            self._task.result()

    async def __aexit__(self, *exc: object) -> None:
        self._server.should_exit = True
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)


async def serve_http(door: Door, host: str, port: int,
                     announce: Callable[[str], None]) -> None:
    """Serve on streamable HTTP until SIGINT or SIGTERM; `announce` is told the endpoint's
    URL."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    handled = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread
            loop.add_signal_handler(sig, stop.set)
            handled.append(sig)
    try:
        async with _syncing(door.memory), HttpDoor(door, host, port) as http:
            announce(http.url)
            await http.until(stop)
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)


__all__ = ["PATH", "TOKEN_ENV", "BearerGate", "Door", "HttpDoor", "bearer", "build_server",
           "serve_http", "serve_stdio"]
