"""Beliefs: propositions with log-odds confidence revised by evidence, and their hydration.

Owns: normalising propositions, asserting evidence (one belief per scope and proposition; the
first writer's scope is permanent), quarantine, supersession, contradiction edges, and turning
rows into `Belief` records with statuses computed for the reader. Must not: decide visibility on
its own (every read here embeds `memory.wall.predicate`) or return text to a writer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory import wall
from memory.errors import InvalidRequest
from memory.models import (
    BACKGROUND_PROVENANCES,
    RELIABILITY,
    AccessContext,
    Belief,
    BeliefStatus,
    Evidence,
    Kind,
    Provenance,
    Sensitivity,
    WriteOutcome,
)
from memory.receipts import keyed_digest
from memory.secrets import has_secret
from memory.store import Row, Tx

LOG_ODDS_LIMIT = 6.0
# Below this reliability x weight, a belief resting on one source waits in quarantine. A member's
# own words, told (0.95) or extracted by consolidation (0.75 x 1.0), clear it; a second-hand
# extraction (0.75 x 0.8), an inference (0.60) or a weak observation waits for corroboration.
QUARANTINE_BELOW = 0.75
# A belief not reinforced for this long reads as stale.
STALE_AFTER = timedelta(days=180)
MAX_PROPOSITION_CHARS = 1000

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
    tx: Tx,
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
        tx, fingerprint, item
    ):
        return WriteOutcome(status="refused", reason="it was forgotten")

    if item.subject_id is not None and not await tx.scalar(
        "SELECT 1 FROM people WHERE person_id = ?", (item.subject_id,)
    ):
        raise InvalidRequest("a belief's subject must be a household member")
    # Only the asserting scope's own belief: evidence never crosses scopes. A member saying
    # in private the words of a shared belief gets a private belief of their own; the shared
    # one's confidence, evidence and status do not move, so the group learns nothing.
    existing = await tx.fetchall(
        "SELECT belief_id, scope, version, log_odds, quarantined FROM beliefs"
        " WHERE norm = ? AND scope = ?",
        (norm, item.scope),
    )
    created = not existing
    if created:
        if item.sign < 0:
            return WriteOutcome(status="dropped", reason="nothing to count evidence against")
        if item.version is not None and item.version < 1:
            return WriteOutcome(status="dropped", reason="an older version")
        sensitivity = await _sensitivity_for(tx, item.scope, norm, text, classify)
        belief_id = await tx.execute(
            "INSERT INTO beliefs(proposition, norm, scope, kind, subject_id, sensitivity,"
            " log_odds, version, quarantined, valid_from, created_at, updated_at, reinforced_at)"
            " VALUES (?, ?, ?, ?, ?, ?, 0, 0, 0, ?, ?, ?, ?)",
            (
                text,
                norm,
                item.scope,
                item.kind.value,
                item.subject_id,
                sensitivity.value,
                item.valid_from or now,
                now,
                now,
                now,
            ),
        )
        current_version, log_odds = 0, 0.0
    else:
        row = existing[0]
        belief_id = int(row["belief_id"])
        current_version, log_odds = int(row["version"]), float(row["log_odds"])

    version = current_version + 1 if item.version is None else item.version
    if version <= current_version:
        return WriteOutcome(status="dropped", belief_id=belief_id, reason="an older version")
    if await tx.scalar(
        "SELECT 1 FROM evidence WHERE belief_id = ? AND source = ? AND sign = ?",
        (belief_id, item.source, item.sign),
    ):
        return WriteOutcome(status="dropped", belief_id=belief_id, reason="already counted")

    reliability = RELIABILITY[item.provenance]
    evidence_id = await tx.execute(
        "INSERT INTO evidence(belief_id, source, sign, weight, provenance, reliability,"
        " version, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (belief_id, item.source, item.sign, item.weight, item.provenance.value, reliability,
         version, now),
    )
    if item.turn_ids:
        await tx.executemany(
            "INSERT OR IGNORE INTO evidence_turns(evidence_id, turn_id)"
            " SELECT ?, turn_id FROM turns WHERE turn_id = ? AND scope = ?",
            [(evidence_id, turn_id, item.scope) for turn_id in item.turn_ids],
        )
    delta = item.sign * item.weight * reliability
    new_log_odds = max(-LOG_ODDS_LIMIT, min(LOG_ODDS_LIMIT, log_odds + delta))
    quarantined = await is_quarantined(tx, belief_id)
    await tx.execute(
        "UPDATE beliefs SET log_odds = ?, version = ?, quarantined = ?, updated_at = ?,"
        " reinforced_at = CASE WHEN ? > 0 THEN ? ELSE reinforced_at END WHERE belief_id = ?",
        (new_log_odds, version, int(quarantined), now, item.sign, now, belief_id),
    )
    return WriteOutcome(status="created" if created else "reinforced", belief_id=belief_id)


async def _from_before_forget(tx: Tx, fingerprint: str, item: Assertion) -> bool:
    """Whether background work is re-deriving a forgotten proposition from material older than
    the forget. Lines the member wrote after it (saying it again, on purpose) are new material."""
    forgotten_at = await tx.scalar(
        "SELECT at FROM tombstones WHERE fingerprint = ?", (fingerprint,)
    )
    if forgotten_at is None:
        return False
    if not item.turn_ids:
        return True
    marks = ", ".join("?" for _ in item.turn_ids)
    oldest = await tx.scalar(
        f"SELECT min(at) FROM turns WHERE turn_id IN ({marks})", item.turn_ids
    )
    return oldest is None or str(oldest) <= str(forgotten_at)


async def _sensitivity_for(
    tx: Tx, scope: str, norm: str, text: str, classify: Callable[[str], Sensitivity]
) -> Sensitivity:
    override = await tx.scalar(
        "SELECT sensitivity FROM sensitivity_overrides WHERE scope = ? AND norm = ?",
        (scope, norm),
    )
    return Sensitivity(override) if override else classify(text)


async def is_quarantined(tx: Tx, belief_id: int) -> bool:
    """One weak supporting source means quarantine; a second source, or a strong one, ends it."""
    row = await tx.fetchone(
        "SELECT count(DISTINCT source) AS sources, max(weight * reliability) AS strongest"
        " FROM evidence WHERE belief_id = ? AND sign > 0",
        (belief_id,),
    )
    if row is None or not row["sources"]:
        return False
    return int(row["sources"]) < 2 and float(row["strongest"]) < QUARANTINE_BELOW


async def set_sensitivity(tx: Tx, belief_id: int, sensitivity: Sensitivity, by: str,
                          now: str) -> None:
    row = await tx.fetchone("SELECT scope, norm FROM beliefs WHERE belief_id = ?", (belief_id,))
    if row is None:
        return
    await tx.execute(
        "INSERT INTO sensitivity_overrides(scope, norm, sensitivity, set_by, at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT(scope, norm) DO UPDATE SET"
        " sensitivity = excluded.sensitivity, set_by = excluded.set_by, at = excluded.at",
        (row["scope"], row["norm"], sensitivity.value, by, now),
    )
    await tx.execute(
        "UPDATE beliefs SET sensitivity = ?, updated_at = ? WHERE belief_id = ?",
        (sensitivity.value, now, belief_id),
    )


# --- reading -------------------------------------------------------------------------------

_BELIEF_COLUMNS = (
    "b.belief_id, b.proposition, b.norm, b.version, b.scope, b.kind, b.subject_id,"
    " b.sensitivity, b.log_odds, b.quarantined, b.valid_from, b.valid_to, b.superseded_by,"
    " b.created_at, b.updated_at,"
    " b.reinforced_at, b.salience,"
    " (SELECT count(*) FROM evidence e WHERE e.belief_id = b.belief_id) AS evidence_count"
)


async def fetch_visible(
    tx: Tx,
    ctx: AccessContext,
    where: str = "1",
    params: Sequence[object] = (),
    *,
    order: str = "b.belief_id",
    limit: int = -1,
) -> list[Row]:
    """Belief rows matching `where` that the wall lets this reader see, with a
    `contradicted` flag computed only from contradicting beliefs the reader can also see."""
    wall_sql, wall_params = wall.predicate(ctx, "b.scope")
    other_sql, other_params = wall.predicate(ctx, "o.scope")
    sql = (
        f"SELECT {_BELIEF_COLUMNS},"
        " EXISTS (SELECT 1 FROM contradictions c JOIN beliefs o ON o.belief_id ="
        "   CASE WHEN c.low_id = b.belief_id THEN c.high_id ELSE c.low_id END"
        "   WHERE (c.low_id = b.belief_id OR c.high_id = b.belief_id)"
        f"   AND {other_sql} AND o.superseded_by IS NULL AND o.log_odds >= b.log_odds)"
        " AS contradicted"
        f" FROM beliefs b WHERE {wall_sql} AND ({where}) ORDER BY {order} LIMIT ?"
    )
    return await tx.fetchall(sql, (*other_params, *wall_params, *params, limit))


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
    )


async def evidence_for(tx: Tx, belief_id: int) -> tuple[Evidence, ...]:
    rows = await tx.fetchall(
        "SELECT source, sign, weight, provenance, reliability, version, at FROM evidence"
        " WHERE belief_id = ? ORDER BY version, evidence_id",
        (belief_id,),
    )
    return tuple(
        Evidence(
            source=str(r["source"]),
            sign=int(r["sign"]),
            weight=float(r["weight"]),
            provenance=Provenance(r["provenance"]),
            reliability=float(r["reliability"]),
            version=int(r["version"]),
            at=str(r["at"]),
        )
        for r in rows
    )


async def contradicting_ids(tx: Tx, ctx: AccessContext, belief_id: int) -> tuple[int, ...]:
    other_sql, other_params = wall.predicate(ctx, "o.scope")
    rows = await tx.fetchall(
        "SELECT o.belief_id FROM contradictions c JOIN beliefs o ON o.belief_id ="
        " CASE WHEN c.low_id = ? THEN c.high_id ELSE c.low_id END"
        f" WHERE (c.low_id = ? OR c.high_id = ?) AND {other_sql} ORDER BY o.belief_id",
        (belief_id, belief_id, belief_id, *other_params),
    )
    return tuple(int(r["belief_id"]) for r in rows)
