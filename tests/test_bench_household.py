"""The household memory benchmark's data is well-formed: every line a question names exists
and is visible (or hidden) as the question says, every kind is asked, and there are enough."""

from __future__ import annotations

from bench.household_memory import ABSTAIN_KINDS, KINDS, load_household, validate


def test_the_household_benchmark_data_is_well_formed() -> None:
    household = load_household()
    assert validate(household) == []
    questions = household.questions
    assert len(questions) >= 120
    kinds = {kind: [q for q in questions if q.kind == kind] for kind in KINDS}
    assert all(len(asked) >= 15 for asked in kinds.values()), {k: len(v) for k, v in kinds.items()}
    assert all(q.abstain for kind in ABSTAIN_KINDS for q in kinds[kind])
    crossing = [q for q in questions if household.boundary(q)]
    assert len(crossing) >= len(questions) // 5
    assert {q.chat for q in questions} == {"dm", "group"}
    assert {q.privacy for q in questions} == {"visible", "private_other", "dm_only", "lens"}
    assert len({q.asker for q in questions}) == len(household.members)
