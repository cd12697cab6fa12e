"""Reminders: goals with a due time, the check-ins a member opted into, and what she sent.

Owns: the `reminders` and `reminder_firings` tables. A reminder's words are its goal's, kept
in `goals` and read only through the gate; a reminder row holds when (a UTC instant, and for a
recurring one the local wall time and zone it keeps), where (the chat it was asked in, and
the Telegram chat it goes to) and its state. A fired occurrence is one `reminder_firings`
row, written in the same transaction as her line in the transcript and its outbox entry: a
crash before it commits fires the occurrence again after the restart, one after it only
delivers what is in the outbox, so nothing is lost and nothing goes twice. The same row is the
trace: why she wrote, when, and the ids of what the message used.

Must not: hold what anyone said outside `goals` and the transcript, hand a reminder's words to
anyone but its own member (or, for one asked for in the household group, the group), or let
the words of one tagged as credentials out in the lane she writes first in.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Literal

from memory.classifier import classify
from memory.errors import InvalidRequest
from memory.gate import Census, Gate, Writing
from memory.goals import GoalBook, open_goal
from memory.inbox import Delivery, queue_reply
from memory.lens import may_echo
from memory.models import AccessContext, Activity, Frozen, Role, Sensitivity, check_scope
from memory.sensing import more_private
from memory.store import Row, Store, Tx
from memory.transcript import line_text

# A question about when ("When should I remind you?") waits this long for its answer.
ASK_LIFETIME = timedelta(hours=1)
# A fired one-off may be asked for once more ("again in an hour") for this long.
AGAIN_WITHIN = timedelta(hours=12)

Kind = Literal["reminder", "checkin"]
State = Literal["asking", "scheduled", "done", "cancelled"]


class Reminder(Frozen):
    """A reminder as the machinery sees it: times, ids and states, never its words."""

    reminder_id: int
    person_id: str
    scope: str
    kind: Kind
    goal_id: int | None
    chat_id: str
    telegram_chat: int | None
    due_at: str | None  # UTC ISO; the next occurrence
    zone: str
    recurrence: str | None
    wall: str | None
    exact: bool
    self_started: bool
    snoozed: bool
    state: State
    created_at: str
    updated_at: str

    @property
    def due(self) -> datetime | None:
        return None if self.due_at is None else datetime.fromisoformat(self.due_at)

    @property
    def next_at(self) -> datetime:
        """The next occurrence of a scheduled reminder (ValueError for one with none)."""
        if self.due_at is None:
            raise ValueError(f"reminder {self.reminder_id} has no time yet")
        return datetime.fromisoformat(self.due_at)


class Listed(Frozen):
    """One of a member's own reminders with its words, as `mine` reads them for that member."""

    reminder: Reminder
    text: str  # "" for a check-in
    ref: str = ""


class Firing(Frozen):
    """One occurrence she handled: the trace of a message she started."""

    reminder_id: int
    due_at: str
    person_id: str
    fired_at: str
    local_day: str
    why: str
    self_started: bool
    turn_id: int | None
    reply_id: int | None
    template_version: str
    used: dict[str, list[int]]


def _reminder(row: Row) -> Reminder:
    return Reminder(
        reminder_id=int(row["reminder_id"]), person_id=str(row["person_id"]),
        scope=str(row["scope"]), kind=row["kind"], goal_id=row["goal_id"],
        chat_id=str(row["chat_id"]), telegram_chat=row["telegram_chat"],
        due_at=row["due_at"], zone=str(row["zone"]), recurrence=row["recurrence"],
        wall=row["wall"], exact=bool(row["exact"]), self_started=bool(row["self_started"]),
        snoozed=bool(row["snoozed"]), state=row["state"], created_at=str(row["created_at"]),
        updated_at=str(row["updated_at"]),
    )


_COLUMNS = (
    "reminder_id, person_id, scope, kind, goal_id, chat_id, telegram_chat, due_at, zone,"
    " recurrence, wall, exact, self_started, snoozed, state, created_at, updated_at"
)


class ReminderBook:
    """`memory.reminders`."""

    def __init__(self, store: Store, gate: Gate, goals: GoalBook,
                 now: Callable[[], datetime]) -> None:
        self._store = store
        self._gate = gate
        self._goals = goals
        self._now = now

    # --- making and changing ----------------------------------------------------------------

    async def add(
        self,
        person_id: str,
        text: str,
        *,
        scope: str,
        chat_id: str,
        telegram_chat: int | None,
        zone: str,
        due: datetime | None,
        recurrence: str | None = None,
        wall: str | None = None,
        exact: bool = False,
        self_started: bool = False,
        source_turn_id: int | None = None,
    ) -> tuple[Reminder, bool]:
        """A reminder and its goal, in one transaction (no `due`: a question about when waits
        for its answer). Made once per line it came from: the same words from the same line
        again (a turn replayed after a crash) return the reminder already made, and False."""
        cleaned = await self._goals.check(person_id, text, scope=scope)
        sensitivity = await self._goals.classed(cleaned)
        now = self._now().isoformat()
        async with self._gate.writing() as tx:
            goal_id, _ = await open_goal(
                tx, person_id, cleaned, sensitivity, scope=scope, now=now,
                provenance="promised" if self_started else "requested",
                due=None if due is None else due.isoformat(), source_turn_id=source_turn_id,
            )
            if source_turn_id is not None:
                again = await tx.fetchone(
                    f"SELECT {_COLUMNS} FROM reminders WHERE goal_id = ? AND source_turn_id = ?",
                    (goal_id, source_turn_id),
                )
                if again is not None:
                    return _reminder(again), False
            reminder_id = await tx.execute(
                "INSERT INTO reminders(person_id, scope, kind, goal_id, chat_id, telegram_chat,"
                " due_at, zone, recurrence, wall, exact, self_started, state, source_turn_id,"
                " created_at, updated_at) VALUES (?, ?, 'reminder', ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                " ?, ?, ?, ?)",
                (person_id, scope, goal_id, chat_id, telegram_chat,
                 None if due is None else due.isoformat(), zone, recurrence, wall, int(exact),
                 int(self_started), "asking" if due is None else "scheduled", source_turn_id,
                 now, now),
            )
            if due is None:  # one question at a time in a chat: an older one lapses
                await tx.execute(
                    "UPDATE reminders SET state = 'cancelled', updated_at = ? WHERE person_id = ?"
                    " AND chat_id = ? AND state = 'asking' AND reminder_id != ?",
                    (now, person_id, chat_id, reminder_id),
                )
            return await self._one(tx, reminder_id), True

    async def pending_question(self, person_id: str, chat_id: str) -> Reminder | None:
        """The reminder she asked this member "when?" about in this chat, while it waits."""
        since = (self._now() - ASK_LIFETIME).isoformat()
        async with self._gate.writing() as tx:
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM reminders WHERE person_id = ? AND chat_id = ?"
                " AND state = 'asking' AND created_at >= ? ORDER BY reminder_id DESC LIMIT 1",
                (person_id, chat_id, since),
            )
        return None if row is None else _reminder(row)

    async def answer(self, reminder_id: int, *, due: datetime, zone: str,
                     recurrence: str | None, wall: str | None, exact: bool) -> Reminder | None:
        """Her question is answered: the reminder is scheduled (None when it no longer waits)."""
        now = self._now().isoformat()
        async with self._gate.writing() as tx:
            changed = await tx.execute(
                "UPDATE reminders SET state = 'scheduled', due_at = ?, zone = ?, recurrence = ?,"
                " wall = ?, exact = ?, updated_at = ? WHERE reminder_id = ? AND state = 'asking'",
                (due.isoformat(), zone, recurrence, wall, int(exact), now, reminder_id),
            )
            if changed != 1:
                return None
            answered = await self._one(tx, reminder_id)
            await _move_goal(tx, answered.goal_id, due.isoformat(), now)
            return answered

    async def lapse(self, reminder_id: int) -> None:
        """Her question went unanswered: the reminder is let go (its goal stays, with no time)."""
        async with self._gate.writing() as tx:
            await tx.execute(
                "UPDATE reminders SET state = 'cancelled', updated_at = ?"
                " WHERE reminder_id = ? AND state = 'asking'",
                (self._now().isoformat(), reminder_id),
            )

    async def cancel(self, person_id: str, reminder_id: int) -> bool:
        """A member cancels one of their own; its goal is dropped when nothing else keeps it."""
        now = self._now().isoformat()
        async with self._gate.writing() as tx:
            changed = await tx.execute(
                "UPDATE reminders SET state = 'cancelled', updated_at = ? WHERE reminder_id = ?"
                " AND person_id = ? AND state IN ('scheduled', 'asking')",
                (now, reminder_id, person_id),
            )
            if changed == 1:
                await _settle_goal(tx, reminder_id, "dropped", now)
        return changed == 1

    async def snooze(self, person_id: str, reminder_id: int, by: timedelta) -> Reminder | None:
        """Later, once: a scheduled reminder's next occurrence moves `by` later; a one-off that
        fired within `AGAIN_WITHIN` comes once more, `by` from now (and only once: no nagging).
        None when there is nothing of theirs to snooze."""
        now = self._now()
        async with self._gate.writing() as tx:
            row = await tx.fetchone(
                f"SELECT {_COLUMNS} FROM reminders WHERE reminder_id = ? AND person_id = ?",
                (reminder_id, person_id),
            )
            if row is None:
                return None
            reminder = _reminder(row)
            if reminder.state == "scheduled" and reminder.due is not None:
                due = max(reminder.due, now) + by
            elif (reminder.state == "done" and reminder.kind == "reminder"
                  and not reminder.snoozed and reminder.recurrence is None
                  and reminder.updated_at >= (now - AGAIN_WITHIN).isoformat()):
                due = now + by
            else:
                return None
            await tx.execute(
                "UPDATE reminders SET state = 'scheduled', due_at = ?, snoozed = 1, exact = 1,"
                " updated_at = ? WHERE reminder_id = ?",
                (due.isoformat(), now.isoformat(), reminder_id),
            )
            await _move_goal(tx, reminder.goal_id, due.isoformat(), now.isoformat())
            return await self._one(tx, reminder_id)

    async def postpone(self, reminder: Reminder, until: datetime) -> bool:
        """The occurrence `reminder` names waits until `until` (the day's cap was reached)."""
        async with self._gate.writing() as tx:
            changed = await tx.execute(
                "UPDATE reminders SET due_at = ?, updated_at = ? WHERE reminder_id = ?"
                " AND due_at = ? AND state = 'scheduled'",
                (until.isoformat(), self._now().isoformat(), reminder.reminder_id,
                 reminder.due_at),
            )
        return changed == 1

    async def set_checkin(self, person_id: str, *, scope: str, chat_id: str,
                          telegram_chat: int | None, zone: str, wall: str | None,
                          due: datetime | None) -> None:
        """A member's daily check-in at `wall` (first at `due`), or none (`wall` None)."""
        check_scope(scope)
        now = self._now().isoformat()
        async with self._gate.writing() as tx:
            await tx.execute(
                "UPDATE reminders SET state = 'cancelled', updated_at = ? WHERE person_id = ?"
                " AND kind = 'checkin' AND state = 'scheduled'",
                (now, person_id),
            )
            if wall is None or due is None:
                return
            await tx.execute(
                "INSERT INTO reminders(person_id, scope, kind, chat_id, telegram_chat, due_at,"
                " zone, recurrence, wall, exact, self_started, created_at, updated_at)"
                " VALUES (?, ?, 'checkin', ?, ?, ?, ?, 'daily', ?, 0, 1, ?, ?)",
                (person_id, scope, chat_id, telegram_chat, due.isoformat(), zone, wall, now,
                 now),
            )

    async def rezone(self, person_id: str, zone: str,
                     next_due: Callable[[Reminder], datetime]) -> int:
        """A member moved time zone: their recurring reminders and check-in keep their local
        time in the new zone (`next_due` says when each comes next); a one-off keeps its
        instant. Returns how many moved."""
        now = self._now().isoformat()
        async with self._gate.writing() as tx:
            rows = await tx.fetchall(
                f"SELECT {_COLUMNS} FROM reminders WHERE person_id = ? AND state = 'scheduled'"
                " AND recurrence IS NOT NULL",
                (person_id,),
            )
            for row in rows:
                reminder = _reminder(row).model_copy(update={"zone": zone})
                await tx.execute(
                    "UPDATE reminders SET zone = ?, due_at = ?, updated_at = ?"
                    " WHERE reminder_id = ?",
                    (zone, next_due(reminder).isoformat(), now, reminder.reminder_id),
                )
        return len(rows)

    # --- reading ----------------------------------------------------------------------------

    async def scheduled(self, *, person_id: str | None = None, chat_id: str | None = None,
                        on_telegram: bool | None = None) -> list[Reminder]:
        """Scheduled reminders and check-ins, soonest first (ids and times only)."""
        where, params = ["state = 'scheduled'"], list[object]()
        if person_id is not None:
            where.append("person_id = ?")
            params.append(person_id)
        if chat_id is not None:
            where.append("chat_id = ?")
            params.append(chat_id)
        if on_telegram is not None:
            where.append("telegram_chat IS NOT NULL" if on_telegram
                         else "telegram_chat IS NULL")
        async with self._gate.writing() as tx:
            rows = await tx.fetchall(
                f"SELECT {_COLUMNS} FROM reminders WHERE {' AND '.join(where)}"
                " ORDER BY due_at, reminder_id",
                params,
            )
        return [_reminder(r) for r in rows]

    async def mine(self, ctx: AccessContext) -> list[Listed]:
        """A member's own reminders with their words: the scheduled ones, soonest first, then
        one-offs fired lately (which may be asked for once more). A member looking at their
        own view only, or a mind acting for them (whose lens may hold some words back)."""
        if ctx.activity not in (Activity.MEMBER_INSPECT, Activity.MIND) or ctx.person_id is None:
            raise InvalidRequest("a member's reminders are listed for that member only")
        since = (self._now() - AGAIN_WITHIN).isoformat()
        async with self._gate.read(ctx, "reminders") as read:
            rows = await read.census().select(
                "reminders", _COLUMNS,
                "person_id = ? AND (state = 'scheduled' OR (state = 'done' AND kind = 'reminder'"
                " AND snoozed = 0 AND recurrence IS NULL AND updated_at >= ?))",
                (ctx.person_id, since), order="state DESC, due_at, reminder_id")
            reminders = [_reminder(r) for r in rows]
            goal_ids = [r.goal_id for r in reminders if r.goal_id is not None]
            marks = ", ".join("?" for _ in goal_ids)
            goals = await read.select(
                "goals", f"goal_id IN ({marks}) AND person_id = ?", (*goal_ids, ctx.person_id),
                columns="goal_id, scope, text, sensitivity, ref('goal', goal_id) AS ref",
            ) if goal_ids else []
            usable = {int(g["goal_id"]): g for g in await read.usable(goals)}
            listed = []
            for reminder in reminders:
                if reminder.kind == "checkin":
                    listed.append(Listed(reminder=reminder, text=""))
                elif reminder.goal_id in usable:
                    goal = usable[reminder.goal_id]
                    listed.append(Listed(reminder=reminder, text=str(goal["text"]),
                                         ref=str(goal["ref"])))
            read.returned([int(g["goal_id"]) for g in usable.values()],
                          [str(g["scope"]) for g in usable.values()])
        return listed

    async def words(self, ctx: AccessContext, reminder: Reminder) -> str | None:
        """A reminder's own words, for the message that delivers it: read for its own member
        (or the household group it was asked in) under `proactive`, receipted. Health and
        finance words come back (the member asked to hear them); words tagged credentials
        never do (None, counted as held back), nor anyone else's."""
        if reminder.goal_id is None:
            return None
        whose: tuple[str, tuple[object, ...]] = ("goal_id = ?", (reminder.goal_id,))
        if ctx.person_id is not None:
            whose = "goal_id = ? AND person_id = ?", (reminder.goal_id, ctx.person_id)
        async with self._gate.read(ctx, "reminder_words") as read:
            rows = await read.select("goals", whose[0], whose[1],
                                     columns="goal_id, scope, text, sensitivity")
            allowed = [r for r in rows
                       if may_echo(ctx, str(r["scope"]), Sensitivity(r["sensitivity"]))]
            read.suppressed += len(rows) - len(allowed)
            read.returned([int(r["goal_id"]) for r in allowed],
                          [str(r["scope"]) for r in allowed])
        return str(allowed[0]["text"]) if allowed else None

    async def started_on(self, person_id: str, local_day: str) -> int:
        """How many messages she started herself for this member on their local day."""
        async with self._gate.writing() as tx:
            return int(await tx.scalar(
                "SELECT count(*) FROM reminder_firings WHERE person_id = ? AND local_day = ?"
                " AND self_started = 1 AND turn_id IS NOT NULL",
                (person_id, local_day),
            ))

    async def firings(self, person_id: str | None = None) -> list[Firing]:
        """The trace of what she sent (ids and reasons, never words), oldest first."""
        where, params = ("1", ()) if person_id is None else ("person_id = ?", (person_id,))
        async with self._gate.writing() as tx:
            rows = await tx.fetchall(
                f"SELECT * FROM reminder_firings WHERE {where} ORDER BY fired_at, reminder_id",
                params,
            )
        return [
            Firing(reminder_id=int(r["reminder_id"]), due_at=str(r["due_at"]),
                   person_id=str(r["person_id"]), fired_at=str(r["fired_at"]),
                   local_day=str(r["local_day"]), why=str(r["why"]),
                   self_started=bool(r["self_started"]), turn_id=r["turn_id"],
                   reply_id=r["reply_id"], template_version=str(r["template_version"]),
                   used={str(k): [int(i) for i in v]
                         for k, v in json.loads(r["used"]).items()})
            for r in rows
        ]

    # --- firing -----------------------------------------------------------------------------

    async def fire(
        self,
        reminder: Reminder,
        *,
        text: str | None,
        why: str,
        local_day: str,
        next_due: datetime | None,
        deliver_to: int | None,
        template_version: str = "",
        used: Mapping[str, Sequence[int]] | None = None,
        tokens: dict[str, int] | None = None,
    ) -> int | None:
        """One occurrence, handled once, in one transaction: the trace row (its key is the
        occurrence, so a second try changes nothing), her line in the reminder's chat and,
        with `deliver_to`, its outbox entry; then the reminder moves to `next_due`, or is
        done (and its goal with it, when nothing else keeps it). `text` None passes the
        occurrence over unsent. Returns her line's id (0 when passed over), or None when the
        occurrence was already handled, cancelled or moved meanwhile."""
        now = self._now().isoformat()
        async with self._gate.writing() as tx:
            current = await tx.fetchone(
                "SELECT state, due_at FROM reminders WHERE reminder_id = ?",
                (reminder.reminder_id,),
            )
            if (current is None or current["state"] != "scheduled"
                    or current["due_at"] != reminder.due_at):
                return None
            if await tx.scalar(
                "SELECT 1 FROM reminder_firings WHERE reminder_id = ? AND due_at = ?",
                (reminder.reminder_id, reminder.due_at),
            ):
                return None
            turn_id: int | None = None
            reply_id: int | None = None
            if text is not None:
                turn_id = await _say(tx, reminder, text, now=now,
                                     template_version=template_version, used=used or {},
                                     tokens=tokens or {})
                if deliver_to is not None:
                    reply_id = await queue_reply(tx, Delivery(chat=deliver_to), text, now)
            await tx.execute(
                "INSERT INTO reminder_firings(reminder_id, due_at, person_id, fired_at,"
                " local_day, why, self_started, turn_id, reply_id, template_version, used)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (reminder.reminder_id, reminder.due_at, reminder.person_id, now, local_day, why,
                 int(reminder.self_started), turn_id, reply_id, template_version,
                 json.dumps({k: list(v) for k, v in (used or {}).items()})),
            )
            if next_due is not None:
                await tx.execute(
                    "UPDATE reminders SET due_at = ?, snoozed = 0, updated_at = ?"
                    " WHERE reminder_id = ?",
                    (next_due.isoformat(), now, reminder.reminder_id),
                )
                await _move_goal(tx, reminder.goal_id, next_due.isoformat(), now)
            else:
                await tx.execute(
                    "UPDATE reminders SET state = 'done', updated_at = ? WHERE reminder_id = ?",
                    (now, reminder.reminder_id),
                )
                await _settle_goal(tx, reminder.reminder_id, "done", now)
        return turn_id or 0

    async def _one(self, tx: Tx, reminder_id: int) -> Reminder:
        row = await tx.fetchone(f"SELECT {_COLUMNS} FROM reminders WHERE reminder_id = ?",
                                (reminder_id,))
        if row is None:
            raise InvalidRequest("no such reminder")
        return _reminder(row)


async def _say(tx: Writing, reminder: Reminder, text: str, *, now: str, template_version: str,
               used: Mapping[str, Sequence[int]], tokens: dict[str, int]) -> int:
    """Her line in the reminder's chat and scope, as a reply of hers is stored: at least as
    private as the goal it reminds of (whose class its meaning raised when it was made)."""
    masked = line_text(text)
    goal = await Census(tx).value("goals", "sensitivity", "goal_id = ?", (reminder.goal_id,))
    sensitivity = classify(masked)
    if goal is not None:
        sensitivity = more_private(sensitivity, Sensitivity(str(goal)))
    turn_id = await tx.lane(reminder.scope).insert("turns", {
        "chat_id": reminder.chat_id, "speaker_id": None, "role": Role.ASSISTANT.value,
        "scope": reminder.scope, "sensitivity": sensitivity.value, "text": masked, "at": now})
    await tx.execute(
        "INSERT OR REPLACE INTO turn_log(turn_id, template_version, tokens, belief_ids, at)"
        " VALUES (?, ?, ?, ?, ?)",
        (turn_id, template_version, json.dumps(tokens), json.dumps(list(used.get("beliefs", []))),
         now),
    )
    return turn_id


async def _settle_goal(tx: Writing, reminder_id: int, state: str, now: str) -> None:
    """The reminder's goal takes `state` unless another reminder still keeps it scheduled."""
    goal_id = await tx.scalar("SELECT goal_id FROM reminders WHERE reminder_id = ?",
                              (reminder_id,))
    for lane in await tx.lanes("goals", "goal_id = ?", (goal_id,)):
        await lane.update(
            "goals", "state = ?, updated_at = ?",
            "state = 'open' AND goal_id = ? AND NOT EXISTS (SELECT 1 FROM reminders o"
            " WHERE o.goal_id = goals.goal_id AND o.reminder_id != ?"
            " AND o.state IN ('scheduled', 'asking'))",
            (state, now, goal_id, reminder_id))


async def _move_goal(tx: Writing, goal_id: int | None, due: str, now: str) -> None:
    """The reminder's goal is due when the reminder next fires."""
    for lane in await tx.lanes("goals", "goal_id = ?", (goal_id,)):
        await lane.update("goals", "due = ?, updated_at = ?", "goal_id = ?",
                          (due, now, goal_id))
