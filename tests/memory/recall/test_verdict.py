"""What a caller is handed: answers first (a member's newer word before what it replaced),
then what is related, each group most likely first."""

from __future__ import annotations

from memory import Verdict
from memory.recall.candidates import Candidate
from memory.recall.judge import Judgement
from memory.recall.verdict import Judged, ordered


def judged(row_id: int, verdict: Verdict, chance: float, *, newer: frozenset[int] = frozenset(),
           tier: str = "turns", later: frozenset[int] = frozenset(),
           began_after: bool = False) -> Judged:
    c = Candidate(key=(tier, row_id), text=f"line {row_id}", scope="shared", at="2026-03-01",
                  row={}, newer=newer, later=later,  # type: ignore[arg-type]  # rows unread
                  began_after=began_after)
    return (c, Judgement(verdict, chance, ""), ())


def keys(found: list[Judged]) -> list[int]:
    return [c.key[1] for c, _, _ in found]


def test_answers_come_before_related_and_unrelated_are_left_out() -> None:
    found = ordered([judged(1, Verdict.RELATED, 0.6), judged(2, Verdict.ANSWERS, 0.9),
                     judged(3, Verdict.UNRELATED, 0.1), judged(4, Verdict.ANSWERS, 0.95)])
    assert keys(found) == [4, 2, 1]
    assert keys(ordered([judged(3, Verdict.UNRELATED, 0.1)], unrelated=True)) == [3]


def test_a_newer_word_is_told_before_the_older_one_it_replaced_whatever_their_chances() -> None:
    older = judged(1, Verdict.ANSWERS, 0.97, newer=frozenset({5}))
    newer = judged(5, Verdict.ANSWERS, 0.85)
    other = judged(3, Verdict.ANSWERS, 0.9)
    assert keys(ordered([older, newer, other])) == [3, 5, 1]


def test_a_replacement_of_another_tier_or_not_among_the_answers_moves_nothing() -> None:
    older = judged(1, Verdict.ANSWERS, 0.97, newer=frozenset({5}))
    belief_five = judged(5, Verdict.ANSWERS, 0.85, tier="beliefs")
    related_five = judged(5, Verdict.RELATED, 0.5)
    assert keys(ordered([older, belief_five])) == [1, 5]
    assert keys(ordered([older, related_five])) == [1, 5]


def test_asked_about_a_past_time_what_held_then_comes_before_what_began_after_it() -> None:
    began_later = judged(2, Verdict.ANSWERS, 0.95, tier="beliefs", began_after=True)
    held = judged(1, Verdict.ANSWERS, 0.8, tier="beliefs")
    related_later = judged(4, Verdict.RELATED, 0.6, tier="beliefs", began_after=True)
    related_held = judged(3, Verdict.RELATED, 0.5, tier="beliefs")
    assert keys(ordered([began_later, held, related_later, related_held])) == [1, 2, 3, 4]
    # A verdict is never changed: what held then but is only related stays after the answers.
    assert keys(ordered([began_later, related_held])) == [2, 3]


def test_a_word_replaced_only_after_the_time_asked_about_is_told_before_its_replacement() -> None:
    older = judged(1, Verdict.ANSWERS, 0.7, later=frozenset({5}))
    newer = judged(5, Verdict.ANSWERS, 0.9)
    other = judged(3, Verdict.ANSWERS, 0.95)
    assert keys(ordered([older, newer, other])) == [3, 1, 5]
