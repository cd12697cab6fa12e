"""Delivering her replies from the outbox: each in order, and once, whatever Telegram says.

Owns: `Courier`, which sends a chat's owed replies oldest first, part by part (a long reply is
split as `bot.replies.split_reply` splits it, and keeps that order), records each part's
Telegram message id as soon as Telegram accepted it, and stops at the first part that still
fails after the request's own patience: the reply stays pending and the chat's later replies
wait behind it, so order holds. A later `deliver` (the next turn in that chat, the resume job,
the next start) picks up at the part it stopped at. A refusal that will not change (the chat
is gone, the member blocked her) ends that reply, logged by id.

Once is as far as the Bot API lets it be: a part Telegram took in the moment before its message
id was written (a kill) is still pending, and goes again; so does one whose connection was cut
when Telegram cannot be asked whether it has it (`bot.request`, `bot.sightings`). That is the
one part per chat that can repeat; the other choice, skipping it, could lose it. A stop is not
such a moment: it lets a part on its way finish and be recorded first (`FINISH_SECONDS`).

Must not: decide what is said, or send anything the outbox does not hold.
"""

from __future__ import annotations

import asyncio
import logging

from telegram import Bot, ReplyParameters
from telegram.error import BadRequest, Forbidden, InvalidToken, TelegramError

from bot.replies import split_reply
from memory import Memory, OwedReply

log = logging.getLogger("hearth.bot")

_FINAL = (BadRequest, Forbidden)
# A stop waits this long for a part already on its way to be accepted and recorded. Within the
# stop's bound: running turns get 4 s, then 1 s more once cancelled (`bot.ordering`).
FINISH_SECONDS = 1.0


class Courier:
    """Sends owed replies; one delivery per chat at a time, so no part goes out twice."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory
        self._locks: dict[int, asyncio.Lock] = {}

    async def deliver(self, bot: Bot, chat: int) -> bool:
        """Send what the chat is owed; True when nothing is left pending for it."""
        lock = self._locks.setdefault(chat, asyncio.Lock())
        async with lock:
            for owed in await self._memory.outbox.pending(chat):
                if not await self._send(bot, owed):
                    return False
            return True

    async def deliver_all(self, bot: Bot) -> int:
        """Every chat's owed replies (at start and from the resume job); returns how many
        chats still have something pending."""
        chats = sorted({owed.chat for owed in await self._memory.outbox.pending()})
        left = 0
        for chat in chats:
            if not await self.deliver(bot, chat):
                left += 1
        return left

    async def _send(self, bot: Bot, owed: OwedReply) -> bool:
        parts = split_reply(owed.text)
        if not parts:  # nothing sayable (whitespace only): done
            await self._memory.outbox.failed_attempt(owed.reply_id, final=True)
            return True
        for n in range(owed.parts_sent, len(parts)):
            reply = (
                ReplyParameters(message_id=owed.reply_to, allow_sending_without_reply=True)
                if owed.reply_to is not None and n == 0
                else None
            )
            last = n == len(parts) - 1
            attempt = asyncio.ensure_future(self._send_part(bot, owed, parts[n], reply, last))
            try:
                await _finish_on_stop(attempt)
            except InvalidToken:
                raise
            except _FINAL as exc:
                log.error("reply %s was refused by Telegram for good (%s)",
                          owed.reply_id, type(exc).__name__)
                await self._memory.outbox.failed_attempt(owed.reply_id, final=True)
                return True
            except TelegramError as exc:
                log.warning("reply %s is not delivered yet (%s); it stays pending",
                            owed.reply_id, type(exc).__name__)
                await self._memory.outbox.failed_attempt(owed.reply_id, final=False)
                return False
        return True

    async def _send_part(self, bot: Bot, owed: OwedReply, text: str,
                         reply: ReplyParameters | None, last: bool) -> None:
        message = await bot.send_message(owed.chat, text, reply_parameters=reply)
        await self._memory.outbox.part_sent(owed.reply_id, message.message_id, last=last)


async def _finish_on_stop(attempt: asyncio.Future[None]) -> None:
    """Await one part's send and record. A stop (a cancel) while it runs lets it end first,
    within FINISH_SECONDS: the part may be at Telegram already, and cut off before its
    message id is kept it would go again after the restart."""
    try:
        await asyncio.shield(attempt)
    except asyncio.CancelledError:
        if not attempt.done():
            try:
                await asyncio.wait([attempt], timeout=FINISH_SECONDS)
            finally:
                attempt.cancel()
        if attempt.done() and not attempt.cancelled():
            attempt.exception()  # retrieved: the stop is what this task reports
        raise
