"""The shelf: documents members sent in chat, kept as cited passages behind the memory gate.

A document is not a memory. Memory cites a conversation line; the shelf cites a document and
its page or section, and nothing on it becomes a belief. It keeps memory's rules all the same:

- **Scope from the chat.** Sent in a private chat, a document is that member's; sent in the
  household group, it is shared. The wall reads `documents.scope` and `chunks.scope` as it reads
  every walled table, so a member's document is never searched, listed or counted for another.
- **The lens, per passage.** Each passage gets its class from the word rules and, under a
  fitted embedder, from its meaning (`memory.sensing`), the more private of the two: a payslip's
  passages are finance, a leaflet's dosage health. The document's class is the most private of
  its passages' (what listing it shows).
- **Receipts.** Every search, listing and forget is a gate read, receipted with what it returned.
- **Nothing half-put.** A document is read, cut and embedded before the database is touched,
  then written whole in one transaction (its passages, their words' index and their vectors):
  after a crash it is there entirely or not at all. The same title sent again in the same scope
  replaces the older copy, so a resent file (or a retried update) is never shelved twice.
- **Forget to the bytes.** Dropping a document deletes its passages and vectors, rewrites the
  keyword index (FTS5 keeps deleted words in its segments until a merge) with secure_delete on,
  and checkpoints the WAL.

Search is hybrid like recall: BM25 over the reader's visible passages only (term statistics
from what they may see, `Read.keyword`) and cosine over their scopes' matrices; a passage ranks
by how far its meaning stands out and how much of the question's keyword weight it holds.
A passage is *told* when its meaning stands out from the reader's other passages
(`STANDS_OUT` deviations above their mean similarity) or it carries most of the question's
keyword weight; an unrelated question gets nothing.

Owns: putting, searching, listing and dropping documents. Must not: read a row except through
the gate, or keep a file's bytes after it is read.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memory.classifier import classify
from memory.errors import InvalidRequest
from memory.gate import Gate, Read
from memory.knowledge import reading
from memory.knowledge.reading import Unreadable
from memory.models import SHARED, AccessContext, Activity, Person, Sensitivity, private_scope
from memory.people import PeopleBook
from memory.recall.candidates import (
    CANDIDATES,
    QUERY_TERMS,
    TERM_CAP,
    best_by_weight,
    bm25,
    coverage,
    idf,
)
from memory.secrets import mask_secrets
from memory.sensing import more_private, senser_for
from memory.store import Row, Store
from memory.terms import Term, document, forget_cached_texts, query_terms
from memory.vectors import Spread, VectorBook

log = logging.getLogger("hearth.knowledge")

MAX_PASSAGES = 5_000  # about 2,000 pages of text: more is an archive, not a document
EMBED_BATCH = 32
# A passage's rank: how many deviations its meaning stands above the background (counted up to
# the bar a told passage clears: past it, standing further out says little more), plus this
# many for holding all of the question's keyword weight. A passage is longer than a chat line,
# and its meaning ranks it better than a fusion of the two lists would; so the one passage that
# holds a rare word the question asks about (an error code, a date) outranks the passages near
# it in meaning. On bench/shelf, either half of its documents ranks alike from 2 to 3 and with
# the cap or without it.
COVER_WEIGHT = 3.0
LIMIT = 5  # passages a search hands back, at most
# A passage is told when its cosine to the question stands STANDS_OUT deviations above the
# question's mean cosine over every passage the reader may see, or when it holds COVERS of the
# question's keyword weight. Chosen on half of bench/shelf (its English and German documents)
# and checked on the other half: a question whose answer is on the shelf finds it told about
# half the time, and a question close to a document's subject that no document answers (the
# boiler's colour) is told nothing a little less often; lower bars tell more of both.
STANDS_OUT = 3.0
COVERS = 0.6
# A shelf of fewer passages than this has no background to stand out from: its passages are
# measured against the embedder's own scale instead, the mean and deviation of a question's
# cosine to the passages of unrelated documents (measured on bench/shelf).
FEW = 30
UNRELATED = {"multilingual-e5-small-q4": (0.77, 0.026), "all-MiniLM-L6-v2": (0.14, 0.116)}
UNRELATED_UNMEASURED = (0.0, 0.2)

SEARCH_METHOD = "shelf"
LIST_METHOD = "shelf_list"
FORGET_METHOD = "shelf_forget"


@dataclass(frozen=True)
class Document:
    """A document on the shelf, as a reader may see it."""

    ref: str
    title: str
    format: str
    scope: str
    sensitivity: Sensitivity
    pages: int | None
    passages: int
    size: int
    added_by: str | None
    created_at: str


@dataclass(frozen=True)
class Found:
    """A passage a search hands back: its words, where it is, and why it was told."""

    ref: str
    title: str
    page: int | None
    section: str | None
    text: str
    scope: str
    sensitivity: Sensitivity
    score: float
    told: bool
    why: str

    @property
    def citation(self) -> str:
        """"boiler-manual.pdf, p. 3" or "recipes.md, Crêpes"."""
        where = f"p. {self.page}" if self.page is not None else (self.section or "")
        return f"{self.title}, {where}" if where else self.title


@dataclass(frozen=True)
class Shelved:
    """What putting a document did."""

    ref: str
    title: str
    format: str
    pages: int | None
    passages: int
    sensitivity: Sensitivity
    replaced: bool


Progress = Callable[[int, int], object]


class Shelf:
    """`memory.shelf`: the household's documents, behind the gate."""

    def __init__(self, store: Store, gate: Gate, people: PeopleBook, vectors: VectorBook,
                 now: Callable[[], datetime]) -> None:
        self._store = store
        self._gate = gate
        self._people = people
        self._vectors = vectors
        self._now = now

    # --- putting ---------------------------------------------------------------------------

    async def put(self, person_id: str, title: str, data: bytes, *, shared: bool = False,
                  progress: Progress | None = None) -> Shelved:
        """Read, cut, class and embed a document a member sent, then shelve it whole: in their
        own scope, or (`shared`: sent in the household group) the shared one. `Unreadable` for
        a file she cannot read; nothing is written then."""
        await self._people.get(person_id)  # a member, or UnknownPerson
        ctx = AccessContext.for_member(person_id, Activity.MEMBER_INSPECT,
                                       "the member put a document on the shelf")
        scope = SHARED if shared else private_scope(person_id)
        title = _title(title)
        size = len(data)
        # Reading, cutting, masking and the word rules are CPU work (seconds for a long
        # document): a worker thread's, never the event loop's.
        fmt, sections, cut, texts, classes = await asyncio.to_thread(_read, title, data)
        del data  # the bytes are not kept past reading
        why: list[str | None] = [None] * len(cut)
        vectors = await self._embed([reading.Passage(p.seq, t, p.page, p.section).situated(title)
                                     for p, t in zip(cut, texts, strict=True)], progress)
        senser = None if self._vectors.embedder is None else senser_for(
            self._vectors.embedder.name)
        if vectors is not None and senser is not None:
            for i, sensed in enumerate(senser.read(vectors)):
                # Meaning raises a passage to health or money, which are what it is about. A
                # key is a value, not a topic: a manual's page on its error codes or its panel
                # reads like the lines about alarm codes the reader was fitted on, and holds
                # none; a passage that holds one has its shape (the word rules above).
                if sensed is None or sensed.sensitivity is Sensitivity.CREDENTIALS:
                    continue
                if more_private(sensed.sensitivity, classes[i]) is not classes[i]:
                    classes[i], why[i] = sensed.sensitivity, sensed.why
        overall = Sensitivity.ORDINARY
        for c in classes:
            overall = more_private(overall, c)
        pages = max((s.page for s in sections if s.page is not None), default=None)
        now = self._now().isoformat()
        model = None if self._vectors.embedder is None else self._vectors.embedder.name
        async with self._gate.read(ctx, "shelf_put", title) as read:
            old = await read.select("documents", "scope = ? AND title = ?", (scope, title),
                                    columns="document_id")
            old_ids = [int(r["document_id"]) for r in old]
            old_passages = [int(r["chunk_id"]) for r in await read.select(
                "chunks", f"document_id IN ({_marks(old_ids)})", old_ids, columns="chunk_id")]
            lane = read.lane(scope)
            if old_ids:
                await lane.delete("documents", f"document_id IN ({_marks(old_ids)})", old_ids)
                await lane.merge_indexes("chunks_fts")
            document_id = await lane.insert("documents", {
                "scope": scope, "title": title, "format": fmt, "added_by": person_id,
                "sensitivity": overall.value, "size": size, "pages": pages,
                "passages": len(cut), "created_at": now})
            # The passages' ids are given here, after the highest in use (this transaction
            # holds the only writer), so all of them go in one statement: one trip to the
            # database's thread instead of one a passage, while every other turn waits.
            first = int(str(await read.census().value("chunks",
                                                          "coalesce(max(chunk_id), 0) + 1")))
            ids = list(range(first, first + len(cut)))
            await lane.insert_many(
                "chunks", ("chunk_id", "document_id", "scope", "seq", "page", "section", "text",
                           "sensitivity", "sensitivity_by"),
                [(chunk_id, document_id, scope, p.seq, p.page, p.section, text, cls.value, by)
                 for chunk_id, p, text, cls, by in zip(ids, cut, texts, classes, why,
                                                       strict=True)])
            if vectors is not None and model is not None:
                await lane.insert_many(
                    "chunk_vectors", ("chunk_id", "model", "vector"),
                    [(chunk_id, model, vectors[i].tobytes()) for i, chunk_id in enumerate(ids)])
            made = await read.select("documents", "document_id = ?", (document_id,),
                                     columns="ref('document', document_id) AS ref")
            ref = str(made[0]["ref"])
            read.returned(old_ids, [scope] * len(old_ids))
        # The old copy's passages leave the matrices before the new ones join: a new passage
        # may take the id an old one had.
        self._vectors.remove_passages(old_passages)
        if vectors is not None:
            self._vectors.add_passages(scope, ids, vectors)
        if old_ids:
            forget_cached_texts()
            await self._store.checkpoint()
        return Shelved(ref, title, fmt, pages, len(cut), overall, bool(old_ids))

    async def _embed(self, texts: list[str], progress: Progress | None) -> np.ndarray | None:
        if self._vectors.embedder is None:
            return None
        parts = []
        for start in range(0, len(texts), EMBED_BATCH):
            got = await self._vectors.embed(texts[start : start + EMBED_BATCH])
            if got is None:
                return None
            parts.append(got)
            if progress is not None:
                progress(min(start + EMBED_BATCH, len(texts)), len(texts))
        return np.concatenate(parts) if parts else None

    # --- reading ---------------------------------------------------------------------------

    async def documents(self, ctx: AccessContext) -> list[Document]:
        """The documents this reader may see and this work may use, oldest first."""
        async with self._gate.read(ctx, LIST_METHOD) as read:
            rows = await read.usable(await read.select(
                "documents", columns="*, ref('document', document_id) AS ref",
                order="document_id"))
            read.returned([int(r["document_id"]) for r in rows], [str(r["scope"]) for r in rows])
        return [_document(r) for r in rows]

    async def search(self, ctx: AccessContext, query: str, *, limit: int = LIMIT,
                     told_only: bool = True) -> list[Found]:
        """The passages that answer `query`, best first: from the documents this reader may
        see, those this work may use. `told_only=False` hands back the best `limit` whether
        told or not (what `hearth docs search --explain` shows). Receipted."""
        if self._vectors.embedder is not None and not self._vectors.sees_passages(ctx):
            return []  # an empty shelf costs a turn no embedding and no read
        terms = query_terms(query, QUERY_TERMS)
        # The question's meaning is embedded before the read opens, as recall's is: a read
        # holds the database until it closes.
        vector = await self._vectors.question(query, asker=ctx.actor) if terms else None
        async with self._gate.read(ctx, SEARCH_METHOD, query) as read:
            keyword = await read.keyword("chunks", [t.fts() for t in terms], TERM_CAP) \
                if terms else None
            weights = ([] if keyword is None
                       else [idf(keyword.documents, df) for df in keyword.frequencies])
            by_words = [] if keyword is None else best_by_weight(keyword.ids, weights)
            cosines: dict[int, float] = {}
            spread = Spread()
            if vector is not None:
                cosines, spread = await self._vectors.nearest_passages(ctx, vector, CANDIDATES,
                                                                       by_words)
            ids = sorted(set(by_words) | set(cosines))
            rows = await read.usable(await read.select(
                "chunks", f"chunk_id IN ({_marks(ids)})", ids,
                columns="*, ref('passage', chunk_id) AS ref"))
            titles = await _titles(read, {int(r["document_id"]) for r in rows})
            scored = _score(rows, terms, weights, cosines, self._background(spread))
            handed = [s for s in scored if s.told or not told_only][: max(0, limit)]
            read.returned([s.row_id for s in handed], [s.scope for s in handed])
        return [s.found(titles) for s in handed]

    def _background(self, spread: Spread) -> tuple[float, float]:
        """The mean and deviation the question's cosines are measured against: the reader's
        own passages', or the embedder's scale while they have too few."""
        if spread.count >= FEW and spread.deviation > 0:
            return spread.mean, spread.deviation
        name = "" if self._vectors.embedder is None else self._vectors.embedder.name
        return UNRELATED.get(name, UNRELATED_UNMEASURED)

    # --- forgetting ------------------------------------------------------------------------

    async def droppable(self, ctx: AccessContext, title: str) -> list[Document]:
        """What `forget` with the same title would drop (a receipted read)."""
        person = await self._people.get(self._member(ctx))
        async with self._gate.read(ctx, FORGET_METHOD + "_preview", title) as read:
            rows = await _droppable(read, person, title)
            read.returned([int(r["document_id"]) for r in rows], [str(r["scope"]) for r in rows])
        return [_document(r) for r in rows]

    async def forget(self, ctx: AccessContext, title: str) -> list[str]:
        """Drop the documents titled `title` (any case) that this member may drop: their own,
        and shared ones they put there (the owner: any shared one). Their passages, vectors and
        indexed words go with them, down to the bytes. Returns the titles dropped."""
        person = await self._people.get(self._member(ctx))
        async with self._gate.read(ctx, FORGET_METHOD, title) as read:
            mine = await _droppable(read, person, title)
            ids = [int(r["document_id"]) for r in mine]
            passages = [int(r["chunk_id"]) for r in await read.select(
                "chunks", f"document_id IN ({_marks(ids)})", ids, columns="chunk_id")]
            for r in mine:
                await read.lane(str(r["scope"])).delete("documents", "document_id = ?",
                                                         (int(r["document_id"]),))
            if mine:
                await read.lane(str(mine[0]["scope"])).merge_indexes("chunks_fts")
            read.returned(ids, [str(r["scope"]) for r in mine])
        if mine:
            self._vectors.remove_passages(passages)
            forget_cached_texts()
            await self._store.checkpoint()
        return [str(r["title"]) for r in mine]

    @staticmethod
    def _member(ctx: AccessContext) -> str:
        if ctx.person_id is None or ctx.activity not in (Activity.MEMBER_INSPECT,
                                                         Activity.DM_CONVERSATION,
                                                         Activity.GROUP_CONVERSATION):
            raise InvalidRequest("the shelf is a member's, acting on their own view")
        return ctx.person_id


def _read(title: str, data: bytes) -> tuple[str, list[reading.Section], list[reading.Passage],
                                          list[str], list[Sensitivity]]:
    """A document's format, sections and passages, each passage's words with secret tokens
    masked, and the class the word rules give it."""
    fmt, sections = reading.read(title, data)
    cut = reading.passages(sections)
    if len(cut) > MAX_PASSAGES:
        raise Unreadable(f"it is too long for the shelf (more than {MAX_PASSAGES} passages)")
    texts = [mask_secrets(p.text) for p in cut]
    return fmt, sections, cut, texts, [classify(t) for t in texts]


@dataclass
class _Scored:
    row_id: int
    row: Row
    scope: str
    keyword: float
    covered: float
    cosine: float | None
    stands: float  # deviations above the background
    score: float = 0.0
    told: bool = False

    @property
    def why(self) -> str:
        parts = []
        if self.cosine is not None:
            parts.append(f"meaning {self.stands:+.1f} sd")
        if self.covered:
            parts.append(f"words {self.covered:.0%} of the question's")
        return ", ".join(parts) or "no match"

    def found(self, titles: dict[int, str]) -> Found:
        r = self.row
        return Found(
            ref=str(r["ref"]), title=titles.get(int(r["document_id"]), "?"),
            page=None if r["page"] is None else int(r["page"]),
            section=None if r["section"] is None else str(r["section"]),
            text=str(r["text"]), scope=self.scope, sensitivity=Sensitivity(r["sensitivity"]),
            score=round(self.score, 6), told=self.told, why=self.why)


def _score(rows: Sequence[Row], terms: Sequence[Term], weights: Sequence[float],
           cosines: dict[int, float], background: tuple[float, float]) -> list[_Scored]:
    """BM25 over a passage's words and its section's (lengths averaged over these passages),
    keyword coverage and the cosine's standing over the background; best first (by BM25 when
    two rank alike, and alone without an embedder)."""
    mean, deviation = background
    docs = [document(f"{r['section'] or ''} {r['text']}") for r in rows]
    average = sum(len(d) for d in docs) / len(docs) if docs else 1.0
    out = []
    for r, doc in zip(rows, docs, strict=True):
        row_id = int(r["chunk_id"])
        cosine = cosines.get(row_id)
        stands = -math.inf if cosine is None else (cosine - mean) / max(deviation, 1e-6)
        out.append(_Scored(row_id, r, str(r["scope"]), bm25(terms, weights, doc, average),
                           coverage(terms, weights, doc), cosine, stands))
    for s in out:
        standing = 0.0 if s.cosine is None else min(s.stands, STANDS_OUT)
        s.score = standing + COVER_WEIGHT * s.covered
        s.told = s.stands >= STANDS_OUT or s.covered >= COVERS
    out.sort(key=lambda s: (-s.score, -s.keyword, -s.stands, s.row_id))
    return out


async def _droppable(read: Read, person: Person, title: str) -> list[Row]:
    """The documents titled `title` this member may drop: their own, and shared ones they put
    there (the owner: any shared one). (The member is looked up before the read opens: a read
    holds the database, and a second transaction inside it would wait on it for ever.)"""
    rows = await read.select("documents", "lower(title) = lower(?)", (_title(title),),
                             columns="*, ref('document', document_id) AS ref",
                             order="document_id")
    own = private_scope(person.person_id)
    return [r for r in rows if r["scope"] == own or (
        r["scope"] == SHARED and (person.is_owner or r["added_by"] == person.person_id))]


async def _titles(read: Read, ids: set[int]) -> dict[int, str]:
    wanted = sorted(ids)
    rows = await read.select("documents", f"document_id IN ({_marks(wanted)})", wanted,
                             columns="document_id, title")
    return {int(r["document_id"]): str(r["title"]) for r in rows}


def _document(r: Row) -> Document:
    return Document(
        ref=str(r["ref"]), title=str(r["title"]), format=str(r["format"]),
        scope=str(r["scope"]), sensitivity=Sensitivity(r["sensitivity"]),
        pages=None if r["pages"] is None else int(r["pages"]), passages=int(r["passages"]),
        size=int(r["size"]), added_by=None if r["added_by"] is None else str(r["added_by"]),
        created_at=str(r["created_at"]))


def _title(name: str) -> str:
    """A file's name as its title: its last path part, trimmed, at most 200 characters."""
    title = name.replace("\\", "/").rsplit("/", 1)[-1].strip() or "document"
    return mask_secrets(title)[:200]


def _marks(ids: Sequence[object]) -> str:
    return ", ".join("?" for _ in ids) or "NULL"
