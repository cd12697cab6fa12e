"""The memory facade: the only door to what hearth remembers.

Every read of remembered content goes through a method here that takes an `AccessContext`,
embeds the wall's SQL predicate, applies the purpose lens to what the wall let through, and
writes a receipt in the same transaction before returning. Writes return ids and statuses,
never the stored text. There is no method that reads without a context, and no context that
reads everything.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from memory import beliefs as belief_ops
from memory import dream as dream_ops
from memory import recall as ranking
from memory import wall
from memory.classifier import classify
from memory.consolidate import BATCH_LINES, Batch
from memory.dbfile import check_database_file
from memory.embedder import Embedder
from memory.embedder import Vectors as Matrix
from memory.errors import InvalidRequest
from memory.forget import (
    all_tombstones,
    count_mentions,
    forget_matching,
    like_escape,
    purge_scope,
    read_tombstones,
    reapply_tombstones,
    write_tombstones,
)
from memory.household import HouseholdBook
from memory.inbox import Delivery, Inbox, Outbox, finish_update, purge_chat, queue_reply
from memory.lens import GRANTABLE, may_use
from memory.lockfile import hold_database
from memory.models import (
    SHARED,
    AccessContext,
    Activity,
    Belief,
    Explanation,
    Goal,
    Grant,
    Kind,
    Person,
    Provenance,
    Recalled,
    Receipt,
    Role,
    Sensitivity,
    Summary,
    Turn,
    WriteOutcome,
    is_scope,
    private_scope,
    scope_owner,
)
from memory.people import PeopleBook
from memory.receipts import (
    LedgerAnchor,
    copy_head,
    copy_secret,
    load_secret,
    put_head_bytes,
    read_head_bytes,
    receipt_from_row,
    write_receipt,
)
from memory.secrets import has_secret, mask_secrets
from memory.state import StateBook
from memory.store import Row, Store, Tx

Clock = Callable[[], datetime]
T = TypeVar("T")

MAX_TURN_CHARS = 16_000


def utc_now() -> datetime:
    return datetime.now(UTC)


class Memory:
    """One household's memory. Open with `Memory.open`, close with `close`."""

    def __init__(
        self,
        store: Store,
        secret: bytes,
        embedder: Embedder | None,
        clock: Clock,
    ) -> None:
        self._store = store
        self._secret = secret
        self._anchor = LedgerAnchor(store.path, secret)
        self._embedder = embedder
        self._clock = clock
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hearth-cpu")
        self._index: ranking.VectorIndex | None = (
            None if embedder is None else ranking.VectorIndex(embedder.dim)
        )
        self.people = PeopleBook(store, self._now_text)
        self.state = StateBook(store, self._now_text)
        self.household = HouseholdBook(store, self.people, self._now)
        self.inbox = Inbox(store, self._now)
        self.outbox = Outbox(store, self._now)

    # --- life cycle --------------------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        path: Path | str,
        *,
        embedder: Embedder | None = None,
        create: bool = False,
        clock: Clock = utc_now,
    ) -> Memory:
        """Open the household's database. Only `create=True` makes a new one, and only where
        no file is: then its install secret is made too. An existing database without its
        secret, or a file that is not a hearth database hearth may write, is refused before
        anything writes to it."""
        db_path = Path(path)
        fresh = await asyncio.to_thread(check_database_file, db_path, create=create)
        secret = load_secret(db_path, create=fresh)
        store = await Store.open(db_path, create=create)
        memory = cls(store, secret, embedder, clock)
        try:
            await memory._anchor.open(store, memory._now_text())
            await memory._load_vectors()
        except Exception:
            await memory.close()
            raise
        return memory

    async def close(self) -> None:
        await self._anchor.flush()
        await self._store.close()
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def checkpoint(self) -> None:
        await self._store.checkpoint()

    @property
    def path(self) -> Path:
        return self._store.path

    @property
    def lock_wait(self) -> float:
        """How long one write waits for another program's lock before StoreBusy (seconds)."""
        return self._store.lock_wait

    @lock_wait.setter
    def lock_wait(self, seconds: float) -> None:
        self._store.lock_wait = seconds

    async def backup(self, target: Path) -> None:
        """An online, consistent copy of the database (mode 0600), with the install secret and
        the ledger's anchor beside it. The anchor is read before the copy is taken: it never
        leads the rows it anchors, so another process's read meanwhile cannot make the copy
        look cut."""
        if target.exists():  # noqa: ASYNC240 -- one stat before a one-off copy
            raise InvalidRequest(f"{target} already exists; choose a new file")
        if not target.parent.is_dir():
            raise InvalidRequest(f"there is no folder {target.parent} to write the backup in")
        await self._anchor.flush()
        head = read_head_bytes(self.path)
        await self._store.backup_to(target)
        copy_secret(self.path, target)
        put_head_bytes(target, head)

    @classmethod
    async def restore(cls, source: Path, target: Path) -> None:
        """Replace `target` with a backup made by `backup` (its secret and the ledger's anchor
        beside it), after checking that the backup opens and that `target`, if there, is a
        hearth database (its own secret may be the thing lost). Refused while a bot serves
        `target`: this holds the database's lock, as `hearth run` does, for the whole swap.
        The staging copy is made 0600, and the anchor comes with the backup (or, when the
        backup has none, `target` keeps none that belonged to the ledger it replaces). The
        tombstones kept beside `target` are re-applied to what comes back, so nothing
        forgotten after the backup was made returns with it."""
        if not source.exists():  # noqa: ASYNC240 -- one stat before a one-off restore
            raise InvalidRequest(f"no backup at {source}")
        await asyncio.to_thread(check_database_file, target, create=True)
        with hold_database(target, create=True,
                           then="stop the bot (`hearth run`) before restoring"):
            # What was forgotten since the backup was made: forgotten again once it is back.
            kept = await asyncio.to_thread(read_tombstones, target)
            backup = await cls.open(source)
            try:
                staging = target.with_name(target.name + ".restoring")
                staging.unlink(missing_ok=True)
                await backup._store.backup_to(staging)
            finally:
                await backup.close()
            for suffix in ("-wal", "-shm"):
                target.with_name(target.name + suffix).unlink(missing_ok=True)
            staging.replace(target)
            copy_secret(source, target)
            copy_head(source, target)
            restored = await cls.open(target)
            try:
                async with restored._store.transaction() as tx:
                    await reapply_tombstones(tx, restored._secret, kept)
                await restored._store.checkpoint()
                await restored._mirror_tombstones()
            finally:
                await restored.close()

    def _now(self) -> datetime:
        return _utc(self._clock())

    def _now_text(self) -> str:
        return self._now().isoformat()

    async def _off_loop(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn)

    async def _embed(self, texts: list[str]) -> Matrix | None:
        embedder = self._embedder
        if embedder is None or not texts:
            return None
        return await self._off_loop(lambda: embedder.embed(texts))

    async def sync_index(self) -> None:
        """Take in beliefs another process wrote (`hearth tick` or `hearth remember` while the
        bot runs): their vectors join this process's matrices, so semantic recall finds them.
        Reads only ids until it finds beliefs the matrices lack."""
        if self._embedder is None or self._index is None:
            return
        async with self._store.transaction() as tx:
            rows = await tx.fetchall("SELECT belief_id FROM beliefs ORDER BY belief_id")
        index = self._index
        new = [int(r["belief_id"]) for r in rows if not index.has(int(r["belief_id"]))]
        for start in range(0, len(new), 500):
            await self._load_vectors(new[start : start + 500])

    async def _load_vectors(self, only: Sequence[int] | None = None) -> None:
        """Build the per-scope matrices from stored vectors (all beliefs, or `only` these);
        embed beliefs written while no embedder was set."""
        if self._embedder is None or self._index is None:
            return
        model = self._embedder.name
        among = "1"
        params: tuple[int, ...] = ()
        if only is not None:
            among, params = f"b.belief_id IN ({', '.join('?' for _ in only)})", tuple(only)
        async with self._store.transaction() as tx:
            # Index maintenance, not a read for anyone: vectors go into per-scope matrices
            # that only a walled recall ever searches.
            rows = await tx.fetchall(
                "SELECT b.belief_id, b.scope, v.vector FROM beliefs b JOIN belief_vectors v"
                f" ON v.belief_id = b.belief_id AND v.model = ? WHERE {among}"
                " ORDER BY b.belief_id",
                (model, *params),
            )
            missing = await tx.fetchall(
                "SELECT b.belief_id, b.scope, b.proposition FROM beliefs b WHERE NOT EXISTS"
                " (SELECT 1 FROM belief_vectors v WHERE v.belief_id = b.belief_id"
                f"  AND v.model = ?) AND {among} ORDER BY b.belief_id",
                (model, *params),
            )
        by_scope: dict[str, tuple[list[int], list[bytes]]] = {}
        for row in rows:
            ids, blobs = by_scope.setdefault(str(row["scope"]), ([], []))
            ids.append(int(row["belief_id"]))
            blobs.append(bytes(row["vector"]))
        dim = self._embedder.dim
        for scope, (ids, blobs) in by_scope.items():
            matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), dim)
            self._index.add(scope, ids, matrix)
        if missing:
            await self._store_vectors(
                [(int(r["belief_id"]), str(r["scope"]), str(r["proposition"])) for r in missing]
            )

    async def _store_vectors(self, items: Sequence[tuple[int, str, str]]) -> None:
        if self._embedder is None or self._index is None or not items:
            return
        vectors = await self._embed([text for _, _, text in items])
        if vectors is None:
            return
        model = self._embedder.name
        async with self._store.transaction() as tx:
            alive = {
                int(r["belief_id"])
                for r in await tx.fetchall(
                    f"SELECT belief_id FROM beliefs WHERE belief_id IN "
                    f"({', '.join('?' for _ in items)})",
                    [belief_id for belief_id, _, _ in items],
                )
            }
            await tx.executemany(
                "INSERT OR REPLACE INTO belief_vectors(belief_id, model, vector) VALUES (?, ?, ?)",
                [
                    (belief_id, model, vectors[i].tobytes())
                    for i, (belief_id, _, _) in enumerate(items)
                    if belief_id in alive
                ],
            )
        by_scope: dict[str, list[int]] = {}
        for i, (belief_id, scope, _) in enumerate(items):
            if belief_id in alive and not self._index.has(belief_id):
                by_scope.setdefault(scope, []).append(i)
        for scope, rows in by_scope.items():
            self._index.add(scope, [items[i][0] for i in rows], vectors[rows])

    # --- the receipted read ------------------------------------------------------------------

    async def _read(
        self,
        ctx: AccessContext,
        method: str,
        query: str,
        body: Callable[[Tx], Awaitable[tuple[T, list[int], list[str], int]]],
    ) -> T:
        """Run a read and write its receipt in one transaction; the receipt commits with it."""
        async with self._store.transaction() as tx:
            result, ids, scopes, suppressed = await body(tx)
            seq = await write_receipt(
                tx,
                secret=self._secret,
                ctx=ctx,
                method=method,
                query=query,
                returned_ids=ids,
                scopes=scopes,
                suppressed=suppressed,
                now=self._now_text(),
                anchor=self._anchor,
            )
        self._anchor.committed(seq)
        return result

    async def _grants_for(self, tx: Tx, ctx: AccessContext) -> list[Grant]:
        scope_sql, scope_params = wall.predicate(ctx, "scope")
        rows = await tx.fetchall(
            f"SELECT * FROM grants WHERE {scope_sql} AND activity = ? AND revoked_at IS NULL",
            (*scope_params, ctx.activity.value),
        )
        return [_grant_from_row(r) for r in rows]

    async def _usable(self, tx: Tx, ctx: AccessContext, rows: list[Row]) -> tuple[list[Row], int]:
        """The rows (already behind the wall) the purpose lens lets this work use, in order,
        and how many it held back."""
        grants = await self._grants_for(tx, ctx)
        now = self._now_text()
        allowed = [
            r for r in rows
            if may_use(ctx, str(r["scope"]), Sensitivity(r["sensitivity"]), grants, now)
        ]
        return allowed, len(rows) - len(allowed)

    # --- writes ------------------------------------------------------------------------------

    async def append_turn(
        self,
        *,
        chat_id: str,
        speaker_id: str | None,
        role: Role,
        scope: str,
        text: str,
        source_update: int | None = None,
    ) -> int:
        """Store one transcript line with secret tokens masked; returns its id, nothing more.

        A line from a Telegram update names it (`source_update`): the same update again (a turn
        replayed after a crash) returns the line already stored instead of a second one."""
        turn_id, _ = await self.receive_turn(chat_id=chat_id, speaker_id=speaker_id, role=role,
                                             scope=scope, text=text, source_update=source_update)
        return turn_id

    async def receive_turn(
        self,
        *,
        chat_id: str,
        speaker_id: str | None,
        role: Role,
        scope: str,
        text: str,
        source_update: int | None,
    ) -> tuple[int, bool]:
        """As `append_turn`, and whether the line is new (False: its update was replayed)."""
        _check_scope(scope)
        masked = _line_text(text)
        async with self._store.transaction() as tx:
            if source_update is not None:
                existing = await tx.scalar(
                    "SELECT turn_id FROM turns WHERE source_update = ?", (source_update,)
                )
                if existing is not None:
                    return int(existing), False
            turn_id = await tx.execute(
                "INSERT INTO turns(chat_id, speaker_id, role, scope, sensitivity, text, at,"
                " source_update) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (chat_id, speaker_id, role.value, scope, classify(masked).value, masked,
                 self._now_text(), source_update),
            )
        return turn_id, True

    async def record_reply(
        self,
        *,
        chat_id: str,
        scope: str,
        text: str,
        template_version: str,
        tokens: Mapping[str, int],
        belief_ids: Sequence[int],
        delivery: Delivery | None = None,
    ) -> int:
        """Her reply, in one transaction: the transcript line, its turn log, and (for a chat
        on Telegram) the outbox entry that will carry it and the inbox update it completes. A
        crash before this commits replays the turn; after it, the reply is only delivered."""
        _check_scope(scope)
        masked = _line_text(text)
        now = self._now_text()
        async with self._store.transaction() as tx:
            reply_turn = await tx.execute(
                "INSERT INTO turns(chat_id, speaker_id, role, scope, sensitivity, text, at)"
                " VALUES (?, NULL, ?, ?, ?, ?, ?)",
                (chat_id, Role.ASSISTANT.value, scope, classify(masked).value, masked, now),
            )
            await tx.execute(
                "INSERT OR REPLACE INTO turn_log(turn_id, template_version, tokens, belief_ids,"
                " at) VALUES (?, ?, ?, ?, ?)",
                (reply_turn, template_version, json.dumps(dict(tokens)),
                 json.dumps(list(belief_ids)), now),
            )
            if delivery is not None:
                await queue_reply(tx, delivery, text, now)
                await finish_update(tx, delivery.update_id, now)
        return reply_turn

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
        person = await self.people.get(person_id)
        scope = SHARED if shared else private_scope(person.person_id)
        now = self._now_text()
        item = belief_ops.Assertion(
            proposition=text,
            scope=scope,
            provenance=Provenance.TOLD,
            source=f"statement:{person.person_id}:{now}",
            kind=kind,
            subject_id=subject_id,
        )
        (outcome,) = await self.assert_beliefs([item])
        return outcome

    async def assert_beliefs(self, items: Sequence[belief_ops.Assertion]) -> list[WriteOutcome]:
        """Assert a batch of evidence in one transaction; embeddings are added after commit."""
        for item in items:
            _check_scope(item.scope)
        now = self._now_text()
        outcomes: list[WriteOutcome] = []
        async with self._store.transaction() as tx:
            for item in items:
                outcomes.append(
                    await belief_ops.assert_one(
                        tx, item, secret=self._secret, now=now, classify=classify
                    )
                )
        await self._vectors_for_created(items, outcomes)
        return outcomes

    async def _vectors_for_created(
        self, items: Sequence[belief_ops.Assertion], outcomes: Sequence[WriteOutcome]
    ) -> None:
        """Embed the beliefs a write created (after its commit, off the event loop)."""
        await self._store_vectors([
            (int(outcome.belief_id), item.scope, belief_ops.check_text(item.proposition))
            for item, outcome in zip(items, outcomes, strict=True)
            if outcome.status == "created" and outcome.belief_id is not None
        ])

    async def _owned_visible(self, tx: Tx, ctx: AccessContext, belief_id: int) -> Row | None:
        """A belief this member may change: visible to them and theirs (or shared, for the
        owner)."""
        rows = await belief_ops.fetch_visible(tx, ctx, "b.belief_id = ?", (belief_id,))
        if not rows:
            return None
        row = rows[0]
        owner = scope_owner(str(row["scope"]))
        if owner == ctx.person_id:
            return row
        if owner is None and ctx.person_id is not None:
            person = await self.people.get(ctx.person_id, tx=tx)
            return row if person.is_owner else None
        return None

    async def set_sensitivity(
        self, ctx: AccessContext, belief_id: int, sensitivity: Sensitivity
    ) -> bool:
        """An explicit override of a belief's class, by its owner; it wins over the classifier
        both ways. Returns False, as for a missing belief, when it is not theirs."""
        async with self._store.transaction() as tx:
            if await self._owned_visible(tx, ctx, belief_id) is None:
                return False
            await belief_ops.set_sensitivity(
                tx, belief_id, sensitivity, str(ctx.person_id), self._now_text()
            )
        return True

    async def link_contradiction(self, ctx: AccessContext, a: int, b: int) -> bool:
        """Mark two beliefs of one scope as unable to both hold."""
        if a == b:
            return False
        async with self._store.transaction() as tx:
            rows = await belief_ops.fetch_visible(
                tx, ctx, "b.belief_id IN (?, ?)", (a, b)
            )
            if len(rows) != 2 or rows[0]["scope"] != rows[1]["scope"]:
                return False
            await tx.execute(
                "INSERT OR IGNORE INTO contradictions(low_id, high_id, at) VALUES (?, ?, ?)",
                (min(a, b), max(a, b), self._now_text()),
            )
        return True

    async def supersede(self, ctx: AccessContext, old: int, new: int) -> bool:
        """The newer belief supersedes the older one of the same scope; nothing is deleted."""
        if old == new:
            return False
        async with self._store.transaction() as tx:
            rows = {
                int(r["belief_id"]): r
                for r in await belief_ops.fetch_visible(
                    tx, ctx, "b.belief_id IN (?, ?)", (old, new)
                )
            }
            if len(rows) != 2 or rows[old]["scope"] != rows[new]["scope"]:
                return False
            ends = rows[new]["valid_from"] or self._now_text()
            await tx.execute(
                "UPDATE beliefs SET superseded_by = ?, valid_to = ?, updated_at = ?"
                " WHERE belief_id = ?",
                (new, ends, self._now_text(), old),
            )
        return True

    # --- reads -------------------------------------------------------------------------------

    async def recall(
        self,
        ctx: AccessContext,
        query: str,
        *,
        limit: int = ranking.DEFAULT_LIMIT,
        as_of: datetime | None = None,
    ) -> list[Recalled]:
        """The beliefs most relevant to `query` that this work may use; [] when none clear the
        threshold. `as_of` asks what was believed true at that time."""
        query_terms = ranking.terms(query)
        semantic: dict[int, float] = {}
        vector = await self._embed([query]) if query.strip() else None
        if vector is not None and self._index is not None:
            index, q = self._index, vector[0]
            semantic = await self._off_loop(
                lambda: index.search(ctx, q, ranking.CANDIDATES_PER_SOURCE)
            )
        use_semantic = self._embedder is not None
        now = self._now()
        when = (now if as_of is None else _utc(as_of)).isoformat()

        async def body(tx: Tx) -> tuple[list[Recalled], list[int], list[str], int]:
            keyword_ids = await self._keyword_candidates(tx, ctx, query_terms)
            candidates = ranking.candidates(semantic, keyword_ids)
            if not candidates:
                return [], [], [], 0
            marks = ", ".join("?" for _ in candidates)
            rows = await belief_ops.fetch_visible(
                tx,
                ctx,
                f"b.belief_id IN ({marks}) AND b.quarantined = 0"
                " AND (b.valid_from IS NULL OR b.valid_from <= ?)"
                " AND (b.valid_to IS NULL OR b.valid_to > ?)",
                (*candidates, when, when),
            )
            allowed, suppressed = await self._usable(tx, ctx, rows)
            recent = await self._recently_recalled(tx, ctx)
            scored: list[Recalled] = []
            for row in allowed:
                belief = belief_ops.belief_from_row(row, now)
                sim = semantic.get(belief.belief_id, 0.0) if use_semantic else None
                overlap = ranking.keyword_overlap(query_terms, belief.proposition)
                rel = ranking.relevance(sim, overlap)
                if not ranking.clears_threshold(sim, rel):
                    continue
                score = ranking.blended(
                    rel,
                    belief.confidence,
                    ranking.recency(belief.updated_at, now),
                    float(row["salience"]),
                    belief.belief_id in recent,
                )
                scored.append(
                    Recalled(
                        belief=belief,
                        score=round(score, 4),
                        semantic=round(sim or 0.0, 4),
                        keyword=round(overlap, 4),
                    )
                )
            scored.sort(key=lambda r: (-r.score, r.belief.belief_id))
            top = scored[: max(0, limit)]
            return (
                top,
                [r.belief.belief_id for r in top],
                [r.belief.scope for r in top],
                suppressed,
            )

        return await self._read(ctx, "recall", query, body)

    async def _keyword_candidates(
        self, tx: Tx, ctx: AccessContext, query_terms: list[str]
    ) -> list[int]:
        """Visible beliefs sharing words with the query: those with every word first, then any.

        Ordered by id, never by FTS5's bm25: its statistics span the whole table, hidden rows
        included, and must not decide which visible beliefs a reader gets.
        """
        if not query_terms:
            return []
        wall_sql, wall_params = wall.predicate(ctx, "b.scope")
        limit = ranking.CANDIDATES_PER_SOURCE
        found: list[int] = []
        for match in (ranking.fts_query(query_terms, every=True), ranking.fts_query(query_terms)):
            rows = await tx.fetchall(
                "SELECT f.rowid AS belief_id FROM beliefs_fts f"
                " JOIN beliefs b ON b.belief_id = f.rowid"
                f" WHERE beliefs_fts MATCH ? AND {wall_sql}"
                " ORDER BY f.rowid DESC LIMIT ?",
                (match, *wall_params, limit),
            )
            found.extend(int(r["belief_id"]) for r in rows if int(r["belief_id"]) not in found)
            if len(found) >= limit or len(query_terms) == 1:
                break
        return found[:limit]

    async def _recently_recalled(self, tx: Tx, ctx: AccessContext) -> set[int]:
        rows = await tx.fetchall(
            "SELECT returned_ids FROM receipts WHERE actor = ? AND method = 'recall'"
            " AND activity = ? ORDER BY seq DESC LIMIT ?",
            (ctx.actor, ctx.activity.value, ranking.REPETITION_WINDOW),
        )
        return {int(i) for r in rows for i in json.loads(r["returned_ids"])}

    async def inspect(self, ctx: AccessContext) -> list[Belief]:
        """What she knows about this member, as they may see it: their own scope's beliefs and
        shared beliefs about them."""
        if ctx.person_id is None:
            return []
        now = self._now()
        person_id = ctx.person_id

        async def body(tx: Tx) -> tuple[list[Belief], list[int], list[str], int]:
            rows = await belief_ops.fetch_visible(
                tx,
                ctx,
                "(b.scope = ? OR b.subject_id = ?)",
                (private_scope(person_id), person_id),
            )
            return await self._lensed(tx, ctx, rows, now)

        return await self._read(ctx, "inspect", "", body)

    async def about(self, ctx: AccessContext, person_id: str, *, limit: int = 12) -> list[Belief]:
        """Beliefs about one member that this reader may use: the partner model's material.

        In a member's own chat that is their scope's beliefs about themselves (or about no one
        else) and shared beliefs about them; in a group, only the shared ones.
        """
        now = self._now()

        async def body(tx: Tx) -> tuple[list[Belief], list[int], list[str], int]:
            # The strongest and freshest first, ranked in SQL; a margin over the limit leaves
            # room for what the lens holds back.
            rows = await belief_ops.fetch_visible(
                tx,
                ctx,
                "(b.subject_id = ? OR (b.scope = ? AND b.subject_id IS NULL))"
                " AND b.quarantined = 0 AND b.superseded_by IS NULL",
                (person_id, private_scope(person_id)),
                order="b.log_odds DESC, b.reinforced_at DESC, b.belief_id DESC",
                limit=max(0, limit) * 4,
            )
            allowed, suppressed = await self._usable(tx, ctx, rows)
            top = [belief_ops.belief_from_row(r, now) for r in allowed[: max(0, limit)]]
            return top, [b.belief_id for b in top], [b.scope for b in top], suppressed

        return await self._read(ctx, "about", person_id, body)

    async def _lensed(
        self, tx: Tx, ctx: AccessContext, rows: list[Row], now: datetime
    ) -> tuple[list[Belief], list[int], list[str], int]:
        """Usable belief rows as records, strongest first, with what a receipt records."""
        allowed, suppressed = await self._usable(tx, ctx, rows)
        found = [belief_ops.belief_from_row(r, now) for r in allowed]
        found.sort(key=lambda b: (-b.confidence, b.belief_id))
        return found, [b.belief_id for b in found], [b.scope for b in found], suppressed

    async def explain(self, ctx: AccessContext, belief_id: int) -> Explanation | None:
        """One belief with its evidence trail; None alike for a missing and a hidden one."""
        now = self._now()

        async def body(tx: Tx) -> tuple[Explanation | None, list[int], list[str], int]:
            rows = await belief_ops.fetch_visible(tx, ctx, "b.belief_id = ?", (belief_id,))
            found, ids, scopes, suppressed = await self._lensed(tx, ctx, rows, now)
            if not found:
                return None, [], [], suppressed
            row = rows[0]
            explanation = Explanation(
                belief=found[0],
                evidence=await belief_ops.evidence_for(tx, belief_id),
                contradicts=await belief_ops.contradicting_ids(tx, ctx, belief_id),
                superseded_by=row["superseded_by"],
            )
            return explanation, ids, scopes, suppressed

        return await self._read(ctx, "explain", str(belief_id), body)

    async def conflicts(self, ctx: AccessContext) -> list[tuple[Belief, Belief]]:
        """Pairs of contradicting beliefs, both of which this work may use."""
        now = self._now()

        async def body(
            tx: Tx,
        ) -> tuple[list[tuple[Belief, Belief]], list[int], list[str], int]:
            rows = await belief_ops.fetch_visible(
                tx,
                ctx,
                "b.belief_id IN (SELECT low_id FROM contradictions"
                " UNION SELECT high_id FROM contradictions)",
            )
            found, _, _, suppressed = await self._lensed(tx, ctx, rows, now)
            usable = {b.belief_id: b for b in found}
            marks = ", ".join("?" for _ in usable) or "NULL"
            edges = await tx.fetchall(
                f"SELECT low_id, high_id FROM contradictions WHERE low_id IN ({marks})"
                f" AND high_id IN ({marks}) ORDER BY low_id, high_id",
                (*usable, *usable),
            )
            pairs = [(usable[int(e["low_id"])], usable[int(e["high_id"])]) for e in edges]
            ids = sorted({b.belief_id for pair in pairs for b in pair})
            return pairs, ids, [usable[i].scope for i in ids], suppressed

        return await self._read(ctx, "conflicts", "", body)

    async def transcript(
        self,
        ctx: AccessContext,
        *,
        chat_id: str | None = None,
        limit: int = 50,
        scope: str | None = None,
        after_turn_id: int = 0,
    ) -> list[Turn]:
        """Recent transcript lines this work may use, oldest first; `scope` narrows to one of
        the scopes the reader sees, `after_turn_id` to lines newer than that one."""

        async def body(tx: Tx) -> tuple[list[Turn], list[int], list[str], int]:
            wall_sql, wall_params = wall.predicate(ctx, "scope")
            chat_sql = "1" if chat_id is None else "chat_id = ?"
            scope_sql = "1" if scope is None else "scope = ?"
            params: tuple[object, ...] = (
                *wall_params,
                *(() if chat_id is None else (chat_id,)),
                *(() if scope is None else (scope,)),
                after_turn_id,
            )
            rows = await tx.fetchall(
                f"SELECT * FROM turns WHERE {wall_sql} AND {chat_sql} AND {scope_sql}"
                " AND turn_id > ? ORDER BY turn_id DESC LIMIT ?",
                (*params, max(0, limit)),
            )
            allowed, suppressed = await self._usable(tx, ctx, rows)
            turns = [_turn_from_row(r) for r in reversed(allowed)]
            return turns, [t.turn_id for t in turns], [t.scope for t in turns], suppressed

        return await self._read(ctx, "transcript", chat_id or "", body)

    async def export(self, ctx: AccessContext) -> dict[str, Any]:
        """Everything this member may see about themselves, as one JSON-ready document."""
        if ctx.activity != Activity.MEMBER_INSPECT or ctx.person_id is None:
            raise InvalidRequest("an export is a member looking at their own view")
        person = await self.people.get(ctx.person_id)
        now = self._now()
        scope = private_scope(person.person_id)

        async def body(tx: Tx) -> tuple[dict[str, Any], list[int], list[str], int]:
            rows = await belief_ops.fetch_visible(
                tx, ctx, "(b.scope = ? OR b.subject_id = ?)", (scope, person.person_id)
            )
            found, ids, scopes, suppressed = await self._lensed(tx, ctx, rows, now)
            beliefs = []
            for belief in found:
                evidence = await belief_ops.evidence_for(tx, belief.belief_id)
                beliefs.append(
                    belief.model_dump(mode="json")
                    | {"evidence": [e.model_dump(mode="json") for e in evidence]}
                )
            turn_rows = await tx.fetchall(
                "SELECT * FROM turns WHERE scope = ? ORDER BY turn_id", (scope,)
            )
            goal_rows = await tx.fetchall(
                "SELECT * FROM goals WHERE person_id = ? AND scope = ? ORDER BY goal_id",
                (person.person_id, scope),
            )
            given = await tx.fetchall(
                "SELECT * FROM grants WHERE grantor_id = ? ORDER BY grant_id",
                (person.person_id,),
            )
            document = {
                "person": person.model_dump(mode="json"),
                "exported_at": now.isoformat(),
                "beliefs": beliefs,
                "transcript": [_turn_from_row(r).model_dump(mode="json") for r in turn_rows],
                "grants_given": [_grant_from_row(r).model_dump(mode="json") for r in given],
                "goals": [
                    {k: r[k] for k in Goal.model_fields} for r in goal_rows
                ],
            }
            return document, ids, scopes, suppressed

        document = await self._read(ctx, "export", "", body)
        document["reads_of_my_facts"] = [
            r.model_dump(mode="json", exclude={"prev_hash", "hash"})
            for r in await self.receipts_about(person.person_id)
        ]
        return document

    # --- goals and summaries -----------------------------------------------------------------

    async def add_goal(
        self,
        person_id: str,
        text: str,
        *,
        scope: str,
        provenance: str,
        due: str | None = None,
        priority: int = 2,
        source_turn_id: int | None = None,
    ) -> tuple[int, bool]:
        """An open goal for a member, made once: the same open goal again returns its id and
        False. Returns only ids, never text."""
        _check_scope(scope)
        cleaned = belief_ops.check_text(text)
        if has_secret(cleaned):
            raise InvalidRequest("a goal cannot hold a secret token")
        if not 1 <= priority <= 3:
            raise InvalidRequest("a goal's priority is 1 (high) to 3 (low)")
        person = await self.people.get(person_id)
        owner = scope_owner(scope)
        if owner not in (None, person.person_id):
            raise InvalidRequest("a member's goal lives in their own scope or the shared one")
        norm = belief_ops.normalize(cleaned)
        now = self._now_text()
        async with self._store.transaction() as tx:
            existing = await tx.scalar(
                "SELECT goal_id FROM goals WHERE person_id = ? AND norm = ? AND state = 'open'",
                (person.person_id, norm),
            )
            if existing is not None:
                return int(existing), False
            goal_id = await tx.execute(
                "INSERT INTO goals(person_id, scope, text, norm, sensitivity, priority, due,"
                " provenance, source_turn_id, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (person.person_id, scope, cleaned, norm, classify(cleaned).value, priority, due,
                 provenance, source_turn_id, now, now),
            )
        return goal_id, True

    async def set_goal_state(self, person_id: str, goal_id: int, state: str) -> bool:
        if state not in ("open", "done", "dropped"):
            raise InvalidRequest("a goal is open, done or dropped")
        async with self._store.transaction() as tx:
            changed = await tx.execute(
                "UPDATE goals SET state = ?, updated_at = ? WHERE goal_id = ? AND person_id = ?",
                (state, self._now_text(), goal_id, person_id),
            )
        return changed == 1

    async def goals(self, ctx: AccessContext, *, limit: int = 20) -> list[Goal]:
        """Open goals this work may use: the member's own (or, for a group, shared ones)."""

        async def body(tx: Tx) -> tuple[list[Goal], list[int], list[str], int]:
            wall_sql, wall_params = wall.predicate(ctx, "scope")
            whose = "person_id = ?" if ctx.person_id is not None else "scope = 'shared'"
            params: tuple[object, ...] = (*wall_params,) + (
                (ctx.person_id,) if ctx.person_id is not None else ()
            )
            rows = await tx.fetchall(
                f"SELECT * FROM goals WHERE {wall_sql} AND {whose} AND state = 'open'"
                " ORDER BY priority, coalesce(due, '9999'), goal_id LIMIT ?",
                (*params, max(0, limit)),
            )
            allowed, suppressed = await self._usable(tx, ctx, rows)
            found = [
                Goal.model_validate({k: r[k] for k in Goal.model_fields}) for r in allowed
            ]
            return found, [g.goal_id for g in found], [g.scope for g in found], suppressed

        return await self._read(ctx, "goals", "", body)

    async def write_summary(
        self, scope: str, chat_id: str, text: str, through_turn_id: int
    ) -> None:
        """Store a rolling summary under the scope of what it was made from."""
        _check_scope(scope)
        masked = mask_secrets(text.strip())
        async with self._store.transaction() as tx:
            await tx.execute(
                "INSERT INTO summaries(scope, chat_id, text, sensitivity, through_turn_id,"
                " updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(scope, chat_id) DO UPDATE"
                " SET text = excluded.text, sensitivity = excluded.sensitivity,"
                " through_turn_id = excluded.through_turn_id, updated_at = excluded.updated_at",
                (scope, chat_id, masked, classify(masked).value, through_turn_id,
                 self._now_text()),
            )

    async def summary(self, ctx: AccessContext, chat_id: str) -> Summary | None:
        """The chat's rolling summary, if its scope may be seen here and the work may use it."""

        async def body(tx: Tx) -> tuple[Summary | None, list[int], list[str], int]:
            wall_sql, wall_params = wall.predicate(ctx, "scope")
            rows = await tx.fetchall(
                f"SELECT rowid AS id, * FROM summaries WHERE {wall_sql} AND chat_id = ?"
                " ORDER BY scope",
                (*wall_params, chat_id),
            )
            allowed, suppressed = await self._usable(tx, ctx, rows)
            if not allowed:
                return None, [], [], suppressed
            row = allowed[-1]  # a private summary is the fuller one where both exist
            found = Summary.model_validate({k: row[k] for k in Summary.model_fields})
            return found, [int(row["id"])], [found.scope], suppressed

        return await self._read(ctx, "summary", chat_id, body)

    # --- the tick: consolidation and compaction ----------------------------------------------

    async def pending_scopes(self) -> list[tuple[str, int, str]]:
        """Scopes with lines past their consolidation watermark: (scope, how many, the newest
        line's time). Counts and times only; no line is read here."""
        async with self._store.transaction() as tx:
            rows = await tx.fetchall(
                "SELECT t.scope, count(*) AS n, max(t.at) AS newest FROM turns t"
                " LEFT JOIN consolidation_marks m ON m.scope = t.scope"
                " WHERE t.turn_id > coalesce(m.through_turn_id, 0)"
                " GROUP BY t.scope ORDER BY min(t.turn_id)"
            )
        return [(str(r["scope"]), int(r["n"]), str(r["newest"])) for r in rows]

    async def next_batch(self, scope: str, *, limit: int = BATCH_LINES) -> Batch | None:
        """The next pending lines of one scope, oldest first, read by that scope's own
        consolidation lane (receipted). None when nothing waits."""
        _check_scope(scope)
        ctx = AccessContext.for_batch(scope, "consolidate the next pending batch of one scope")

        async def body(tx: Tx) -> tuple[Batch | None, list[int], list[str], int]:
            after = int(await tx.scalar(
                "SELECT coalesce((SELECT through_turn_id FROM consolidation_marks"
                " WHERE scope = ?), 0)", (scope,)
            ))
            wall_sql, wall_params = wall.predicate(ctx, "scope")
            rows = await tx.fetchall(
                f"SELECT * FROM turns WHERE {wall_sql} AND scope = ? AND turn_id > ?"
                " ORDER BY turn_id LIMIT ?",
                (*wall_params, scope, after, max(1, limit)),
            )
            allowed, suppressed = await self._usable(tx, ctx, rows)
            if not rows:
                return None, [], [], suppressed
            turns = tuple(_turn_from_row(r) for r in allowed)
            # The watermark moves past every line read, even one the lens held back, so a
            # held-back line never blocks its scope; `through` is the last line read.
            batch = Batch(scope=scope, turns=turns, after_turn_id=after,
                          read_through=int(rows[-1]["turn_id"]), read_count=len(rows))
            return batch, [t.turn_id for t in turns], [scope] * len(turns), suppressed

        return await self._read(ctx, "consolidation_batch", scope, body)

    async def commit_batch(
        self, batch: Batch, items: Sequence[belief_ops.Assertion]
    ) -> list[WriteOutcome] | None:
        """Store a batch's extractions and advance its scope's watermark in one transaction.

        None, with nothing stored, when the watermark has moved since the batch was read (the
        batch was already consolidated): a re-run stores nothing twice.
        """
        if any(item.scope != batch.scope for item in items):
            raise InvalidRequest("a batch's extractions belong to the batch's own scope")
        now = self._now_text()
        outcomes: list[WriteOutcome] = []
        async with self._store.transaction() as tx:
            current = int(await tx.scalar(
                "SELECT coalesce((SELECT through_turn_id FROM consolidation_marks"
                " WHERE scope = ?), 0)", (batch.scope,)
            ))
            if current != batch.after_turn_id:
                return None
            for item in items:
                outcomes.append(
                    await belief_ops.assert_one(
                        tx, item, secret=self._secret, now=now, classify=classify
                    )
                )
            await tx.execute(
                "INSERT INTO consolidation_marks(scope, through_turn_id, updated_at)"
                " VALUES (?, ?, ?) ON CONFLICT(scope) DO UPDATE SET"
                " through_turn_id = excluded.through_turn_id, updated_at = excluded.updated_at",
                (batch.scope, batch.read_through, now),
            )
        await self._vectors_for_created(items, outcomes)
        return outcomes

    async def note_unusable_batch(self, batch: Batch) -> int:
        """Count one unusable model answer for this batch; returns how many it has had."""
        async with self._store.transaction() as tx:
            row = await tx.fetchone(
                "SELECT after_turn_id, attempts FROM consolidation_failures WHERE scope = ?",
                (batch.scope,),
            )
            attempts = 1
            if row is not None and int(row["after_turn_id"]) == batch.after_turn_id:
                attempts = int(row["attempts"]) + 1
            await tx.execute(
                "INSERT INTO consolidation_failures(scope, after_turn_id, attempts, at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT(scope) DO UPDATE SET"
                " after_turn_id = excluded.after_turn_id, attempts = excluded.attempts,"
                " at = excluded.at",
                (batch.scope, batch.after_turn_id, attempts, self._now_text()),
            )
        return attempts

    async def chats_to_compact(self) -> list[tuple[str, str, int, int]]:
        """Chats with lines newer than their summary: (chat id, scope, new lines, the summary's
        last line id). Ids and counts only. A chat whose lines span scopes is listed once per
        scope, and each scope is summarised on its own."""
        async with self._store.transaction() as tx:
            rows = await tx.fetchall(
                "SELECT t.chat_id, t.scope, count(*) AS n,"
                " coalesce(s.through_turn_id, 0) AS through FROM turns t"
                " LEFT JOIN summaries s ON s.chat_id = t.chat_id AND s.scope = t.scope"
                " WHERE t.turn_id > coalesce(s.through_turn_id, 0)"
                " GROUP BY t.chat_id, t.scope ORDER BY min(t.turn_id)"
            )
        return [
            (str(r["chat_id"]), str(r["scope"]), int(r["n"]), int(r["through"])) for r in rows
        ]

    # --- the dream ---------------------------------------------------------------------------

    async def beliefs_in(
        self, ctx: AccessContext, scope: str, *, kind: Kind | None = None, limit: int = 50
    ) -> list[Belief]:
        """Live beliefs of one scope this work may use, strongest first (receipted)."""
        _check_scope(scope)
        now = self._now()

        async def body(tx: Tx) -> tuple[list[Belief], list[int], list[str], int]:
            where = "b.scope = ? AND b.superseded_by IS NULL"
            params: tuple[object, ...] = (scope,)
            if kind is not None:
                where += " AND b.kind = ?"
                params += (kind.value,)
            rows = await belief_ops.fetch_visible(
                tx, ctx, where, params, order="b.log_odds DESC, b.belief_id", limit=limit
            )
            return await self._lensed(tx, ctx, rows, now)

        return await self._read(ctx, "beliefs_in", scope, body)

    async def dream_pass(
        self, extra: dict[str, int] | None = None, *, now: datetime | None = None
    ) -> tuple[int, dict[str, int]]:
        """The dream over every scope, one scope at a time, each read by its own lane through
        the wall and the dream's lens (receipted); then a report row of counts. Returns the
        report's id and its counts. `now` is the dream's clock (memory's own by default)."""
        now = self._now() if now is None else _utc(now)
        people = await self.people.list()
        scopes = [SHARED] + [private_scope(p.person_id) for p in people]
        totals = dream_ops.DreamCounts()
        index = self._index

        def near(scope: str) -> Callable[[list[int]], list[tuple[int, int]]]:
            if index is None:
                return lambda ids: []
            return lambda ids: index.near_pairs(scope, ids, dream_ops.DEDUPE_SIMILARITY)

        for scope in scopes:
            ctx = AccessContext.for_scope(scope, Activity.DREAM, "the nightly dream of one scope")

            async def body(
                tx: Tx, ctx: AccessContext = ctx, scope: str = scope
            ) -> tuple[dream_ops.DreamCounts, list[int], list[str], int]:
                rows = await belief_ops.fetch_visible(
                    tx, ctx, "b.scope = ? AND b.superseded_by IS NULL", (scope,)
                )
                usable, suppressed = await self._usable(tx, ctx, rows)
                counts = await dream_ops.dream_scope(tx, usable, near(scope), now)
                ids = [int(r["belief_id"]) for r in usable]
                return counts, ids, [scope] * len(ids), suppressed

            counts = await self._read(ctx, "dream", scope, body)
            totals.add(counts)
        report = {
            "scopes": len(scopes),
            "deduped": totals.deduped,
            "reconciled": totals.reconciled,
            "decayed": totals.decayed,
            "promoted": totals.promoted,
        } | dict(extra or {})
        async with self._store.transaction() as tx:
            report_id = await tx.execute(
                "INSERT INTO dream_reports(at, report) VALUES (?, ?)",
                (now.isoformat(), json.dumps(report, sort_keys=True)),
            )
        return report_id, report

    async def dream_reports(self, limit: int = 5) -> list[tuple[int, str, dict[str, int]]]:
        """The latest dream reports: (id, when, counts). Counts only, no content."""
        async with self._store.transaction() as tx:
            rows = await tx.fetchall(
                "SELECT * FROM dream_reports ORDER BY report_id DESC LIMIT ?", (limit,)
            )
        return [
            (int(r["report_id"]), str(r["at"]), dict(json.loads(r["report"]))) for r in rows
        ]

    # --- forgetting --------------------------------------------------------------------------

    async def forget_preview(
        self, ctx: AccessContext, text: str, *, shared: bool = False
    ) -> list[Belief]:
        """What `forget` with the same arguments would remove: the member's own beliefs (or,
        for the owner with `shared`, shared ones) whose proposition contains `text`."""
        scope, needle = await self._forget_target(ctx, text, shared=shared)
        now = self._now()

        async def body(tx: Tx) -> tuple[list[Belief], list[int], list[str], int]:
            rows = await belief_ops.fetch_visible(
                tx, ctx, "b.scope = ? AND b.norm LIKE ? ESCAPE '\\'",
                (scope, f"%{like_escape(needle)}%"),
            )
            return await self._lensed(tx, ctx, rows, now)

        return await self._read(ctx, "forget_preview", text, body)

    async def forget_mentions(
        self, ctx: AccessContext, text: str, *, shared: bool = False
    ) -> int:
        """How many things said in the member's own scope (or, for the owner with `shared`,
        the shared one) mention `text`: what `forget` scrubs even when no belief holds it yet.
        A count of the reader's own scope, receipted."""
        scope, needle = await self._forget_target(ctx, text, shared=shared)

        async def body(tx: Tx) -> tuple[int, list[int], list[str], int]:
            return await count_mentions(tx, scope=scope, needle=needle), [], [], 0

        return await self._read(ctx, "forget_mentions", text, body)

    async def _forget_target(
        self, ctx: AccessContext, text: str, *, shared: bool
    ) -> tuple[str, str]:
        if ctx.person_id is None or ctx.activity != Activity.MEMBER_INSPECT:
            raise InvalidRequest("forgetting is a member acting on their own view")
        needle = belief_ops.normalize(text)
        if not needle:
            raise InvalidRequest("say what to forget: the text is empty")
        person = await self.people.get(ctx.person_id)
        if shared and not person.is_owner:
            raise InvalidRequest("only the household's owner can forget shared beliefs")
        return (SHARED if shared else private_scope(person.person_id)), needle

    async def forget(self, ctx: AccessContext, text: str, *, shared: bool = False) -> int:
        """Forget this member's beliefs whose proposition contains `text` (the owner may, with
        `shared`, forget shared ones). Returns how many; the text is never stored."""
        scope, needle = await self._forget_target(ctx, text, shared=shared)

        async def body(tx: Tx) -> tuple[list[int], list[int], list[str], int]:
            gone = await forget_matching(
                tx, scope=scope, needle=needle, secret=self._secret, now=self._now_text()
            )
            return gone, gone, [scope] * len(gone), 0

        gone = await self._read(ctx, "forget", text, body)
        if self._index is not None:
            self._index.remove(gone)
        await self._store.checkpoint()
        await self._mirror_tombstones()
        return len(gone)

    async def _mirror_tombstones(self) -> None:
        """Keep the tombstones beside the database too, so a restore of an older backup
        re-applies them (`restore`)."""
        async with self._store.transaction() as tx:
            rows = await all_tombstones(tx)
        await asyncio.to_thread(write_tombstones, self.path, rows)

    # --- grants ------------------------------------------------------------------------------

    async def grant(
        self,
        grantor_id: str,
        activity: Activity,
        sensitivity: Sensitivity,
        *,
        days: float | None = None,
        shared: bool = False,
        beneficiary_id: str | None = None,
        note: str = "",
    ) -> Grant:
        """A standing grant from a fact's owner opening one lens cell. Opens no wall."""
        if sensitivity == Sensitivity.CREDENTIALS:
            raise InvalidRequest("credentials are never granted to any activity")
        if (activity, sensitivity) not in GRANTABLE:
            raise InvalidRequest(
                f"{activity} does not take grants for {sensitivity}"
                " (see the policy table: only health and finance for group_conversation,"
                " compaction, dream and proactive)"
            )
        if days is not None and days <= 0:
            raise InvalidRequest("a grant must last a positive number of days")
        person = await self.people.get(grantor_id)
        shared = shared or _owner_means_shared(person, activity)
        if shared and not person.is_owner:
            raise InvalidRequest("only the household's owner can grant over shared facts")
        if beneficiary_id is not None:
            await self.people.get(beneficiary_id)
        now = self._now()
        expires = None if days is None else (now + timedelta(days=days)).isoformat()
        scope = SHARED if shared else private_scope(person.person_id)
        note = mask_secrets(note.replace("\x00", "").strip())  # kept as a line is: masked
        async with self._store.transaction() as tx:
            grant_id = await tx.execute(
                "INSERT INTO grants(grantor_id, scope, activity, sensitivity, beneficiary_id,"
                " note, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (person.person_id, scope, activity.value, sensitivity.value, beneficiary_id,
                 note, now.isoformat(), expires),
            )
            row = await tx.fetchone("SELECT * FROM grants WHERE grant_id = ?", (grant_id,))
        if row is None:
            raise InvalidRequest("the grant could not be recorded")
        return _grant_from_row(row)

    async def revoke(
        self,
        grantor_id: str,
        activity: Activity,
        sensitivity: Sensitivity,
        *,
        shared: bool = False,
    ) -> int:
        """Revoke at once; the rows stay, marked. Returns how many were active."""
        person = await self.people.get(grantor_id)
        shared = shared or _owner_means_shared(person, activity)
        if shared and not person.is_owner:
            raise InvalidRequest("only the household's owner can revoke grants over shared facts")
        scope = SHARED if shared else private_scope(person.person_id)
        async with self._store.transaction() as tx:
            return await tx.execute(
                "UPDATE grants SET revoked_at = ? WHERE grantor_id = ? AND scope = ?"
                " AND activity = ? AND sensitivity = ? AND revoked_at IS NULL",
                (self._now_text(), person.person_id, scope, activity.value, sensitivity.value),
            )

    async def grants(
        self, grantor_id: str | None = None, *, viewer_id: str | None = None
    ) -> list[Grant]:
        """Grants as rows (who opened what, for whom, until when). A grant's free-text note is
        its grantor's own words: it is shown, secret tokens masked as in a transcript line, only
        when `viewer_id` is the member whose facts the grant covers (for shared facts, the
        household's owner), and is empty in every other listing."""
        async with self._store.transaction() as tx:
            if grantor_id is None:
                rows = await tx.fetchall("SELECT * FROM grants ORDER BY grant_id")
            else:
                rows = await tx.fetchall(
                    "SELECT * FROM grants WHERE grantor_id = ? ORDER BY grant_id", (grantor_id,)
                )
            owner = await tx.scalar("SELECT person_id FROM people WHERE is_owner = 1")
        shown = []
        for grant in (_grant_from_row(r) for r in rows):
            mine = viewer_id is not None and viewer_id == _covered(grant.scope, owner)
            note = mask_secrets(grant.note) if mine else ""
            shown.append(grant.model_copy(update={"note": note}))
        return shown

    # --- the ledger --------------------------------------------------------------------------

    async def receipts(self, ctx: AccessContext, *, limit: int | None = None) -> list[Receipt]:
        """The ledger's metadata for the owner's audit; this read is receipted too."""
        if ctx.activity != Activity.OWNER_AUDIT or ctx.person_id is None:
            raise InvalidRequest("the whole ledger is the owner's audit")
        if not (await self.people.get(ctx.person_id)).is_owner:
            raise InvalidRequest("only the household's owner can audit the ledger")

        async def body(tx: Tx) -> tuple[list[Receipt], list[int], list[str], int]:
            rows = await tx.fetchall(
                "SELECT * FROM receipts ORDER BY seq DESC LIMIT ?",
                (-1 if limit is None else limit,),
            )
            return [receipt_from_row(r) for r in reversed(rows)], [], [], 0

        return await self._read(ctx, "receipts", "", body)

    async def receipts_about(self, person_id: str) -> list[Receipt]:
        """Reads that used this member's private facts, or that they made themselves."""
        scope = json.dumps(private_scope(person_id))
        async with self._store.transaction() as tx:
            rows = await tx.fetchall(
                "SELECT * FROM receipts WHERE actor = ? OR instr(scopes, ?) > 0 ORDER BY seq",
                (person_id, scope),
            )
        return [receipt_from_row(r) for r in rows]

    async def verify_receipts(self) -> tuple[int, tuple[int, str] | None]:
        """(receipts checked, the first break or None): the HMAC chain from genesis, and its
        end against the anchor beside the database. A break is (receipt, one line saying
        what: altered, missing, or the ledger cut after a receipt the anchor outlived)."""
        return await self._anchor.verify(self._store)

    async def anchor_receipts(self) -> int:
        """Anchor the ledger anew at its end, once its chain verifies: for an install whose
        anchor was lost (a cut tail before now can no longer be told). Returns the receipt."""
        return await self._anchor.reanchor(self._store)

    # --- people ------------------------------------------------------------------------------

    async def remove_person(self, person_id: str) -> int:
        """Purge a member and everything they own; returns how many beliefs went with them."""
        person = await self.people.get(person_id)
        async with self._store.transaction() as tx:
            gone = await purge_scope(tx, private_scope(person.person_id))
            if person.telegram_id is not None:  # their DM's chat id is their Telegram id
                await purge_chat(tx, person.telegram_id)
            await tx.execute("DELETE FROM affect WHERE key = ?", (f"person:{person.person_id}",))
            await tx.execute("DELETE FROM people WHERE person_id = ?", (person.person_id,))
        if self._index is not None:
            self._index.remove(gone)
        await self._store.checkpoint()
        return len(gone)

    async def stats(self) -> dict[str, int]:
        """Counts only: how many members, beliefs, lines and receipts. No content."""
        async with self._store.transaction() as tx:
            return {
                table: int(await tx.scalar(f"SELECT count(*) FROM {table}"))
                for table in ("people", "beliefs", "turns", "receipts")
            }

    async def person_named(self, name: str) -> Person:
        return await self.people.by_name(name)


def _covered(scope: str, owner_id: str | None) -> str | None:
    """The member whose facts a grant over `scope` covers: the scope's owner, or for the
    household's shared facts the household's owner."""
    return owner_id if scope == SHARED else scope_owner(scope)


def _owner_means_shared(person: Person, activity: Activity) -> bool:
    """The owner granting (or revoking) group_conversation means the household's shared facts:
    the wall never shows anyone's private facts to a group, so a grant over the owner's own
    could never open anything."""
    return person.is_owner and activity == Activity.GROUP_CONVERSATION


def _line_text(text: str) -> str:
    """A transcript line as stored: NULs dropped, within the size limit, secret tokens masked."""
    text = text.replace("\x00", "")
    if not text.strip():
        raise InvalidRequest("an empty line is not stored")
    if len(text) > MAX_TURN_CHARS:
        raise InvalidRequest(f"a line is at most {MAX_TURN_CHARS} characters")
    return mask_secrets(text)


def _check_scope(scope: str) -> None:
    if not is_scope(scope):
        raise InvalidRequest(f"not a scope: {scope!r} (use 'shared' or 'private:<person id>')")


def _utc(moment: datetime) -> datetime:
    """Stored times are UTC ISO strings and compare as text, so every instant becomes UTC."""
    if moment.tzinfo is None:
        raise InvalidRequest("a time without a time zone is ambiguous; give it one")
    return moment.astimezone(UTC)


def _grant_from_row(row: Row) -> Grant:
    return Grant(
        grant_id=int(row["grant_id"]),
        grantor_id=str(row["grantor_id"]),
        scope=str(row["scope"]),
        activity=Activity(row["activity"]),
        sensitivity=Sensitivity(row["sensitivity"]),
        beneficiary_id=row["beneficiary_id"],
        note=str(row["note"]),
        created_at=str(row["created_at"]),
        expires_at=row["expires_at"],
        revoked_at=row["revoked_at"],
    )


def _turn_from_row(row: Row) -> Turn:
    return Turn(
        turn_id=int(row["turn_id"]),
        chat_id=str(row["chat_id"]),
        speaker_id=row["speaker_id"],
        role=Role(row["role"]),
        scope=str(row["scope"]),
        sensitivity=Sensitivity(row["sensitivity"]),
        text=str(row["text"]),
        at=str(row["at"]),
    )


__all__ = ["Memory"]
