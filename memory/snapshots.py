"""Snapshots: a small picture of each chat, made on the tick and read by a turn in one read.

A chat's snapshot says who has been around in it lately (members who spoke there in the last
day), what was left open (a member's question no member has followed up) and what is due soon
(the audience's reminders in the next two days). It is made from the chat's audience's own view:
a member's DM from that member's lane (their private rows and the shared ones), the household
group from the group's lane (shared rows only), so it never holds what the chat's turns could not
read. It is stored in the chat's scope, with each item's own class, and a turn reads it through
the gate with its own wall and lens: nothing is recomputed while a member waits.

Owns: the `snapshots` table and the rules that pick its items (from stored rows and times, never
from words). Must not: mix a private row into a shared snapshot, keep a forgotten word (a forget
drops the scope's snapshots and the next tick makes them again from what is left; a member
removed takes theirs), or be built on a turn.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Literal

from memory.gate import Census, Gate, Read
from memory.lens import may_use
from memory.models import (
    REDACTED,
    SHARED,
    AccessContext,
    Activity,
    Frozen,
    Sensitivity,
    scope_owner,
)
from memory.store import Row, Store

AROUND_FOR = timedelta(days=1)  # who spoke in the chat this recently is "around"
OPEN_FOR = timedelta(days=2)  # a question older than this is no longer an open thread
DUE_WITHIN = timedelta(days=2)  # reminders due this soon are shown
REFRESH_AFTER = timedelta(hours=1)  # a quiet chat's snapshot is made again this often
LINES_READ = 100  # the chat's newest member lines a snapshot is made from
QUESTIONS = 3  # open questions kept, newest first
REMINDERS = 3  # reminders kept, soonest first
ITEM_CHARS = 200  # an item's words are cut here; the prompt's budget cuts further
PURPOSE = "a chat's snapshot: who has been around, what is open, what is due soon"


class SnapshotItem(Frozen):
    """One open question (`row_id` its line) or one reminder due soon (`row_id` its goal)."""

    kind: Literal["question", "reminder"]
    row_id: int
    person_id: str | None  # who asked it; whose reminder it is
    at: str  # when it was asked; when the reminder is due (UTC ISO)
    text: str
    scope: str
    sensitivity: Sensitivity


class Snapshot(Frozen):
    """A chat's snapshot as the reader may use it (items its lens holds back are left out)."""

    chat_id: str
    scope: str
    made_at: str
    around: tuple[str, ...]  # person ids, in the order they last spoke, latest first
    questions: tuple[SnapshotItem, ...]
    reminders: tuple[SnapshotItem, ...]


def open_questions(lines: Sequence[Row], *, shared: bool, since: str) -> list[Row]:
    """The member lines (oldest first) that are open questions, newest first: a line ending in
    a question mark, said since `since`, that no later member line followed up. In the group a
    later line by the asker alone does not close it (a nudge is not an answer); in a DM, where
    one member speaks, any later line of theirs does (they moved on)."""
    found: list[Row] = []
    for i, line in enumerate(lines):
        text = str(line["text"]).rstrip()
        if text == REDACTED or not text.endswith("?") or str(line["at"]) < since:
            continue
        asker = line["speaker_id"]
        later = lines[i + 1:]
        if any(not shared or other["speaker_id"] != asker for other in later):
            continue
        found.append(line)
    return found[::-1]


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= ITEM_CHARS else flat[: ITEM_CHARS - 1].rstrip() + "…"


class SnapshotBook:
    """`memory.snapshots`."""

    def __init__(self, store: Store, gate: Gate) -> None:
        self._store = store
        self._gate = gate

    async def refresh(self, now: datetime, *, every: bool = False) -> int:
        """Make the snapshot of each chat a member spoke in within `OPEN_FOR`, when it has new
        lines or is older than `REFRESH_AFTER` (`every`: all of them), and drop the snapshots of
        chats quiet for longer. Returns how many were made."""
        active = (now - OPEN_FOR).isoformat()
        stale = (now - REFRESH_AFTER).isoformat()
        async with self._gate.writing() as tx:
            census = Census(tx)
            # Lines are stored in time order: the window's lines are those after the newest
            # one older than it, found walking back from the newest line, so a tick reads the
            # last two days of lines, not the whole transcript.
            before = await census.select("turns", "turn_id", "at < ?", (active,),
                                         order="turn_id DESC", limit=1)
            rows = await census.select(
                "turns", "chat_id, scope, max(turn_id) AS newest,"
                " max(CASE WHEN role = 'user' THEN at END) AS spoke",
                "turn_id > ?", (int(before[0]["turn_id"]) if before else 0,),
                group="chat_id, scope", order="min(turn_id)",
            )
            made = {(str(r["chat_id"]), str(r["scope"])): r for r in await census.select(
                "snapshots", "chat_id, scope, through_turn_id, made_at")}
            due: list[tuple[str, str, int]] = []
            for row in rows:
                key = (str(row["chat_id"]), str(row["scope"]))
                if row["spoke"] is None or str(row["spoke"]) < active:
                    continue
                old = made.pop(key, None)
                if (every or old is None or old["through_turn_id"] != row["newest"]
                        or str(old["made_at"]) < stale):
                    due.append((*key, int(row["newest"])))
            for chat_id, scope in made:  # a quiet chat's picture would mislead: it goes
                await tx.lane(scope).delete("snapshots", "chat_id = ?", (chat_id,))
        for chat_id, scope, newest in due:
            await self._make(chat_id, scope, newest, now)
        return len(due)

    async def _make(self, chat_id: str, scope: str, through: int, now: datetime) -> None:
        """One chat's snapshot, read and written in one transaction by the scope's own lane."""
        ctx = AccessContext.for_scope(scope, Activity.COMPACTION, PURPOSE)
        owner = scope_owner(scope)
        async with self._gate.read(ctx, "snapshot", chat_id) as read:
            lines = (await read.select(
                "turns", "chat_id = ? AND role = 'user'", (chat_id,),
                columns="turn_id, speaker_id, scope, sensitivity, text, at",
                order="turn_id DESC", limit=LINES_READ))[::-1]
            recent = (now - AROUND_FOR).isoformat()
            around = list(dict.fromkeys(
                str(line["speaker_id"]) for line in lines[::-1]
                if line["speaker_id"] is not None and str(line["at"]) >= recent))
            asked = await read.usable(open_questions(
                lines, shared=scope == SHARED, since=(now - OPEN_FOR).isoformat()))
            questions = [SnapshotItem(
                kind="question", row_id=int(r["turn_id"]), person_id=r["speaker_id"],
                at=str(r["at"]), text=_clip(str(r["text"])), scope=str(r["scope"]),
                sensitivity=Sensitivity(r["sensitivity"])) for r in asked[:QUESTIONS]]
            reminders = await self._reminders(read, owner, now)
            read.returned([q.row_id for q in questions], [q.scope for q in questions])
            read.returned([r.row_id for r in reminders], [r.scope for r in reminders],
                          method="snapshot_reminders")
            body = json.dumps({
                "around": around,
                "questions": [q.model_dump(mode="json") for q in questions],
                "reminders": [r.model_dump(mode="json") for r in reminders],
            }, sort_keys=True)
            await read.lane(scope).insert(
                "snapshots", {"scope": scope, "chat_id": chat_id, "body": body,
                              "through_turn_id": through, "made_at": now.isoformat()},
                upsert="ON CONFLICT(scope, chat_id) DO UPDATE SET body = excluded.body,"
                       " through_turn_id = excluded.through_turn_id, made_at = excluded.made_at")

    async def _reminders(self, read: Read, owner: str | None,
                         now: datetime) -> list[SnapshotItem]:
        """Reminders due within `DUE_WITHIN`, soonest first: a member's own in their DM; in
        the group, those the group may read (its goals' wall keeps everyone's private ones
        out)."""
        where = ("state = 'scheduled' AND kind = 'reminder' AND goal_id IS NOT NULL"
                 " AND due_at >= ? AND due_at < ?")
        params: list[object] = [now.isoformat(), (now + DUE_WITHIN).isoformat()]
        if owner is not None:
            where += " AND person_id = ?"
            params.append(owner)
        scheduled = await read.census().select(
            "reminders", "goal_id, due_at", where, params, order="due_at, reminder_id",
            limit=REMINDERS * 4)
        when = {int(r["goal_id"]): str(r["due_at"]) for r in scheduled[::-1]}
        if not when:
            return []
        marks = ", ".join("?" for _ in when)
        goals = await read.usable(await read.select(
            "goals", f"goal_id IN ({marks}) AND state = 'open'", list(when),
            columns="goal_id, person_id, scope, text, sensitivity"))
        items = [SnapshotItem(
            kind="reminder", row_id=int(g["goal_id"]), person_id=str(g["person_id"]),
            at=when[int(g["goal_id"])], text=_clip(str(g["text"])), scope=str(g["scope"]),
            sensitivity=Sensitivity(g["sensitivity"])) for g in goals]
        return sorted(items, key=lambda item: (item.at, item.row_id))[:REMINDERS]

    async def get(self, ctx: AccessContext, chat_id: str) -> Snapshot | None:
        """The chat's snapshot, if its scope may be seen here, with the items this work may
        use (the rest counted as held back). One small read: nothing is recomputed."""
        async with self._gate.read(ctx, "snapshot", chat_id) as read:
            rows = await read.select("snapshots", "chat_id = ?", (chat_id,),
                                     columns="snapshot_id, scope, body, made_at", order="scope")
            if not rows:
                return None
            row = rows[-1]  # a private snapshot is the fuller one where both exist
            body = json.loads(str(row["body"]))
            items = [SnapshotItem.model_validate(item)
                     for item in (*body["questions"], *body["reminders"])]
            grants = (await read.grants()
                      if any(i.sensitivity is not Sensitivity.ORDINARY for i in items) else [])
            usable = [i for i in items
                      if may_use(read.ctx, i.scope, i.sensitivity, grants, read.now)]
            read.suppressed += len(items) - len(usable)
            read.returned([int(row["snapshot_id"])], [str(row["scope"])])
        return Snapshot(
            chat_id=chat_id, scope=str(row["scope"]), made_at=str(row["made_at"]),
            around=tuple(body["around"]),
            questions=tuple(i for i in usable if i.kind == "question"),
            reminders=tuple(i for i in usable if i.kind == "reminder"),
        )
