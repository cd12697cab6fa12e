"""The transcript: what was said, line by line, each line in the scope it was said in.

Owns: storing members' lines and her replies (secret tokens masked, classified), the replay
guard (`turns.source_update`), her reply's turn log and outbox entry in the reply's own
transaction, and reading lines back through the gate. Must not: store a line outside a scope,
or return a line the reader's wall or lens holds back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from memory.classifier import classify
from memory.errors import InvalidRequest
from memory.gate import Census, Gate
from memory.inbox import Delivery, finish_update, queue_reply
from memory.models import AccessContext, Activity, Role, Sensitivity, Turn, check_scope
from memory.secrets import mask_secrets
from memory.store import Row, Store
from memory.vectors import LINES, VectorBook

MAX_TURN_CHARS = 16_000
_CONVERSATION = frozenset((Activity.DM_CONVERSATION, Activity.GROUP_CONVERSATION))


def line_text(text: str) -> str:
    """A transcript line as stored: NULs dropped, within the size limit, secret tokens masked."""
    text = text.replace("\x00", "")
    if not text.strip():
        raise InvalidRequest("an empty line is not stored")
    if len(text) > MAX_TURN_CHARS:
        raise InvalidRequest(f"a line is at most {MAX_TURN_CHARS} characters")
    return mask_secrets(text)


def turn_from_row(row: Row) -> Turn:
    return Turn(
        turn_id=int(row["turn_id"]),
        chat_id=str(row["chat_id"]),
        speaker_id=row["speaker_id"],
        role=Role(row["role"]),
        scope=str(row["scope"]),
        sensitivity=Sensitivity(row["sensitivity"]),
        text=str(row["text"]),
        at=str(row["at"]),
        ref=str(row["ref"]) if "ref" in row.keys() else "",  # noqa: SIM118 -- sqlite3.Row
    )


class TranscriptBook:
    """`memory.transcript`: lines in, lines out (through the gate)."""

    def __init__(self, store: Store, gate: Gate, vectors: VectorBook,
                 now: Callable[[], datetime]) -> None:
        self._store = store
        self._gate = gate
        self._vectors = vectors
        self._now = now

    async def append(
        self,
        *,
        chat_id: str,
        speaker_id: str | None,
        role: Role,
        scope: str,
        text: str,
        source_update: int | None = None,
    ) -> int:
        """Store one transcript line with secret tokens masked; returns its id, nothing more.

        A line from a Telegram update names it (`source_update`): the same update again (a turn
        replayed after a crash) returns the line already stored instead of a second one."""
        turn_id, _ = await self.receive(chat_id=chat_id, speaker_id=speaker_id, role=role,
                                        scope=scope, text=text, source_update=source_update)
        return turn_id

    async def receive(
        self,
        *,
        chat_id: str,
        speaker_id: str | None,
        role: Role,
        scope: str,
        text: str,
        source_update: int | None,
        file_later: bool = False,
    ) -> tuple[int, bool]:
        """As `append`, and whether the line is new (False: its update was replayed). A
        member's line is embedded before this returns, or with `file_later` (a turn, which
        answers first) once the chats are quiet (`VectorBook.file_later`)."""
        check_scope(scope)
        masked = line_text(text)
        klass = classify(masked).value  # before the transaction: no one waits on the rules
        async with self._gate.writing() as tx:
            if source_update is not None:
                existing = await Census(tx).value(
                    "turns", "turn_id", "source_update = ?", (source_update,)
                )
                if existing is not None:
                    return int(str(existing)), False
            turn_id = await tx.lane(scope).insert("turns", {
                "chat_id": chat_id, "speaker_id": speaker_id, "role": role.value,
                "scope": scope, "sensitivity": klass, "text": masked,
                "at": self._now().isoformat(), "source_update": source_update})
        if role == Role.USER and file_later:
            # Filed once stored: inside `Memory.at_once` that is when the block commits.
            self._store.committed(lambda: self._vectors.file_later([(turn_id, scope, masked)]))
        elif role == Role.USER:  # a member's words are recallable the moment they are said
            await self._vectors.store([(turn_id, scope, masked)], LINES)
        return turn_id, True

    async def record_reply(
        self,
        *,
        chat_id: str,
        scope: str,
        text: str,
        template_version: str,
        tokens: Mapping[str, int],
        belief_ids: Sequence[int],
        delivery: Delivery | None = None,
        memories: Sequence[tuple[str, int, str, str]] = (),
    ) -> int:
        """Her reply, in one transaction: the transcript line, its turn log (with the memories
        the prompt held and what the judge made of each: `memories`), and (for a chat
        on Telegram) the outbox entry that will carry it and the inbox update it completes. A
        crash before this commits replays the turn; after it, the reply is only delivered."""
        check_scope(scope)
        masked = line_text(text)
        klass = classify(masked).value
        now = self._now().isoformat()
        async with self._gate.writing() as tx:
            reply_turn = await tx.lane(scope).insert("turns", {
                "chat_id": chat_id, "speaker_id": None, "role": Role.ASSISTANT.value,
                "scope": scope, "sensitivity": klass, "text": masked, "at": now})
            await tx.execute(
                "INSERT OR REPLACE INTO turn_log(turn_id, template_version, tokens, belief_ids,"
                " at, memories) VALUES (?, ?, ?, ?, ?, ?)",
                (reply_turn, template_version, json.dumps(dict(tokens)),
                 json.dumps(list(belief_ids)), now, json.dumps([list(m) for m in memories])),
            )
            if delivery is not None:
                await queue_reply(tx, delivery, text, now)
                await finish_update(tx, delivery.update_id, now)
        return reply_turn

    async def lines(
        self,
        ctx: AccessContext,
        *,
        chat_id: str | None = None,
        limit: int = 50,
        scope: str | None = None,
        after_turn_id: int = 0,
    ) -> list[Turn]:
        """Recent transcript lines this work may use, oldest first; `scope` narrows to one of
        the scopes the reader sees, `after_turn_id` to lines newer than that one."""
        where: list[str] = ["turn_id > ?"]
        params: list[object] = [after_turn_id]
        if chat_id is not None:
            where.append("chat_id = ?")
            params.append(chat_id)
        if scope is not None:
            where.append("scope = ?")
            params.append(scope)
        # A chat's own conversation reads the lines just said there as they were classed when
        # said; any other work reads a line whose meaning is not yet read as the most private.
        unread = (frozenset() if ctx.activity in _CONVERSATION else self._vectors.unfiled)
        async with self._gate.read(ctx, "transcript", chat_id or "") as read:
            rows = await read.select("turns", " AND ".join(where), params,
                                     order="turn_id DESC", limit=max(0, limit))
            turns = [turn_from_row(r) for r in reversed(await read.usable(rows, unread=unread))]
            read.returned([t.turn_id for t in turns], [t.scope for t in turns])
        return turns
