"""Recall reads the household's names in a question in any language: after an elided word, with
a possessive ending, or as a part of a hyphenated name."""

from __future__ import annotations

import pytest

from memory.recall.names import Roster

ROSTER = Roster({"p1": "Inès", "p2": "Elio", "p3": "Jean-Marc", "p4": "Anna", "p5": "O'Brien"})


@pytest.mark.parametrize(("text", "named"), [
    ("C'est quand, l'anniversaire d'Inès ?", {"p1"}),
    ("Qu'est-ce qu'Elio a dit sur le dentiste ?", {"p2"}),
    ("Jean-Marc a rendez-vous mardi", {"p3"}),
    ("Marc a rendez-vous mardi", {"p3"}),
    ("When is Anna's dentist appointment?", {"p4"}),
    ("Wann hat Annas Kurs angefangen?", {"p4"}),
    ("O'Brien called about the boiler", {"p5"}),
    ("L'anniversaire de l'entreprise, c'est quand ?", set()),
    ("I don't know what's for dinner", set()),
])
def test_a_question_names_the_member_its_words_name_whatever_the_language(
    text: str, named: set[str],
) -> None:
    assert ROSTER.named(text) == frozenset(named)


def test_a_name_after_an_elided_word_is_taken_out_before_the_question_is_embedded() -> None:
    assert ROSTER.without_names("C'est quand, l'anniversaire d'Inès ?") == (
        "C'est quand, l'anniversaire ?")


def test_a_hyphenated_members_name_is_one_of_their_lines_words_as_a_question_splits_it() -> None:
    assert ROSTER.name_stems("p3") == (frozenset({"jean"}), frozenset({"marc"}))
