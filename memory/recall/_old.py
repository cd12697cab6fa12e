"""Recall: the whole algorithm, from candidates behind the wall to one fused ranking.

Her memory has two tiers: beliefs (what she concluded) and members' lines (what was said).
Recall searches both the same way:

1. Keyword candidates, ranked by BM25 with term statistics taken over the reader's visible rows
   only (`Read.keyword`): a row behind the wall is never fetched, counted or ranked, so it
   cannot change what a reader gets or in what order. Index and query are stemmed alike in
   four languages (`memory.terms`).
2. Semantic candidates: the nearest rows across the visible scopes' matrices, no bar to clear,
   to the query without the members' names (`Roster.without_names`): a short question's
   embedding is mostly its names, and who a row is about is judged by speaker and subject.
3. Reciprocal-rank fusion of the two lists, then confidence, recency and salience as small
   adjustments. A belief is preferred to a line that says the same, and a line that is the
   evidence of a belief recalled beside it is not repeated. The reply to each of the first
   lines joins the ranking beside it (`_with_replies`): an answer is often in the next line.
4. Abstention, calibrated rather than a fixed bar: a candidate is *sure* only when it stands out
   from what the query scores against everything the reader sees (a margin in deviations over
   the mean), helped by sharing the question's rarer words (a member's line must share them),
   and is about whom and what the question asks after: not someone else of the kind it names,
   another member, another one's thing or another named thing (`memory.roles`). A candidate
   about another member than the one asked after also loses half its score. Both `search` and
   `recollect` return the
   related evidence, ranked, each item marked (an unrelated question gets []), and then the
   rest of the ranking up to the limit, never sure; only sure items are told as memories: a
   near miss told as a memory costs more than a silence.

Owns: all of that, and every weight, as named constants here. Must not: rank, fetch or count
anything outside the reader's visible scopes; every read is receipted (lines under a receipt of
their own, `recall_lines`, and the beliefs that only fill the limit under `recall_more`).
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import combinations

from memory.beliefs import belief_from_row, normalize
from memory.gate import Gate, Read, Sources
from memory.kinds import names_the_thing, noun_phrases, other_kinds
from memory.models import REDACTED, AccessContext, Quoted, Recalled, Turn, as_utc, scope_owner
from memory.periods import (
    Period,
    asked_period,
    asks_before,
    asks_for_a_time,
    asks_now,
    names_a_time,
    revises,
)
from memory.roles import (
    Roster,
    addressed,
    answering,
    answers_which,
    answers_who,
    answers_whose,
    answers_whose_thing,
    praised,
    proper_names,
    role_stems,
    speaks_as_we,
    speaks_of_you,
)
from memory.store import Row
from memory.terms import Term, asks_only, document, query_terms, stems, text_cache, words
from memory.transcript import turn_from_row
from memory.vectors import Similar, VectorBook

Alike = dict[tuple[tuple[str, int], tuple[str, int]], float]  # `VectorBook.alike`'s answer

# --- the weights: the one place they live ---------------------------------------------------
CANDIDATES = 24  # per tier, from each list (bench.household_memory: 40 ranked no better)
# The most words one query searches by. Each is a subquery of one keyword statement, and
# SQLite refuses a statement of more than 2000 columns (two per word): a page of a thousand
# distinct words, which a terminal turn can hold, failed the whole recall. A question has a
# few; a pasted page is searched by its longest (`query_terms`), its meaning still embedded.
QUERY_TERMS = 64
TERM_CAP = 500  # ids fetched per query word (its newest, when more match: a word that common
# weighs almost nothing in BM25)
BM25_K1 = 1.2
BM25_B = 0.75
# A member's two sure items this alike (cosine) are one thing said again, and the newer holds
# now (`_newer_first`). bench.household_memory: 0.60 leaves most updates told stale-first;
# 0.50 also puts a later follow-up ("knee still sore after the physio") above the fact.
SUPERSEDES = 0.55
UPDATES = 4  # the newer alike beliefs read in for a sure one (`_with_updates`), at most
RRF_K = 20  # reciprocal-rank fusion's constant: small, so the first ranks of either list lead
# Adjustments, each a small multiple of the fused score.
CONFIDENCE_WEIGHT = 0.10
# A newer statement wins a near tie (an update over what it replaced), never an argument: at most
# a third more for what was said today. bench.household_memory: 0.3 and 60 days took the stale
# line first on 48% of updates instead of 55%, and R@1 0.63 instead of 0.60, R@10 unchanged.
RECENCY_WEIGHT = 0.30
RECENCY_HALF_LIFE_DAYS = 60.0
SALIENCE_WEIGHT = 0.05
BELIEF_PREFERENCE = 0.10  # what she concluded, over the line she concluded it from
REPETITION_PENALTY = 0.10  # for a belief returned to the same actor in the last few recalls
REPETITION_WINDOW = 3
# A candidate about other members than the question asks after ("Tom's passport" against Maya's
# "I renewed my passport"): half its score, and never sure (`memory.roles.answers_whose`).
OTHER_PERSON_PENALTY = 0.5
# A question naming a time ("what did Maria share on 16 June?", "in March", "yesterday") prefers
# what was said then (`memory.periods`), by this share of its rank score: enough to put what
# was said then first among the candidates. On the outside benchmark's 3 conversations, its
# questions naming a date had their evidence in the top 10 for 0.543 without, 0.800 at 2.0,
# 0.857 at 4.0 (10.0 ranks the same).
PERIOD_WEIGHT = 4.0
# A member's line answers the last other member who spoke in its chat within REPLY_WINDOW
# seconds, among the REPLY_LOOKBACK lines before it (her replies between them passed over).
REPLY_WINDOW = 30 * 60
REPLY_LOOKBACK = 6
# The reply to each of the ranking's first REPLY_PARENTS lines joins it at REPLY_SHARE of the
# line's score (`_with_replies`).
REPLY_PARENTS = 5
REPLY_SHARE = 1.0
# Abstention. A candidate is sure (told as a memory) when its similarity stands MARGIN
# deviations above the query's mean similarity to every row the reader sees, or when it carries
# COVERAGE of the query's keyword weight and stands COVERED_MARGIN deviations above, or by GAP
# (below); without an
# embedder, when it carries KEYWORD_ONLY_COVERAGE of the weight. The rest is still returned by
# `recollect`, ranked, as related evidence. Tuned on bench.memory_quality and
# bench.household_memory together: see docs/memory.md for the trade-off measured. With the
# who/whose/which rules and the line and name coverage in place, MARGIN sits half a deviation
# above where false memory starts to climb: household false memory 0.129 from 5.0 down to 3.9
# (0.186 at 3.7, 0.229 at 3.5), answers told 0.645 at 5.0, 0.661 at 4.5, 0.677 at 4.4 and 4.3,
# 0.669 at 4.2; probes' accuracy 0.938 at 5.0, 0.969 from 4.5 down, false memory 0.031 down to
# 3.7; the outside benchmark's sure marks alike at 4.4 (nothing told on 0.762 of wrong-person
# questions, evidence told 0.385).
MARGIN = 4.4
COVERAGE = 0.3
COVERED_MARGIN = 3.0
# A candidate whose share comes from names alone that the household does not know ("Dan",
# "Tokyo") is sure by that share only when the names carry NAMED_COVERAGE of the question's
# weight: "When was Jon in Paris?" asks after Paris, "Which allotment plot does Dan have?"
# after a plot, which "Dan paid back £200" does not speak of. Measured: household false memory
# 0.143 -> 0.129 and answers told 0.637 -> 0.645; on the outside benchmark, 24 items no longer
# told (2 of them evidence), wrong-person questions with nothing told 0.758 -> 0.762
# (at 0.5: 48 items, 5 evidence; names never enough: 76 items, 16 evidence).
NAMED_COVERAGE = 0.4
# Or when its similarity leads every other candidate's (another text) by GAP, standing at least
# GAP_MARGIN deviations above the mean: one clear answer, not one of several alike. 0.12 let a
# small scope's weak lead through ("Which gym am I a member of?" told the half marathon):
# probes' false memory 0.094 at 0.12, 0.062 at 0.13, 0.031 at 0.14, their accuracy 0.938
# until 0.15 (0.906); the household's false memory 0.174 -> 0.159, its answers unchanged.
GAP = 0.14
GAP_MARGIN = 1.0
KEYWORD_ONLY_COVERAGE = 0.5
# A member's line is raw chatter, and there are many more lines than beliefs: a line is sure only
# when it also carries LINE_COVERAGE of the query's keyword weight ("I made soup for lunch" is
# near "what did I have for breakfast?" in meaning, and shares none of its words). Measured:
# household false memory 0.227 -> 0.152 and probes 0.156 -> 0.125, answers told unchanged.
LINE_COVERAGE = COVERAGE
# A candidate is related (may be sure) when it carries RELATED_COVERAGE of the query's keyword
# weight or stands RELATED_MARGIN deviations above the mean; a question with nothing related
# gets [].
RELATED_COVERAGE = 0.34
RELATED_MARGIN = 2.0
# When something is related, a candidate judged unrelated is still returned, never sure, with
# this share of its score, so it mostly ranks after the related and fills what they leave of
# the limit (bench.household_memory: R@10 0.939 -> 0.965 with R@1
# unchanged; unweighted, the faint ones displace the related and R@1 falls 0.675 -> 0.649).
UNRELATED_WEIGHT = 0.5
# A sure item that may name the thing asked after as another (`kinds.other_kinds`: "my driving
# theory test" for "my practical driving test", "to fix the shower" for "to fix the kitchen
# sink") stays sure only when its word and the question's in its place mean alike, cosine
# KIND_ALIKE or more (the bundled model's: "fashion" and "design" internship 0.51 stay;
# "theory" and "practical" 0.30, "hernia" and "knee" 0.38, "shower" and "sink" 0.43 do not).
KIND_ALIKE = 0.5
# What a query scores against unrelated text before a scope has said much: the mean and deviation
# are drawn toward these (MiniLM's, measured on both benchmarks) as if PRIOR_ROWS such rows were
# there too, so one belief alone in a scope is not its own yardstick.
PRIOR_MEAN = 0.10
PRIOR_DEVIATION = 0.10
PRIOR_ROWS = 16
DEFAULT_LIMIT = 10  # what a caller that names no limit gets: a top ten
LINES_METHOD = "recall_lines"
# The beliefs that only fill the limit after the related ones get a receipt of their own, so the
# repetition penalty (which reads the "recall" receipts) weighs only what could have been told.
MORE_METHOD = "recall_more"


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
class _Candidate:
    """One belief or line on its way through the ranking."""

    key: tuple[str, int]
    text: str
    scope: str
    at: str
    belief: Recalled | None = None
    row: Row | None = None
    semantic: float | None = None
    keyword: float = 0.0
    covered: float = 0.0
    named_only: bool = False  # what it covers of the query is names alone (NAMED_COVERAGE)
    fused: float = 0.0
    sure: bool = False
    related: bool = False  # bears on the question enough to rank among the related (`_related`)
    whose: bool = True  # may be about the member the question asks after (`answers_whose`)
    asks: bool = False  # a line whose sentences that answer only ask ("What got you running?")
    evidence: set[int] = field(default_factory=set)
    speaker: str | None = None  # who said it: a line's speaker, a belief's owner or teller
    addressee: str | None = None  # a line's: the member whose line it answers (`_addressees`)
    subject: str | None = None  # the member a belief is about, when recorded
    norm: str = ""  # the text normalised, for comparing two candidates' words
    doc: tuple[frozenset[str], ...] = ()  # its words' stems, for BM25

    def __post_init__(self) -> None:
        self.norm = normalize(self.text)
        self.doc = document(self.text)

    @property
    def voice(self) -> str | None:
        """Whose word it is (`_newer_first`): a line's speaker, a private belief's owner; a
        shared belief speaks for the household (None), whoever told it."""
        return self.speaker if self.belief is None else scope_owner(self.scope)


class RecallBook:
    """`memory.recall`: what she remembers that bears on a question, for one reader."""

    def __init__(self, gate: Gate, vectors: VectorBook, now: Callable[[], datetime]) -> None:
        self._gate = gate
        self._vectors = vectors
        self._now = now
        # The household's names as the last recall read them: the query's meaning (its words
        # without them) starts embedding before this recall has read the roster itself. None
        # until a recall has read it: the first one reads it before it embeds.
        self._roster: Roster | None = None

    async def search(
        self,
        ctx: AccessContext,
        query: str,
        *,
        limit: int = DEFAULT_LIMIT,
        as_of: datetime | None = None,
    ) -> list[Recalled]:
        """The beliefs related to `query` that this work may use, best first, each marked
        `sure` when it stands out enough to be told as a memory; [] when nothing is related.
        `as_of` asks what was believed true at that time."""
        found = await self._recall(ctx, query, limit=limit, as_of=as_of, lines=False)
        return [r for r in found if isinstance(r, Recalled)]

    async def recollect(
        self,
        ctx: AccessContext,
        query: str,
        *,
        limit: int = DEFAULT_LIMIT,
        as_of: datetime | None = None,
    ) -> list[Recalled | Quoted]:
        """Both tiers: the beliefs and the members' own lines related to `query`, in one
        ranking, each marked `sure` or not; [] when nothing is related. A member's words are
        found the moment they are said, before any tick has concluded anything from them."""
        return await self._recall(ctx, query, limit=limit, as_of=as_of, lines=True)

    async def _recall(self, ctx: AccessContext, query: str, *, limit: int,
                      as_of: datetime | None, lines: bool) -> list[Recalled | Quoted]:
        # A word naming a role meets the role's other words: "my GP" is "my doctor".
        terms = [Term(t.word, t.stems | role_stems(t.word))
                 for t in query_terms(query, QUERY_TERMS)]
        now = self._now()
        when = (now if as_of is None else as_utc(as_of)).isoformat()
        # The query's meaning, its words without the members' names (`Roster.without_names`),
        # embeds on memory's CPU thread while the database thread reads the keyword statistics
        # (a question of stopwords and signs alone asks about nothing).
        meaning = None if self._roster is None or not terms else self._roster.without_names(query)
        embedding = None if meaning is None else asyncio.ensure_future(
            self._vectors.similar(ctx, meaning, CANDIDATES))
        try:
            async with self._gate.read(ctx, "recall", query) as read:
                asking = _Asking(query, read.ctx.actor, Roster(await read.members()))
                self._roster = asking.roster
                asked = asking.roster.without_names(query)
                if terms and asked != meaning:
                    # The first recall, or the household's names changed since the last one.
                    if embedding is not None:
                        embedding.cancel()
                    embedding = asyncio.ensure_future(
                        self._vectors.similar(ctx, asked, CANDIDATES))
                tiers = (("beliefs", "turns") if lines else ("beliefs",)) if terms else ()
                keywords = {tier: await read.keyword(tier, [t.fts() for t in terms], TERM_CAP)
                            for tier in tiers}
                similar = None if embedding is None else await embedding
                weights: dict[str, list[float]] = {}
                found: list[_Candidate] = []
                for tier, keyword in keywords.items():
                    weights[tier] = [idf(keyword.documents, df) for df in keyword.frequencies]
                    ids = _best_by_weight(keyword.ids, weights[tier])
                    nearest = {} if similar is None else (
                        similar.beliefs if tier == "beliefs" else similar.lines)
                    ids = sorted(set(ids) | set(nearest))
                    if not ids:
                        continue
                    if tier == "beliefs":
                        found += await _beliefs(read, ids, when, now, nearest)
                    else:
                        found += await _lines(read, ids, when, nearest)
                period = asked_period(query, now if as_of is None else as_utc(as_of))
                names = proper_names(query, asking.roster)
                for tier, candidates in _by_tier(found).items():
                    _score_keywords(terms, weights[tier], candidates, asking.roster, period,
                                    names=names)
                ranked = _fuse(found, asking, now, await _recently_recalled(read), period)
                if lines and terms:
                    ranked = await _with_replies(read, ranked, asking, when,
                                                 lambda cs: _score_keywords(
                                                     terms, weights["turns"], cs,
                                                     asking.roster, period, names=names))
                top = _recalled(ranked, asking, similar, limit)
                other = await _of_the_kind_asked(top, asking, self._vectors)
                top = await _newest_first(read, top, self._vectors, asking=asking, when=when,
                                          now=now, period=period, limit=limit, other=other)
                for related, method in ((True, None), (False, MORE_METHOD)):
                    beliefs = [(c.belief.belief.belief_id, c.scope) for c in top
                               if c.belief is not None and c.related == related]
                    read.returned([i for i, _ in beliefs], [s for _, s in beliefs],
                                  method=method)
                quoted = [c for c in top if c.belief is None]
                read.returned([c.key[1] for c in quoted], [c.scope for c in quoted],
                              method=LINES_METHOD)
        finally:  # a read that failed leaves no embedding behind, running or unawaited
            if embedding is not None and not embedding.done():
                embedding.cancel()
            elif embedding is not None and not embedding.cancelled():
                embedding.exception()
        return [_result(c) for c in top]


def _best_by_weight(ids_per_term: Sequence[Sequence[int]], weights: Sequence[float]) -> list[int]:
    """The CANDIDATES rows sharing the most keyword weight with the query (newest first
    among equals): every row's words counted once, as BM25 would before term counts."""
    score: dict[int, float] = {}
    for ids, weight in zip(ids_per_term, weights, strict=True):
        for row_id in ids:
            score[row_id] = score.get(row_id, 0.0) + weight
    return sorted(score, key=lambda i: (-score[i], -i))[:CANDIDATES]


async def _beliefs(read: Read, ids: list[int], when: str, now: datetime,
                   nearest: dict[int, float]) -> list[_Candidate]:
    marks = ", ".join("?" for _ in ids)
    rows = await read.beliefs(
        f"b.belief_id IN ({marks}) AND b.quarantined = 0"
        " AND (b.valid_from IS NULL OR b.valid_from <= ?)"
        " AND (b.valid_to IS NULL OR b.valid_to > ?)",
        (*ids, when, when),
    )
    allowed = await read.usable(rows)
    evidence = await read.evidence_lines([int(r["belief_id"]) for r in allowed])
    out = []
    for row in allowed:
        belief = belief_from_row(row, now)
        sources = evidence.get(belief.belief_id, Sources())
        owner = scope_owner(belief.scope)
        # Who said it: a private belief's owner; a shared one's teller, when one member told it
        # (a shared "I ran a charity race" is about whoever said so).
        teller = owner if owner is not None else (
            next(iter(sources.tellers)) if len(sources.tellers) == 1 else None)
        out.append(_Candidate(
            key=("beliefs", belief.belief_id), text=belief.proposition, scope=belief.scope,
            at=belief.updated_at, row=row, semantic=nearest.get(belief.belief_id),
            speaker=teller, subject=belief.subject_id,
            belief=Recalled(belief=belief, score=0.0, semantic=0.0, keyword=0.0),
            evidence=sources.lines,
        ))
    return out


async def _lines(read: Read, ids: list[int], when: str,
                 nearest: dict[int, float]) -> list[_Candidate]:
    marks = ", ".join("?" for _ in ids)
    rows = await read.select(
        "turns", f"turn_id IN ({marks}) AND role = 'user' AND text != ? AND at <= ?",
        (*ids, REDACTED, when), order="turn_id")
    allowed = [r for r in await read.usable(rows)
               if not asks_only(str(r["text"]))]  # a question is not evidence of anything
    answering = await _addressees(read, allowed)
    return [
        _Candidate(key=("turns", int(r["turn_id"])), text=str(r["text"]), scope=str(r["scope"]),
                   at=str(r["at"]), row=r, semantic=nearest.get(int(r["turn_id"])),
                   speaker=None if r["speaker_id"] is None else str(r["speaker_id"]),
                   addressee=answering.get(int(r["turn_id"])))
        for r in allowed
    ]


async def _with_replies(read: Read, ranked: list[_Candidate], asking: _Asking, when: str,
                        score: Callable[[list[_Candidate]], None]) -> list[_Candidate]:
    """The ranking with the reply to each of its first REPLY_PARENTS lines: the next line of
    another member in that chat within REPLY_WINDOW, at REPLY_SHARE of the line's score (or
    its own, when more). What a member asked or told is often answered in the next line, in
    words of its own: "Congrats on the promotion! What's the backstory?" is answered by "I'm
    an assistant manager now", and "What made you choose that shade?" by "I picked it because
    it's bold". A reply found only so has no similarity of its own, so it is never sure by
    it. Lines held back from this reader are passed over as if unsaid (`Read.around`)."""
    parents = [c for c in ranked if c.belief is None][:REPLY_PARENTS]
    after = await read.around([c.key[1] for c in parents], REPLY_LOOKBACK, later=True)
    have = {c.key[1]: c for c in ranked if c.belief is None}
    replies: dict[int, tuple[_Candidate, _Candidate]] = {}  # reply id: (reply, its parent)
    for parent in parents:
        r = _other_members(after.get(parent.key[1], ()), parent.at, parent.speaker)
        if r is None:
            continue
        turn_id, text = int(r["turn_id"]), str(r["text"])
        if turn_id not in replies and str(r["at"]) <= when and not asks_only(text):
            # It answers the parent's speaker: the last other member before it.
            reply = have.get(turn_id) or _Candidate(
                key=("turns", turn_id), text=text, scope=str(r["scope"]), at=str(r["at"]),
                row=r, speaker=str(r["speaker_id"]), addressee=parent.speaker)
            replies[turn_id] = (reply, parent)
    new = [reply for turn_id, (reply, _) in replies.items() if turn_id not in have]
    score(new)
    for c in new:
        _mark(c, asking)
    for reply, parent in replies.values():
        reply.fused = max(reply.fused, parent.fused * REPLY_SHARE * _person_share(reply))
    out = [*ranked, *new]
    out.sort(key=lambda c: (-c.fused, c.key))
    return out


async def _addressees(read: Read, lines: Sequence[Row]) -> dict[int, str]:
    """The member each line answers, when it answers one: the last other member who spoke in
    its chat shortly before it (REPLY_WINDOW), her own lines passed over. In the group, a
    "you" that names no one speaks to them: "Wow, your new hair colour looks amazing!" just
    after Nate's line is about Nate's hair. Lines held back from this reader are passed over
    as if unsaid (`Read.around`)."""
    # Only a line that speaks of "you" or as "we", or praises or thanks, has anyone to answer
    # for (`roles.speaks_of_you`, `roles.speaks_as_we`, `roles.praised`: "Wow, that's
    # awesome!" just after John's line is about John's thing).
    asking = [int(r["turn_id"]) for r in lines
              if speaks_of_you(str(r["text"])) or speaks_as_we(str(r["text"]))
              or praised(str(r["text"])) is not None]
    before = await read.around(asking, REPLY_LOOKBACK)
    found: dict[int, str] = {}
    for r in lines:
        speaker = None if r["speaker_id"] is None else str(r["speaker_id"])
        p = _other_members(before.get(int(r["turn_id"]), ()), str(r["at"]), speaker)
        if p is not None:
            found[int(r["turn_id"])] = str(p["speaker_id"])
    return found


def _other_members(near: Sequence[Row], at: str, speaker: str | None) -> Row | None:
    """The nearest of the lines around one said `at` by `speaker` (`Read.around`, nearest
    first) that another member said within REPLY_WINDOW of it: her lines and the speaker's
    own are passed over."""
    said = datetime.fromisoformat(at)
    for r in near:
        if abs((datetime.fromisoformat(str(r["at"])) - said).total_seconds()) > REPLY_WINDOW:
            return None
        if r["role"] == "user" and r["speaker_id"] not in (None, speaker):
            return r
    return None


def _by_tier(found: Sequence[_Candidate]) -> dict[str, list[_Candidate]]:
    tiers: dict[str, list[_Candidate]] = {}
    for c in found:
        tiers.setdefault(c.key[0], []).append(c)
    return tiers


def _score_keywords(terms: Sequence[Term], weights: Sequence[float],
                    found: Sequence[_Candidate], roster: Roster,
                    period: Period | None = None, *,
                    names: frozenset[str] = frozenset()) -> None:
    """BM25 and keyword coverage for one tier's candidates; document lengths are averaged over
    the candidates themselves (visible rows only). A row carries the name of the member who
    said it or whom it is about, as if it were one of its words: a speaker's own lines seldom
    name them ("I went to the support group"), while lines addressed to them do. `names`: the
    stems of the names the query uses (`roles.proper_names`), for `_Candidate.named_only`."""
    if not found or not terms:
        return
    docs = [c.doc + roster.name_stems(c.speaker, c.subject) for c in found]
    average = sum(len(d) for d in docs) / len(docs)
    # Coverage, which tells whether a row answers, leaves names out: who is `_whose`'s to judge.
    about, about_weights = _kept(terms, weights, lambda t: not roster.names(t.word))
    # A row said in the time the question names carries its words by when it was said ("on 16
    # June" is answered by a line of 16 June); any other row must carry them in its words.
    dated = frozenset(words(period.phrase)) if period is not None else frozenset()
    then, then_weights = _kept(about, about_weights, lambda t: t.word not in dated)
    # The words of each that are no name the household does not know (`_Candidate.named_only`).
    about_words, then_words = ([t for t in kept if role_stems(t.word) or not stems(t.word) & names]
                               for kept in (about, then))
    for c, doc in zip(found, docs, strict=True):
        c.keyword = bm25(terms, weights, doc, average)
        # Nor does a word the row only addresses someone by ("Dad, stop telling everyone." says
        # nothing of dad's birthday).
        content = addressing(c.text)
        said_then = period is not None and period.holds(c.at)
        carried = doc if content is None else content
        c.covered = coverage(then if said_then else about,
                             then_weights if said_then else about_weights, carried)
        c.named_only = c.covered > 0 and not any(
            t.count_in(carried) for t in (then_words if said_then else about_words))


def _kept(terms: Sequence[Term], weights: Sequence[float],
          keep: Callable[[Term], bool]) -> tuple[list[Term], list[float]]:
    """The terms `keep` keeps, with their weights; all of them when it keeps none."""
    kept = [(t, w) for t, w in zip(terms, weights, strict=True) if keep(t)]
    if not kept:
        return list(terms), list(weights)
    return [t for t, _ in kept], [w for _, w in kept]


@text_cache(maxsize=50_000)
def addressing(text: str) -> tuple[frozenset[str], ...] | None:
    """A text's words as `document` counts them, without those it only addresses someone by
    (`memory.roles.addressed`); None when it addresses no one."""
    called = addressed(text)
    if not called:
        return None
    return tuple(stems(w) for w in words(text) if w not in called)


def _ranks(found: Sequence[_Candidate], value: Callable[[_Candidate], float | None]) -> dict[
    tuple[str, int], int
]:
    scored = [(v, c) for c in found if (v := value(c)) is not None and v > 0]
    scored.sort(key=lambda vc: (-vc[0], vc[1].key))
    return {c.key: rank for rank, (_, c) in enumerate(scored, start=1)}


def _fuse(found: list[_Candidate], asking: _Asking, now: datetime,
          repeated: set[int], period: Period | None = None) -> list[_Candidate]:
    """Reciprocal-rank fusion of the keyword and semantic rankings, then the adjustments."""
    by_keyword = _ranks(found, lambda c: c.keyword)
    by_meaning = _ranks(found, lambda c: c.semantic)
    for c in found:
        fused = sum(1.0 / (RRF_K + ranks[c.key]) for ranks in (by_keyword, by_meaning)
                    if c.key in ranks)
        adjust = RECENCY_WEIGHT * recency(c.at, now)
        if c.belief is not None and c.row is not None:
            belief = c.belief.belief
            adjust += (CONFIDENCE_WEIGHT * belief.confidence
                       + SALIENCE_WEIGHT * float(c.row["salience"]) + BELIEF_PREFERENCE)
            if belief.belief_id in repeated:
                adjust -= REPETITION_PENALTY
        _mark(c, asking)
        c.fused = fused * (1.0 + adjust) * _person_share(c)
        if period is not None and period.holds(c.at):
            c.fused *= 1.0 + PERIOD_WEIGHT
    ranked = [c for c in found if c.fused > 0]
    ranked.sort(key=lambda c: (-c.fused, c.key))
    return ranked


def _mark(c: _Candidate, asking: _Asking) -> None:
    """Whether a candidate may be about whom the question asks after, and whether a line's
    sentences that answer only ask."""
    c.whose = _whose(c, asking)
    c.asks = c.belief is None and asks_only(answering(asking.query, c.text, asking.roster))


def _person_share(c: _Candidate) -> float:
    """The share of its score a candidate keeps: all of it, or less OTHER_PERSON_PENALTY when
    it is about another member than the one asked after."""
    return 1.0 if c.whose else 1.0 - OTHER_PERSON_PENALTY


def _whose(c: _Candidate, asking: _Asking, *, called_out: bool = False) -> bool:
    return answers_whose(asking.query, asking.asker, c.text, c.speaker, roster=asking.roster,
                         subject=c.subject, addressee=c.addressee, called_out=called_out)


def _lead(c: _Candidate, spread: tuple[float, float]) -> float:
    """How many deviations the candidate's similarity stands above the query's mean over
    every visible row (a candidate outside the semantic list is taken at the mean)."""
    mean, deviation = spread
    sim = c.semantic if c.semantic is not None else mean
    return (sim - mean) / deviation if deviation > 0 else 0.0


def _related(c: _Candidate, spread: tuple[float, float] | None) -> bool:
    if c.covered >= RELATED_COVERAGE:
        return True
    return spread is not None and _lead(c, spread) >= RELATED_MARGIN


@dataclass(frozen=True)
class _Asking:
    """The question, who asks it (the reader's actor: a member, or hearth's own work), and the
    household's names: what `answers_who` and `answers_whose` need."""

    query: str
    asker: str
    roster: Roster


def _may_tell(c: _Candidate, asking: _Asking) -> bool:
    """Whether a candidate may be told as a memory of what the question asks after, however
    alike the two: about whom it asks, whose thing, which thing; and a line (raw chatter) only
    when it carries LINE_COVERAGE of the question's keyword weight. A question asking when
    something is or will be is answered only by words naming a time (`periods.names_a_time`):
    "Well done Ellie! Three goals in the netball final!" does not tell what night practice is."""
    return (answers_who(asking.query, c.text) and c.whose
            and (not asks_for_a_time(asking.query) or names_a_time(c.text))
            and _whose(c, asking, called_out=True)
            and answers_whose_thing(asking.query, asking.asker, c.text, c.speaker,
                                    asking.roster, addressee=c.addressee)
            and answers_which(asking.query, c.text, asking.roster)
            and (c.belief is not None or c.covered >= LINE_COVERAGE))


def _sure(c: _Candidate, asking: _Asking, spread: tuple[float, float] | None,
          gap: float) -> bool:
    """Whether a candidate stands out enough to be told as a memory (`gap`: how far its
    similarity leads the best other candidate's)."""
    if not _may_tell(c, asking):
        return False
    if spread is None:  # no embedder: the words alone decide
        return c.covered >= KEYWORD_ONLY_COVERAGE
    lead = _lead(c, spread)
    covered = c.covered >= (NAMED_COVERAGE if c.named_only else COVERAGE)
    return (lead >= MARGIN or (covered and lead >= COVERED_MARGIN)
            or (gap >= GAP and lead >= GAP_MARGIN))


def _recalled(ranked: list[_Candidate], asking: _Asking, similar: Similar | None,
              limit: int) -> list[_Candidate]:
    """The first `limit` candidates of the ranking, the unrelated at UNRELATED_WEIGHT of their
    score ([] when none is related), without the question itself and without a line that
    repeats a belief recalled beside it; each marked sure or not (an unrelated one never)."""
    spread = None if similar is None else similar.spread.calibrated(
        PRIOR_MEAN, PRIOR_DEVIATION, PRIOR_ROWS)
    asked = normalize(asking.query)
    considered = [c for c in ranked if c.belief is not None or c.norm != asked]
    for c in considered:
        # What only asks tells nothing: it may rank, never as related nor as sure.
        c.related = not c.asks and _related(c, spread)
    if not any(c.related for c in considered):
        return []
    # The candidates the calibration judges unrelated keep a share of their score, so they
    # mostly rank after the related and fill what those leave of the limit: evidence too faint
    # to tell is still found (a question that shares little with its answer but meaning).
    for c in considered:
        if not c.related:
            c.fused *= UNRELATED_WEIGHT
    considered.sort(key=lambda c: (-c.fused, c.key))
    top = _without_repeats(considered)[: max(0, limit)]
    for c in top:
        c.sure = c.related and _sure(c, asking, spread, _gap(c, considered))
    return top


def _newer_first(top: list[_Candidate], alike: Alike, asking: _Asking,
                 period: Period | None = None) -> list[_Candidate]:
    """The sure items with a member's newer word on a thing before their older one: when one
    speaker's two items in one scope are alike enough to be the same thing said again
    (`SUPERSEDES`), the newer holds now ("the plumber is coming on Wednesday instead" over
    "the plumber is coming on Monday"), whatever their scores. A related belief that is the
    newer word on a sure belief's thing is told too, when it may be (`_may_tell`): an update is
    often said in fewer of the question's words than what it replaced ("Change of plan: the
    summer holiday is Porto, not Lisbon" after "We've booked the summer holiday: two weeks in
    Lisbon"). Lines are not: one member's lines on one subject are alike without one replacing
    the other (on the outside benchmark, telling them so put a follow-up first 25 times and
    the answer 11). A shared belief speaks for the household, so the newer of two alike household
    facts holds too. Other items keep their places. A question naming a time (`period`) asks
    what held then: the word said in it is not put after a newer one said since ("where was
    Sunday lunch in February?"). `alike`: how alike each two of `top` are."""
    if asks_before(asking.query):  # "my old passport", "when did I first book ...?"
        return top
    told = [c for c in top if c.related]  # the sure are among them (`_recalled`)
    if not alike:
        return top

    for c in told:
        if (not c.sure and c.belief is not None and _may_tell(c, asking)
                and any(o.sure and o.belief is not None and _replaces(c, o, alike, period)
                        for o in told)):
            c.sure = True
    order = [c for c in top if c.sure]
    for _ in range(len(order) ** 2):  # a bound: "alike" is not transitive
        moved = False
        for i, j in combinations(range(len(order)), 2):
            if _replaces(order[j], order[i], alike, period):
                order.insert(i, order.pop(j))
                moved = True
                break
        if not moved:
            break
    slots = iter(order)
    return [next(slots) if c.sure else c for c in top]


async def _of_the_kind_asked(top: list[_Candidate], asking: _Asking,
                             vectors: VectorBook) -> list[_Candidate]:
    """Unmark (and give) the sure items that may name the thing asked after as another
    (`kinds.other_kinds`: "Passed my driving theory test today!" for "When did I pass my
    practical driving test?") unless the words of each such pair mean alike (`KIND_ALIKE`).
    The English lexicon and the words' embedding work in memory's thread, off the loop."""
    sure = [c for c in top if c.sure]
    if not sure or not noun_phrases(asking.query):
        return []
    embedder = vectors.embedder

    def judge() -> set[tuple[str, int]]:
        pairs = {c.key: other_kinds(asking.query, c.text) for c in sure}
        said = sorted({w for found in pairs.values() for asked, told in found
                       for w in (*asked, told)})
        if not said:
            return set()
        if embedder is None:  # nothing tells "fashion" from "design": not told
            return {key for key, found in pairs.items() if found}
        vector = dict(zip(said, embedder.embed(said), strict=True))
        return {key for key, found in pairs.items()
                if any(max(float(vector[w] @ vector[told]) for w in asked) < KIND_ALIKE
                       for asked, told in found)}

    other = await vectors.off_loop(judge)
    for c in sure:
        if c.key in other:
            c.sure = False
    return [c for c in sure if c.key in other]


async def _newest_first(read: Read, top: list[_Candidate], vectors: VectorBook, *,
                        asking: _Asking, when: str, now: datetime, period: Period | None,
                        limit: int, other: Sequence[_Candidate] = ()) -> list[_Candidate]:
    """The ranking with each update just before what it updates (`_with_updates`), then the
    sure with a member's newer word first (`_newer_first`), cut to `limit`. How alike each two
    ranked rows are, which both read, is taken once (again only when updates were read in).
    `other`: the items `_of_the_kind_asked` unmarked; a member's newer word on one of them
    (`_replaces`) that does not name the thing asked after is about that other thing too
    ("Plumber rang, he's coming on Wednesday instead", after "the plumber is coming on Monday
    to fix the shower", does not tell when he fixes the kitchen sink)."""
    keys = {c.key for c in top}
    alike = vectors.alike(list(keys))
    for c in top:
        if other and c.sure and not names_the_thing(asking.query, c.text) and any(
                _replaces(c, o, alike, period) for o in other):
            c.sure = False
    top = await _with_updates(read, top, vectors, alike, asking=asking, when=when, now=now,
                              period=period)
    if not {c.key for c in top} <= keys:
        alike = vectors.alike([c.key for c in top])
    return _newer_first(top, alike, asking, period)[: max(0, limit)]


async def _with_updates(read: Read, top: list[_Candidate], vectors: VectorBook, alike: Alike,
                        *, asking: _Asking, when: str, now: datetime,
                        period: Period | None) -> list[_Candidate]:
    """A member's newer word on a related belief's thing ranks just before it. The newer belief
    is of the same scope and voice, said later, alike enough to be the same thing said again
    (`SUPERSEDES`), and says it changes something (`revises`: "changed her mind", "instead"),
    for two alike sentences may be two things ("Bob's bike is green", "Bob's kayak is
    yellow": 0.58). When the question asks what holds now (`asks_now`), the update of a
    belief it is sure of is read in where the question did not find it, through the gate like
    any candidate: an update is often said in none of the question's words ("Gillian changed
    her mind, she's staying at the firm" for "is my boss still leaving in April?", beside "my
    manager Gillian is leaving at the end of April"), and `_newer_first` then tells it first.
    Not for a question asking what held before, nor for one naming a time the older word held
    in and the newer did not. `alike`: how alike each two of `top` are."""
    older = [c for c in top if c.belief is not None and c.related]
    if not older or asks_before(asking.query):
        return top
    ranked = {c.key[1]: c for c in top if c.belief is not None}
    newer_of = {c.key[1]: [i for i, n in ranked.items()
                           if alike.get((c.key, n.key), 0.0) >= SUPERSEDES]
                for c in older}
    # Read in only for a question asking what holds now: elsewhere the found items are
    # reordered, and no other row is read (bench.recall at 10k: reading in for every sure
    # belief cost 2.9 ms a recall, for the templated siblings each one has).
    sure = [c.key[1] for c in older if c.sure] if asks_now(asking.query) else []
    beyond = await vectors.newer_alike(sure, SUPERSEDES, UPDATES)
    unread = sorted({i for ids in beyond.values() for i in ids if i not in ranked})
    found = dict(ranked)
    if unread:
        found.update((c.key[1], c) for c in await _beliefs(read, unread, when, now, {}))
    for key, ids in beyond.items():
        newer_of[key] = [*newer_of.get(key, []), *ids]
    out: list[_Candidate] = []
    placed: set[int] = set()
    for c in top:
        if c.belief is not None and c.key[1] in placed:
            continue  # an update already placed before what it updates
        if c.belief is not None and c.related:
            newer = [found[i] for i in newer_of.get(c.key[1], ())
                     if i in found and i not in placed and _later_word(found[i], c, period)
                     and revises(found[i].text)]
            if newer:
                update = max(newer, key=lambda n: (n.at, n.key))
                if update.key[1] not in ranked:
                    _mark(update, asking)
                    update.related, update.fused = True, c.fused
                if all(o is not update for o in out):
                    placed.add(update.key[1])
                    out.append(update)
        out.append(c)
    return _without_repeats(out)


def _replaces(newer: _Candidate, older: _Candidate, alike: Alike, period: Period | None) -> bool:
    """Whether `newer` is the same voice's later word on `older`'s thing (`_later_word`), alike
    enough to be the same thing said again (`SUPERSEDES`)."""
    return (_later_word(newer, older, period)
            and alike.get((older.key, newer.key), 0.0) >= SUPERSEDES)


def _later_word(newer: _Candidate, older: _Candidate, period: Period | None) -> bool:
    """Whether `newer` is the same voice's later word in the same scope, and not outside a
    time the question names that `older` was said in ("where was Sunday lunch in February?"
    asks what held then)."""
    return (newer.at > older.at and newer.voice == older.voice and newer.scope == older.scope
            and not (period is not None and period.holds(older.at)
                     and not period.holds(newer.at)))


def _gap(c: _Candidate, considered: Sequence[_Candidate]) -> float:
    if c.semantic is None:
        return 0.0
    others = [o.semantic for o in considered if o.semantic is not None and o.norm != c.norm]
    return c.semantic - max(others) if others else c.semantic


def _without_repeats(chosen: list[_Candidate]) -> list[_Candidate]:
    said = {c.norm for c in chosen if c.belief is not None}
    evidence = {t for c in chosen for t in c.evidence}
    return [c for c in chosen if c.belief is not None
            or (c.key[1] not in evidence and c.norm not in said)]


def _result(c: _Candidate) -> Recalled | Quoted:
    semantic = round(c.semantic or 0.0, 4)
    keyword = round(c.covered, 4)  # the share of the query's keyword weight it carries
    score = round(c.fused, 6)
    if c.belief is not None:
        return Recalled(belief=c.belief.belief, score=score, semantic=semantic, keyword=keyword,
                        sure=c.sure)
    if c.row is None:
        raise ValueError("a recalled line without its row")
    turn: Turn = turn_from_row(c.row)
    return Quoted(turn=turn, score=score, semantic=semantic, keyword=keyword, sure=c.sure)


async def _recently_recalled(read: Read) -> set[int]:
    """Beliefs this reader's last few recalls returned: the repetition penalty's input."""
    rows = await read.ledger(
        "actor = ? AND method = 'recall' AND activity = ?",
        (read.ctx.actor, read.ctx.activity.value),
        order="seq DESC", limit=REPETITION_WINDOW,
    )
    return {int(i) for r in rows for i in json.loads(r["returned_ids"])}
