"""Words as recall matches them: stems shared across languages, numbers as written."""

from __future__ import annotations

from memory.terms import document, index_text, query_terms, stems


def test_a_word_and_its_other_forms_share_a_stem() -> None:
    assert stems("diagnosis") & stems("diagnosed")
    assert stems("fahrräder") & stems("fahrrad")


def test_a_number_is_matched_only_by_the_same_number() -> None:
    assert stems("4521") == frozenset({"4521"})
    assert not stems("4521") & stems("452")
    assert index_text("Flight 4521 leaves at 0730") == "flight 4521 leav leaves 0730"
    (flight, number) = query_terms("flight 4521?")
    assert number.count_in(document("the 4521 from Leeds")) == 1
    assert number.count_in(document("the 4520 from Leeds")) == 0
    assert flight.count_in(document("my flights")) == 1
