"""The benchmark households are well-formed: every line a question names exists and is visible
(or hidden) as the question says, every kind is asked, and there are enough."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from bench import memory_quality
from bench.household_memory import ABSTAIN_KINDS, KINDS, load_household, validate
from bench.replay import HOUSEHOLDS


def test_the_household_benchmark_data_is_well_formed() -> None:
    household = load_household()
    assert validate(household) == []
    questions = household.questions
    assert len(questions) >= 120
    # The alias and as-of kinds came with the multilingual households; this one asks none.
    kinds = {kind: [q for q in questions if q.kind == kind] for kind in KINDS
             if kind not in ("alias", "as_of")}
    assert all(len(asked) >= 15 for asked in kinds.values()), {k: len(v) for k, v in kinds.items()}
    assert all(q.abstain for kind in ABSTAIN_KINDS for q in kinds[kind])
    crossing = [q for q in questions if household.boundary(q)]
    assert len(crossing) >= len(questions) // 5
    assert {q.chat for q in questions} == {"dm", "group"}
    assert {q.privacy for q in questions} == {"visible", "private_other", "dm_only", "lens"}
    assert len({q.asker for q in questions}) == len(household.members)


FOLDERS = sorted(p for p in HOUSEHOLDS.iterdir() if (p / "household.json").exists())


@pytest.mark.parametrize("folder", FOLDERS, ids=[p.name for p in FOLDERS])
def test_every_household_recall_is_fitted_or_measured_on_is_well_formed(folder: Path) -> None:
    household = load_household(folder)
    assert validate(household) == []
    assert household.split in ("fit", "held_out")
    counts = {kind: sum(q.kind == kind for q in household.questions) for kind in KINDS
              if kind != "as_of"}
    assert all(n >= 10 for n in counts.values()), counts
    assert len({q.asker for q in household.questions}) == len(household.members)
    assert {q.chat for q in household.questions} == {"dm", "group"}


def test_each_language_has_households_to_fit_on_and_one_held_out() -> None:
    splits: dict[str, set[str]] = {}
    for folder in FOLDERS:
        household = load_household(folder)
        splits.setdefault(household.language, set()).add(household.split)
    assert set(splits) == {"de", "en", "es", "fr"}
    assert all(found == {"fit", "held_out"} for found in splits.values())


def test_what_was_true_when_is_asked_in_every_language_in_households_fitted_and_held_out() -> None:
    asked = [(household.language, household.split, q) for folder in FOLDERS
             for household in [load_household(folder)] for q in household.questions
             if q.kind == "as_of"]
    assert len(asked) >= 12
    assert {q.lang for _, _, q in asked} == {"de", "en", "es", "fr"}
    assert {split for _, split, _ in asked} == {"fit", "held_out"}
    assert {q.chat for _, _, q in asked} == {"dm", "group"}
    assert all(q.newer and q.evidence and not q.stale for _, _, q in asked)


@pytest.mark.parametrize(("month", "problem"), [
    ("en mai", "newer lines were said before the time it names ended"),
    ("", "names a past time"),
])
def test_an_as_of_question_must_name_a_time_before_its_newer_line(month: str,
                                                                  problem: str) -> None:
    household = load_household(HOUSEHOLDS / "fr-fit-lyon")
    asked = next(q for q in household.questions if q.kind == "as_of" and "février" in q.text)
    wrong = replace(asked, text=asked.text.replace("en février", month))
    assert any(problem in p for p in validate(replace(household, questions=(wrong,))))


async def test_the_memory_quality_bench_runs_the_household_benchmark_with_its_own_defaults(
        capsys: pytest.CaptureFixture[str]) -> None:
    await memory_quality.run("none", household=True)
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["bench"] == "household_memory"
    assert last["questions"] >= 120
    assert last["leaks"] == 0
