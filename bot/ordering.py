"""Per-chat ordering of updates: the turns of one chat strictly in arrival order, different chats
concurrently.

Owns: `ChatOrderedProcessor`, the update processor given to `ApplicationBuilder`. Must not:
look inside an update beyond its chat, or await anything before the chat's lock is queued for.

Why it keeps order: python-telegram-bot starts one task per update, in arrival order, and each
task reaches `do_process_update` without suspending (the processor's semaphore is taken without
a wait while it has room). Here the first await is the chat's `asyncio.Lock`, whose waiters are
served first in, first out, so a chat's updates run in the order they came. A chat's lock is
dropped as soon as no update of that chat holds or waits for it.

It also closes the loop with the inbox: when an update's work ends, `on_done` is told (the
inbox marks it done); when a stop cuts it short, `on_abandon` is (it stays pending). `close`
gives running work a grace period, then cancels it, so a stop never waits on a hung model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

DEFAULT_CONCURRENCY = 64

Hook = Callable[[object], Awaitable[None]]


@dataclass
class _Slot:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


def chat_key(update: object) -> int | None:
    """The chat an update belongs to, or None when it has none (it then runs unordered)."""
    if isinstance(update, Update) and update.effective_chat is not None:
        return update.effective_chat.id
    return None


class ChatOrderedProcessor(BaseUpdateProcessor):
    """Updates of one chat one at a time, in order; updates of different chats side by side.

    While the processor is full, further updates wait for room before their chat's turn, so
    keep `max_concurrent_updates` well above the number of chats that talk at once.
    """

    def __init__(
        self,
        max_concurrent_updates: int = DEFAULT_CONCURRENCY,
        *,
        on_done: Hook | None = None,
        on_abandon: Callable[[object], None] | None = None,
    ) -> None:
        super().__init__(max_concurrent_updates)
        self._slots: dict[int, _Slot] = {}
        self._on_done = on_done
        self._on_abandon = on_abandon
        self._closing = False
        self._work: set[asyncio.Future[Any]] = set()

    @property
    def active_chats(self) -> int:
        """Chats with an update running or waiting; idle chats hold no lock."""
        return len(self._slots)

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        key = chat_key(update)
        if key is None:
            await self._run(update, coroutine)
            return
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = _Slot()
        slot.users += 1
        try:
            try:
                await slot.lock.acquire()
            except BaseException:
                # Cancelled while waiting (shutdown): the update's coroutine never runs, and
                # is closed so it is not reported as "never awaited".
                _discard(coroutine)
                self._abandon(update)
                raise
            try:
                await self._run(update, coroutine)
            finally:
                slot.lock.release()
        finally:
            slot.users -= 1
            if slot.users == 0 and self._slots.get(key) is slot:
                del self._slots[key]

    async def _run(self, update: object, coroutine: Awaitable[Any]) -> None:
        if self._closing:  # stopping: it waits in the inbox for the next start
            _discard(coroutine)
            self._abandon(update)
            return
        work: asyncio.Future[Any] = asyncio.ensure_future(coroutine)
        self._work.add(work)
        try:
            await asyncio.shield(work)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                work.cancel()  # this task itself is being cancelled: so is its work
                self._abandon(update)
                raise
            self._abandon(update)  # `close` cancelled the work; this task ends normally
            return
        except Exception:
            self._abandon(update)  # not done: the resume job hands it over again
            raise
        finally:
            self._work.discard(work)
        if self._on_done is not None:
            await self._on_done(update)

    def _abandon(self, update: object) -> None:
        if self._on_abandon is not None:
            self._on_abandon(update)

    async def close(self, grace: float) -> int:
        """No new work starts; running work gets `grace` seconds, then is cancelled (its
        updates stay pending). Returns how many were cancelled."""
        self._closing = True
        running = set(self._work)
        if not running:
            return 0
        _, late = await asyncio.wait(running, timeout=grace)
        for work in late:
            work.cancel()
        if late:
            await asyncio.wait(late, timeout=1.0)
        return len(late)

    async def initialize(self) -> None:
        """Nothing to set up: locks are made per chat on demand."""

    async def shutdown(self) -> None:
        """Nothing to free: an idle chat keeps no lock."""


def _discard(coroutine: Awaitable[Any]) -> None:
    if isinstance(coroutine, Coroutine):
        coroutine.close()
