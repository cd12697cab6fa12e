"""Receiving updates durably: a member's update is in the database before Telegram hears it
was received, and is done only once the turn it produced is stored.

Owns: `DurableQueue`, the application's `update_queue`, and `Intake`, its book of updates in
flight. Why the queue is the seam: python-telegram-bot's Updater (long polling) awaits
`update_queue.put` for every update of a batch before it moves its offset, and its webhook
handler awaits the same `put` before it answers Telegram 200. A `put` that first writes the
update to the inbox therefore makes both ways of receiving durable, with python-telegram-bot's
own polling, retries and webhook server unchanged; a custom polling loop would have covered
polling only.

A `put` that cannot write (the database locked past its bound, the disk full) keeps trying,
with backoff: the offset is not confirmed meanwhile, so Telegram keeps the update, and a stop
cancels the wait with nothing lost. Strangers' updates (and the owner's first `/household` in a
group not yet served) are never written: they go straight to the gatekeeper, which stores
nothing of theirs. The gatekeeper still decides everything; the intake only decides what is
worth keeping.

Must not: decide what a member may do, or keep an update's text after it is done.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable

from telegram import Bot, Chat, Update, User
from telegram.constants import ChatType
from telegram.error import TelegramError

from bot import texts
from bot.sightings import Sightings
from memory import Memory, StoreError

log = logging.getLogger("hearth.bot")

_GROUPS = frozenset({ChatType.GROUP, ChatType.SUPERGROUP})
_RETRY_FIRST_S = 0.5
_RETRY_MAX_S = 10.0


def _sender(update: Update) -> tuple[User, Chat] | None:
    """Who sent an update and where, when it is a person's in a private chat or a group: the
    only updates the inbox may keep."""
    user, chat = update.effective_user, update.effective_chat
    if user is None or chat is None or user.is_bot or not (
        chat.type == ChatType.PRIVATE or chat.type in _GROUPS
    ):
        return None
    return user, chat


class Intake:
    """Which updates came through the inbox, which are being worked on, and which must wait
    for another try (`keep`)."""

    def __init__(self, memory: Memory, owner_telegram_id: int,
                 sightings: Sightings | None = None) -> None:
        self._memory = memory
        self._owner = owner_telegram_id
        self._sightings = sightings or Sightings()
        self.durable: set[int] = set()  # in the inbox and handed to the application
        self._kept: set[int] = set()  # failed for a reason that passes: answer later
        self._completed: set[int] = set()  # done in the turn's own transaction
        # Chats already told "I'm having trouble saving things"; a chat leaves the set when
        # one of its updates is done again.
        self.troubled: set[int] = set()

    async def receive(self, update: Update) -> bool:
        """Write a member's update to the inbox; True when the application should work on it
        now (a stranger's, or a member's seen for the first time)."""
        sender = _sender(update)
        if sender is None:
            return True  # nobody to serve: the gatekeeper drops it, nothing is written
        user, chat = sender
        if update.message is not None:  # a new message, not an edit or a button
            self._sightings.heard(chat.id, update.message.message_id, update.message.date)
        update_id = update.update_id
        if update_id in self.durable:
            return False  # delivered again while it is being worked on
        # Reserved before the write, so the resume job, reading the inbox between this write's
        # commit and the line below it, cannot hand the same update over a second time.
        self.durable.add(update_id)
        try:
            received = await self._memory.inbox.receive_from_member(
                update_id, chat.id, sender=user.id, owner=self._owner,
                group=chat.type in _GROUPS,
                payload=lambda: json.dumps(update.to_dict(), ensure_ascii=False),
            )
        except BaseException:
            self.durable.discard(update_id)
            raise
        if received != "kept":
            self.durable.discard(update_id)
        # A stranger's goes on to the gatekeeper; one delivered again is already kept and is
        # resumed from the inbox.
        return received != "again"

    async def serves(self, update: Update) -> bool:
        """Whether this update is a member's in a chat she serves (what `receive` keeps)."""
        sender = _sender(update)
        if sender is None:
            return False
        user, chat = sender
        return await self._memory.inbox.serves(chat.id, sender=user.id, owner=self._owner,
                                                group=chat.type in _GROUPS)

    @property
    def owner(self) -> int:
        return self._owner

    def completed(self, update: object) -> None:
        """The turn marked its update done in its own transaction: nothing left to mark."""
        if isinstance(update, Update) and update.update_id in self.durable:
            self._completed.add(update.update_id)

    def keep(self, update: object) -> None:
        """This update's work failed for a reason that passes (a locked database): it stays
        in the inbox and is tried again by the resume job."""
        if isinstance(update, Update) and update.update_id in self.durable:
            self._kept.add(update.update_id)

    async def finish(self, update: object) -> None:
        """The application finished an update: done in the inbox, unless it is kept."""
        if not isinstance(update, Update) or update.update_id not in self.durable:
            return
        update_id = update.update_id
        self.durable.discard(update_id)
        if update_id in self._kept:
            self._kept.discard(update_id)
            self._completed.discard(update_id)
            return
        try:
            if update_id in self._completed:
                self._completed.discard(update_id)
            else:
                await self._memory.inbox.finish(update_id)
        except StoreError as exc:
            # Still pending: it is answered again later, and a stored line is not stored twice.
            log.warning("update %s could not be marked done yet: %s", update_id, exc)
            return
        if update.effective_chat is not None:
            self.troubled.discard(update.effective_chat.id)

    def abandon(self, update: object) -> None:
        """A stop cut the update's work short: it stays pending for the next start."""
        if isinstance(update, Update):
            self.durable.discard(update.update_id)
            self._kept.discard(update.update_id)
            self._completed.discard(update.update_id)

    async def pending(self, bot: Bot) -> list[Update]:
        """Inbox updates nobody is working on, oldest first, to be worked on again."""
        found: list[Update] = []
        for update_id, payload in await self._memory.inbox.pending():
            if update_id in self.durable:
                continue
            try:
                update = Update.de_json(json.loads(payload), bot)
            except (ValueError, TypeError, KeyError) as exc:
                log.error("inbox update %s cannot be read (%s); dropping it", update_id,
                          type(exc).__name__)
                await self._memory.inbox.finish(update_id)
                continue
            self.durable.add(update_id)
            found.append(update)
        return found


class DurableQueue(asyncio.Queue[object]):
    """The application's update queue: `put` keeps a member's update in the inbox first."""

    def __init__(self, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        super().__init__()
        self.intake: Intake | None = None
        # Sends one message straight to Telegram, not through the outbox (which is in the
        # database that cannot be written): set once the application's bot exists.
        self.tell: Callable[[int, str], Awaitable[object]] | None = None
        self._sleep = sleep
        self._owner_told = False  # the owner heard of this outage

    async def put(self, item: object) -> None:
        intake = self.intake
        if intake is not None and isinstance(item, Update) and not (
            await self._receive(intake, item)
        ):
            return  # delivered again: the inbox already holds it
        await super().put(item)

    async def resume(self, update: Update) -> None:
        """Hand an update already in the inbox to the application."""
        await super().put(update)

    async def _receive(self, intake: Intake, update: Update) -> bool:
        delay = _RETRY_FIRST_S
        failing = False
        while True:
            try:
                fresh = await intake.receive(update)
            except StoreError as exc:
                if not failing:
                    log.error("cannot keep incoming updates yet (%s); Telegram keeps them "
                              "until they are stored", exc)
                    failing = True
                    await self._tell_trouble(intake, update)
                await self._sleep(delay)
                delay = min(delay * 2, _RETRY_MAX_S)
                continue
            if failing:
                log.warning("incoming updates are kept again")
                self._owner_told = False
            return fresh

    async def _tell_trouble(self, intake: Intake, update: Update) -> None:
        """A member's message cannot be kept (the disk full, the database locked past its
        bound): their chat hears once that she has it and will answer, and the owner once per
        outage what to look at. A stranger's chat hears nothing, and neither does any chat when
        even reading fails (whether its sender is a member cannot be told then); the owner is
        told either way."""
        if self.tell is None:
            return
        chat = update.effective_chat
        try:
            member = chat is not None and chat.id not in intake.troubled and (
                await intake.serves(update))
        except StoreError as exc:
            log.warning("cannot tell whether update %s is a member's: %s", update.update_id, exc)
            member = False
        if member and chat is not None:
            intake.troubled.add(chat.id)
            await self._send(chat.id, texts.TROUBLE_SAVING)
        if not self._owner_told:
            self._owner_told = True
            await self._send(intake.owner, texts.TROUBLE_SAVING_OWNER)

    async def _send(self, chat: int, text: str) -> None:
        if self.tell is None:
            return
        try:
            await self.tell(chat, text)
        except TelegramError as exc:
            log.warning("could not tell a chat the database cannot be written: %s",
                        type(exc).__name__)


async def resume_pending(queue: DurableQueue, intake: Intake, bot: Bot) -> int:
    """Hand every inbox update nobody works on back to the application; returns how many."""
    updates = await intake.pending(bot)
    for update in updates:
        await queue.resume(update)
    if updates:
        log.info("resumed %d update(s) from the inbox", len(updates))
    return len(updates)

