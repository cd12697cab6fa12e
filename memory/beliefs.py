"""Beliefs: propositions with log-odds confidence revised by evidence, and their hydration.

Owns: normalising propositions, asserting evidence (one belief per scope and proposition; the
first writer's scope is permanent, for evidence too: assertions work through the asserting
scope's `Lane`, which sees no other), quarantine, supersession, contradiction edges, overrides,
turning rows into `Belief` records with statuses computed for the reader, and the reads a member
makes of them (`BeliefBook`). Must not: decide visibility on its own (reads go through
`memory.gate`) or return text to a writer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory import wall
from memory.classifier import classify as classify_text
from memory.errors import InvalidRequest
from memory.gate import STATED_BY, Census, Gate, Lane, Read, Writing, ref_for
from memory.models import (
    BACKGROUND_PROVENANCES,
    RELIABILITY,
    SHARED,
    AccessContext,
    Belief,
    BeliefStatus,
    Evidence,
    Explanation,
    Kind,
    Provenance,
    Sensitivity,
    WriteOutcome,
    check_scope,
    private_scope,
    scope_owner,
)
from memory.people import PeopleBook
from memory.receipts import keyed_digest
from memory.secrets import has_secret
from memory.sensing import more_private
from memory.store import Row, Store, Tx
from memory.vectors import BELIEFS, VectorBook, raise_class

LOG_ODDS_LIMIT = 6.0
# Below this reliability x weight, a belief resting on one source waits in quarantine. A member's
# own words, told (0.95) or extracted by consolidation (0.75 x 1.0), clear it; a second-hand
# extraction (0.75 x 0.8), an inference (0.60) or a weak observation waits for corroboration.
QUARANTINE_BELOW = 0.75
# A belief not reinforced for this long reads as stale.
STALE_AFTER = timedelta(days=180)
MAX_PROPOSITION_CHARS = 1000
BY_THE_MODEL = "the model"  # `sensitivity_by` of a class a capable model gave at consolidation

_SPACE = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s.!?;:,…]+$")
_QUOTES = "\"'\u201c\u201d\u2018\u2019\u00ab\u00bb"


def normalize(text: str) -> str:
    """One key for propositions that differ only in case, spacing or trailing punctuation."""
    collapsed = _SPACE.sub(" ", text).strip().strip(_QUOTES).strip()
    return _TRAILING.sub("", collapsed).casefold()


def confidence(log_odds: float) -> float:
    return 1.0 / (1.0 + math.exp(-log_odds))


def tombstone_fingerprint(secret: bytes, scope: str, norm: str) -> str:
    return keyed_digest(secret, f"tombstone\n{scope}\n{norm}")


@dataclass(frozen=True)
class Assertion:
    """One piece of evidence for a proposition, in the scope it was heard in."""

    proposition: str
    scope: str
    provenance: Provenance
    source: str
    kind: Kind = Kind.FACT
    subject_id: str | None = None
    sign: int = 1
    weight: float = 1.0
    turn_ids: tuple[int, ...] = ()
    version: int | None = None
    valid_from: str | None = None
    # The class a capable model gave it at consolidation: it raises the belief's class (never
    # lowers it, never over a member's own), recorded as given by the model.
    model_class: Sensitivity | None = None


def check_text(text: str) -> str:
    cleaned = text.strip()
    if not cleaned:
        raise InvalidRequest("there is nothing to remember: the text is empty")
    if len(cleaned) > MAX_PROPOSITION_CHARS:
        raise InvalidRequest(
            f"a belief is at most {MAX_PROPOSITION_CHARS} characters; say it more briefly"
        )
    if "\x00" in cleaned:
        raise InvalidRequest("the text contains a NUL byte")
    return cleaned


async def assert_one(
    lane: Lane,
    item: Assertion,
    *,
    secret: bytes,
    now: str,
    classify: Callable[[str], Sensitivity],
) -> WriteOutcome:
    """Add evidence for a proposition; create its belief in the asserting scope if needed.

    Only a belief of the asserting scope is ever found or touched (the first writer's scope is
    permanent, for evidence too): a belief of any other scope, hidden or visible, is never
    touched, confirmed or mentioned, exactly as if it did not exist.
    """
    text = check_text(item.proposition)
    if has_secret(text):
        return WriteOutcome(status="refused", reason="it looks like a secret token")
    if item.sign not in (-1, 1) or not 0 < item.weight <= 1:
        raise InvalidRequest("evidence needs a sign of +1 or -1 and a weight in (0, 1]")
    norm = normalize(text)
    if not norm:
        raise InvalidRequest("there is nothing to remember: the text is only punctuation")
    fingerprint = tombstone_fingerprint(secret, item.scope, norm)
    if item.provenance in BACKGROUND_PROVENANCES and await _from_before_forget(
        lane, fingerprint, item
    ):
        return WriteOutcome(status="refused", reason="it was forgotten")

    household = lane.household
    if item.scope != lane.scope:
        raise InvalidRequest("evidence is recorded in the scope it was heard in")
    if item.subject_id is not None and not await household.scalar(
        "SELECT 1 FROM people WHERE person_id = ?", (item.subject_id,)
    ):
        raise InvalidRequest("a belief's subject must be a household member")
    # Only the asserting scope's own belief: evidence never crosses scopes. A member saying
    # in private the words of a shared belief gets a private belief of their own; the shared
    # one's confidence, evidence and status do not move, so the group learns nothing.
    existing = await lane.select(
        "beliefs", "norm = ?", (norm,), columns="belief_id, version, log_odds, quarantined"
    )
    created = not existing
    if created:
        if item.sign < 0:
            return WriteOutcome(status="dropped", reason="nothing to count evidence against")
        if item.version is not None and item.version < 1:
            return WriteOutcome(status="dropped", reason="an older version")
        sensitivity, by = await _sensitivity_for(household, item, norm, text, classify)
        belief_id = await lane.insert("beliefs", {
            "proposition": text, "norm": norm, "scope": item.scope, "kind": item.kind.value,
            "subject_id": item.subject_id, "sensitivity": sensitivity.value,
            "sensitivity_by": by, "log_odds": 0, "version": 0, "quarantined": 0,
            "valid_from": item.valid_from or now, "created_at": now, "updated_at": now,
            "reinforced_at": now})
        current_version, log_odds = 0, 0.0
    else:
        row = existing[0]
        belief_id = int(row["belief_id"])
        current_version, log_odds = int(row["version"]), float(row["log_odds"])
        if item.model_class is not None and item.sign > 0:
            await raise_class(lane, BELIEFS, belief_id, item.model_class, BY_THE_MODEL)

    version = current_version + 1 if item.version is None else item.version
    if version <= current_version:
        return WriteOutcome(status="dropped", belief_id=belief_id, reason="an older version",
                            ref=ref_for(secret, "belief", belief_id))
    if await lane.value(
        "evidence", "1", "belief_id = ? AND source = ? AND sign = ?",
        (belief_id, item.source, item.sign),
    ):
        return WriteOutcome(status="dropped", belief_id=belief_id, reason="already counted",
                            ref=ref_for(secret, "belief", belief_id))

    reliability = RELIABILITY[item.provenance]
    evidence_id = await lane.insert("evidence", {
        "belief_id": belief_id, "source": item.source, "sign": item.sign,
        "weight": item.weight, "provenance": item.provenance.value,
        "reliability": reliability, "version": version, "at": now})
    if item.turn_ids:
        marks = ", ".join("?" for _ in item.turn_ids)
        heard = await lane.select("turns", f"turn_id IN ({marks})", item.turn_ids,
                                  columns="turn_id")
        await lane.insert_many("evidence_turns", ("evidence_id", "turn_id"),
                               [(evidence_id, int(r["turn_id"])) for r in heard], ignore=True)
    delta = item.sign * item.weight * reliability
    new_log_odds = max(-LOG_ODDS_LIMIT, min(LOG_ODDS_LIMIT, log_odds + delta))
    quarantined = await is_quarantined(lane, belief_id)
    await lane.update(
        "beliefs", "log_odds = ?, version = ?, quarantined = ?, updated_at = ?,"
        " reinforced_at = CASE WHEN ? > 0 THEN ? ELSE reinforced_at END", "belief_id = ?",
        (new_log_odds, version, int(quarantined), now, item.sign, now, belief_id),
    )
    return WriteOutcome(status="created" if created else "reinforced", belief_id=belief_id,
                        ref=ref_for(secret, "belief", belief_id))


async def _from_before_forget(lane: Lane, fingerprint: str, item: Assertion) -> bool:
    """Whether background work is re-deriving a forgotten proposition from material older than
    the forget. Lines the member wrote after it (saying it again, on purpose) are new material."""
    forgotten_at = await lane.household.scalar(
        "SELECT at FROM tombstones WHERE fingerprint = ?", (fingerprint,)
    )
    if forgotten_at is None:
        return False
    if not item.turn_ids:
        return True
    marks = ", ".join("?" for _ in item.turn_ids)
    oldest = await lane.value("turns", "min(at)", f"turn_id IN ({marks})", item.turn_ids)
    return oldest is None or str(oldest) <= str(forgotten_at)


async def _sensitivity_for(
    tx: Tx, item: Assertion, norm: str, text: str, classify: Callable[[str], Sensitivity]
) -> tuple[Sensitivity, str | None]:
    """A new belief's class and who gave it (`sensitivity_by`; None: its words): a member's
    own class for these words, else the word rules' reading, raised by the model's."""
    override = await tx.scalar(
        "SELECT sensitivity FROM sensitivity_overrides WHERE scope = ? AND norm = ?",
        (item.scope, norm),
    )
    if override:
        return Sensitivity(override), "a member"
    by_words = classify(text)
    if item.model_class is not None and more_private(by_words, item.model_class) != by_words:
        return item.model_class, BY_THE_MODEL
    return by_words, None


async def count_again(here: Lane, there: Lane, ev: Row, belief_id: int, *,
                      version: int) -> int:
    """Evidence row `ev` (read through `here`) counted again on `belief_id` in `there`'s scope,
    with the lines it cites; returns the new row's id, or 0 when that belief already counts
    the same source and sign."""
    new_id = await there.insert("evidence", {
        "belief_id": belief_id, "source": ev["source"], "sign": ev["sign"],
        "weight": ev["weight"], "provenance": ev["provenance"],
        "reliability": ev["reliability"], "version": version, "at": ev["at"]}, ignore=True)
    if new_id:
        heard = await here.select("evidence_turns", "evidence_id = ?", (ev["evidence_id"],),
                                  columns="turn_id")
        await there.insert_many("evidence_turns", ("evidence_id", "turn_id"),
                                [(new_id, int(h["turn_id"])) for h in heard], ignore=True)
    return new_id


async def is_quarantined(lane: Lane, belief_id: int) -> bool:
    """One weak supporting source means quarantine; a second source, or a strong one, ends it.
    Minds (`memory.minds`) count as one source together: agents cannot corroborate each other."""
    row = await lane.one(
        "evidence", "belief_id = ? AND sign > 0", (belief_id,),
        columns="count(DISTINCT CASE WHEN source LIKE 'mind:%' THEN 'mind:' ELSE source END)"
                " AS sources, max(weight * reliability) AS strongest",
    )
    if row is None or not row["sources"]:
        return False
    return int(row["sources"]) < 2 and float(row["strongest"]) < QUARANTINE_BELOW


async def rescore(lane: Lane, belief_id: int, now: str) -> None:
    """Log-odds from the belief's evidence, and whether one weak source still holds it."""
    total = float(str(
        await lane.value(
            "evidence", "coalesce(sum(sign * weight * reliability), 0)", "belief_id = ?",
            (belief_id,),
        ) or 0
    ))
    log_odds = max(-LOG_ODDS_LIMIT, min(LOG_ODDS_LIMIT, total))
    quarantined = await is_quarantined(lane, belief_id)
    await lane.update("beliefs", "log_odds = ?, quarantined = ?, updated_at = ?",
                      "belief_id = ?", (log_odds, int(quarantined), now, belief_id))


# --- evidence an older hearth let cross scopes --------------------------------------------------

_CONSOLIDATED_IN = re.compile(r"^consolidation:((?:shared)|(?:private:[^:]+)):")


async def rehome_crossed_evidence(tx: Writing, owner_id: str | None, now: str) -> int:
    """Evidence a hearth before the rule recorded on another scope's belief (a member's private
    words reinforcing the shared belief with the same words) goes back to a belief of the scope
    it was heard in, made for it when none is there; both beliefs are rescored, and a belief
    left with no evidence of its own goes. Where it was heard: the lines it cites, else the
    scope named in a consolidation's source, else (on a shared belief) a member other than the
    owner stating it after the statement that made it. Returns how many evidence rows moved."""
    census = Census(tx)
    rows = await census.select(
        "evidence e JOIN beliefs b ON b.belief_id = e.belief_id",
        "e.evidence_id AS evidence_id, e.belief_id AS belief_id, b.scope AS scope,"
        " e.source AS source",
    )
    cited: dict[int, set[str]] = {}
    for r in await census.select("evidence_turns et JOIN turns t ON t.turn_id = et.turn_id",
                                 "et.evidence_id AS evidence_id, t.scope AS scope"):
        cited.setdefault(int(r["evidence_id"]), set()).add(str(r["scope"]))
    first: dict[int, int] = {}
    for row in rows:
        belief_id, evidence_id = int(row["belief_id"]), int(row["evidence_id"])
        first[belief_id] = min(first.get(belief_id, evidence_id), evidence_id)
    moves: dict[tuple[int, str], list[int]] = {}
    for row in rows:
        scope, source = str(row["scope"]), str(row["source"])
        elsewhere = sorted(cited.get(int(row["evidence_id"]), set()) - {scope})
        origin: str | None = elsewhere[0] if elsewhere else None
        if origin is None and (said := _CONSOLIDATED_IN.match(source)):
            origin = said.group(1)
        # A member's statement that made the shared belief was said as shared; a later one
        # may have been said in private, and when in doubt it goes back to them.
        stated = STATED_BY.match(source) if scope == SHARED else None
        if (origin is None and stated is not None and stated.group(1) != owner_id
                and int(row["evidence_id"]) != first[int(row["belief_id"])]):
            origin = private_scope(stated.group(1))
        if origin is not None and str(origin) != scope:
            moves.setdefault((int(row["belief_id"]), str(origin)), []).append(
                int(row["evidence_id"]))
    scope_of = {int(r["belief_id"]): str(r["scope"]) for r in rows}
    touched: dict[int, str] = {}
    for (belief_id, origin), evidence in sorted(moves.items()):
        scope = scope_of[belief_id]
        home, here = tx.lane(origin), tx.lane(scope)
        original = await here.one("beliefs", "belief_id = ?", (belief_id,))
        if original is None:
            continue
        found = await home.value("beliefs", "belief_id", "norm = ?", (original["norm"],))
        if found is None:
            found = await home.insert("beliefs", {
                "proposition": original["proposition"], "norm": original["norm"],
                "scope": origin, "kind": original["kind"], "subject_id": original["subject_id"],
                "sensitivity": original["sensitivity"], "log_odds": 0,
                "version": original["version"], "quarantined": 0,
                "valid_from": original["valid_from"], "created_at": original["created_at"],
                "updated_at": now, "reinforced_at": original["reinforced_at"]})
        # Each row is written again at home with the lines it cites (each lane writes only
        # its own scope), then goes from here; one the home already counted (the same
        # source) is a duplicate, and only goes.
        marks = ", ".join("?" for _ in evidence)
        for ev in await here.select("evidence", f"evidence_id IN ({marks})", evidence,
                                    order="evidence_id"):
            await count_again(here, home, ev, int(str(found)), version=int(ev["version"]))
        await here.delete("evidence", f"evidence_id IN ({marks})", evidence)
        touched[belief_id] = scope
        touched[int(str(found))] = origin
    for belief_id, scope in touched.items():
        lane = tx.lane(scope)
        if await lane.value("evidence", "count(*)", "belief_id = ?", (belief_id,)):
            await rescore(lane, belief_id, now)
        else:
            await lane.delete("beliefs", "belief_id = ?", (belief_id,))
    return sum(len(e) for e in moves.values())


async def _override(lane: Lane, belief_id: int, sensitivity: Sensitivity, by: str,
                    now: str) -> None:
    row = await lane.one("beliefs", "belief_id = ?", (belief_id,), columns="scope, norm")
    if row is None:
        return
    await lane.household.execute(
        "INSERT INTO sensitivity_overrides(scope, norm, sensitivity, set_by, at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT(scope, norm) DO UPDATE SET"
        " sensitivity = excluded.sensitivity, set_by = excluded.set_by, at = excluded.at",
        (row["scope"], row["norm"], sensitivity.value, by, now),
    )
    await lane.update("beliefs",
                      "sensitivity = ?, sensitivity_by = 'a member', updated_at = ?",
                      "belief_id = ?", (sensitivity.value, now, belief_id))


# --- reading -------------------------------------------------------------------------------

_LINE_RANGE = re.compile(r"^(consolidation:[^:]+(?::[^:]+)?):\d+-\d+$")


def shown_source(source: str) -> str:
    """A source as a reader is shown it: a consolidation's line range is memory's own key
    (its ids are global, and their gaps would tell how much others said), so it goes."""
    return _LINE_RANGE.sub(r"\1", source)


def status_of(row: Row, now: datetime) -> BeliefStatus:
    if row["superseded_by"] is not None or (
        row["valid_to"] is not None and str(row["valid_to"]) <= now.isoformat()
    ):
        return BeliefStatus.SUPERSEDED
    if row["quarantined"]:
        return BeliefStatus.QUARANTINED
    if row["contradicted"]:
        return BeliefStatus.CONTRADICTED
    if datetime.fromisoformat(str(row["reinforced_at"])) < now - STALE_AFTER:
        return BeliefStatus.STALE
    return BeliefStatus.ACTIVE


def belief_from_row(row: Row, now: datetime) -> Belief:
    return Belief(
        belief_id=int(row["belief_id"]),
        proposition=str(row["proposition"]),
        scope=str(row["scope"]),
        kind=Kind(row["kind"]),
        subject_id=row["subject_id"],
        sensitivity=Sensitivity(row["sensitivity"]),
        confidence=round(confidence(float(row["log_odds"])), 4),
        status=status_of(row, now),
        evidence_count=int(row["evidence_count"]),
        valid_from=row["valid_from"],
        valid_to=row["valid_to"],
        created_at=str(row["created_at"]),
        updated_at=str(row["updated_at"]),
        ref=str(row["ref"]),
        sensitivity_by=row["sensitivity_by"] if "sensitivity_by" in row.keys() else None,  # noqa: SIM118 -- a Row's keys are not a dict's
    )


async def evidence_for(read: Read, belief_id: int) -> tuple[Evidence, ...]:
    rows = await read.select(
        "evidence", "belief_id = ?", (belief_id,),
        columns="source, sign, weight, provenance, reliability, version, at",
        order="version, evidence_id",
    )
    return tuple(
        Evidence(
            source=shown_source(str(r["source"])),
            sign=int(r["sign"]),
            weight=float(r["weight"]),
            provenance=Provenance(r["provenance"]),
            reliability=float(r["reliability"]),
            version=int(r["version"]),
            at=str(r["at"]),
        )
        for r in rows
    )


class BeliefBook:
    """`memory.beliefs`: writing evidence, and reading beliefs through the gate."""

    def __init__(self, store: Store, gate: Gate, people: PeopleBook, vectors: VectorBook, *,
                 secret: bytes, now: Callable[[], datetime]) -> None:
        self._store = store
        self._gate = gate
        self._people = people
        self._vectors = vectors
        self._secret = secret
        self._now = now

    # --- writes ------------------------------------------------------------------------------

    async def remember(
        self,
        person_id: str,
        text: str,
        *,
        shared: bool = False,
        kind: Kind = Kind.FACT,
        subject_id: str | None = None,
    ) -> WriteOutcome:
        """A member tells her a fact directly: a `told` belief in their scope (or shared)."""
        person = await self._people.get(person_id)
        scope = SHARED if shared else private_scope(person.person_id)
        item = Assertion(
            proposition=text,
            scope=scope,
            provenance=Provenance.TOLD,
            source=f"statement:{person.person_id}:{self._now().isoformat()}",
            kind=kind,
            subject_id=subject_id,
        )
        (outcome,) = await self.assert_all([item])
        return outcome

    async def assert_all(self, items: Sequence[Assertion]) -> list[WriteOutcome]:
        """Assert a batch of evidence in one transaction; embeddings are added after commit."""
        for item in items:
            check_scope(item.scope)
        async with self._gate.writing() as tx:
            outcomes = await self.assert_in(tx, items)
        await self.embed_created(items, outcomes)
        return outcomes

    async def assert_in(self, tx: Writing, items: Sequence[Assertion]) -> list[WriteOutcome]:
        """Assert evidence inside a transaction the caller holds (each item through its own
        scope's lane); the caller embeds what was created once it commits."""
        now = self._now().isoformat()
        return [
            await assert_one(tx.lane(item.scope), item, secret=self._secret, now=now,
                             classify=classify_text)
            for item in items
        ]

    async def embed_created(
        self, items: Sequence[Assertion], outcomes: Sequence[WriteOutcome]
    ) -> None:
        """Embed the beliefs a write created (after its commit, off the event loop)."""
        await self._vectors.store([
            (int(outcome.belief_id), item.scope, check_text(item.proposition))
            for item, outcome in zip(items, outcomes, strict=True)
            if outcome.status == "created" and outcome.belief_id is not None
        ])

    async def rehome_once(self) -> None:
        """Re-home evidence an older hearth let cross scopes (`rehome_crossed_evidence`), the
        first time this database is opened by a hearth that knows the rule."""
        async with self._gate.writing() as tx:
            if await tx.scalar("SELECT 1 FROM evidence_rehoming LIMIT 1"):
                return
            census = Census(tx)
            owner = await census.value("people", "person_id", "is_owner = 1")
            now = self._now().isoformat()
            moved = await rehome_crossed_evidence(tx, None if owner is None else str(owner), now)
            await tx.execute("INSERT INTO evidence_rehoming(done_at, moved) VALUES (?, ?)",
                             (now, moved))

    async def _scopes_of(self, tx: Tx, ids: Sequence[int]) -> dict[int, str]:
        marks = ", ".join("?" for _ in ids)
        rows = await Census(tx).select("beliefs", "belief_id, scope",
                                       f"belief_id IN ({marks})", ids)
        return {int(r["belief_id"]): str(r["scope"]) for r in rows}

    async def _shared_visible_scope(self, tx: Tx, ctx: AccessContext, a: int,
                                    b: int) -> str | None:
        """The scope two distinct beliefs share, when the reader sees it; else None."""
        if a == b:
            return None
        scopes = await self._scopes_of(tx, [a, b])
        if len(scopes) != 2 or scopes[a] != scopes[b] or not wall.is_visible(ctx, scopes[a]):
            return None
        return scopes[a]

    async def _may_change(self, tx: Tx, ctx: AccessContext, scope: str | None) -> bool:
        """Whether this member may change a belief of `scope`: theirs, or shared for the
        owner, and visible to them either way."""
        if scope is None or ctx.person_id is None or not wall.is_visible(ctx, scope):
            return False
        owner = scope_owner(scope)
        if owner is not None:
            return owner == ctx.person_id
        return (await self._people.get(ctx.person_id, tx=tx)).is_owner

    async def set_sensitivity(
        self, ctx: AccessContext, belief_id: int, sensitivity: Sensitivity
    ) -> bool:
        """An explicit override of a belief's class, by its owner; it wins over the classifier
        both ways. Returns False, as for a missing belief, when it is not theirs."""
        async with self._gate.writing() as tx:
            scope = (await self._scopes_of(tx, [belief_id])).get(belief_id)
            if scope is None or not await self._may_change(tx, ctx, scope):
                return False
            await _override(tx.lane(scope), belief_id, sensitivity, str(ctx.person_id),
                            self._now().isoformat())
        return True

    async def link_contradiction(self, ctx: AccessContext, a: int, b: int) -> bool:
        """Mark two beliefs of one scope the reader sees as unable to both hold."""
        async with self._store.transaction() as tx:
            if await self._shared_visible_scope(tx, ctx, a, b) is None:
                return False
            await tx.execute(
                "INSERT OR IGNORE INTO contradictions(low_id, high_id, at) VALUES (?, ?, ?)",
                (min(a, b), max(a, b), self._now().isoformat()),
            )
        return True

    async def supersede(self, ctx: AccessContext, old: int, new: int) -> bool:
        """The newer belief supersedes the older one of the same scope; nothing is deleted."""
        now = self._now().isoformat()
        async with self._gate.writing() as tx:
            scope = await self._shared_visible_scope(tx, ctx, old, new)
            if scope is None:
                return False
            lane = tx.lane(scope)
            starts = await lane.value("beliefs", "valid_from", "belief_id = ?", (new,))
            await lane.update("beliefs", "superseded_by = ?, valid_to = ?, updated_at = ?",
                              "belief_id = ?", (new, starts or now, now, old))
        return True

    # --- reads -------------------------------------------------------------------------------

    async def inspect(self, ctx: AccessContext) -> list[Belief]:
        """What she knows about this member, as they may see it: their own scope's beliefs and
        shared beliefs about them."""
        if ctx.person_id is None:
            return []
        person_id = ctx.person_id
        async with self._gate.read(ctx, "inspect") as read:
            rows = await read.beliefs("(b.scope = ? OR b.subject_id = ?)",
                                      (private_scope(person_id), person_id))
            return await lensed(read, rows, self._now())

    async def about(self, ctx: AccessContext, person_id: str, *, limit: int = 12) -> list[Belief]:
        """Beliefs about one member that this reader may use: the partner model's material.

        In a member's own chat that is their scope's beliefs about themselves (or about no one
        else) and shared beliefs about them; in a group, only the shared ones.
        """
        now = self._now()
        async with self._gate.read(ctx, "about", person_id) as read:
            # The strongest and freshest first, ranked in SQL; a margin over the limit leaves
            # room for what the lens holds back.
            rows = await read.beliefs(
                "(b.subject_id = ? OR (b.scope = ? AND b.subject_id IS NULL))"
                " AND b.quarantined = 0 AND b.superseded_by IS NULL",
                (person_id, private_scope(person_id)),
                order="b.log_odds DESC, b.reinforced_at DESC, b.belief_id DESC",
                limit=max(0, limit) * 4,
            )
            allowed = await read.usable(rows)
            top = [belief_from_row(r, now) for r in allowed[: max(0, limit)]]
            read.returned([b.belief_id for b in top], [b.scope for b in top])
        return top

    async def explain(self, ctx: AccessContext, belief_id: int) -> Explanation | None:
        """One belief with its evidence trail; None alike for a missing and a hidden one."""
        async with self._gate.read(ctx, "explain", str(belief_id)) as read:
            rows = await read.beliefs("b.belief_id = ?", (belief_id,))
            found = await lensed(read, rows, self._now())
            if not found:
                return None
            return Explanation(
                belief=found[0],
                evidence=await evidence_for(read, belief_id),
                contradicts=await read.contradicting(belief_id),
                superseded_by=rows[0]["superseded_by"],
            )

    async def conflicts(self, ctx: AccessContext) -> list[tuple[Belief, Belief]]:
        """Pairs of contradicting beliefs, both of which this work may use."""
        async with self._gate.read(ctx, "conflicts") as read:
            rows = await read.beliefs(
                "b.belief_id IN (SELECT low_id FROM contradictions"
                " UNION SELECT high_id FROM contradictions)",
            )
            now = self._now()
            usable = {b.belief_id: b for b in
                      (belief_from_row(r, now) for r in await read.usable(rows))}
            edges = await read.contradiction_edges(list(usable))
            pairs = [(usable[low], usable[high]) for low, high in edges]
            ids = sorted({b.belief_id for pair in pairs for b in pair})
            read.returned(ids, [usable[i].scope for i in ids])
        return pairs

    async def in_scope(
        self, ctx: AccessContext, scope: str, *, kind: Kind | None = None, limit: int = 50
    ) -> list[Belief]:
        """Live beliefs of one scope this work may use, strongest first (receipted)."""
        check_scope(scope)
        where = "b.scope = ? AND b.superseded_by IS NULL"
        params: tuple[object, ...] = (scope,)
        if kind is not None:
            where += " AND b.kind = ?"
            params += (kind.value,)
        async with self._gate.read(ctx, "beliefs_in", scope) as read:
            rows = await read.beliefs(where, params, order="b.log_odds DESC, b.belief_id",
                                      limit=limit)
            return await lensed(read, rows, self._now())


async def lensed(read: Read, rows: Sequence[Row], now: datetime) -> list[Belief]:
    """Usable belief rows as records, strongest first, named in the read's receipt."""
    found = [belief_from_row(r, now) for r in await read.usable(rows)]
    found.sort(key=lambda b: (-b.confidence, b.belief_id))
    read.returned([b.belief_id for b in found], [b.scope for b in found])
    return found
