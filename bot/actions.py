"""What a member (or the owner) does with their memory, once, for the chat and the command line.

Owns: the access context and purpose each action reads under, and the order of its calls
(`/me` and `hearth inspect`, `/forget` and `hearth forget`, grants, revokes, receipts, export,
the audit, and reminders with the settings they depend on: time zone, quiet hours,
check-ins). `bot.commands` and `bot.cli` only parse what was asked and word what came back.
Must not: word anything for a person, or read memory any way but through its books.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from bot.grants import grant_pairs
from memory import (
    AccessContext,
    Activity,
    Belief,
    Grant,
    Held,
    Listed,
    Memory,
    Person,
    Quoted,
    Recalled,
    Receipt,
    Reminder,
    dm_chat,
    private_scope,
)
from soul.reminders import in_quiet
from soul.when import next_occurrence, zone_of


def inspecting(person: Person, purpose: str) -> AccessContext:
    """A member looking at their own view."""
    return AccessContext.for_member(person.person_id, Activity.MEMBER_INSPECT, purpose)


async def what_she_knows(memory: Memory, person: Person) -> list[Belief]:
    return await memory.beliefs.inspect(
        inspecting(person, "the member asked what she knows about them"))


async def why(memory: Memory, person: Person, *, chat_id: str,
              group: bool) -> list[Recalled | Quoted]:
    """The memories her last reply in this chat was given, and why: in the member's own chat
    their view (their own and shared memories); in the household group, the shared ones."""
    purpose = "the member asked why she answered as she did"
    ctx = (AccessContext.for_group(Activity.GROUP_CONVERSATION, purpose,
                                   actor=person.person_id) if group
           else inspecting(person, purpose))
    return await memory.recall.why(ctx, chat_id)


async def history(memory: Memory, person: Person, thing: str, *, group: bool) -> list[Held]:
    """What was true when about `thing`, oldest first: in the member's own chat their view
    (their own and shared memories); in the household group, the shared ones the group's
    conversation may use."""
    purpose = "the member asked what was true when"
    ctx = (AccessContext.for_group(Activity.GROUP_CONVERSATION, purpose,
                                   actor=person.person_id) if group
           else inspecting(person, purpose))
    return await memory.history.history(ctx, thing)


async def beliefs_as_of(memory: Memory, person: Person, when: datetime) -> list[Held]:
    """The beliefs the member may see that held at `when`, with their validity."""
    return await memory.history.as_of(
        inspecting(person, "the member asked what she believed on a day"), when)


@dataclass(frozen=True)
class ForgetPreview:
    beliefs: list[Belief]  # what would be forgotten
    mentions: int  # how many things said (lines, summaries, goals) repeat the words: scrubbed too

    @property
    def empty(self) -> bool:
        return not self.beliefs and not self.mentions


async def preview_forget(memory: Memory, person: Person, text: str, *,
                         shared: bool = False) -> ForgetPreview:
    ctx = inspecting(person, "the member asked to forget")
    found = await memory.forgetting.preview(ctx, text, shared=shared)
    mentions = await memory.forgetting.mentions(ctx, text, shared=shared)
    return ForgetPreview(found, mentions)


async def forget(memory: Memory, person: Person, text: str, *, shared: bool = False) -> int:
    return await memory.forgetting.forget(inspecting(person, "the member asked to forget"),
                                          text, shared=shared)


async def grant(
    memory: Memory,
    person: Person,
    activity: str,
    sensitivity: str,
    *,
    days: float | None = None,
    shared: bool = False,
    beneficiary_id: str | None = None,
    note: str = "",
) -> AsyncIterator[Grant]:
    """One grant per lens cell the words name (`all` never covers credentials), each handed
    back as it is made: a refusal part-way leaves the ones made before it told."""
    for a, s in grant_pairs(activity, sensitivity):
        yield await memory.grants.give(person.person_id, a, s, days=days, shared=shared,
                                       beneficiary_id=beneficiary_id, note=note)


async def revoke(memory: Memory, person: Person, activity: str, sensitivity: str, *,
                 shared: bool = False) -> int:
    count = 0
    for a, s in grant_pairs(activity, sensitivity):
        count += await memory.grants.revoke(person.person_id, a, s, shared=shared)
    return count


async def my_grants(memory: Memory, person: Person) -> list[Grant]:
    """The grants this member gave, with their own notes."""
    return await memory.grants.list(person.person_id, viewer_id=person.person_id)


async def who_read_mine(memory: Memory, person: Person) -> list[Receipt]:
    return await memory.ledger.about(
        inspecting(person, "a member reviews who read their facts"))


async def audit(memory: Memory, owner: Person, *, limit: int | None = None) -> list[Receipt]:
    ctx = AccessContext.for_audit(owner.person_id, "the owner reviews the ledger")
    return await memory.ledger.audit(ctx, limit=limit)


async def export(memory: Memory, person: Person) -> dict[str, Any]:
    return await memory.export.document(inspecting(person, "the member exported their data"))


# --- reminders and the settings of the lane she writes first in --------------------------------

SNOOZE = timedelta(hours=1)


async def my_reminders(memory: Memory, person: Person) -> list[Listed]:
    """The member's own reminders (and check-in), with their words."""
    return await memory.reminders.mine(inspecting(person, "the member listed their reminders"))


async def cancel_reminder(memory: Memory, person: Person, reminder_id: int) -> bool:
    return await memory.reminders.cancel(person.person_id, reminder_id)


async def snooze_reminder(memory: Memory, person: Person, reminder_id: int) -> Reminder | None:
    return await memory.reminders.snooze(person.person_id, reminder_id, SNOOZE)


async def zone_of_member(memory: Memory, person: Person, household_zone: str) -> tuple[str, bool]:
    """The member's zone, and whether it is their own (not the household's)."""
    own = (await memory.preferences.get(person.person_id)).timezone
    return (own or household_zone), own is not None


async def set_timezone(memory: Memory, person: Person, zone: str, now: datetime) -> int:
    """The member's own zone (ValueError for an unknown name); their repeating reminders and
    check-in keep their local time in it. Returns how many of those moved."""
    zone_of(zone)
    await memory.preferences.set_timezone(person.person_id, zone)

    def next_due(reminder: Reminder) -> datetime:
        return next_occurrence(str(reminder.recurrence), str(reminder.wall), now, zone_of(zone))

    return await memory.reminders.rezone(person.person_id, zone, next_due)


async def set_quiet(memory: Memory, person: Person, quiet: tuple[int, int] | None) -> None:
    await memory.preferences.set_quiet(person.person_id, quiet)


async def quiet_of(memory: Memory, person: Person) -> tuple[int, int] | None:
    return (await memory.preferences.get(person.person_id)).quiet


async def checkin_of(memory: Memory, person: Person) -> str | None:
    """The local time of the member's daily check-in, or None when they have none."""
    found = await memory.reminders.scheduled(person_id=person.person_id)
    return next((r.wall for r in found if r.kind == "checkin"), None)


async def set_checkin(memory: Memory, person: Person, wall: str | None, *,
                      household_zone: str, now: datetime) -> bool:
    """A daily check-in in the member's DM at `wall` ("HH:MM", their time), or none. Returns
    whether that time falls in their quiet hours (then it is skipped until one changes)."""
    zone, _ = await zone_of_member(memory, person, household_zone)
    due = None if wall is None else next_occurrence("daily", wall, now, zone_of(zone))
    await memory.reminders.set_checkin(
        person.person_id, scope=private_scope(person.person_id), chat_id=dm_chat(person),
        telegram_chat=person.telegram_id, zone=zone, wall=wall, due=due,
    )
    if due is None:
        return False
    return in_quiet(due.astimezone(zone_of(zone)), await quiet_of(memory, person))
