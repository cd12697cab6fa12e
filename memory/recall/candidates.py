"""Recall's first step: the candidates, taken from what the reader may see, and one ranking.

1. Keyword candidates, ranked by BM25 with term statistics over the reader's visible rows only
   (`Read.keyword`): a row behind the wall is never fetched, counted or ranked, so it cannot
   change what a reader gets or in what order. Index and query are stemmed alike in four
   languages (`memory.terms`).
2. Semantic candidates: the nearest rows across the visible scopes' matrices, no bar to clear,
   to the question without the members' names (`Roster.without_names`): a short question's
   embedding is mostly its names, and whom a row is about is read from its speaker and subject.
3. Reciprocal-rank fusion of the two lists, with recency and a preference for a belief over
   a line as small adjustments, and what was said in a time the question names first. The
   reply to each of the first lines joins the ranking beside it: an answer is often the next
   line, in words of its own.

Every candidate carries what the judge weighs (`memory.recall.signals`): its similarity, its
keyword score and coverage, its place in each list, who said it, whom it is about, when, and
whether a newer word of the same voice replaced it (written when that word was stored).

Owns: the candidate step and its weights, as named constants here. Must not: rank, fetch or
count anything outside the reader's visible scopes, or decide what is told (the judge does).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memory.beliefs import belief_from_row, normalize
from memory.gate import Read, Sources
from memory.models import REDACTED, Belief, scope_owner
from memory.recall.names import Roster
from memory.recall.periods import Period
from memory.store import Row
from memory.terms import Term, asks_only, document, sentences, stems, words

CANDIDATES = 24  # per tier, from each list
# The most words one query searches by. Each is a subquery of one keyword statement, and
# SQLite refuses a statement of more than 2000 columns (two per word): a pasted page is searched
# by its longest words (`query_terms`), its meaning still embedded.
QUERY_TERMS = 64
TERM_CAP = 500  # ids fetched per query word (its newest, when more match: a word that common
# weighs almost nothing in BM25)
BM25_K1 = 1.2
BM25_B = 0.75
RRF_K = 20  # reciprocal-rank fusion's constant: small, so the first ranks of either list lead
# A newer statement wins a near tie in the ranking (an update over what it replaced), never an
# argument: at most this share more for what was said today.
RECENCY_WEIGHT = 0.30
RECENCY_HALF_LIFE_DAYS = 60.0
BELIEF_PREFERENCE = 0.10  # what she concluded, over the line she concluded it from
# A question naming a time ("what did Anna say on 16 June?", "in March", "yesterday") puts
# what was said then first among the candidates: a line's words seldom carry its own date.
PERIOD_WEIGHT = 4.0
# The reply to each of the ranking's first REPLY_PARENTS lines joins it at that line's score:
# the next line of another member in the same chat within REPLY_WINDOW seconds, among the
# REPLY_LOOKBACK lines after it (her replies between them passed over).
REPLY_PARENTS = 5
REPLY_WINDOW = 30 * 60
REPLY_LOOKBACK = 6


def idf(documents: int, frequency: int) -> float:
    """BM25's inverse document frequency (always positive)."""
    return math.log(1.0 + (documents - frequency + 0.5) / (frequency + 0.5))


def bm25(terms: Sequence[Term], weights: Sequence[float], doc: Sequence[frozenset[str]],
         average: float) -> float:
    norm = BM25_K1 * (1 - BM25_B + BM25_B * len(doc) / max(average, 1.0))
    score = 0.0
    for term, weight in zip(terms, weights, strict=True):
        tf = term.count_in(doc)
        if tf:
            score += weight * tf * (BM25_K1 + 1) / (tf + norm)
    return score


def coverage(terms: Sequence[Term], weights: Sequence[float],
             doc: Sequence[frozenset[str]]) -> float:
    """The share of the query's keyword weight (its words' idf) that a document carries."""
    total = sum(weights)
    if not total:
        return 0.0
    return sum(w for t, w in zip(terms, weights, strict=True) if t.count_in(doc)) / total


def recency(at: str, now: datetime) -> float:
    age_days = max(0.0, (now - datetime.fromisoformat(at)).total_seconds() / 86400)
    return math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


@dataclass
class Candidate:
    """One belief or line on its way through recall."""

    key: tuple[str, int]  # ("beliefs" | "turns", its id)
    text: str
    scope: str
    at: str  # when it was said (a line) or last confirmed (a belief)
    row: Row
    belief: Belief | None = None
    speaker: str | None = None  # who said it: a line's speaker, a belief's owner or teller
    subject: str | None = None  # the member a belief is about, as consolidation stored it
    evidence: set[int] = field(default_factory=set)  # a belief's source lines
    semantic: float | None = None  # cosine to the question's meaning
    keyword: float = 0.0  # BM25
    covered: float = 0.0  # the share of the question's keyword weight it carries
    keyword_rank: int | None = None
    semantic_rank: int | None = None
    fused: float = 0.0
    said_then: bool = False  # said in the time the question names
    reply: bool = False  # joined the ranking as the reply to a line found
    # The newer words of the same voice that replaced it, and the older ones it replaced (ids
    # of its own tier), as marked when each was stored (`memory.recall.replacements`).
    newer: frozenset[int] = frozenset()
    older: frozenset[int] = frozenset()
    # The newer words of the same voice that replaced it only after the time the question
    # names: then it still held, so it is told before them (`verdict`).
    later: frozenset[int] = frozenset()
    # When it stopped holding, as the newer word that replaced it began (for a question that
    # names a time; a superseded belief says so itself, in its validity).
    ended: str | None = None
    began_after: bool = False  # a belief that began only after the time the question names
    norm: str = ""
    doc: tuple[frozenset[str], ...] = ()

    def __post_init__(self) -> None:
        self.norm = normalize(self.text)
        self.doc = document(self.text)

    @property
    def is_line(self) -> bool:
        return self.belief is None

    @property
    def asking(self) -> float:
        """The share of a line's sentences that ask ("Lovely weather. What got you into
        running?" half asks); a line that only asks is no candidate at all."""
        if self.belief is not None:
            return 0.0
        parts = sentences(self.text)
        return sum(p.rstrip().endswith("?") for p in parts) / len(parts) if parts else 0.0


@dataclass(frozen=True)
class Asked:
    """The question as the candidates are measured against it."""

    text: str
    asker: str  # the reader's actor: a member, or hearth's own work
    roster: Roster
    named: frozenset[str]  # the members the question names
    period: Period | None  # the time it names, if any
    terms: tuple[Term, ...]


@dataclass(frozen=True)
class Vocabulary:
    """What the reader's visible rows hold of the question's words (names left out): the
    share of them no visible row holds, and the rarest one some row does."""

    unseen: float = 0.0
    rarest: Term | None = None


def vocabulary(asked: Asked, frequencies: Sequence[Sequence[int]],
               found: Sequence[Candidate]) -> Vocabulary:
    """From each tier's document frequencies of the question's terms (`Read.keyword`) and the
    candidates found: the rarest word is the rarest that some candidate holds (a word only
    other questions hold tells nothing of what answers)."""
    kept = [i for i, t in enumerate(asked.terms) if asked.roster.member(t.word) is None]
    if not kept or not frequencies:
        return Vocabulary()
    seen = [sum(tier[i] for tier in frequencies) for i in range(len(asked.terms))]
    unseen = sum(1 for i in kept if not seen[i]) / len(kept)
    held = [i for i in kept if seen[i] and any(asked.terms[i].count_in(c.doc) for c in found)]
    rarest = asked.terms[min(held, key=lambda i: (seen[i], i))] if held else None
    return Vocabulary(unseen, rarest)


async def beliefs(read: Read, ids: list[int], when: str, now: datetime,
                  held: Period | None = None) -> list[Candidate]:
    """The visible, usable, not quarantined beliefs among `ids`, valid at `when`, or at some
    time in `held` (the time a question names: a belief superseded since held then)."""
    if not ids:
        return []
    marks = ", ".join("?" for _ in ids)
    valid = "(b.valid_to IS NULL OR b.valid_to > ?)"
    params: tuple[object, ...] = (*ids, when, when)
    if held is not None:
        valid = f"({valid} OR (b.valid_to > ? AND coalesce(b.valid_from, b.created_at) < ?))"
        params += (held.start.isoformat(), held.end.isoformat())
    rows = await read.beliefs(
        f"b.belief_id IN ({marks}) AND b.quarantined = 0"
        f" AND (b.valid_from IS NULL OR b.valid_from <= ?) AND {valid}",
        params,
    )
    allowed = await read.usable(rows)
    sources = await read.evidence_lines([int(r["belief_id"]) for r in allowed])
    out = []
    for row in allowed:
        belief = belief_from_row(row, now)
        told = sources.get(belief.belief_id, Sources())
        owner = scope_owner(belief.scope)
        # Who said it: a private belief's owner; a shared one's teller, when one member told it.
        teller = owner if owner is not None else (
            next(iter(told.tellers)) if len(told.tellers) == 1 else None)
        out.append(Candidate(
            key=("beliefs", belief.belief_id), text=belief.proposition, scope=belief.scope,
            at=belief.updated_at, row=row, belief=belief, speaker=teller,
            subject=belief.subject_id, evidence=told.lines))
    return out


async def lines(read: Read, ids: list[int], when: str,
                unfiled: Collection[int] = ()) -> list[Candidate]:
    """The visible, usable members' lines among `ids`, said by `when` and not forgotten (those
    among `unfiled`, whose meaning is not yet read, as if they held a credential)."""
    if not ids:
        return []
    marks = ", ".join("?" for _ in ids)
    rows = await read.select(
        "turns", f"turn_id IN ({marks}) AND role = 'user' AND text != ? AND at <= ?",
        (*ids, REDACTED, when), order="turn_id")
    return [
        Candidate(key=("turns", int(r["turn_id"])), text=str(r["text"]), scope=str(r["scope"]),
                  at=str(r["at"]), row=r,
                  speaker=None if r["speaker_id"] is None else str(r["speaker_id"]))
        for r in await read.usable(rows, unread=unfiled)
        if not asks_only(str(r["text"]))  # a question is not evidence of anything
    ]


def best_by_weight(ids_per_term: Sequence[Sequence[int]], weights: Sequence[float]) -> list[int]:
    """The CANDIDATES rows sharing the most keyword weight with the query (newest first
    among equals): every row's words counted once, as BM25 would before term counts."""
    score: dict[int, float] = {}
    for ids, weight in zip(ids_per_term, weights, strict=True):
        for row_id in ids:
            score[row_id] = score.get(row_id, 0.0) + weight
    return sorted(score, key=lambda i: (-score[i], -i))[:CANDIDATES]


def score_keywords(asked: Asked, weights: Sequence[float], found: Sequence[Candidate]) -> None:
    """BM25 and keyword coverage for one tier's candidates; document lengths are averaged over
    the candidates themselves (visible rows only). A row carries the name of the member who
    said it or whom it is about as one of its words: a speaker's own lines seldom name them.
    Coverage, which helps tell whether a row answers, leaves the members' names out (whom it
    is about is weighed apart), and a row said in the time the question names carries the
    words naming that time by when it was said."""
    terms = asked.terms
    if not found or not terms:
        return
    docs = [c.doc + asked.roster.name_stems(c.speaker, c.subject) for c in found]
    average = sum(len(d) for d in docs) / len(docs)
    about, about_weights = _kept(terms, weights, lambda t: asked.roster.member(t.word) is None)
    dated = frozenset(words(asked.period.phrase)) if asked.period is not None else frozenset()
    then, then_weights = _kept(about, about_weights, lambda t: t.word not in dated)
    for c, doc in zip(found, docs, strict=True):
        c.keyword = bm25(terms, weights, doc, average)
        c.covered = (coverage(then, then_weights, c.doc) if c.said_then
                     else coverage(about, about_weights, c.doc))


def _kept(terms: Sequence[Term], weights: Sequence[float],
          keep: Callable[[Term], bool]) -> tuple[list[Term], list[float]]:
    """The terms `keep` keeps, with their weights; all of them when it keeps none."""
    kept = [(t, w) for t, w in zip(terms, weights, strict=True) if keep(t)]
    if not kept:
        return list(terms), list(weights)
    return [t for t, _ in kept], [w for _, w in kept]


def _ranks(found: Sequence[Candidate], value: Callable[[Candidate], float | None]) -> dict[
    tuple[str, int], int
]:
    scored = [(v, c) for c in found if (v := value(c)) is not None and v > 0]
    scored.sort(key=lambda vc: (-vc[0], vc[1].key))
    return {c.key: rank for rank, (_, c) in enumerate(scored, start=1)}


def fuse(found: list[Candidate], now: datetime) -> list[Candidate]:
    """Reciprocal-rank fusion of the keyword and semantic rankings, then the adjustments;
    best first."""
    by_keyword = _ranks(found, lambda c: c.keyword)
    by_meaning = _ranks(found, lambda c: c.semantic)
    for c in found:
        c.keyword_rank, c.semantic_rank = by_keyword.get(c.key), by_meaning.get(c.key)
        fused = sum(1.0 / (RRF_K + ranks[c.key]) for ranks in (by_keyword, by_meaning)
                    if c.key in ranks)
        adjust = RECENCY_WEIGHT * recency(c.at, now)
        if c.belief is not None:
            adjust += BELIEF_PREFERENCE
        c.fused = fused * (1.0 + adjust)
        if c.said_then:
            c.fused *= 1.0 + PERIOD_WEIGHT
    ranked = [c for c in found if c.fused > 0]
    ranked.sort(key=lambda c: (-c.fused, c.key))
    return ranked


async def with_replies(read: Read, ranked: list[Candidate], when: str,
                       unfiled: Collection[int] = ()) -> list[Candidate]:
    """The reply to each of the ranking's first REPLY_PARENTS lines: the next line of another
    member in that chat within REPLY_WINDOW, at the line's score (or its own, when more). What
    a member asked or told is often answered in the next line, in words of its own. Lines held
    back from this reader are passed over as if unsaid (`Read.around`). Returns the new ones,
    which the caller scores and ranks."""
    parents = [c for c in ranked if c.belief is None][:REPLY_PARENTS]
    after = await read.around([c.key[1] for c in parents], REPLY_LOOKBACK, later=True)
    have = {c.key[1]: c for c in ranked if c.belief is None}
    new: dict[int, Candidate] = {}
    for parent in parents:
        r = _next_other(after.get(parent.key[1], ()), parent.at, parent.speaker)
        if r is None or str(r["at"]) > when or asks_only(str(r["text"])):
            continue
        if int(r["turn_id"]) in unfiled and not await read.usable([r], unread=unfiled):
            continue
        turn_id = int(r["turn_id"])
        reply = have.get(turn_id) or new.get(turn_id)
        if reply is None:
            reply = new[turn_id] = Candidate(
                key=("turns", turn_id), text=str(r["text"]), scope=str(r["scope"]),
                at=str(r["at"]), row=r, speaker=str(r["speaker_id"]))
        reply.reply = True
        reply.fused = max(reply.fused, parent.fused)
    return list(new.values())


def _next_other(near: Sequence[Row], at: str, speaker: str | None) -> Row | None:
    """The nearest of the lines after one said `at` by `speaker` that another member said
    within REPLY_WINDOW of it: her lines and the speaker's own are passed over."""
    said = datetime.fromisoformat(at)
    for r in near:
        if abs((datetime.fromisoformat(str(r["at"])) - said).total_seconds()) > REPLY_WINDOW:
            return None
        if r["role"] == "user" and r["speaker_id"] not in (None, speaker):
            return r
    return None


def without_repeats(chosen: Sequence[Candidate]) -> list[Candidate]:
    """The candidates without a line that is a belief's evidence, or says a belief's words,
    when that belief is among them: what she concluded stands for what it came from."""
    said = {c.norm for c in chosen if c.belief is not None}
    evidence = {t for c in chosen for t in c.evidence}
    return [c for c in chosen if c.belief is not None
            or (c.key[1] not in evidence and c.norm not in said)]


def stems_of(text: str) -> frozenset[str]:
    """Every stem of a text's content words."""
    return frozenset(s for w in words(text) for s in stems(w))
