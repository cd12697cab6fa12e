"""Reading a grant request: the lens cells an ACTIVITY CLASS pair names, with the `all` wildcard.

Owns: `grant_pairs`, shared by the command line and the chat commands. Must not: grant
anything itself (that is `Memory.grant`) or widen a wildcard over credentials: `all` covers only
the cells the policy table marks "grant", which never include credentials.
"""

from __future__ import annotations

from memory import GRANTABLE, Activity, HearthError, Sensitivity

GRANTABLE_CLASSES = (Sensitivity.HEALTH.value, Sensitivity.FINANCE.value)
ACTIVITY_NAMES = tuple(a.value for a in Activity)


class GrantRequestError(HearthError):
    """An ACTIVITY CLASS pair that names nothing grantable; the message is one readable line."""


def sensitivity_named(value: str) -> Sensitivity:
    try:
        return Sensitivity(value.lower())
    except ValueError:
        raise GrantRequestError(
            f"unknown class {value!r}: choose one of {', '.join(GRANTABLE_CLASSES)} or all"
        ) from None


def activity_named(value: str) -> Activity:
    try:
        return Activity(value.lower())
    except ValueError:
        raise GrantRequestError(
            f"unknown activity {value!r}: choose one of {', '.join(ACTIVITY_NAMES)} or all"
        ) from None


def grant_pairs(activity: str, sensitivity: str) -> list[tuple[Activity, Sensitivity]]:
    """The lens cells a grant names; `all` widens over grantable cells only, so no wildcard
    ever covers credentials. A single named cell is returned as is, for `Memory.grant` to
    accept or refuse with its own reason."""
    wild_activity = activity.lower() == "all"
    wild_class = sensitivity.lower() == "all"
    if not wild_activity and not wild_class:
        return [(activity_named(activity), sensitivity_named(sensitivity))]
    # A mind's grants name the mind (`hearth minds add`): no wildcard reaches them.
    activities = ([a for a in Activity if a != Activity.MIND] if wild_activity
                  else [activity_named(activity)])
    classes = list(Sensitivity) if wild_class else [sensitivity_named(sensitivity)]
    pairs = [(a, s) for a in activities for s in classes if (a, s) in GRANTABLE]
    if not pairs:
        raise GrantRequestError(f"{activity} {sensitivity} names nothing that can be granted")
    return sorted(pairs)
