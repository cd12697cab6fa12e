"""Sending her words to Telegram: long texts split cleanly, and "typing..." while she thinks.

Owns: `split_reply` (a pure function: chunks within Telegram's limit, split at paragraph, then
line, then word boundaries) and `keep_typing`. Must not: decide what to say. Her replies are
sent by `bot.outbox`, which splits them with `split_reply`.

Telegram's limit counts UTF-16 code units, so an emoji can count twice; chunks are measured
that way, which also keeps every chunk within the limit in Python characters.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator

from telegram import Bot
from telegram.constants import ChatAction, MessageLimit

log = logging.getLogger("hearth.bot")

TELEGRAM_LIMIT = int(MessageLimit.MAX_TEXT_LENGTH)  # 4096

# Coarsest first: paragraphs, then lines, then words. Each pattern captures its separator so
# the text between split points is kept exactly as written.
_SEPARATORS = (re.compile(r"(\n[^\S\n]*\n\s*)"), re.compile(r"(\n\s*)"), re.compile(r"(\s+)"))


def _units(text: str) -> int:
    """Length as Telegram counts it: UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def split_reply(text: str, limit: int = TELEGRAM_LIMIT) -> list[str]:
    """`text` in chunks of at most `limit` UTF-16 units, split at the coarsest boundary that
    fits; a word is cut only when it alone is longer than the limit. Whitespace at a split
    point is dropped, and so are chunks that would be only whitespace."""
    if limit < 2:
        raise ValueError("a chunk must hold at least two UTF-16 units")
    chunks = [chunk.strip() for chunk in _split(text, limit, 0)]
    return [chunk for chunk in chunks if chunk]


def _split(text: str, limit: int, level: int) -> list[str]:
    if _units(text) <= limit:
        return [text]
    if level == len(_SEPARATORS):
        return _hard_split(text, limit)
    pieces = _SEPARATORS[level].split(text)  # [part, sep, part, sep, ..., part]
    chunks: list[str] = []
    current, size = "", 0
    for i in range(0, len(pieces), 2):
        part = pieces[i]
        sep = pieces[i - 1] if i else ""
        part_size = _units(part)
        if part_size > limit:
            if current.strip():
                chunks.append(current)
            chunks.extend(_split(part, limit, level + 1))
            current, size = "", 0
            continue
        joined = size + _units(sep) + part_size
        if current and joined <= limit:
            current, size = current + sep + part, joined
        else:
            if current.strip():
                chunks.append(current)
            current, size = part, part_size
    if current.strip():
        chunks.append(current)
    return chunks


def _hard_split(word: str, limit: int) -> list[str]:
    """A single word longer than the limit, cut between code points."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for char in word:
        width = _units(char)
        if size + width > limit:
            chunks.append("".join(current))
            current, size = [], 0
        current.append(char)
        size += width
    if current:
        chunks.append("".join(current))
    return chunks


@contextlib.asynccontextmanager
async def keep_typing(bot: Bot, chat_id: int, interval: float = 4.0) -> AsyncIterator[None]:
    """Show "typing..." in the chat, renewed every `interval` seconds, until the block ends.

    Telegram shows the action for about five seconds; a failure to send it is not worth more
    than a debug line.
    """

    async def renew() -> None:
        while True:
            try:
                await bot.send_chat_action(chat_id, ChatAction.TYPING)
            except Exception as exc:  # noqa: BLE001 -- a cosmetic call: any failure is ignored
                log.debug("typing action failed in a chat: %s", type(exc).__name__)
            await asyncio.sleep(interval)

    task = asyncio.create_task(renew(), name="hearth:typing")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
