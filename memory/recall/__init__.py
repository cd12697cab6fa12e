"""Recall: what she remembers that bears on a question, for one reader, and what of it she tells.

Three steps, one module each:

1. `candidates`: from the reader's visible rows only, keyword (BM25) and semantic lists of
   beliefs and members' lines, fused into one ranking.
2. `judge`: each top candidate's signals (`signals`) weighed by a model fitted on the
   project's own households, giving a verdict, `answers`, `related` or `unrelated`, with a
   why. With a capable language model configured, the soul may ask it to judge the same
   candidates instead (`Recollection`); the signal judge stands when it cannot.
3. `verdict`: what answers first (a member's newer word before what it replaced), then what is
   related; never the same thing twice.

Owns: the recall algorithm. Must not: rank, fetch or count anything outside the reader's
visible scopes; every read is receipted (beliefs under `recall`, lines under `recall_lines`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime

from memory.beliefs import normalize
from memory.gate import Gate, Read
from memory.models import AccessContext, Quoted, Recalled, Verdict, as_utc
from memory.recall import candidates as cand
from memory.recall.candidates import Asked, Candidate
from memory.recall.judge import Judgement, SignalJudge, weights_for
from memory.recall.names import Roster
from memory.recall.periods import asked_period
from memory.recall.replacements import began, load_replacements
from memory.recall.signals import FEATURES, Background, measure
from memory.recall.verdict import Judged, ordered, result
from memory.terms import query_terms
from memory.vectors import Similar, VectorBook

# What a caller that names no limit gets, and what the assembler asks for: one number.
LIMIT = 12
# How many of the fused ranking's first candidates the judge weighs.
JUDGED = cand.CANDIDATES
LINES_METHOD = "recall_lines"
EXPLAIN_METHOD = "recall_explain"
WHY_METHOD = "why"
# What a question scores against unrelated rows under an embedder no weights were fitted for
# (mean, deviation of the cosine), when it does not say: near-orthogonal rows.
UNFITTED_PRIOR = (0.0, 0.1)


_NO_JUDGEMENT = Judgement(Verdict.RELATED, 0.0, "")


class Explained:
    """One candidate as `explain` shows it: the record (with its verdict, chance and why) and
    the signals the judge weighed, by name."""

    def __init__(self, item: Recalled | Quoted, signals: dict[str, float]) -> None:
        self.item = item
        self.signals = signals


class RecallBook:
    """`memory.recall`: what she remembers that bears on a question, for one reader."""

    def __init__(self, gate: Gate, vectors: VectorBook, now: Callable[[], datetime]) -> None:
        self._gate = gate
        self._vectors = vectors
        self._now = now
        # The household's names as the last recall read them: the question's meaning (its
        # words without them) starts embedding before this recall has read the roster itself.
        self._roster: Roster | None = None

    @property
    def judge(self) -> SignalJudge:
        embedder = self._vectors.embedder
        return SignalJudge(weights_for(None if embedder is None else embedder.name))

    async def search(self, ctx: AccessContext, query: str, *, limit: int = LIMIT,
                     as_of: datetime | None = None) -> list[Recalled]:
        """The beliefs that answer `query` or are related to it, that this work may use:
        answers first, each with its verdict and why; [] when nothing is. `as_of` asks what
        was believed true at that time."""
        handed = await self._recall(ctx, query, as_of=as_of, lines=False, method="recall",
                                    pick=lambda judged: ordered(judged)[: max(0, limit)])
        return [r for c, j, _ in handed if isinstance(r := result(c, j), Recalled)]

    def foresee(self, ctx: AccessContext, query: str) -> None:
        """Begin embedding the question `recollect` will ask for `query`, as early as the turn
        knows it: the rest of the turn's work before its recall runs beside the embedding.
        Once the household's names are known (after the first recall); nothing is read."""
        if self._roster is not None and query_terms(query, cand.QUERY_TERMS):
            self._vectors.foresee(self._roster.without_names(query), asker=ctx.actor)

    async def recollect(self, ctx: AccessContext, query: str, *, limit: int = LIMIT,
                        as_of: datetime | None = None,
                        unrelated: bool = False) -> list[Recalled | Quoted]:
        """Both tiers: the beliefs and the members' own lines that answer `query` or are
        related to it, answers first; [] when nothing is. `unrelated` hands back the rest of
        the judged candidates too, marked so, after them. A member's words are found the
        moment they are said, before any tick concluded anything."""
        handed = await self._recall(
            ctx, query, as_of=as_of, lines=True, method="recall",
            pick=lambda judged: ordered(judged, unrelated=unrelated)[: max(0, limit)])
        return [result(c, j) for c, j, _ in handed]

    async def explain(self, ctx: AccessContext, query: str, *, limit: int = LIMIT,
                      as_of: datetime | None = None) -> list[Explained]:
        """The first `limit` judged candidates, in the fused ranking's order, with their
        signals, verdicts and whys: what `hearth recall --explain` prints. Receipted like any
        recall."""
        handed = await self._recall(ctx, query, as_of=as_of, lines=True,
                                    method=EXPLAIN_METHOD,
                                    pick=lambda judged: judged[: max(0, limit)])
        return [Explained(result(c, j), dict(zip(FEATURES, s, strict=True)))
                for c, j, s in handed]

    async def why(self, ctx: AccessContext, chat_id: str) -> list[Recalled | Quoted]:
        """The memories her last reply in `chat_id` was given, with the verdict and why the
        judge gave each then: only those this reader may see and this work may use (their own
        and shared ones, for a member), read and receipted like any recall."""
        now = self._now()
        async with self._gate.read(ctx, WHY_METHOD, chat_id) as read:
            logged = await read.reply_memories(chat_id)
            ids = {tier: [i for t, i, _, _ in logged if t == tier]
                   for tier in ("beliefs", "turns")}
            found: dict[tuple[str, int], Candidate] = {}
            for c in await cand.beliefs(read, ids["beliefs"], now.isoformat(), now):
                found[c.key] = c
            for c in await cand.lines(read, ids["turns"], now.isoformat()):
                found[c.key] = c
            out: list[Recalled | Quoted] = []
            shown: list[Candidate] = []
            for tier, row_id, verdict, said in logged:
                seen = found.get((tier, row_id))
                if seen is not None:
                    shown.append(seen)
                    out.append(result(seen, Judgement(Verdict(verdict), 0.0, said)))
            self._receipt(read, [(c, _NO_JUDGEMENT, ()) for c in shown], WHY_METHOD)
        return out

    async def _recall(self, ctx: AccessContext, query: str, *, as_of: datetime | None,
                      lines: bool, method: str,
                      pick: Callable[[list[Judged]], list[Judged]]) -> list[Judged]:
        """The judged candidates `pick` chooses from the fused ranking's first JUDGED; the
        receipt names exactly those."""
        terms = query_terms(query, cand.QUERY_TERMS)
        now = self._now()
        when = (now if as_of is None else as_utc(as_of)).isoformat()
        # The question's meaning embeds on memory's CPU thread (a question of stopwords and signs
        # alone asks about nothing), without the names the last recall read.
        meaning = None if self._roster is None or not terms else self._roster.without_names(query)
        embedding = None if meaning is None else asyncio.ensure_future(
            self._vectors.similar(ctx, meaning, cand.CANDIDATES))
        judge = self.judge
        try:
            if embedding is not None:
                # The question's meaning is awaited before the read opens: a read holds the
                # database (its transaction) until it closes, and an embedding awaited inside it
                # kept every other member's turn waiting on this one's 15-25 ms of CPU.
                await asyncio.wait([embedding])
            async with self._gate.read(ctx, method, query) as read:
                roster = Roster(await read.members())
                self._roster = roster
                asked_meaning = roster.without_names(query)
                if terms and asked_meaning != meaning:
                    # The first recall, or the household's names changed since the last one.
                    if embedding is not None:
                        embedding.cancel()
                    embedding = asyncio.ensure_future(
                        self._vectors.similar(ctx, asked_meaning, cand.CANDIDATES))
                asked = Asked(query, read.ctx.actor, roster, roster.named(query),
                              asked_period(query, now if as_of is None else as_utc(as_of)),
                              tuple(terms))
                top, background, vocabulary = await self._candidates(
                    read, asked, embedding, when=when, now=now, lines=lines)
                signals = measure(top, asked, background, vocabulary, now)
                handed = pick([(c, judge.judge(s, why=False), s)
                               for c, s in zip(top, signals, strict=True)])
                handed = [(c, judge.explained(j, s), s) for c, j, s in handed]
                self._receipt(read, handed, method)
        finally:  # a read that failed leaves no embedding behind, running or unawaited
            if embedding is not None and not embedding.done():
                embedding.cancel()
            elif embedding is not None and not embedding.cancelled():
                embedding.exception()
        return handed

    async def _candidates(self, read: Read, asked: Asked,
                          embedding: asyncio.Future[Similar | None] | None, *, when: str,
                          now: datetime, lines: bool) -> tuple[list[Candidate],
                                                               Background | None,
                                                               cand.Vocabulary]:
        """The fused ranking's first JUDGED candidates, and the question's background."""
        tiers = (("beliefs", "turns") if lines else ("beliefs",)) if asked.terms else ()
        keywords = {tier: await read.keyword(tier, [t.fts() for t in asked.terms],
                                             cand.TERM_CAP)
                    for tier in tiers}
        # The keyword candidates first; then the nearest rows the keywords did not find, from
        # the question's meaning (embedded before the read opened, except on the first recall
        # or after the household's names changed, when it embeds while these are read).
        weights: dict[str, list[float]] = {}
        found: list[Candidate] = []
        loaded: set[tuple[str, int]] = set()

        async def load(tier: str, ids: list[int]) -> None:
            ids = sorted(i for i in set(ids) if (tier, i) not in loaded)
            loaded.update((tier, i) for i in ids)
            if tier == "beliefs":
                found.extend(await cand.beliefs(read, ids, when, now, asked.period))
            else:
                found.extend(await cand.lines(read, ids, when, self._vectors.unfiled))

        best: dict[str, list[int]] = {}
        for tier, keyword in keywords.items():
            weights[tier] = [cand.idf(keyword.documents, df) for df in keyword.frequencies]
            best[tier] = cand.best_by_weight(keyword.ids, weights[tier])
        if embedding is not None and not embedding.done():
            for tier, ids in best.items():  # read while the question is still being embedded
                await load(tier, ids)
        similar = None if embedding is None else await embedding
        for tier in keywords:
            # One read per tier for both lists: each read is a few round trips to the
            # database's thread, and the order rows are found in does not shape the ranking.
            near = [] if similar is None else list(
                similar.beliefs if tier == "beliefs" else similar.lines)
            await load(tier, [*best[tier], *near])
        self._measure(found, asked, similar, weights)
        vocabulary = cand.vocabulary(asked, [k.frequencies for k in keywords.values()], found)
        ranked = cand.fuse(found, now)
        if lines and asked.terms:
            replies = await cand.with_replies(read, ranked, when, self._vectors.unfiled)
            if replies:
                self._measure(replies, asked, similar, weights)
                ranked = sorted([*ranked, *replies], key=lambda c: (-c.fused, c.key))
        # The question itself, just said, is not evidence of its answer.
        asked_words = normalize(asked.text)
        ranked = [c for c in ranked if c.belief is not None or c.norm != asked_words]
        top = cand.without_repeats(ranked)[:JUDGED]
        await load_replacements(read, top, asked.period)
        ended = None if asked.period is None else asked.period.end.isoformat()
        for c in top:
            # The version of a thing that held in the time the question names, replaced only
            # since, is the word of that time however long before it was said.
            c.said_then = c.said_then or bool(c.later)
            # A belief that began only after that time did not hold in it.
            c.began_after = (ended is not None and c.belief is not None
                             and began(c) >= ended)
        background = None
        if similar is not None:
            w = self.judge.weights
            spread = similar.spread
            embedder = self._vectors.embedder
            # The prior is the fitted embedder's; another (a test's) may say its own.
            prior = (w.prior if embedder is None or embedder.name == w.embedder
                     else getattr(embedder, "prior", UNFITTED_PRIOR))
            background = Background(spread.count, spread.total, spread.squares, prior,
                                    w.prior_rows)
        return top, background, vocabulary

    def _measure(self, found: list[Candidate], asked: Asked, similar: Similar | None,
                 weights: dict[str, list[float]]) -> None:
        """Each candidate's similarity (every one, not only the meaning list's), whether it
        was said in the time asked about, and its keyword scores, per tier."""
        if similar is not None and similar.vector is not None:
            sims = self._vectors.cosines(similar.vector, [c.key for c in found])
            for c in found:
                c.semantic = sims.get(c.key)
        for c in found:
            c.said_then = asked.period is not None and asked.period.holds(c.at)
        for tier in ("beliefs", "turns"):
            among = [c for c in found if c.key[0] == tier]
            if among and tier in weights:
                cand.score_keywords(asked, weights[tier], among)

    @staticmethod
    def _receipt(read: Read, handed: list[Judged], method: str) -> None:
        """Name what the caller is handed: beliefs under the read's method, lines under one
        of their own."""
        beliefs = [c for c, _, _ in handed if c.belief is not None]
        read.returned([c.key[1] for c in beliefs], [c.scope for c in beliefs])
        quoted = [c for c, _, _ in handed if c.belief is None]
        read.returned([c.key[1] for c in quoted], [c.scope for c in quoted],
                      method=LINES_METHOD if method == "recall" else f"{method}_lines")


__all__ = ["EXPLAIN_METHOD", "Explained", "LIMIT", "LINES_METHOD", "RecallBook", "WHY_METHOD"]
