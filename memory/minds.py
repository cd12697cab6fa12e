"""Minds: other agents with a credential each, acting for one member, and what they write.

A mind (a calendar agent, a desktop assistant) is named once, acts for exactly one member, and
reads as that member sees their own private chat, through its own row of the lens (the
`mind` activity: ordinary facts, health and finance only by a grant from the member naming
that mind, credentials never). Every read it makes is receipted as `mind:<name>`, so the
member's own receipts list it.

Owns: issuing a credential (the token is shown once; only a keyed digest of it is kept),
listing and revoking minds, telling which live mind a token belongs to (remembered for a few
seconds only, so a revoked token stops within `CACHE_SECONDS`), and a mind's own writes: what
it remembers is second-hand (`relayed`, quarantined until something else corroborates it) and
stamped with its name, and its forget reaches only the evidence it gave itself.
Must not: read remembered content except through `memory.gate`, widen what the member sees,
or keep a token's text anywhere.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable, Sequence
from datetime import datetime

from memory.beliefs import Assertion, BeliefBook, evidence_for, lensed, normalize, rescore
from memory.errors import InvalidRequest, UnknownMind
from memory.forget import like_escape
from memory.gate import Census, Gate
from memory.grants import GrantBook
from memory.models import (
    MIND_ACTOR,
    AccessContext,
    Activity,
    Belief,
    Explanation,
    Frozen,
    Provenance,
    Sensitivity,
    private_scope,
)
from memory.people import PeopleBook
from memory.receipts import keyed_digest
from memory.store import Row, Store
from memory.vectors import VectorBook

TOKEN_PREFIX = "hearth_mind_"  # noqa: S105 -- the shape every token starts with, not one
_TOKEN = re.compile(r"^hearth_mind_[A-Za-z0-9_-]{43}$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
# How long a token's answer is remembered: long enough that a burst of tool calls reads the
# database once, short enough that a revoke (from another process too) takes effect at once.
CACHE_SECONDS = 5.0
_CACHE_MOST = 1024
REFUSED = ("this mind's token is unknown, revoked or malformed: ask the household's owner for"
           " a new one (`hearth minds add`)")
FORGOTTEN = "it was forgotten"  # `memory.beliefs.assert_one`'s reason: a tombstone refused it
# What a mind may be granted: the lens cells the member's word opens. Never credentials.
GRANTABLE_CLASSES = (Sensitivity.HEALTH, Sensitivity.FINANCE)


class Mind(Frozen):
    """A mind as the household sees it: its name, the member it acts for, and when."""

    name: str
    person_id: str
    created_at: str
    revoked_at: str | None = None

    def context(self, purpose: str) -> AccessContext:
        """The context of a read this mind makes: the member's view, the mind's lens row."""
        return AccessContext.for_mind(self.person_id, self.name, purpose)

    @property
    def source(self) -> str:
        """How its evidence names it (the server's stamp, never the caller's words)."""
        return f"{MIND_ACTOR}{self.name}"


class Issued(Frozen):
    """A mind just added, and its token: the only time the token exists outside the caller."""

    mind: Mind
    token: str
    granted: tuple[Sensitivity, ...] = ()


def token_digest(secret: bytes, token: str) -> str:
    return keyed_digest(secret, f"mind-token\n{token}")


def check_name(name: str) -> str:
    cleaned = name.strip().lower()
    if not _NAME.match(cleaned):
        raise InvalidRequest(
            f"a mind's name is 1-40 lower-case letters, digits, '-' or '_', starting with a"
            f" letter or digit (not {name!r})")
    return cleaned


def _mind(row: Row) -> Mind:
    return Mind(name=str(row["name"]), person_id=str(row["person_id"]),
                created_at=str(row["created_at"]), revoked_at=row["revoked_at"])


class MindBook:
    """`memory.minds`."""

    def __init__(self, store: Store, gate: Gate, people: PeopleBook, grants: GrantBook,
                 beliefs: BeliefBook, *, vectors: VectorBook, secret: bytes,
                 now: Callable[[], datetime],
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._store = store
        self._gate = gate
        self._people = people
        self._grants = grants
        self._beliefs = beliefs
        self._vectors = vectors
        self._secret = secret
        self._now = now
        self._monotonic = monotonic
        self._known: dict[str, tuple[float, Mind | None]] = {}

    # --- credentials ---------------------------------------------------------------------

    async def add(self, name: str, person_id: str, *,
                  grants: Sequence[Sensitivity] = (), days: float | None = None) -> Issued:
        """A new mind acting for one member, with the member's grants naming it (health,
        finance; never credentials). The token is returned once and kept only as a digest."""
        cleaned = check_name(name)
        person = await self._people.get(person_id)
        wanted = tuple(dict.fromkeys(grants))
        for klass in wanted:
            if klass not in GRANTABLE_CLASSES:
                raise InvalidRequest(
                    f"a mind may be granted health or finance, never {klass}: ordinary facts"
                    " need no grant and credentials are never read by a mind")
        if days is not None and days <= 0:
            raise InvalidRequest("a grant must last a positive number of days")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = self._now().isoformat()
        async with self._store.transaction() as tx:
            if await Census(tx).value("minds", "mind_id", "name = ?", (cleaned,)) is not None:
                raise InvalidRequest(f"a mind called {cleaned} exists already (names are never"
                                     " reused, revoked or not): choose another name")
            await tx.execute(
                "INSERT INTO minds(name, person_id, token_digest, created_at)"
                " VALUES (?, ?, ?, ?)",
                (cleaned, person.person_id, token_digest(self._secret, token), now))
        for klass in wanted:
            await self._grants.give(person.person_id, Activity.MIND, klass, days=days,
                                    mind=cleaned)
        return Issued(mind=Mind(name=cleaned, person_id=person.person_id, created_at=now),
                      token=token, granted=wanted)

    async def granted(self, mind: Mind) -> list[Sensitivity]:
        """The classes the member's live grants open for this mind."""
        now = self._now().isoformat()
        found = await self._grants.list(mind.person_id)
        return sorted({g.sensitivity for g in found
                       if g.activity == Activity.MIND and g.mind == mind.name
                       and g.is_active(now)})

    async def list(self) -> list[Mind]:
        """Every mind, live and revoked, in the order they were added. No token, no digest."""
        async with self._store.transaction() as tx:
            rows = await Census(tx).select(
                "minds", "name, person_id, created_at, revoked_at", order="mind_id")
        return [_mind(r) for r in rows]

    async def revoke(self, name: str) -> Mind:
        """Revoke a mind at once: its token stops (within `CACHE_SECONDS` in a process that
        already knew it) and its grants are revoked with it. The row stays."""
        cleaned = name.strip().lower()
        now = self._now().isoformat()
        async with self._gate.writing() as tx:
            changed = await tx.execute(
                "UPDATE minds SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL",
                (now, cleaned))
            if not changed:
                raise InvalidRequest(f"no live mind called {name!r} (see `hearth minds`)")
            for lane in await tx.lanes("grants", "mind = ?", (cleaned,)):
                await lane.update("grants", "revoked_at = ?", "mind = ? AND revoked_at IS NULL",
                                  (now, cleaned))
            rows = await Census(tx).select(
                "minds", "name, person_id, created_at, revoked_at", "name = ?", (cleaned,))
        self._known.clear()
        return _mind(rows[0])

    async def resolve(self, token: str) -> Mind:
        """The live mind a token belongs to, or UnknownMind, with one message whichever way
        it failed (no such token, revoked, or not a token's shape at all)."""
        token = token.strip()
        if not _TOKEN.match(token):
            raise UnknownMind(REFUSED)
        digest = token_digest(self._secret, token)
        clock = self._monotonic()
        seen = self._known.get(digest)
        if seen is not None and clock - seen[0] < CACHE_SECONDS:
            mind = seen[1]
        else:
            async with self._store.transaction() as tx:
                rows = await Census(tx).select(
                    "minds", "name, person_id, created_at, revoked_at",
                    "token_digest = ? AND revoked_at IS NULL", (digest,))
            mind = _mind(rows[0]) if rows else None
            if len(self._known) >= _CACHE_MOST:
                self._known.clear()
            self._known[digest] = (clock, mind)
        if mind is None:
            raise UnknownMind(REFUSED)
        return mind

    # --- what a mind writes --------------------------------------------------------------

    async def remember(self, mind: Mind, text: str) -> Belief | None:
        """What a mind tells about its member: a `relayed` belief in the member's private
        scope, its evidence stamped with the mind's name, quarantined until corroborated.
        The echo is a read like any other: the belief as this mind may see it, or None when
        its lens does not show it (a class it was not granted, words the member forgot), so
        a write never tells a mind what it could not read."""
        scope = private_scope(mind.person_id)
        item = Assertion(proposition=text, scope=scope, provenance=Provenance.RELAYED,
                         source=mind.source)
        (outcome,) = await self._beliefs.assert_all([item])
        if outcome.status == "refused" and outcome.reason != FORGOTTEN:
            raise InvalidRequest(f"not stored: {outcome.reason}")  # about its own words only
        if outcome.belief_id is None:
            return None
        ctx = mind.context("the echo of what this mind remembered")
        async with self._gate.read(ctx, "remember", text) as read:
            rows = await read.beliefs("b.belief_id = ? AND b.scope = ?",
                                      (outcome.belief_id, scope))
            found = await lensed(read, rows, self._now())
        return found[0] if found else None

    async def forget(self, mind: Mind, text: str) -> int:
        """Take back what this mind wrote whose words contain `text`: a belief only it gave
        evidence for goes (its vector and index entries too); one the member or anything
        else also supports keeps that support and loses only the mind's. Nothing else is
        touched: not the member's words, not another mind's. Returns how many beliefs the
        mind's evidence left."""
        needle = normalize(text)
        if not needle:
            raise InvalidRequest("say what to forget: the text is empty")
        scope = private_scope(mind.person_id)
        ctx = mind.context("take back what this mind wrote")
        async with self._gate.read(ctx, "forget", text) as read:
            lane = read.lane(scope)
            written = sorted({int(r["belief_id"]) for r in await lane.select(
                "evidence", "source = ?", (mind.source,), columns="belief_id")})
            if not written:
                return 0
            marks = ", ".join("?" for _ in written)
            matching = [int(r["belief_id"]) for r in await lane.select(
                "beliefs", f"belief_id IN ({marks}) AND norm LIKE ? ESCAPE '\\'",
                (*written, f"%{like_escape(needle)}%"), columns="belief_id",
                order="belief_id")]
            gone: list[int] = []
            for belief_id in matching:
                others = await lane.value("evidence", "count(*)",
                                          "belief_id = ? AND source != ?",
                                          (belief_id, mind.source))
                if int(str(others or 0)) == 0:
                    gone.append(belief_id)
                    continue
                await lane.delete("evidence", "belief_id = ? AND source = ?",
                                  (belief_id, mind.source))
                await rescore(lane, belief_id, read.now)
            if gone:
                await lane.delete("beliefs", f"belief_id IN ({', '.join('?' for _ in gone)})",
                                  gone)
                # Deleted terms linger in FTS5 segments until a merge: rewrite the index.
                await lane.merge_indexes("beliefs_fts")
            read.returned(gone, [scope] * len(gone))
        if gone:
            self._vectors.remove(gone)
            await self._vectors.prune()
        return len(matching)

    # --- what a mind reads, beside the other books' reads ---------------------------------

    async def explain(self, mind: Mind, ref: str) -> Explanation | None:
        """One belief, named by the opaque ref a recall gave, with its evidence trail: None
        alike for a ref that names nothing and one this mind may not read."""
        ctx = mind.context("explain a belief")
        async with self._gate.read(ctx, "explain", ref) as read:
            rows = await read.beliefs("ref('belief', b.belief_id) = ?", (ref.strip(),))
            found = await lensed(read, rows, self._now())
            if not found:
                return None
            belief_id = found[0].belief_id
            return Explanation(
                belief=found[0],
                evidence=await evidence_for(read, belief_id),
                contradicts=await read.contradicting(belief_id),
                superseded_by=rows[0]["superseded_by"],
            )


__all__ = ["CACHE_SECONDS", "REFUSED", "TOKEN_PREFIX", "Issued", "Mind", "MindBook"]
