"""The purpose lens: the only code that decides what a piece of work may use.

One pure function, `may_use`, implements DESIGN §4's table exactly. It is default-deny and
monotonic toward denial: nothing about the query text or the activity widens it; only a standing,
unexpired, unrevoked grant from the fact's owner opens a "grant" cell, and no grant opens
credentials. It first asks the wall, so it can never allow what the wall denied.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from memory.models import MIND_ACTOR, AccessContext, Activity, Grant, Sensitivity
from memory.wall import is_visible


class Rule(enum.Enum):
    ALLOW = "yes"
    GRANT = "grant"
    NEVER = "never"
    SAME_SCOPE = "yes (same scope only)"


_O, _H, _F, _C = (
    Sensitivity.ORDINARY,
    Sensitivity.HEALTH,
    Sensitivity.FINANCE,
    Sensitivity.CREDENTIALS,
)
_ALL_YES = {_O: Rule.ALLOW, _H: Rule.ALLOW, _F: Rule.ALLOW, _C: Rule.ALLOW}
_BY_GRANT = {_O: Rule.ALLOW, _H: Rule.GRANT, _F: Rule.GRANT, _C: Rule.NEVER}

POLICY: dict[Activity, dict[Sensitivity, Rule]] = {
    Activity.DM_CONVERSATION: dict(_ALL_YES),
    Activity.GROUP_CONVERSATION: dict(_BY_GRANT),
    Activity.MEMBER_INSPECT: dict(_ALL_YES),
    Activity.CONSOLIDATION: {_O: Rule.ALLOW, _H: Rule.ALLOW, _F: Rule.ALLOW, _C: Rule.SAME_SCOPE},
    Activity.COMPACTION: dict(_BY_GRANT),
    Activity.DREAM: dict(_BY_GRANT),
    Activity.PROACTIVE: dict(_BY_GRANT),
    # The owner's audit sees metadata (counts, ids, digests) through the ledger, never content.
    Activity.OWNER_AUDIT: {_O: Rule.NEVER, _H: Rule.NEVER, _F: Rule.NEVER, _C: Rule.NEVER},
    # Another agent acting for a member: what the member sees, less what needs the member's
    # word (a grant naming that mind), and never credentials.
    Activity.MIND: dict(_BY_GRANT),
}

GRANTABLE: frozenset[tuple[Activity, Sensitivity]] = frozenset(
    (activity, sensitivity)
    for activity, row in POLICY.items()
    for sensitivity, rule in row.items()
    if rule is Rule.GRANT
)


def may_use(
    ctx: AccessContext,
    scope: str,
    sensitivity: Sensitivity,
    grants: Iterable[Grant],
    now: str,
) -> bool:
    """Whether this work may use a fact of `scope` and `sensitivity`.

    `grants` may hold any grants at all; only those that match the fact's scope, this activity
    and class, this reader, and are active at `now` count.
    """
    if not is_visible(ctx, scope):
        return False
    rule = POLICY[ctx.activity][sensitivity]
    if rule is Rule.ALLOW:
        return True
    if rule is Rule.SAME_SCOPE:
        return ctx.batch_scope == scope
    if rule is Rule.GRANT:
        return any(_opens(grant, ctx, scope, sensitivity, now) for grant in grants)
    return False


def _opens(
    grant: Grant, ctx: AccessContext, scope: str, sensitivity: Sensitivity, now: str
) -> bool:
    return (
        grant.scope == scope
        and grant.activity == ctx.activity
        and grant.sensitivity == sensitivity
        and (grant.beneficiary_id is None or grant.beneficiary_id == ctx.person_id)
        and _names_the_reader(grant, ctx)
        and (grant.activity, grant.sensitivity) in GRANTABLE
        and grant.is_active(now)
    )


def _names_the_reader(grant: Grant, ctx: AccessContext) -> bool:
    """A mind's read opens only by a grant naming that very mind; a grant naming a mind opens
    nothing else."""
    if ctx.activity == Activity.MIND:
        return grant.mind is not None and ctx.actor == f"{MIND_ACTOR}{grant.mind}"
    return grant.mind is None


def may_echo(ctx: AccessContext, scope: str, sensitivity: Sensitivity) -> bool:
    """Whether the lane she writes first in may give a reminder's own words back to where they
    were asked for. The member set them for themselves ("take my insulin" is what they asked
    to hear), so the table's grant cells do not hold them back; the wall still does, and
    credentials stay out of background work, as everywhere. Anything else a proactive
    message draws on passes `may_use`."""
    return (
        ctx.activity == Activity.PROACTIVE
        and is_visible(ctx, scope)
        and sensitivity != Sensitivity.CREDENTIALS
    )

