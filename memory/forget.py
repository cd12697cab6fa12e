"""Forgetting: beliefs, their evidence, vectors and index entries gone, their words scrubbed.

Owns: removing a scope's matching beliefs, redacting the transcript lines they came from and
any line of that scope that repeats them, recording keyed tombstones (no plaintext), and purging
a whole scope when a member is removed. Must not: touch another scope, or keep the forgotten
text anywhere (the store runs with secure_delete, and the FTS index is rebuilt so its segments
no longer hold the words).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable, Collection
from datetime import datetime
from pathlib import Path

from memory.beliefs import lensed, normalize, tombstone_fingerprint
from memory.errors import InvalidRequest
from memory.gate import Census, Gate, Lane, Writing
from memory.inbox import purge_chat
from memory.models import REDACTED, SHARED, AccessContext, Activity, Belief, private_scope
from memory.people import PeopleBook
from memory.receipts import keyed_digest
from memory.store import Store, Tx
from memory.vectors import Matrix, VectorBook


def row_fingerprint(secret: bytes, table: str, row_id: int, text: str) -> str:
    """A keyed fingerprint of one row as it was before a forget scrubbed it: a restore of an
    older backup finds the same row by it and scrubs it again, with no plaintext kept."""
    return keyed_digest(secret, f"row\n{table}\n{row_id}\n{text}")


async def _tombstone_rows(tx: Tx, secret: bytes, now: str, table: str,
                          rows: list[tuple[int, str]]) -> None:
    await tx.executemany(
        "INSERT OR IGNORE INTO tombstones(fingerprint, at) VALUES (?, ?)",
        [(row_fingerprint(secret, table, row_id, text), now) for row_id, text in rows],
    )


def like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


async def forget_matching(
    lane: Lane, *, needle: str, secret: bytes, now: str,
    said_again: Callable[[list[int]], set[int]] = lambda ids: set(),
    derived_again: Callable[[list[int]], set[tuple[str, int]]] = lambda ids: set(),
) -> list[int]:
    """Forget every belief of `scope` whose normalised proposition contains `needle`, and the
    words themselves (`needle`, and each belief's distinctive words) from every line, summary
    and goal of the scope, whether or not the tick has consolidated them yet: forgetting right
    after saying something leaves it nowhere. The lines `said_again` names for the forgotten
    beliefs (the same thing in other words or another language, by meaning) go too, and so
    do the summaries and goals `derived_again` names for them (table, id). A
    tombstone for the words themselves refuses a background re-creation of exactly them from
    older material."""
    household, scope = lane.household, lane.scope
    rows = await lane.select(
        "beliefs", "norm LIKE ? ESCAPE '\\'", (f"%{like_escape(needle)}%",),
        columns="belief_id, proposition, norm", order="belief_id",
    )
    await household.execute(
        "INSERT OR IGNORE INTO tombstones(fingerprint, at) VALUES (?, ?)",
        (tombstone_fingerprint(secret, scope, needle), now),
    )
    if not rows:
        await _scrub_lines(lane, {needle}, secret, now)
        await _scrub_derived(lane, {needle}, secret, now)
        await lane.merge_indexes(*KEYWORD_INDEXES)
        return []
    ids = [int(r["belief_id"]) for r in rows]
    alike = said_again(ids)
    derived = derived_again(ids)
    marks = ", ".join("?" for _ in ids)
    evidence = [int(r["evidence_id"]) for r in await lane.select(
        "evidence", f"belief_id IN ({marks})", ids, columns="evidence_id")]
    source_turns = sorted({
        int(r["turn_id"])
        for r in await lane.select(
            "evidence_turns", f"evidence_id IN ({', '.join('?' for _ in evidence)})",
            evidence, columns="turn_id",
        )
    }) if evidence else []
    for row in rows:
        await household.execute(
            "INSERT OR IGNORE INTO tombstones(fingerprint, at) VALUES (?, ?)",
            (tombstone_fingerprint(secret, scope, str(row["norm"])), now),
        )
        await household.execute(
            "DELETE FROM sensitivity_overrides WHERE scope = ? AND norm = ?",
            (scope, row["norm"]),
        )
    await lane.delete("beliefs", f"belief_id IN ({marks})", ids)
    if source_turns:
        turn_marks = ", ".join("?" for _ in source_turns)
        sources = await lane.select(
            "turns", f"text != ? AND turn_id IN ({turn_marks})", (REDACTED, *source_turns),
            columns="turn_id, text",
        )
        await _tombstone_rows(household, secret, now, "turns",
                              [(int(r["turn_id"]), str(r["text"])) for r in sources])
        await lane.update("turns", "text = ?", f"turn_id IN ({turn_marks})",
                          (REDACTED, *source_turns))
    norms = {str(r["norm"]) for r in rows} | {needle}
    await _scrub_lines(lane, norms, secret, now, alike)
    await _scrub_derived(lane, norms, secret, now, derived)
    await lane.merge_indexes(*KEYWORD_INDEXES)
    return ids


_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


def _words(text: str) -> set[str]:
    return {w.removesuffix("'s") for w in _WORD.findall(text.casefold())}


def _marks(norm: str) -> frozenset[str]:
    """The longer words of a forgotten proposition, in any language: what a paraphrase of it
    still holds. Short words (articles, pronouns, most particles) say little of what it was."""
    return frozenset(w for w in _words(norm) if len(w) >= 4)


def _repeats(text: str, norms: set[str], marks: list[frozenset[str]]) -> bool:
    """Whether a line or summary repeats a forgotten proposition: word for word, or in other
    words that keep most of its distinctive ones (`marks`, from `_marks`) ("Noted: my nickname
    is Zephyrine" for "Ana's nickname is Zephyrine"). When in doubt, it goes: a redacted line
    costs less than a leak."""
    flat = normalize(text)
    if any(norm in flat for norm in norms):
        return True
    words = _words(text)
    return any(
        len(mark & words) >= max(1, min(len(mark), (len(mark) + 1) // 2 + 1))
        for mark in marks
        if mark
    )


async def _scrub_lines(lane: Lane, norms: set[str], secret: bytes, now: str,
                       alike: Collection[int] = ()) -> None:
    """Redact every line of the scope that repeats a forgotten proposition, hers included,
    and those of `alike` (members' lines that say it in other words)."""
    rows = await lane.select("turns", "text != ?", (REDACTED,), columns="turn_id, text")
    marks = [_marks(norm) for norm in norms]
    repeating = [
        (int(r["turn_id"]), str(r["text"])) for r in rows
        if int(r["turn_id"]) in alike or _repeats(str(r["text"]), norms, marks)
    ]
    await _tombstone_rows(lane.household, secret, now, "turns", repeating)
    hit = [turn_id for turn_id, _ in repeating]
    for start in range(0, len(hit), 500):
        chunk = hit[start : start + 500]
        await lane.update("turns", "text = ?", f"turn_id IN ({', '.join('?' for _ in chunk)})",
                          (REDACTED, *chunk))


async def _scrub_derived(lane: Lane, norms: set[str], secret: bytes, now: str,
                         alike: Collection[tuple[str, int]] = ()) -> None:
    """Summaries and goals of the scope that repeat a forgotten proposition go too, with
    those of `alike` (that say it in other words), and its chats' snapshots whole (the next
    tick makes them again from what is left). A shared forget drops every chat's snapshot
    (`ForgetBook.forget`): a lane touches only its own scope's."""
    household, scope = lane.household, lane.scope
    marks = [_marks(norm) for norm in norms]
    await lane.delete("snapshots")
    for table, key in (("summaries", "summary_id"), ("goals", "goal_id")):
        rows = await lane.select(table, columns=f"{key} AS id, text")
        for row in rows:
            if (table, int(row["id"])) in alike or _repeats(str(row["text"]), norms, marks):
                await _tombstone_rows(household, secret, now, table,
                                      [(int(row["id"]), str(row["text"]))])
                if table == "summaries":
                    await lane.update("summaries", "text = ?", "summary_id = ?",
                                      (REDACTED, row["id"]))
                else:
                    await lane.delete("goals", "goal_id = ?", (row["id"],))
    if scope == SHARED:
        # Persona edits are drawn from shared preferences: one that quotes a forgotten one
        # stops shaping her prompts (withdrawn), and its words go.
        rows = await household.fetchall("SELECT proposal_id, text, reason FROM persona_proposals")
        for row in rows:
            said = f"{row['text']}\n{row['reason']}"
            if _repeats(said, norms, marks):
                await _tombstone_rows(household, secret, now, "persona_proposals",
                                      [(int(row["proposal_id"]), said)])
                await household.execute(
                    "UPDATE persona_proposals SET text = ?, reason = ?, state = 'rejected'"
                    " WHERE proposal_id = ?",
                    (REDACTED, REDACTED, row["proposal_id"]),
                )


async def reapply_tombstones(tx: Writing, secret: bytes, kept: list[tuple[str, str]]) -> list[int]:
    """After a restore: the tombstones the replaced database had (`kept`, fingerprint and
    time) join the restored one's, and whatever a backup made before those forgets still
    holds is forgotten again, scope by scope: beliefs by their keyed fingerprint, lines,
    summaries, goals and persona proposals by the keyed fingerprint of the row as it was.
    Returns belief ids gone."""
    await tx.executemany(
        "INSERT OR IGNORE INTO tombstones(fingerprint, at) VALUES (?, ?)", kept
    )
    known = {
        str(r["fingerprint"]) for r in await tx.fetchall("SELECT fingerprint FROM tombstones")
    }
    census = Census(tx)
    scopes: set[str] = set()
    for table in ("beliefs", "turns", "summaries", "goals"):
        scopes.update(str(r["scope"]) for r in await census.select(table, "DISTINCT scope"))
    gone: list[int] = []
    for scope in sorted(scopes):
        gone += await _reapply_in(tx.lane(scope), secret, known)
    await purge_snapshots(tx)  # made from rows as they were: the tick remakes them
    for row in await tx.fetchall("SELECT proposal_id AS id, text, reason FROM persona_proposals"):
        said = f"{row['text']}\n{row['reason']}"
        if row_fingerprint(secret, "persona_proposals", int(row["id"]), said) in known:
            await tx.execute(
                "UPDATE persona_proposals SET text = ?, reason = ?, state = 'rejected'"
                " WHERE proposal_id = ?",
                (REDACTED, REDACTED, row["id"]),
            )
    await tx.lane(SHARED).merge_indexes(*KEYWORD_INDEXES)
    return gone


async def _reapply_in(lane: Lane, secret: bytes, known: set[str]) -> list[int]:
    scope = lane.scope
    gone = [
        int(r["belief_id"])
        for r in await lane.select("beliefs", columns="belief_id, norm")
        if tombstone_fingerprint(secret, scope, str(r["norm"])) in known
    ]
    for start in range(0, len(gone), 500):
        chunk = gone[start : start + 500]
        await lane.delete("beliefs", f"belief_id IN ({', '.join('?' for _ in chunk)})", chunk)
    for table, key in (("turns", "turn_id"), ("summaries", "summary_id")):
        for row in await lane.select(table, "text != ?", (REDACTED,),
                                     columns=f"{key} AS id, text"):
            if row_fingerprint(secret, table, int(row["id"]), str(row["text"])) in known:
                await lane.update(table, "text = ?", f"{key} = ?", (REDACTED, row["id"]))
    for row in await lane.select("goals", columns="goal_id AS id, text"):
        if row_fingerprint(secret, "goals", int(row["id"]), str(row["text"])) in known:
            await lane.delete("goals", "goal_id = ?", (row["id"],))
    return gone


async def all_tombstones(tx: Tx) -> list[tuple[str, str]]:
    return [(str(r["fingerprint"]), str(r["at"]))
            for r in await tx.fetchall("SELECT fingerprint, at FROM tombstones")]


def tombstones_path(db_path: Path) -> Path:
    """Beside the database and its secret: the tombstones, so a restore of an older backup
    forgets again what was forgotten since (keyed fingerprints only, never plaintext)."""
    return db_path.with_name(db_path.name + ".tombstones")


def write_tombstones(db_path: Path, rows: list[tuple[str, str]]) -> None:
    """Replace the file beside the database with `rows`, atomically, mode 0600."""
    path = tombstones_path(db_path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.writelines(f"{fingerprint}\t{at}\n" for fingerprint, at in sorted(rows))
    os.replace(tmp, path)


def read_tombstones(db_path: Path) -> list[tuple[str, str]]:
    """The tombstones kept beside the database; none when there is no file."""
    path = tombstones_path(db_path)
    try:
        text = path.read_text("ascii")
    except FileNotFoundError:
        return []
    rows = []
    for line in text.splitlines():
        fingerprint, _, at = line.partition("\t")
        if fingerprint and at:
            rows.append((fingerprint, at))
    return rows


async def count_mentions(lane: Lane, needle: str) -> int:
    """How many lines, summaries and goals of the lane's scope repeat `needle` (what
    forgetting it would scrub even when no belief holds it yet)."""
    marks = [_marks(needle)]
    found = 0
    for table in ("turns", "summaries", "goals"):
        rows = await lane.select(table, "text != ?", (REDACTED,), columns="text")
        found += sum(1 for r in rows if _repeats(str(r["text"]), {needle}, marks))
    return found


# Deleted terms linger in FTS5 segments until a merge; optimize rewrites each index whole (this
# SQLite predates FTS5's secure-delete option), and secure_delete zeroes the pages the old
# segments leave free. Every keyword index: a forgotten line's words are in the lines', a member
# removed takes their documents' passages with them.
KEYWORD_INDEXES = ("beliefs_fts", "turns_fts", "chunks_fts")


async def purge_snapshots(tx: Writing) -> None:
    """Drop every chat's snapshot (a machinery's note the tick remakes from what is left),
    scope by scope."""
    for lane in await tx.lanes("snapshots"):
        await lane.delete("snapshots")


async def purge_scope(tx: Writing, scope: str) -> list[int]:
    """Remove everything a scope holds: beliefs, evidence, vectors, lines, overrides, grants,
    and the documents on its shelf."""
    lane = tx.lane(scope)
    ids = [int(r["belief_id"]) for r in await lane.select("beliefs", columns="belief_id")]
    # What hangs from these rows (evidence, vectors, a document's passages) goes with them.
    for table in ("beliefs", "turns", "grants", "summaries", "goals", "documents", "snapshots",
                  "media_waiting"):
        await lane.delete(table)
    await lane.household.execute("DELETE FROM sensitivity_overrides WHERE scope = ?", (scope,))
    await lane.merge_indexes(*KEYWORD_INDEXES)
    return ids


class ForgetBook:
    """`memory.forgetting`: what a member asks to forget, and a member removed."""

    def __init__(self, store: Store, gate: Gate, people: PeopleBook, vectors: VectorBook, *,
                 secret: bytes, now: Callable[[], datetime]) -> None:
        self._store = store
        self._gate = gate
        self._people = people
        self._vectors = vectors
        self._secret = secret
        self._now = now

    async def _target(self, ctx: AccessContext, text: str, *, shared: bool) -> tuple[str, str]:
        if ctx.person_id is None or ctx.activity != Activity.MEMBER_INSPECT:
            raise InvalidRequest("forgetting is a member acting on their own view")
        needle = normalize(text)
        if not needle:
            raise InvalidRequest("say what to forget: the text is empty")
        person = await self._people.get(ctx.person_id)
        if shared and not person.is_owner:
            raise InvalidRequest("only the household's owner can forget shared beliefs")
        return (SHARED if shared else private_scope(person.person_id)), needle

    async def preview(
        self, ctx: AccessContext, text: str, *, shared: bool = False
    ) -> list[Belief]:
        """What `forget` with the same arguments would remove: the member's own beliefs (or,
        for the owner with `shared`, shared ones) whose proposition contains `text`."""
        scope, needle = await self._target(ctx, text, shared=shared)
        async with self._gate.read(ctx, "forget_preview", text) as read:
            rows = await read.beliefs("b.scope = ? AND b.norm LIKE ? ESCAPE '\\'",
                                      (scope, f"%{like_escape(needle)}%"))
            return await lensed(read, rows, self._now())

    async def mentions(self, ctx: AccessContext, text: str, *, shared: bool = False) -> int:
        """How many things said in the member's own scope (or, for the owner with `shared`,
        the shared one) mention `text`: what `forget` scrubs even when no belief holds it yet.
        A count of the reader's own scope, receipted."""
        scope, needle = await self._target(ctx, text, shared=shared)
        async with self._gate.read(ctx, "forget_mentions", text) as read:
            return await count_mentions(read.lane(scope), needle)

    async def forget(self, ctx: AccessContext, text: str, *, shared: bool = False) -> int:
        """Forget this member's beliefs whose proposition contains `text` (the owner may, with
        `shared`, forget shared ones), and the words wherever the scope holds them. Returns
        how many beliefs; the text is never stored."""
        scope, needle = await self._target(ctx, text, shared=shared)
        await self._vectors.file_waiting()  # a line just said is measured by its meaning too
        measured = await self._derived(scope, needle)
        async with self._gate.together(ctx):
            async with self._gate.read(ctx, "forget", text) as read:
                gone = await forget_matching(
                    read.lane(scope), needle=needle, secret=self._secret, now=read.now,
                    said_again=lambda ids: self._vectors.said_again(scope, ids),
                    derived_again=lambda ids: self._vectors.say_again(scope, ids, measured))
                read.returned(gone, [scope] * len(gone))
            if scope == SHARED:
                # A member's snapshot of their chat may hold shared words: every one goes,
                # in the same transaction as the forget (the tick remakes them).
                async with self._gate.writing() as tx:
                    await purge_snapshots(tx)
        self._vectors.remove(gone)
        await self._vectors.prune()
        await self._store.checkpoint()
        await self.mirror()
        return len(gone)

    async def _derived(self, scope: str, needle: str) -> dict[tuple[str, int], Matrix]:
        """The scope's summaries and goals measured sentence by sentence (`VectorBook.pieces`),
        when a forget of `needle` has beliefs to forget: embedded before the forget's
        transaction, so its lock is not held while a model runs. One written in between is
        still scrubbed by its words."""
        async with self._gate.writing() as tx:
            lane = tx.lane(scope)
            if not await lane.value("beliefs", "belief_id", "norm LIKE ? ESCAPE '\\'",
                                    (f"%{like_escape(needle)}%",)):
                return {}
            rows = [("summaries", int(r["id"]), str(r["text"])) for r in await lane.select(
                "summaries", "text != ?", (REDACTED,), columns="summary_id AS id, text")]
            rows += [("goals", int(r["id"]), str(r["text"])) for r in await lane.select(
                "goals", columns="goal_id AS id, text")]
        pieces = await self._vectors.pieces([text for _, _, text in rows])
        if pieces is None:
            return {}
        return {(table, row_id): v for (table, row_id, _), v in zip(rows, pieces, strict=True)}

    async def remove_person(self, person_id: str) -> int:
        """Purge a member and everything they own; returns how many beliefs went with them."""
        person = await self._people.get(person_id)
        async with self._gate.writing() as tx:
            gone = await purge_scope(tx, private_scope(person.person_id))
            if person.telegram_id is not None:  # their DM's chat id is their Telegram id
                await purge_chat(tx, person.telegram_id)
            await tx.execute("DELETE FROM affect WHERE key = ?", (f"person:{person.person_id}",))
            await tx.execute("DELETE FROM people WHERE person_id = ?", (person.person_id,))
        self._vectors.remove(gone)
        await self._vectors.prune()
        await self._store.checkpoint()
        return len(gone)

    async def mirror(self) -> None:
        """Keep the tombstones beside the database too, so a restore of an older backup
        re-applies them (`Memory.restore`)."""
        async with self._store.transaction() as tx:
            rows = await all_tombstones(tx)
        await asyncio.to_thread(write_tombstones, self._store.path, rows)

    async def reapply(self, kept: list[tuple[str, str]]) -> None:
        """After a restore: forget again what the replaced database had forgotten."""
        async with self._gate.writing() as tx:
            await reapply_tombstones(tx, self._secret, kept)
        await self._store.checkpoint()
        await self.mirror()
