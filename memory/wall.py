"""The scope wall: the only code that decides what a reader may see.

A person sees `shared` and their own `private:<id>`; a group audience sees `shared` only; a
consolidation lane sees its batch's scope and what its beneficiary sees; the owner's audit sees
no content at all. Grants, query text and activity never widen this.

The wall speaks SQL: `predicate` yields a fragment every read query embeds, so what is hidden is
never fetched, ranked or counted. `is_visible` is the same rule for one scope, for code that
already holds a row (the lens re-checks it so it can never allow what the wall denied).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from memory.models import MIND_ACTOR, SHARED, AccessContext, Activity, private_scope


@dataclass(frozen=True)
class Predicate:
    """The wall's rule as SQL: `sql` is a boolean true only for rows the reader may see, and
    `params` are its placeholders' values, in order."""

    sql: str
    params: tuple[str, ...]


def visible_scopes(ctx: AccessContext) -> tuple[str, ...]:
    """Every scope this reader may see, in a fixed order. Empty means nothing."""
    if ctx.activity == Activity.OWNER_AUDIT:
        return ()
    if ctx.audience == "group":
        return (SHARED,)
    if ctx.person_id is None:  # AccessContext's validator forbids this; deny all the same
        return ()
    return (SHARED, private_scope(ctx.person_id))


def is_visible(ctx: AccessContext, scope: str) -> bool:
    return scope in visible_scopes(ctx)


def predicate(ctx: AccessContext, column: str = "scope") -> Predicate:
    """The rule over a scope `column`: true only for rows this reader may see.

    `column` is always a literal chosen by memory's own code, never caller input.
    """
    _check_column(column)
    scopes = visible_scopes(ctx)
    if not scopes:
        return Predicate("0", ())
    marks = ", ".join("?" for _ in scopes)
    return Predicate(f"{column} IN ({marks})", scopes)


def ledger_predicate(ctx: AccessContext) -> Predicate:
    """Which receipts a reader may list. The owner's audit lists the whole ledger (metadata:
    who read, when, how many; never content). Any other reader lists the reads it made itself,
    and a member looking at their own view also the reads that used their private facts and
    the reads of the minds acting for them; nothing about anyone else's."""
    if ctx.activity == Activity.OWNER_AUDIT:
        return Predicate("1", ())
    if ctx.activity == Activity.MEMBER_INSPECT and ctx.person_id is not None:
        mine = json.dumps(private_scope(ctx.person_id))
        # The reads of the minds acting for them are theirs to see too, whatever they used.
        minds = f"SELECT '{MIND_ACTOR}' || name FROM minds WHERE person_id = ?"
        return Predicate(f"(actor = ? OR instr(scopes, ?) > 0 OR actor IN ({minds}))",
                         (ctx.actor, mine, ctx.person_id))
    return Predicate("actor = ?", (ctx.actor,))


def _check_column(column: str) -> None:
    if not column.replace(".", "").replace("_", "").isalnum():
        raise ValueError(f"not a column name: {column!r}")
