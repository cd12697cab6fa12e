"""`Memory`: one household's memory, opened and closed, its concepts as books.

Every read of remembered content goes through `memory.gate` (the wall, then the lens, then the
receipt, in one transaction); the books below are the only callers of the gate, and this object
only opens the store, makes the books and closes them again. Writes return ids and statuses,
never the stored text.

    memory.transcript     lines said, her replies      memory.beliefs      beliefs and evidence
    memory.recall         finding what is relevant     memory.goals        what members want done
    memory.summaries      chats' rolling summaries     memory.consolidation the tick's bookkeeping
    memory.dream          the nightly pass             memory.forgetting   forget and remove
    memory.grants         lens cells opened            memory.ledger       receipts, audit, verify
    memory.export         a member's own document      memory.vectors      the vector index
    memory.history        what was true when           memory.snapshots    chats' snapshots
    memory.reminders      goals with a due time        memory.preferences  zones, quiet hours
    memory.minds          other agents' credentials, and what they write
    memory.shelf          documents sent in chat       memory.media        media to take in
    memory.people, memory.household, memory.state, memory.inbox, memory.outbox
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from memory.beliefs import BeliefBook
from memory.consolidation import ConsolidationBook
from memory.dbfile import check_database_file
from memory.dream import DreamBook
from memory.embedder import Embedder
from memory.errors import InvalidRequest
from memory.export import ExportBook
from memory.forget import ForgetBook, read_tombstones
from memory.gate import Census, Gate, ref_for
from memory.goals import GoalBook
from memory.grants import GrantBook
from memory.history import HistoryBook
from memory.household import HouseholdBook
from memory.inbox import Inbox, Outbox
from memory.knowledge import Shelf
from memory.ledger import LedgerBook
from memory.lockfile import hold_database
from memory.media import MediaBook
from memory.minds import MindBook
from memory.models import as_utc
from memory.people import PeopleBook
from memory.preferences import PreferenceBook
from memory.recall import RecallBook
from memory.receipts import (
    LedgerAnchor,
    copy_head,
    copy_secret,
    load_secret,
    put_head_bytes,
    read_head_bytes,
)
from memory.reminders import ReminderBook
from memory.snapshots import SnapshotBook
from memory.state import StateBook
from memory.store import Store
from memory.summaries import SummaryBook
from memory.transcript import TranscriptBook
from memory.vectors import VectorBook

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


class Memory:
    """One household's memory. Open with `Memory.open`, close with `close`."""

    def __init__(self, store: Store, secret: bytes, embedder: Embedder | None,
                 clock: Clock) -> None:
        self._store = store
        self._clock = clock
        self._anchor = LedgerAnchor(store.path, secret)
        now = self._now
        gate = Gate(store, secret, self._anchor, now)
        # Reads for one reader made inside `memory.together(ctx)` share one transaction.
        self.together = gate.together
        # Writes (or reads and writes) of one task made inside `memory.at_once()` commit as one
        # transaction: a turn's writes at its start and at its end, one trip each.
        self.at_once = store.joined
        self.people = PeopleBook(store, lambda: now().isoformat())
        self.state = StateBook(store, lambda: now().isoformat())
        self.household = HouseholdBook(store, self.people, now)
        self.inbox = Inbox(store, now)
        self.outbox = Outbox(store, now)
        self.vectors = VectorBook(store, gate, embedder, now)
        self.transcript = TranscriptBook(store, gate, self.vectors, now)
        self.beliefs = BeliefBook(store, gate, self.people, self.vectors,
                                  secret=secret, now=now)
        self.recall = RecallBook(gate, self.vectors, now)
        self.history = HistoryBook(gate, now)
        self.goals = GoalBook(store, gate, self.people, self.vectors, now)
        self.reminders = ReminderBook(store, gate, self.goals, now)
        self.preferences = PreferenceBook(store, now)
        self.summaries = SummaryBook(store, gate, now)
        self.snapshots = SnapshotBook(store, gate)
        self.consolidation = ConsolidationBook(store, gate, self.beliefs, now)
        self.dream = DreamBook(store, gate, self.people, self.vectors, now)
        self.forgetting = ForgetBook(store, gate, self.people, self.vectors,
                                     secret=secret, now=now)
        self.grants = GrantBook(store, gate, self.people, now)
        self.ledger = LedgerBook(store, gate, self.people, self._anchor)
        self.export = ExportBook(gate, self.people, self.grants, now)
        self.minds = MindBook(store, gate, self.people, self.grants, self.beliefs,
                              vectors=self.vectors, secret=secret, now=now)
        self.shelf = Shelf(store, gate, self.people, self.vectors, now)
        self.media = MediaBook(store, gate, now)

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
        await store.define("ref", 2, lambda kind, row_id: ref_for(secret, kind, row_id))
        memory = cls(store, secret, embedder, clock)
        try:
            await memory._anchor.open(store, memory._now().isoformat())
            await memory.beliefs.rehome_once()
            await memory.vectors.load()
        except Exception:
            await memory.close()
            raise
        return memory

    async def close(self) -> None:
        await self.vectors.stop_filing()
        await self._anchor.flush()
        await self._store.close()
        self.vectors.close()

    async def __aenter__(self) -> Memory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        """`async with await Memory.open(path) as memory:` closes it however the block ends."""
        await self.close()

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

    def _now(self) -> datetime:
        return as_utc(self._clock())

    async def stats(self) -> dict[str, int]:
        """Counts only: how many members, beliefs, lines and receipts. No content."""
        async with self._store.transaction() as tx:
            census = Census(tx)
            return {
                table: int(str(await census.value(table, "count(*)")))
                for table in ("people", "beliefs", "turns", "receipts")
            }

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
                await restored.forgetting.reapply(kept)
            finally:
                await restored.close()


__all__ = ["Memory", "utc_now"]
