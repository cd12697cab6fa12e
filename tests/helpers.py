"""Test helpers shipped beside the tests: a deterministic embedder and a household factory."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from memory import AccessContext, Activity, Embedder, Memory, Person, utc_now
from memory.embedder import Vectors

_WORD = re.compile(r"[^\W_]+")


class HashEmbedder:
    """Bag of hashed word stems: texts sharing words are similar, others are near-orthogonal.

    Deterministic and instant, so unit tests exercise the semantic path without the model.
    """

    name = "hash-test"
    dim = 64
    symmetric = True

    def embed_query(self, texts: list[str]) -> Vectors:
        return self.embed(texts)  # a subclass's `embed` answers questions too

    def embed(self, texts: list[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.casefold()):
                stem = word[:5]
                slot = int(hashlib.sha256(stem.encode()).hexdigest(), 16) % self.dim
                out[row, slot] += 1.0
            norm = float(np.linalg.norm(out[row]))
            if norm:
                out[row] /= norm
        return out


class TwoWayEmbedder(HashEmbedder):
    """HashEmbedder that, like e5, embeds a question apart from a stored row, and counts
    both: the questions it embedded, and the rows."""

    symmetric = False

    def __init__(self) -> None:
        self.rows: list[str] = []
        self.questions: list[str] = []

    def embed(self, texts: list[str]) -> Vectors:
        self.rows += texts
        return super().embed(texts)

    def embed_query(self, texts: list[str]) -> Vectors:
        self.questions += texts
        return super().embed(texts)


def raw_bytes(db: Path) -> bytes:
    """Every byte of the database as it lies on disk: the file, its WAL and its shared memory."""
    data = db.read_bytes()
    for suffix in ("-wal", "-shm"):
        extra = db.with_name(db.name + suffix)
        if extra.exists():
            data += extra.read_bytes()
    return data


class TestClock:
    """One injected clock for a whole test: the memory stamps rows with it and the test passes
    `clock()` wherever code takes a `now`. A test never reads the real clock beside it, so the
    suite passes on any day (the CI runs it a year ahead too)."""

    __test__ = False  # not a test class, despite the name

    def __init__(self, start: datetime) -> None:
        self.current = start

    def __call__(self) -> datetime:
        return self.current

    def advance(self, delta: timedelta) -> datetime:
        self.current += delta
        return self.current

    def set(self, when: datetime) -> datetime:
        self.current = when
        return self.current


@dataclass
class Household:
    memory: Memory
    owner: Person
    bob: Person
    alice: Person
    clock: Callable[[], datetime] = utc_now  # the memory's own clock: pass clock() as `now`

    def dm(self, person: Person, activity: Activity = Activity.DM_CONVERSATION) -> AccessContext:
        return AccessContext.for_member(person.person_id, activity, "a test read")

    def group(self, activity: Activity = Activity.GROUP_CONVERSATION) -> AccessContext:
        return AccessContext.for_group(activity, "a test read")


async def make_household(
    path: Path,
    *,
    embedder: Embedder | None = None,
    clock: Callable[[], datetime] | None = None,
) -> Household:
    """Olivia (the owner), Bob and Alice. A test that passes a fixed `now` anywhere must pass
    the same `clock` here, or its rows are stamped by the real clock and the test rots."""
    if clock is None:
        memory = await Memory.open(path, embedder=embedder or HashEmbedder(), create=True)
    else:
        memory = await Memory.open(path, embedder=embedder or HashEmbedder(), create=True,
                                   clock=clock)
    owner = await memory.people.add("Olivia", telegram_id=1001, owner=True)
    bob = await memory.people.add("Bob", telegram_id=1002)
    alice = await memory.people.add("Alice", telegram_id=1003)
    return Household(memory, owner, bob, alice, clock or utc_now)
