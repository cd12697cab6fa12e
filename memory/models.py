"""The vocabulary of memory: frozen records and the enums the gate speaks.

Owns: Scope helpers, Sensitivity, Activity, Provenance, Kind, AccessContext and the read-side
records the facade returns. Must not: touch the database or decide visibility (that is
`memory.wall`) or purpose (that is `memory.lens`).
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from memory.errors import InvalidRequest

SHARED = "shared"
_PRIVATE_PREFIX = "private:"


def private_scope(person_id: str) -> str:
    """The scope of one member's private life."""
    if not person_id or ":" in person_id:
        raise ValueError("a private scope needs a plain person id")
    return f"{_PRIVATE_PREFIX}{person_id}"


def chat_scope(*, group: bool, member_id: str) -> str:
    """The scope of a line in a chat: a member's DM is theirs, the household group is shared.

    `member_id` is the member whose DM it is (for her replies too), or the group's speaker.
    """
    return SHARED if group else private_scope(member_id)


def scope_owner(scope: str) -> str | None:
    """The person a private scope belongs to; None for the shared scope."""
    if scope == SHARED:
        return None
    if scope.startswith(_PRIVATE_PREFIX) and len(scope) > len(_PRIVATE_PREFIX):
        return scope[len(_PRIVATE_PREFIX) :]
    raise ValueError(f"not a scope: {scope!r}")


def is_scope(value: str) -> bool:
    try:
        scope_owner(value)
    except ValueError:
        return False
    return True


# What a forgotten line (or summary, or persona edit) holds instead of its words.
REDACTED = "[forgotten]"

class Sensitivity(enum.StrEnum):
    ORDINARY = "ordinary"
    HEALTH = "health"
    FINANCE = "finance"
    CREDENTIALS = "credentials"


class Activity(enum.StrEnum):
    DM_CONVERSATION = "dm_conversation"
    GROUP_CONVERSATION = "group_conversation"
    MEMBER_INSPECT = "member_inspect"
    CONSOLIDATION = "consolidation"
    COMPACTION = "compaction"
    DREAM = "dream"
    PROACTIVE = "proactive"
    OWNER_AUDIT = "owner_audit"
    MIND = "mind"  # another agent with a credential, acting for one member (`memory.minds`)


class Provenance(enum.StrEnum):
    TOLD = "told"
    OBSERVED = "observed"
    CONSOLIDATED = "consolidated"
    EXTRACTED = "extracted"
    INFERRED = "inferred"
    RELAYED = "relayed"  # written by a mind: second-hand, quarantined until corroborated


RELIABILITY: dict[Provenance, float] = {
    Provenance.TOLD: 0.95,
    Provenance.OBSERVED: 0.90,
    Provenance.CONSOLIDATED: 0.80,
    Provenance.EXTRACTED: 0.75,
    Provenance.INFERRED: 0.60,
    Provenance.RELAYED: 0.60,
}

# Provenances a tombstone refuses: background work's, and what a mind relays (a member's
# forget is not undone by another agent saying it again).
BACKGROUND_PROVENANCES = frozenset(
    {Provenance.CONSOLIDATED, Provenance.EXTRACTED, Provenance.INFERRED, Provenance.RELAYED}
)


class Kind(enum.StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    COMMITMENT = "commitment"
    GOAL = "goal"
    PERSON = "person"


class Role(enum.StrEnum):
    USER = "user"
    ASSISTANT = "assistant"


Audience = Literal["person", "group"]

# Which audiences each activity may be read for. A group hears only what the household shares;
# background lanes act for one person (or, for a group's own summary, for the group).
_AUDIENCES: dict[Activity, frozenset[str]] = {
    Activity.DM_CONVERSATION: frozenset({"person"}),
    Activity.MEMBER_INSPECT: frozenset({"person"}),
    Activity.GROUP_CONVERSATION: frozenset({"group"}),
    Activity.CONSOLIDATION: frozenset({"person", "group"}),
    Activity.COMPACTION: frozenset({"person", "group"}),
    Activity.DREAM: frozenset({"person", "group"}),
    Activity.PROACTIVE: frozenset({"person", "group"}),
    Activity.OWNER_AUDIT: frozenset({"person"}),
    Activity.MIND: frozenset({"person"}),
}

MIND_ACTOR = "mind:"  # a mind's reads are receipted as "mind:<its name>"


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AccessContext(Frozen):
    """Who a read serves, for which activity, and why. Every facade read takes one.

    There is no default activity and no empty purpose, so every call site names what the read
    is for and every receipt carries it. `person_id` is the member talking, or the member a
    background lane acts for; a group audience has none. `batch_scope` narrows a consolidation
    lane to the one scope its batch came from.
    """

    activity: Activity
    purpose: str
    audience: Audience
    person_id: str | None = None
    actor: str
    batch_scope: str | None = None

    @field_validator("purpose")
    @classmethod
    def _purpose_is_not_empty(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("a read needs a non-empty purpose")
        return value

    @model_validator(mode="after")
    def _shape_fits_activity(self) -> AccessContext:
        if self.audience not in _AUDIENCES[self.activity]:
            raise ValueError(f"{self.activity} cannot be read for a {self.audience} audience")
        if self.audience == "person" and not self.person_id:
            raise ValueError("a person audience needs a person_id")
        if self.audience == "group" and self.person_id is not None:
            raise ValueError("a group audience has no person_id")
        if self.activity == Activity.CONSOLIDATION:
            if self.batch_scope is None:
                raise ValueError("consolidation reads need the batch's scope")
            expected = SHARED if self.audience == "group" else private_scope(str(self.person_id))
            if self.batch_scope != expected:
                raise ValueError("a consolidation lane reads only its own batch's scope")
        elif self.batch_scope is not None:
            raise ValueError("only consolidation reads carry a batch scope")
        if (self.activity == Activity.MIND) != self.actor.startswith(MIND_ACTOR):
            raise ValueError("a mind's read is made by that mind, and only a mind's is")
        return self

    @classmethod
    def for_member(cls, person_id: str, activity: Activity, purpose: str) -> AccessContext:
        """A member talking or looking at their own view, or a lane acting for that member."""
        return cls(
            activity=activity,
            purpose=purpose,
            audience="person",
            person_id=person_id,
            # A lane is named for whom it works, so one member's lane never shares a
            # repetition window (or a receipt actor) with another's.
            actor=person_id if activity in _MEMBER_DRIVEN else f"hearth:{person_id}",
        )

    @classmethod
    def for_group(
        cls, activity: Activity, purpose: str, actor: str = "hearth:group"
    ) -> AccessContext:
        """The household group as an audience: it sees the shared scope only."""
        return cls(activity=activity, purpose=purpose, audience="group", actor=actor)

    @classmethod
    def for_scope(cls, scope: str, activity: Activity, purpose: str) -> AccessContext:
        """A background lane working on one scope: its owner's lane for a private scope, the
        group's for the shared one (so it sees that scope and nothing private of anyone
        else's)."""
        owner = scope_owner(scope)
        if owner is None:
            return cls.for_group(activity, purpose)
        return cls.for_member(owner, activity, purpose)

    @classmethod
    def for_batch(cls, scope: str, purpose: str) -> AccessContext:
        """A consolidation lane over one isolated batch of one scope."""
        owner = scope_owner(scope)
        return cls(
            activity=Activity.CONSOLIDATION,
            purpose=purpose,
            audience="group" if owner is None else "person",
            person_id=owner,
            actor=f"hearth:{owner or 'group'}",
            batch_scope=scope,
        )

    @classmethod
    def for_mind(cls, person_id: str, mind: str, purpose: str) -> AccessContext:
        """Another agent acting for one member: the member's view (the wall), its own row of
        the lens, receipted under its own name."""
        if not mind or ":" in mind:
            raise ValueError("a mind needs a plain name")
        return cls(activity=Activity.MIND, purpose=purpose, audience="person",
                   person_id=person_id, actor=f"{MIND_ACTOR}{mind}")

    @classmethod
    def for_audit(cls, owner_id: str, purpose: str) -> AccessContext:
        """The owner reviewing the ledger: metadata only, never content."""
        return cls(
            activity=Activity.OWNER_AUDIT,
            purpose=purpose,
            audience="person",
            person_id=owner_id,
            actor=owner_id,
        )


_MEMBER_DRIVEN = frozenset({Activity.DM_CONVERSATION, Activity.MEMBER_INSPECT})


class Person(Frozen):
    person_id: str
    name: str
    telegram_id: int | None
    is_owner: bool
    created_at: str


class BeliefStatus(enum.StrEnum):
    ACTIVE = "active"
    QUARANTINED = "quarantined"
    CONTRADICTED = "contradicted"
    SUPERSEDED = "superseded"
    STALE = "stale"


class Belief(Frozen):
    """A belief as a reader may see it: status is computed for this reader at read time."""

    belief_id: int  # memory's own key; a member is shown `ref`, never this
    proposition: str
    scope: str
    kind: Kind
    subject_id: str | None
    sensitivity: Sensitivity
    confidence: float
    status: BeliefStatus
    evidence_count: int
    valid_from: str | None
    valid_to: str | None
    created_at: str
    updated_at: str
    ref: str = ""  # the opaque name a member sees (`memory.gate.ref_for`)
    # How its class was given when not by the word rules: "meaning 0.87" (`memory.sensing`)
    sensitivity_by: str | None = None


class Evidence(Frozen):
    source: str
    sign: int
    weight: float
    provenance: Provenance
    reliability: float
    version: int
    at: str


class Explanation(Frozen):
    belief: Belief
    evidence: tuple[Evidence, ...]
    contradicts: tuple[int, ...]
    superseded_by: int | None


class Verdict(enum.StrEnum):
    """What recall's judge made of one candidate (`memory.recall.judge`): it `answers` the
    question (told as a memory), is `related` to it (shown, to a capable model, as possibly
    related), or is `unrelated` (not shown)."""

    ANSWERS = "answers"
    RELATED = "related"
    UNRELATED = "unrelated"


class Recalled(Frozen):
    belief: Belief
    score: float
    semantic: float
    keyword: float
    verdict: Verdict = Verdict.ANSWERS
    chance: float = 1.0  # the judge's probability that it answers the question
    why: str = ""  # the signals that decided the verdict, in words a person can read

    @property
    def sure(self) -> bool:
        """Whether it is told as a memory: the judge found that it answers."""
        return self.verdict is Verdict.ANSWERS


class Turn(Frozen):
    turn_id: int
    chat_id: str
    speaker_id: str | None
    role: Role
    scope: str
    sensitivity: Sensitivity
    text: str
    at: str
    ref: str = ""


class Quoted(Frozen):
    """A member's line recalled as it was said: episodic evidence, quoted and dated."""

    turn: Turn
    score: float
    semantic: float
    keyword: float
    verdict: Verdict = Verdict.ANSWERS
    chance: float = 1.0
    why: str = ""

    @property
    def sure(self) -> bool:
        """Whether it is told as a memory: the judge found that it answers."""
        return self.verdict is Verdict.ANSWERS


class Goal(Frozen):
    goal_id: int
    person_id: str
    scope: str
    text: str
    sensitivity: Sensitivity
    priority: int
    state: Literal["open", "done", "dropped"]
    due: str | None
    provenance: str
    created_at: str
    ref: str = ""


class Summary(Frozen):
    """A rolling summary; it carries the scope of what it was made from."""

    scope: str
    chat_id: str
    text: str
    sensitivity: Sensitivity
    through_turn_id: int
    updated_at: str


class Grant(Frozen):
    grant_id: int
    grantor_id: str
    scope: str
    activity: Activity
    sensitivity: Sensitivity
    beneficiary_id: str | None
    note: str
    created_at: str
    expires_at: str | None
    revoked_at: str | None
    ref: str = ""
    mind: str | None = None  # the one mind a grant of the `mind` activity opens the lens for

    def is_active(self, now: str) -> bool:
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > now


class Receipt(Frozen):
    seq: int
    at: str
    actor: str
    activity: str
    purpose: str
    method: str
    query_digest: str
    returned_ids: tuple[int, ...]
    scopes: tuple[str, ...]
    suppressed: int
    prev_hash: str
    hash: str


WriteStatus = Literal["created", "reinforced", "dropped", "refused"]


class WriteOutcome(Frozen):
    """What a write tells its caller: an id and what happened, never the stored text."""

    status: WriteStatus
    belief_id: int | None = None
    reason: str | None = None
    ref: str | None = None  # the belief's opaque name, what a member may be shown


def as_utc(moment: datetime) -> datetime:
    """Stored times are UTC ISO strings and compare as text, so every instant becomes UTC."""
    if moment.tzinfo is None:
        raise InvalidRequest("a time without a time zone is ambiguous; give it one")
    return moment.astimezone(UTC)


def check_scope(scope: str) -> None:
    if not is_scope(scope):
        raise InvalidRequest(f"not a scope: {scope!r} (use 'shared' or 'private:<person id>')")


# --- chats: one vocabulary for the bot, the command line and memory ----------------------------
# A transcript line names its chat by a string key: "dm:<telegram id>" for a member's direct
# chat (a member without one, in the terminal: "dm:<person id>"), "group:<telegram chat id>" for
# a household group, "group:household" for the terminal's group. Only the Telegram transport
# (inbox, outbox) keeps Telegram's own integer chat id.
TERMINAL_GROUP = "group:household"


def dm_chat(person: Person) -> str:
    """The key of a member's direct chat with her, on Telegram or in the terminal."""
    return f"dm:{person.telegram_id if person.telegram_id is not None else person.person_id}"


def group_chat(telegram_chat: int | None = None) -> str:
    """The key of a household group chat (the terminal's own when no Telegram chat is given)."""
    return TERMINAL_GROUP if telegram_chat is None else f"group:{telegram_chat}"
