"""Which kind of a thing a question asks after: "my practical driving test" is not "my driving
theory test", though the two sentences are close."""

from __future__ import annotations

import pytest

from memory.kinds import noun_phrases, other_kinds


@pytest.mark.parametrize(("question", "line", "pairs"), [
    ("When did I pass my practical driving test?", "Passed my driving theory test today!!!",
     ((("practical",), "theory"),)),
    ("When is Tom's knee operation?", "Tom's got his hernia operation on 19 May, so no lifting.",
     ((("knee",), "hernia"),)),
    ("When is my maths exam?", "My physics exam is on Monday.", ((("maths",), "physics"),)),
    # Not the question's thing, in the place it has after the same verb.
    ("When is the plumber coming to fix the kitchen sink?",
     "The plumber is coming on Monday 9 March to fix the shower.",
     ((("kitchen", "sink"), "shower"),)),
    # Alike or not, the words are given: recall weighs what they mean (`KIND_ALIKE`).
    ("When did Gina get accepted for the design internship?",
     "I just got accepted for a fashion internship!", ((("design",), "fashion"),)),
])
def test_a_line_naming_the_thing_after_another_noun_may_name_another_kind_of_it(
    question: str, line: str, pairs: tuple[tuple[tuple[str, ...], str], ...],
) -> None:
    assert other_kinds(question, line) == pairs


@pytest.mark.parametrize(("question", "line"), [
    # An adjective describes what it comes before; it names no kind ("spare" is one).
    ("Who did I leave our extra house key with?", "I gave the spare key to Mrs Patel."),
    ("How many times has Joanna found new hiking trails?", "I found some amazing trails."),
    # The same kind, in the line's own words or with more of them.
    ("When is my driving theory test?", "Passed my driving theory test today!!!"),
    ("When is my French oral exam?", "My GCSE French oral exam is on 28 April."),
    # Names, roles and times are another rule's; a verb opens no noun phrase.
    ("When is mum's operation?", "Tom's got his hernia operation on 19 May."),
    ("Which country did James book tickets for?", "I booked the air tickets to Canada."),
    # The thing itself beside another; "after" is no verb; an update naming no thing.
    ("When is the plumber coming to fix the kitchen sink?",
     "The plumber will fix the kitchen sink and then the shower."),
    ("What did Melanie realize after the charity race?",
     "When I look after myself, I'm able to better look after my family."),
    ("When is the plumber coming to fix the kitchen sink?",
     "Plumber rang, he's coming on Wednesday 11 March instead."),
    # Another thing altogether, or the thing without a kind.
    ("When is my knee operation?", "My physio appointment is on Monday."),
    ("When is my knee operation?", "The operation is on Monday."),
])
def test_a_line_naming_the_same_kind_or_no_kind_of_the_thing_gives_no_pair(
    question: str, line: str,
) -> None:
    assert other_kinds(question, line) == ()


def test_a_noun_phrase_follows_a_determiner_or_an_owner_and_ends_at_a_small_word() -> None:
    found = noun_phrases("Tom's knee operation is at the city hospital, to fix my old knee.")
    assert [([word for word, _ in p.words], p.after and p.after[0]) for p in found] == [
        (["knee", "operation"], None), (["city", "hospital"], None), (["old", "knee"], "fix")]
