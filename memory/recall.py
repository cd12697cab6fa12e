"""Recall: the whole algorithm, from candidates behind the wall to one blended score.

Owns: keyword candidates (FTS5, through the gate), semantic candidates (the vector index, scope
by scope), the ranking weights (all of them, here, as named constants), the threshold and the
repetition penalty. Must not: rank, fetch or count anything outside the reader's visible
scopes. Semantic candidates come only from the matrices of visible scopes; keyword candidates
come from the gate's walled match; top-k is taken after both, and the read is receipted.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from datetime import datetime

from memory.beliefs import belief_from_row
from memory.gate import Gate, Read
from memory.models import AccessContext, Recalled, as_utc
from memory.vectors import VectorBook

# --- ranking weights: the one place they live ---------------------------------------------
SEMANTIC_WEIGHT = 0.70  # share of relevance from embedding similarity (with an embedder)
KEYWORD_WEIGHT = 0.30  # share of relevance from keyword overlap (all of it without one)
RELEVANCE_WEIGHT = 0.70
CONFIDENCE_WEIGHT = 0.15
RECENCY_WEIGHT = 0.10
SALIENCE_WEIGHT = 0.05
REPETITION_PENALTY = 0.10  # for a belief returned to the same actor in the last few recalls
REPETITION_WINDOW = 3  # how many of the actor's recent recalls count as "recent"
RECENCY_HALF_LIFE_DAYS = 30.0
# Below these relevances a candidate is not recalled at all, so an unrelated query gets [].
# Measured by bench.memory_quality (64 probes, MiniLM): 0.30 recalled 0.91 of told facts with
# a 0.47 false-memory rate; 0.38 recalls 0.84 with 0.31. A false memory costs more than a miss.
MIN_RELEVANCE_SEMANTIC = 0.38
MIN_RELEVANCE_KEYWORD = 0.34
CANDIDATES_PER_SOURCE = 32
DEFAULT_LIMIT = 8

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
STOPWORDS = frozenset(
    [
        "a", "an", "the", "and", "or", "but", "if", "of", "to", "in", "on", "at", "by", "for",
        "with", "from", "as", "is", "are", "was", "were", "be", "been", "being", "am", "do",
        "does", "did", "doing", "have", "has", "had", "having", "i", "me", "my", "mine",
        "you", "your", "yours", "he", "him", "his", "she", "her", "hers", "it", "its", "we",
        "us", "our", "they", "them", "their", "this", "that", "these", "those", "what",
        "which", "who", "whom", "whose", "when", "where", "why", "how", "there", "here",
        "not", "no", "so", "than", "too", "very", "can", "could", "would", "should", "will",
        "shall", "may", "might", "must", "just", "about", "into", "over", "under", "again",
        "further", "then", "once", "all", "any", "both", "each", "few", "more", "most",
        "other", "some", "such", "only", "own", "same", "s", "t", "don", "now", "tell",
        "know", "remember", "anything", "something",
    ]
)


def terms(text: str) -> list[str]:
    """Lower-case content words, in order, without stopwords or duplicates."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.casefold()):
        if len(word) > 1 and word not in STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)


def fts_query(query_terms: Iterable[str], *, every: bool = False) -> str:
    """An FTS5 query of quoted terms (any of them, or `every` one); quoting keeps user text
    from being FTS syntax."""
    joiner = " AND " if every else " OR "
    return joiner.join('"' + term.replace('"', '""') + '"' for term in query_terms)


def keyword_overlap(query_terms: list[str], proposition: str) -> float:
    if not query_terms:
        return 0.0
    have = set(terms(proposition))
    return sum(1 for term in query_terms if term in have) / len(query_terms)


def recency(updated_at: str, now: datetime) -> float:
    age_days = max(0.0, (now - datetime.fromisoformat(updated_at)).total_seconds() / 86400)
    return math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


def relevance(semantic: float | None, keyword: float) -> float:
    if semantic is None:
        return keyword
    return SEMANTIC_WEIGHT * max(0.0, semantic) + KEYWORD_WEIGHT * keyword


def candidates(semantic: dict[int, float], keyword_ids: list[int]) -> list[int]:
    """Keyword hits, plus vector hits whose similarity alone can clear the threshold.

    A vector hit outside the keyword candidates shares no ranked keyword with the query, so
    its relevance is its semantic part; hydrating it otherwise is wasted work.
    """
    chosen = set(keyword_ids)
    chosen.update(
        belief_id
        for belief_id, sim in semantic.items()
        if SEMANTIC_WEIGHT * sim >= MIN_RELEVANCE_SEMANTIC
    )
    return sorted(chosen)


def clears_threshold(semantic: float | None, score: float) -> bool:
    floor = MIN_RELEVANCE_KEYWORD if semantic is None else MIN_RELEVANCE_SEMANTIC
    return score >= floor


def blended(
    rel: float, confidence: float, recent: float, salience: float, repeated: bool
) -> float:
    return (
        RELEVANCE_WEIGHT * rel
        + CONFIDENCE_WEIGHT * confidence
        + RECENCY_WEIGHT * recent
        + SALIENCE_WEIGHT * salience
        - (REPETITION_PENALTY if repeated else 0.0)
    )


class RecallBook:
    """`memory.recall`: the beliefs most relevant to a question, for one reader."""

    def __init__(self, gate: Gate, vectors: VectorBook, now: Callable[[], datetime]) -> None:
        self._gate = gate
        self._vectors = vectors
        self._now = now

    async def search(
        self,
        ctx: AccessContext,
        query: str,
        *,
        limit: int = DEFAULT_LIMIT,
        as_of: datetime | None = None,
    ) -> list[Recalled]:
        """The beliefs most relevant to `query` that this work may use; [] when none clear the
        threshold. `as_of` asks what was believed true at that time."""
        query_terms = terms(query)
        semantic = await self._vectors.search(ctx, query, CANDIDATES_PER_SOURCE)
        use_semantic = self._vectors.embedder is not None
        now = self._now()
        when = (now if as_of is None else as_utc(as_of)).isoformat()
        async with self._gate.read(ctx, "recall", query) as read:
            keyword_ids = await _keyword_candidates(read, query_terms)
            chosen = candidates(semantic, keyword_ids)
            if not chosen:
                return []
            marks = ", ".join("?" for _ in chosen)
            rows = await read.beliefs(
                f"b.belief_id IN ({marks}) AND b.quarantined = 0"
                " AND (b.valid_from IS NULL OR b.valid_from <= ?)"
                " AND (b.valid_to IS NULL OR b.valid_to > ?)",
                (*chosen, when, when),
            )
            allowed = await read.usable(rows)
            recent = await _recently_recalled(read)
            scored: list[Recalled] = []
            for row in allowed:
                belief = belief_from_row(row, now)
                sim = semantic.get(belief.belief_id, 0.0) if use_semantic else None
                overlap = keyword_overlap(query_terms, belief.proposition)
                rel = relevance(sim, overlap)
                if not clears_threshold(sim, rel):
                    continue
                score = blended(
                    rel,
                    belief.confidence,
                    recency(belief.updated_at, now),
                    float(row["salience"]),
                    belief.belief_id in recent,
                )
                scored.append(Recalled(belief=belief, score=round(score, 4),
                                       semantic=round(sim or 0.0, 4),
                                       keyword=round(overlap, 4)))
            scored.sort(key=lambda r: (-r.score, r.belief.belief_id))
            top = scored[: max(0, limit)]
            read.returned([r.belief.belief_id for r in top], [r.belief.scope for r in top])
        return top


async def _keyword_candidates(read: Read, query_terms: list[str]) -> list[int]:
    """Visible beliefs sharing words with the query: those with every word first, then any.

    Ordered by id, never by FTS5's bm25: its statistics span the whole table, hidden rows
    included, and must not decide which visible beliefs a reader gets.
    """
    if not query_terms:
        return []
    found: list[int] = []
    for match in (fts_query(query_terms, every=True), fts_query(query_terms)):
        for belief_id in await read.matching(match, CANDIDATES_PER_SOURCE):
            if belief_id not in found:
                found.append(belief_id)
        if len(found) >= CANDIDATES_PER_SOURCE or len(query_terms) == 1:
            break
    return found[:CANDIDATES_PER_SOURCE]


async def _recently_recalled(read: Read) -> set[int]:
    """Beliefs this reader's last few recalls returned: the repetition penalty's input."""
    rows = await read.ledger(
        "actor = ? AND method = 'recall' AND activity = ?",
        (read.ctx.actor, read.ctx.activity.value),
        order="seq DESC", limit=REPETITION_WINDOW,
    )
    return {int(i) for r in rows for i in json.loads(r["returned_ids"])}

