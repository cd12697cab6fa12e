"""The signals recall's judge weighs: numbers measured on one candidate against one question.

None of them reads a word list. They are measured, for the reader's visible rows only:

- how the candidate's meaning stands out from everything the reader may see (`lead`, in
  deviations over the mean similarity of the question to every visible row), how far it leads
  the best other candidate (`gap`), and how crowded the top is (`runner_up`);
- how much of the question's keyword weight it carries (`coverage`), and its place in the
  keyword list, the meaning list and the fused ranking;
- who said it and whom it is about, from stored metadata (the speaker of a line, the owner or
  teller and the subject consolidation wrote for a belief), against who asks and whom the
  question names (the household's roster, not a grammar);
- whether it is a belief or a line, how much of a line asks, or a reply found beside a line;
- when: said in a time the question names, how long ago, and whether a newer word of the same
  voice replaced it (written when that word was stored) or it replaced an older one.

Owns: the feature names, their order, and how each is measured. Must not: read a row (it is
handed the candidates), or say what a signal's weight is (the fitted judge does).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

from memory.recall.candidates import Asked, Candidate, Vocabulary

# The order of the judge's weights (`memory/recall/weights/*.json`): append, never reorder.
FEATURES: tuple[str, ...] = (
    "lead",  # deviations of its similarity over the question's mean over visible rows
    "gap",  # deviations by which it leads the best other candidate (negative: it trails)
    "runner_up",  # the best other candidate's lead: a crowded top is weaker evidence
    "semantic_top",  # 1 / its rank in the meaning list (0: not in it)
    "coverage",  # the share of the question's keyword weight it carries
    "keyword_top",  # 1 / its rank in the keyword list (0: shares no word)
    "fused_top",  # 1 / its place in the fused ranking
    "lead_covered",  # lead x coverage: meaning and words agreeing
    "line",  # a member's line (raw chatter), not a belief
    "asking",  # the share of a line's sentences that ask
    "reply",  # found as the reply beside a line, not by either list
    "by_asker",  # said by whoever asks
    "about_asker",  # a belief about whoever asks
    "names_someone",  # the question names a member
    "named_match",  # ... and this candidate was said by, is about, or names that member
    "other_voice",  # said by another member, when the question names no one
    "about_other",  # about another member than the asker and whoever the question names
    "shared",  # in the household's shared scope
    "said_then",  # said in the time the question names
    "said_other_time",  # the question names a time and it was said outside it
    "age",  # how long ago it was said, log-scaled (0 today, 1 a year)
    "replaced",  # a newer word of the same voice on the same thing was said since
    "replaces",  # it is the newer word on an older one
    "digits",  # it holds a number (a date, a time, an amount)
    "unseen",  # the share of the question's words no row the reader sees holds
    "lacks_rarest",  # it lacks the rarest of the question's words that some row holds
)
LEAD_CLIP = (-4.0, 12.0)


class Background:
    """How the question scores against every row the reader may see: the yardstick of `lead`.
    A scope that has said little is measured as if `prior_rows` rows of the fitted prior
    (mean, deviation) were there too, so one row alone is not its own yardstick."""

    def __init__(self, count: int, total: float, squares: float, prior: tuple[float, float],
                 prior_rows: int) -> None:
        prior_mean, prior_deviation = prior
        n = count + prior_rows
        blended = (total + prior_rows * prior_mean) / n if n else prior_mean
        second = (squares + prior_rows * (prior_deviation**2 + prior_mean**2)) / n if n else 0.0
        self.mean = blended
        self.deviation = max(math.sqrt(max(0.0, second - blended**2)), 1e-6)

    def lead(self, similarity: float | None) -> float:
        if similarity is None:
            return 0.0
        low, high = LEAD_CLIP
        return min(high, max(low, (similarity - self.mean) / self.deviation))


def measure(candidates: Sequence[Candidate], asked: Asked, background: Background | None,
            vocabulary: Vocabulary, now: datetime) -> list[tuple[float, ...]]:
    """Each candidate's signals, in `FEATURES` order. `candidates` is the fused ranking; the
    signals of one may depend on the others (the gap, the runner-up), never on a hidden row.
    Without an embedder (`background` None) the meaning signals are 0."""
    leads = [0.0 if background is None else background.lead(c.semantic) for c in candidates]
    sims = [c.semantic for c in candidates]
    # The best other candidate (of other words) by similarity and by lead, for each: found by
    # walking each ranking from its top, which stops after a step or two.
    by_sim = sorted((i for i, v in enumerate(sims) if v is not None),
                    key=lambda i: -(sims[i] or 0.0))
    by_lead = sorted(range(len(candidates)), key=lambda i: -leads[i])
    semantic_rank = _ranks([c.semantic for c in candidates])
    keyword_rank = _ranks([c.keyword for c in candidates])
    deviation = 1.0 if background is None else background.deviation
    named = asked.named
    out: list[tuple[float, ...]] = []
    for i, c in enumerate(candidates):
        other = next((j for j in by_sim if j != i and candidates[j].norm != c.norm), None)
        best_other = None if other is None else sims[other]
        gap = 0.0
        if background is not None and c.semantic is not None:
            gap = (c.semantic - (best_other if best_other is not None else background.mean))
            gap = max(-6.0, min(6.0, gap / deviation))
        rival = next((j for j in by_lead if j != i and candidates[j].norm != c.norm), None)
        runner_up = 0.0 if rival is None else leads[rival]
        people = {p for p in (c.speaker, c.subject) if p} | asked.roster.named(c.text)
        about_other = (c.subject is not None and c.subject != asked.asker
                       and c.subject not in named)
        days = max(0.0, (now - datetime.fromisoformat(c.at)).total_seconds() / 86400)
        out.append((
            leads[i],
            gap,
            runner_up,
            1.0 / semantic_rank[i] if semantic_rank[i] else 0.0,
            c.covered,
            1.0 / keyword_rank[i] if keyword_rank[i] else 0.0,
            1.0 / (i + 1),
            max(0.0, leads[i]) * c.covered,
            float(c.is_line),
            c.asking,
            float(c.reply and c.keyword_rank is None and c.semantic_rank is None),
            float(c.speaker == asked.asker),
            float(c.subject == asked.asker),
            float(bool(named)),
            float(bool(named & people)),
            float(not named and c.speaker is not None and c.speaker != asked.asker),
            float(about_other),
            float(c.scope == "shared"),
            float(c.said_then),
            float(asked.period is not None and not c.said_then),
            math.log1p(days) / math.log1p(365.0),
            float(bool(c.newer)),
            float(bool(c.older)),
            float(any(ch.isdigit() for ch in c.text)),
            vocabulary.unseen,
            float(vocabulary.rarest is not None and not vocabulary.rarest.count_in(c.doc)),
        ))
    return out


def _ranks(values: Sequence[float | None]) -> list[int]:
    """Each value's rank among the positive ones, best first (0: none, or not positive)."""
    order = sorted((i for i, v in enumerate(values) if v is not None and v > 0),
                   key=lambda i: (-(values[i] or 0.0), i))
    ranks = [0] * len(values)
    for rank, i in enumerate(order, start=1):
        ranks[i] = rank
    return ranks
