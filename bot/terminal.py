"""`hearth chat`: a member's conversation in a terminal, through the same turn the bot answers
with (`soul.turn.respond`), the same tick and the same reminder lane on their schedules; only the
face differs: lines read from the terminal or a pipe, replies and reminders printed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from bot import texts
from bot.settings import Settings
from bot.shell import EXIT_INTERRUPTED, EXIT_OK, model_gateway, open_memory, say
from memory import HearthError, Memory, Person, utc_now

if TYPE_CHECKING:
    from soul.files import Soul
    from soul.model import Gateway
    from soul.proactive import Lane
    from soul.reminders import Desk

log = logging.getLogger("hearth.cli")


async def chat(settings: Settings, db: Path, args: argparse.Namespace) -> int:
    """A conversation through the real pipeline; piped stdin is one message per line."""
    from soul.files import load_soul  # noqa: PLC0415 -- the soul loads only for a conversation
    soul = load_soul(settings.soul_dir, profile=settings.profile)
    memory = await open_memory(settings, db, embed=True)
    try:
        person = await memory.people.by_name(args.as_name)
        async with model_gateway(settings, soul) as gateway:
            return await _converse(memory, soul, gateway, person, group=args.group,
                                   tick_seconds=settings.tick_seconds,
                                   household_zone=settings.household_zone)
    finally:
        await memory.close()


_QUIT = "/quit"


async def _converse(memory: Memory, soul: Soul, gateway: Gateway, person: Person, *,
                    group: bool, tick_seconds: int, household_zone: str) -> int:
    """Read a message, answer it, until the input ends, `/quit`, or Ctrl-C (which ends it at
    once, even mid-reply). The tick runs on its schedule meanwhile, as it does for the bot, and
    so does the reminder lane: this member's reminders in this chat are shown as they fall
    due."""
    from bot.init import INTERRUPT_ECHO_S  # noqa: PLC0415
    from soul.proactive import Lane  # noqa: PLC0415
    from soul.reminders import Desk  # noqa: PLC0415
    from soul.turn import chat_id_for  # noqa: PLC0415

    interactive = sys.stdin.isatty()
    loop = asyncio.get_running_loop()
    wake = asyncio.Event()
    desk = Desk(texts.REMINDER_WORDS, household_zone)
    lane = Lane(memory, soul, gateway, texts.REMINDER_WORDS, household_zone, on_telegram=False,
                only=(person.person_id, chat_id_for(person, group=group)))
    talk = asyncio.create_task(_talk(memory, soul, gateway, person, group=group,
                                     interactive=interactive, desk=desk, wake=wake))
    interrupted = False

    def interrupt() -> None:
        nonlocal interrupted
        interrupted = True
        talk.cancel()

    handled = False
    with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread
        loop.add_signal_handler(signal.SIGINT, interrupt)
        handled = True
    ticking = asyncio.create_task(_tick_every(memory, gateway, soul, tick_seconds))
    reminding = asyncio.create_task(
        remind_every(lane, soul.manifest.name, person.name, wake, interactive=interactive))
    try:
        await talk
    except asyncio.CancelledError:
        if not interrupted:
            raise
        if interactive:
            await asyncio.sleep(INTERRUPT_ECHO_S)
        say()  # the shell's prompt starts on a line of its own, after the echoed ^C
        return EXIT_INTERRUPTED
    finally:
        if handled:
            loop.remove_signal_handler(signal.SIGINT)
        ticking.cancel()  # a batch it was consolidating stays pending: that is transactional
        reminding.cancel()  # so is a reminder: kept and shown, or not yet and due again
        await asyncio.gather(ticking, reminding, return_exceptions=True)
    return EXIT_OK


async def _talk(memory: Memory, soul: Soul, gateway: Gateway, person: Person, *,
                group: bool, interactive: bool, desk: Desk, wake: asyncio.Event) -> None:
    from soul.turn import chat_id_for, respond  # noqa: PLC0415

    chat_id = chat_id_for(person, group=group)
    lines = _InputLines(sys.stdin.fileno())
    if interactive:
        where = " in the household group" if group else ""
        say(f"talking with {soul.manifest.name} as {person.name}{where}; "
            f"{_QUIT} or Ctrl-D to leave")
    while True:
        if interactive:
            sys.stdout.write(f"{person.name}> ")
            sys.stdout.flush()
        line = await lines.readline()
        if not line:
            if interactive:
                say()  # Ctrl-D leaves the cursor after the prompt
            return
        text = line.rstrip("\n")
        if text.strip() == _QUIT:
            return
        if not text.strip():
            continue
        try:
            reply = await respond(memory, soul, gateway, speaker=person, chat_id=chat_id,
                                  group=group, text=text, now=utc_now(), desk=desk,
                                  telegram_chat=None if group else person.telegram_id)
        except HearthError as exc:
            say(f"({exc})")
            continue
        if reply.reminders:
            wake.set()
        if interactive:
            say(f"{soul.manifest.name}: {reply.text}")
        else:  # one line per reply, so piped input and output pair up line by line
            say(" ".join(reply.text.split()))


class _InputLines:
    """Lines of the input as they arrive, without a thread that would outlive the chat.

    A terminal or a pipe is watched by the event loop and read only once it has something, so
    nothing ever blocks and Ctrl-C ends the chat at once. A regular file (`< notes.txt`), which
    the loop cannot watch, never blocks either and is read directly. Bytes are split at
    newlines and each line is decoded as UTF-8.
    """

    _CHUNK = 65536

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = b""
        self._ended = False

    async def readline(self) -> str:
        """The next line with its newline; the last one may lack it; "" at the end."""
        while b"\n" not in self._buffer and not self._ended:
            chunk = await self._read()
            if chunk:
                self._buffer += chunk
            else:
                self._ended = True
        line, newline, self._buffer = self._buffer.partition(b"\n")
        return (line + newline).decode("utf-8", errors="replace")

    async def _read(self) -> bytes:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()

        def readable() -> None:
            if not ready.done():
                ready.set_result(None)

        try:
            loop.add_reader(self._fd, readable)
        except (OSError, ValueError):  # a regular file cannot be watched: it never blocks
            return self._read_now()
        try:
            await ready
        finally:
            loop.remove_reader(self._fd)
        return self._read_now()

    def _read_now(self) -> bytes:
        try:
            return os.read(self._fd, self._CHUNK)
        except OSError:  # the input went away: that is its end
            return b""


async def remind_every(lane: Lane, name: str, member: str, wake: asyncio.Event, *,
                       interactive: bool, clock: Callable[[], datetime] = utc_now) -> None:
    """The terminal's reminder lane: sleep until the next one falls due (or a new one is made:
    `wake`), then show it, as the bot would send it. A failure is logged and tried again; it
    never speaks into the conversation."""
    while True:
        try:
            now = clock()
            at = await lane.next_wakeup(now)
            if at > now:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), (at - now).total_seconds())
            wake.clear()
            sent = await lane.run_due(clock())
        except HearthError as exc:
            log.warning("the reminder lane waits (%s)", type(exc).__name__)
            await asyncio.sleep(5)
            continue
        for message in sent:
            if interactive:
                say(f"\n{name}: {message.text}")
                sys.stdout.write(f"{member}> ")
                sys.stdout.flush()
            else:
                say(f"{name}: {' '.join(message.text.split())}")


async def _tick_every(memory: Memory, gateway: Gateway, soul: Soul, seconds: int) -> None:
    """The bot's tick, on the bot's schedule (every HEARTH_TICK_SECONDS, a chat counted quiet
    after as long), so what is said here becomes memory without `hearth tick`. A failed tick
    is logged and waits for the next; it never speaks into the conversation."""
    from soul.tick import tick  # noqa: PLC0415

    while True:
        await asyncio.sleep(seconds)
        try:
            report = await tick(memory, soul, gateway, now=utc_now(),
                                quiet_after=timedelta(seconds=seconds))
        except Exception as exc:  # a failed tick must never end the chat
            log.warning("the tick failed (%s); it runs again in %d s", type(exc).__name__,
                        seconds)
            log.debug("the tick failed", exc_info=True)
            continue
        for report_line in report.lines():
            log.info("tick: %s", report_line)
