"""Recall's last step: from judged candidates to what a caller is handed, in order.

What answers comes first, most likely first, with a member's newer word on a thing before the
older one it replaced (whatever their chances: "the plumber comes on Wednesday instead" over
"the plumber comes on Monday"); but when the question names a time after which the newer
word was said, the older one, which held then, comes first ("where did Tom work in March?").
Then what is related, in the same order. Nothing twice: a line that a belief among
them stands for was left out before judging (`candidates.without_repeats`).

Owns: the order and the records handed back. Must not: change a verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.models import Quoted, Recalled, Verdict
from memory.recall.candidates import Candidate
from memory.recall.judge import Judgement
from memory.transcript import turn_from_row

# A candidate, its judgement, and the signals the judgement was made from.
Judged = tuple[Candidate, Judgement, tuple[float, ...]]


def ordered(judged: Sequence[Judged], *, unrelated: bool = False) -> list[Judged]:
    """Answers (newer words first), then related, then, when asked for, the unrelated; each
    group most likely first, and as of the past time a question names (`_as_of`)."""
    def by_chance(group: Verdict) -> list[Judged]:
        found = [cjs for cjs in judged if cjs[1].verdict is group]
        return sorted(found, key=lambda cjs: (-cjs[1].chance, cjs[0].key))

    answers = _as_of(_newer_first(by_chance(Verdict.ANSWERS)))
    out = answers + _as_of(by_chance(Verdict.RELATED))
    if unrelated:
        out += _as_of(by_chance(Verdict.UNRELATED))
    return out


def _newer_first(answers: list[Judged]) -> list[Judged]:
    """Each answer that a newer one among them replaced moves just after the newest of those
    (a replacement is always a later row, so the moves cannot go round in a circle)."""
    by_key = {cjs[0].key: cjs for cjs in answers}
    order = [cjs[0].key for cjs in answers]
    for c, _, _ in answers:
        later = [(c.key[0], k) for k in c.newer if (c.key[0], k) in by_key]
        if not later:
            continue
        order.remove(c.key)
        order.insert(max(order.index(k) for k in later) + 1, c.key)
    return [by_key[k] for k in order]


def _as_of(group: list[Judged]) -> list[Judged]:
    """When the question names a past time: what held then before what began only after it,
    each in its order, and a replaced row before the rows that replaced it after that time."""
    held = [cjs for cjs in group if not cjs[0].began_after]
    return _held_first(held + [cjs for cjs in group if cjs[0].began_after])


def _held_first(group: list[Judged]) -> list[Judged]:
    """Each row that still held in the time the question names moves just before the first of
    the rows that replaced it after that time (a replacement is always a later row, so the
    moves cannot go round in a circle)."""
    by_key = {cjs[0].key: cjs for cjs in group}
    order = [cjs[0].key for cjs in group]
    for c, _, _ in group:
        after = [(c.key[0], k) for k in c.later if (c.key[0], k) in by_key]
        if not after:
            continue
        first = min(order.index(k) for k in after)
        if order.index(c.key) > first:
            order.remove(c.key)
            order.insert(first, c.key)
    return [by_key[k] for k in order]


def result(c: Candidate, judgement: Judgement) -> Recalled | Quoted:
    """The record a caller gets for one judged candidate."""
    semantic = round(c.semantic or 0.0, 4)
    keyword = round(c.covered, 4)  # the share of the query's keyword weight it carries
    score = round(c.fused, 6)
    if c.belief is not None:
        belief = c.belief
        if c.ended is not None and (belief.valid_to is None or c.ended < belief.valid_to):
            # Replaced by a newer word: it held until that word began.
            belief = belief.model_copy(update={"valid_to": c.ended})
        return Recalled(belief=belief, score=score, semantic=semantic, keyword=keyword,
                        verdict=judgement.verdict, chance=judgement.chance, why=judgement.why)
    return Quoted(turn=turn_from_row(c.row), score=score, semantic=semantic, keyword=keyword,
                  verdict=judgement.verdict, chance=judgement.chance, why=judgement.why)
