"""What a member (or the owner) does with their memory, once, for the chat and the command line.

Owns: the access context and purpose each action reads under, and the order of its calls
(`/me` and `hearth inspect`, `/forget` and `hearth forget`, grants, revokes, receipts, export,
the audit). `bot.commands` and `bot.cli` only parse what was asked and word what came back.
Must not: word anything for a person, or read memory any way but through its books.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from bot.grants import grant_pairs
from memory import AccessContext, Activity, Belief, Grant, Memory, Person, Receipt


def inspecting(person: Person, purpose: str) -> AccessContext:
    """A member looking at their own view."""
    return AccessContext.for_member(person.person_id, Activity.MEMBER_INSPECT, purpose)


async def what_she_knows(memory: Memory, person: Person) -> list[Belief]:
    return await memory.beliefs.inspect(
        inspecting(person, "the member asked what she knows about them"))


@dataclass(frozen=True)
class ForgetPreview:
    beliefs: list[Belief]  # what would be forgotten
    mentions: int  # when no belief holds it yet: how many things said mention it

    @property
    def empty(self) -> bool:
        return not self.beliefs and not self.mentions


async def preview_forget(memory: Memory, person: Person, text: str, *,
                         shared: bool = False) -> ForgetPreview:
    ctx = inspecting(person, "the member asked to forget")
    found = await memory.forgetting.preview(ctx, text, shared=shared)
    mentions = 0 if found else await memory.forgetting.mentions(ctx, text, shared=shared)
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
