"""The scope wall: the only code that decides what a reader may see.

A person sees `shared` and their own `private:<id>`; a group audience sees `shared` only; a
consolidation lane sees its batch's scope and what its beneficiary sees; the owner's audit sees
no content at all. Grants, query text and activity never widen this.

The wall speaks SQL: `predicate` yields a fragment every read query embeds, so what is hidden is
never fetched, ranked or counted. `is_visible` is the same rule for one scope, for code that
already holds a row (the lens re-checks it so it can never allow what the wall denied).
"""

from __future__ import annotations

from memory.models import SHARED, AccessContext, Activity, private_scope


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


def predicate(ctx: AccessContext, column: str = "scope") -> tuple[str, tuple[str, ...]]:
    """A SQL boolean over `column` that is true only for rows this reader may see.

    `column` is always a literal chosen by memory's own code, never caller input.
    """
    if not column.replace(".", "").replace("_", "").isalnum():
        raise ValueError(f"not a column name: {column!r}")
    scopes = visible_scopes(ctx)
    if not scopes:
        return "0", ()
    marks = ", ".join("?" for _ in scopes)
    return f"{column} IN ({marks})", scopes
