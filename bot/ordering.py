"""Per-chat ordering of updates: the turns of one chat strictly in arrival order, different chats
concurrently.

Owns: `ChatOrderedProcessor`, the update processor given to `ApplicationBuilder`. Must not:
look inside an update beyond its chat, or await anything before the chat's lock is queued for.

Why it keeps order: python-telegram-bot starts one task per update, in arrival order, and each
task reaches `do_process_update` without suspending (the processor's semaphore is taken without
a wait while it has room). Here the first await is the chat's `asyncio.Lock`, whose waiters are
served first in, first out, so a chat's updates run in the order they came. A chat's lock is
dropped as soon as no update of that chat holds or waits for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

DEFAULT_CONCURRENCY = 64


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

    def __init__(self, max_concurrent_updates: int = DEFAULT_CONCURRENCY) -> None:
        super().__init__(max_concurrent_updates)
        self._slots: dict[int, _Slot] = {}

    @property
    def active_chats(self) -> int:
        """Chats with an update running or waiting; idle chats hold no lock."""
        return len(self._slots)

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        key = chat_key(update)
        if key is None:
            await coroutine
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
                if isinstance(coroutine, Coroutine):
                    coroutine.close()
                raise
            try:
                await coroutine
            finally:
                slot.lock.release()
        finally:
            slot.users -= 1
            if slot.users == 0 and self._slots.get(key) is slot:
                del self._slots[key]

    async def initialize(self) -> None:
        """Nothing to set up: locks are made per chat on demand."""

    async def shutdown(self) -> None:
        """Nothing to free: an idle chat keeps no lock."""
