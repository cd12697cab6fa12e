"""Voice notes and photos she could not take in yet: kept by their Telegram file id until she can.

When no server is configured to transcribe or to see, or it fails, a member's voice note or
photo is not lost: its file id (Telegram keeps a bot's files for it) waits here with the chat,
the speaker and the scope it was sent in, and the bot takes it in once a server can (what it
heard or saw becomes the member's line then). The media itself is never stored, here or
anywhere: only the id Telegram gave it. Each member is told once, plainly, that she cannot
listen or see on this setup (`notices`).

Owns: the waiting ids and the once-told notices. Must not: hold a file's bytes or any words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from memory.gate import Census, Gate
from memory.models import check_scope
from memory.store import Store

KINDS = ("voice", "photo")
MOST_ATTEMPTS = 5  # then a file is given up (and the member was told when it came)


@dataclass(frozen=True)
class Waiting:
    media_id: int
    kind: str
    file_id: str
    chat_id: str
    telegram_chat: int
    speaker_id: str
    scope: str
    at: str
    attempts: int


class MediaBook:
    """`memory.media`: what waits to be heard or seen."""

    def __init__(self, store: Store, gate: Gate, now: Callable[[], datetime]) -> None:
        self._store = store
        self._gate = gate
        self._now = now

    async def wait(self, *, kind: str, file_id: str, chat_id: str, telegram_chat: int,
                   speaker_id: str, scope: str) -> None:
        """Keep a file's id until she can take it in (the same file once)."""
        if kind not in KINDS:
            raise ValueError(f"not a kind of media: {kind!r}")
        check_scope(scope)
        async with self._gate.writing() as tx:
            await tx.lane(scope).insert("media_waiting", {
                "kind": kind, "file_id": file_id, "chat_id": chat_id,
                "telegram_chat": telegram_chat, "speaker_id": speaker_id, "scope": scope,
                "at": self._now().isoformat(), "attempts": 0}, ignore=True)

    async def waiting(self, kinds: tuple[str, ...], limit: int = 10) -> list[Waiting]:
        """The oldest files of these kinds still waiting, each read in its own scope's lane."""
        if not kinds:
            return []
        marks = ", ".join("?" for _ in kinds)
        async with self._gate.writing() as tx:
            rows = await Census(tx).select(
                "media_waiting", "media_id, scope", f"kind IN ({marks}) AND attempts < ?",
                (*kinds, MOST_ATTEMPTS), order="media_id", limit=limit)
            out = []
            for r in rows:
                row = await tx.lane(str(r["scope"])).one(
                    "media_waiting", "media_id = ?", (int(r["media_id"]),))
                if row is not None:
                    out.append(Waiting(
                        int(row["media_id"]), str(row["kind"]), str(row["file_id"]),
                        str(row["chat_id"]), int(row["telegram_chat"]),
                        str(row["speaker_id"]), str(row["scope"]), str(row["at"]),
                        int(row["attempts"])))
        return out

    async def done(self, media_id: int) -> None:
        async with self._gate.writing() as tx:
            for lane in await tx.lanes("media_waiting", "media_id = ?", (media_id,)):
                await lane.delete("media_waiting", "media_id = ?", (media_id,))

    async def failed(self, media_id: int) -> None:
        async with self._gate.writing() as tx:
            for lane in await tx.lanes("media_waiting", "media_id = ?", (media_id,)):
                await lane.update("media_waiting", "attempts = attempts + 1", "media_id = ?",
                                  (media_id,))

    async def first_notice(self, person_id: str, kind: str) -> bool:
        """True the first time a member is told she cannot take in this kind; False after."""
        async with self._store.transaction() as tx:
            return bool(await tx.fetchall(
                "INSERT OR IGNORE INTO media_notices(person_id, kind, at) VALUES (?, ?, ?)"
                " RETURNING person_id",
                (person_id, kind, self._now().isoformat())))
