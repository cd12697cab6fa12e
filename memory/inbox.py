"""The inbox and the outbox: nothing a member says is lost, and no reply is sent twice.

Owns: the `inbox` table (a member's update, as Telegram sent it, from before its offset is
confirmed until the turn it produced is stored; idempotent by `update_id`) and the `outbox`
table (her reply from the moment it is decided until Telegram accepted every part, with the
Telegram message id of each part, so a restart resumes a long reply at the part it stopped at).
`Delivery` says where a reply goes and which update it answers, so the facade can store the
reply, queue it and mark the update done in one transaction.

Must not: be read by anything but the bot's transport. These rows are not memory: the gate's
reads, recall, export and the tick never look at them, and each row's text is cleared the
moment it is done (payload NULL, text ''). Only ids and counts outlive a delivery.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from memory.secrets import mask_secrets
from memory.store import Store, Tx

# Done rows are kept this long so an update Telegram delivers again (its offset was not yet
# confirmed when the bot stopped) is recognised and not answered twice. Telegram keeps an
# unconfirmed update for 24 hours.
KEEP_DONE = timedelta(days=2)


@dataclass(frozen=True)
class Delivery:
    """Where a reply goes: a Telegram chat, the message it answers (in a group), and the
    update it completes (None for a line that did not come through the inbox)."""

    chat: int
    reply_to: int | None = None
    update_id: int | None = None


@dataclass(frozen=True)
class OwedReply:
    """One reply still owed to a chat: the parts not yet accepted start at `parts_sent`."""

    reply_id: int
    chat: int
    text: str
    reply_to: int | None
    parts_sent: int
    attempts: int


Received = Literal["stranger", "kept", "again"]


def _masked(value: Any) -> Any:
    """An update with secret tokens masked in every text and caption it carries, as a stored
    line is: the inbox row is cleared once the turn is stored, but the pages SQLite wrote it
    in linger in the WAL until the next checkpoint, so a card number must never be in them."""
    if isinstance(value, dict):
        return {k: mask_secrets(v) if k in ("text", "caption") and isinstance(v, str)
                else _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def masked_payload(payload: str) -> str:
    try:
        update = json.loads(payload)
    except ValueError:
        return mask_secrets(payload)
    return json.dumps(_masked(update), ensure_ascii=False)


async def _served(tx: Tx, chat: int, *, sender: int, owner: int, group: bool) -> bool:
    """The owner by the configured id, anyone else by their principal; in a group only once it
    is a household group."""
    member = sender == owner or bool(
        await tx.scalar("SELECT 1 FROM people WHERE telegram_id = ?", (sender,)))
    if member and group:
        member = bool(await tx.scalar(
            "SELECT 1 FROM household_chats WHERE chat_id = ?", (str(chat),)))
    return member


async def _keep(tx: Tx, update_id: int, chat: int, payload: str, now: str) -> bool:
    payload = masked_payload(payload)
    # RETURNING gives a row only when the insert took place: one statement, not two.
    return bool(await tx.fetchall(
        "INSERT OR IGNORE INTO inbox(update_id, chat_id, payload, received_at)"
        " VALUES (?, ?, ?, ?) RETURNING update_id",
        (update_id, chat, payload, now),
    ))


async def finish_update(tx: Tx, update_id: int | None, now: str) -> None:
    """Mark an update done inside the caller's transaction; its payload goes at once."""
    if update_id is None:
        return
    await tx.execute(
        "UPDATE inbox SET state = 'done', payload = NULL, done_at = ?"
        " WHERE update_id = ? AND state = 'pending'",
        (now, update_id),
    )


async def queue_reply(tx: Tx, delivery: Delivery, text: str, now: str) -> int:
    """Queue a reply inside the caller's transaction; returns its id."""
    return await tx.execute(
        "INSERT INTO outbox(chat_id, update_id, reply_to, text, created_at)"
        " VALUES (?, ?, ?, ?, ?)",
        (delivery.chat, delivery.update_id, delivery.reply_to, text, now),
    )


async def purge_chat(tx: Tx, chat: int) -> None:
    """A member removed: nothing of their private chat waits in either queue any longer."""
    await tx.execute("DELETE FROM inbox WHERE chat_id = ?", (chat,))
    await tx.execute("DELETE FROM outbox WHERE chat_id = ?", (chat,))


class Inbox:
    """Updates kept until they are answered."""

    def __init__(self, store: Store, now: Callable[[], datetime]) -> None:
        self._store = store
        self._now = now

    async def receive(self, update_id: int, chat: int, payload: str) -> bool:
        """Keep an update; False when it was already kept (Telegram delivered it again)."""
        async with self._store.transaction() as tx:
            return await _keep(tx, update_id, chat, payload, self._now().isoformat())

    async def receive_from_member(
        self,
        update_id: int,
        chat: int,
        *,
        sender: int,
        owner: int,
        group: bool,
        payload: Callable[[], str],
    ) -> Received:
        """In one transaction: is the sender a household member in a chat she serves (the
        owner by the configured id, anyone else by their principal; a group only once it is a
        household group), and if so keep the update. A stranger's update is never written:
        `payload` is only called for a member's."""
        async with self._store.transaction() as tx:
            if not await _served(tx, chat, sender=sender, owner=owner, group=group):
                return "stranger"
            fresh = await _keep(tx, update_id, chat, payload(), self._now().isoformat())
        return "kept" if fresh else "again"

    async def serves(self, chat: int, *, sender: int, owner: int, group: bool) -> bool:
        """Whether `receive_from_member` would keep this sender's update in this chat: a
        member, in a chat she serves. Reads only, so it answers while the disk is full."""
        async with self._store.transaction() as tx:
            return await _served(tx, chat, sender=sender, owner=owner, group=group)

    async def pending(self) -> list[tuple[int, str]]:
        """(update id, payload) of every update not yet answered, oldest first."""
        async with self._store.transaction() as tx:
            rows = await tx.fetchall(
                "SELECT update_id, payload FROM inbox WHERE state = 'pending'"
                " ORDER BY update_id"
            )
        return [(int(r["update_id"]), str(r["payload"])) for r in rows]

    async def finish(self, update_id: int) -> None:
        """The update's work is done (or needs no more): its payload goes, its id stays."""
        async with self._store.transaction() as tx:
            await finish_update(tx, update_id, self._now().isoformat())

    async def count_pending(self) -> int:
        async with self._store.transaction() as tx:
            return int(await tx.scalar("SELECT count(*) FROM inbox WHERE state = 'pending'"))

    async def prune(self) -> int:
        """Forget the ids of updates done long ago; returns how many."""
        cutoff = (self._now() - KEEP_DONE).isoformat()
        async with self._store.transaction() as tx:
            return await tx.execute(
                "DELETE FROM inbox WHERE state = 'done' AND done_at < ?", (cutoff,)
            )


class Outbox:
    """Replies kept until Telegram accepted them."""

    def __init__(self, store: Store, now: Callable[[], datetime]) -> None:
        self._store = store
        self._now = now

    async def queue(self, delivery: Delivery, text: str) -> int:
        """Queue a reply on its own and complete the update it answers, in one transaction."""
        now = self._now().isoformat()
        async with self._store.transaction() as tx:
            reply_id = await queue_reply(tx, delivery, text, now)
            await finish_update(tx, delivery.update_id, now)
        return reply_id

    async def pending(self, chat: int | None = None) -> list[OwedReply]:
        """Replies still owed, per chat in the order they were decided (all chats: None)."""
        among, params = ("", ()) if chat is None else (" AND chat_id = ?", (chat,))
        async with self._store.transaction() as tx:
            rows = await tx.fetchall(
                "SELECT reply_id, chat_id, text, reply_to, parts_sent, attempts FROM outbox"
                f" WHERE state = 'pending'{among} ORDER BY reply_id",
                params,
            )
        return [
            OwedReply(int(r["reply_id"]), int(r["chat_id"]), str(r["text"]), r["reply_to"],
                    int(r["parts_sent"]), int(r["attempts"]))
            for r in rows
        ]

    async def part_sent(self, reply_id: int, message_id: int, *, last: bool) -> None:
        """Telegram accepted the next part (its message id is kept); after the last part the
        reply is sent and its text goes."""
        async with self._store.transaction() as tx:
            row = await tx.fetchone(
                "SELECT message_ids FROM outbox WHERE reply_id = ?", (reply_id,)
            )
            if row is None:
                return
            ids = [*json.loads(row["message_ids"]), message_id]
            if last:
                await tx.execute(
                    "UPDATE outbox SET parts_sent = ?, message_ids = ?, state = 'sent',"
                    " text = '', sent_at = ? WHERE reply_id = ?",
                    (len(ids), json.dumps(ids), self._now().isoformat(), reply_id),
                )
            else:
                await tx.execute(
                    "UPDATE outbox SET parts_sent = ?, message_ids = ? WHERE reply_id = ?",
                    (len(ids), json.dumps(ids), reply_id),
                )

    async def failed_attempt(self, reply_id: int, *, final: bool) -> None:
        """A send failed: count it, and when Telegram refused for good (the chat is gone, the
        member blocked her), stop trying; the text goes then too."""
        async with self._store.transaction() as tx:
            if final:
                await tx.execute(
                    "UPDATE outbox SET attempts = attempts + 1, state = 'failed', text = ''"
                    " WHERE reply_id = ?",
                    (reply_id,),
                )
            else:
                await tx.execute(
                    "UPDATE outbox SET attempts = attempts + 1 WHERE reply_id = ?", (reply_id,)
                )

    async def message_ids(self, reply_id: int) -> list[int]:
        async with self._store.transaction() as tx:
            row = await tx.fetchone(
                "SELECT message_ids FROM outbox WHERE reply_id = ?", (reply_id,)
            )
        return [] if row is None else [int(i) for i in json.loads(row["message_ids"])]

    async def count_pending(self) -> int:
        async with self._store.transaction() as tx:
            return int(await tx.scalar("SELECT count(*) FROM outbox WHERE state = 'pending'"))
