"""Words as recall matches them: stems shared across languages, numbers as written."""

from __future__ import annotations

from memory.terms import asks_only, document, index_text, query_terms, stems


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


def test_a_text_asks_only_when_every_sentence_is_a_question() -> None:
    assert asks_only("When is the party?")
    assert asks_only("Hm? Who is coming on Saturday?")
    assert not asks_only("Blue's my favourite, it calms me. What's yours?")
    assert not asks_only("The party is at eight. Can you bring chairs?")
    assert not asks_only("")


def test_a_long_text_is_searched_by_its_longest_words_in_the_order_they_came() -> None:
    page = "cat sat on the windowsill while grandmother knitted a scarf for the cat"
    assert [t.word for t in query_terms(page)] == [
        "cat", "sat", "windowsill", "while", "grandmother", "knitted", "scarf"]
    assert [t.word for t in query_terms(page, 3)] == ["windowsill", "grandmother", "knitted"]
    # Of two words alike in length, the earlier is kept.
    assert [t.word for t in query_terms(page, 4)] == [
        "windowsill", "while", "grandmother", "knitted"]
    assert query_terms(page, 0) == []
