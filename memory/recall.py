"""Recall: candidates from behind the wall, ranked by one blended score.

Owns: the per-scope vector matrices, keyword candidates from FTS5, and the ranking weights (all
of them, here, as named constants). Must not: rank, fetch or count anything outside the reader's
visible scopes. Semantic candidates come only from the matrices of visible scopes; keyword
candidates come from a query that embeds the wall's predicate; top-k is taken after both.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import numpy.typing as npt

from memory import wall
from memory.models import AccessContext

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


# --- vectors -------------------------------------------------------------------------------

Matrix = npt.NDArray[np.float32]


@dataclass
class ScopeVectors:
    """One scope's vectors in a contiguous, growable matrix; rows [0, size) are live."""

    dim: int
    ids: npt.NDArray[np.int64] = field(init=False)
    matrix: Matrix = field(init=False)
    size: int = 0

    def __post_init__(self) -> None:
        self.ids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, self.dim), dtype=np.float32)

    def add(self, belief_ids: list[int], vectors: Matrix) -> None:
        needed = self.size + len(belief_ids)
        if needed > len(self.ids):
            capacity = max(needed, 2 * len(self.ids), 64)
            ids = np.zeros(capacity, dtype=np.int64)
            matrix = np.zeros((capacity, self.dim), dtype=np.float32)
            ids[: self.size] = self.ids[: self.size]
            matrix[: self.size] = self.matrix[: self.size]
            self.ids, self.matrix = ids, matrix
        self.ids[self.size : needed] = belief_ids
        self.matrix[self.size : needed] = vectors
        self.size = needed

    def remove(self, belief_ids: set[int]) -> None:
        if not belief_ids or not self.size:
            return
        keep = ~np.isin(self.ids[: self.size], np.fromiter(belief_ids, dtype=np.int64))
        kept = int(keep.sum())
        self.ids[:kept] = self.ids[: self.size][keep]
        self.matrix[:kept] = self.matrix[: self.size][keep]
        self.size = kept

    def search(self, query: Matrix, top: int) -> list[tuple[int, float]]:
        if not self.size:
            return []
        sims = self.matrix[: self.size] @ query
        picked = np.argpartition(-sims, top)[:top] if self.size > top else np.arange(self.size)
        return [(int(self.ids[i]), float(sims[i])) for i in picked]


@dataclass
class VectorIndex:
    """Every scope's matrix. Searched only scope by scope, for scopes the wall shows."""

    dim: int
    scopes: dict[str, ScopeVectors] = field(default_factory=dict)
    where: dict[int, str] = field(default_factory=dict)

    def add(self, scope: str, belief_ids: list[int], vectors: Matrix) -> None:
        if not belief_ids:
            return
        self.scopes.setdefault(scope, ScopeVectors(self.dim)).add(belief_ids, vectors)
        for belief_id in belief_ids:
            self.where[belief_id] = scope

    def remove(self, belief_ids: Iterable[int]) -> None:
        by_scope: dict[str, set[int]] = {}
        for belief_id in belief_ids:
            scope = self.where.pop(belief_id, None)
            if scope is not None:
                by_scope.setdefault(scope, set()).add(belief_id)
        for scope, ids in by_scope.items():
            self.scopes[scope].remove(ids)

    def has(self, belief_id: int) -> bool:
        return belief_id in self.where

    def near_pairs(self, scope: str, belief_ids: Iterable[int], threshold: float) -> list[
        tuple[int, int]
    ]:
        """Pairs among `belief_ids` of one scope whose vectors are at least `threshold` alike."""
        vectors = self.scopes.get(scope)
        wanted = set(belief_ids)
        if vectors is None or len(wanted) < 2:
            return []
        rows = [i for i in range(vectors.size) if int(vectors.ids[i]) in wanted]
        if len(rows) < 2:
            return []
        matrix = vectors.matrix[rows]
        ids = [int(vectors.ids[i]) for i in rows]
        pairs: list[tuple[int, int]] = []
        for start in range(0, len(ids), 512):  # blocks keep a big scope's memory flat
            sims = matrix[start : start + 512] @ matrix.T
            for bi, j in zip(*np.nonzero(sims >= threshold), strict=True):
                i = start + int(bi)
                if i < int(j):
                    pairs.append((ids[i], ids[int(j)]))
        return pairs

    def search(self, ctx: AccessContext, query: Matrix, top: int) -> dict[int, float]:
        """Similarities for the best `top` candidates of each scope this reader may see."""
        found: dict[int, float] = {}
        for scope in wall.visible_scopes(ctx):
            vectors = self.scopes.get(scope)
            if vectors is not None:
                found.update(vectors.search(query, top))
        return found
