"""The assembler counts a surface as its frame plus its items, and clips prose by summing its
words: both must cost exactly what the rendered text costs, or a budget would be broken."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from soul.assembler import _clip, _Surface
from soul.tokens import count_tokens

# Household words in several scripts, with the punctuation and signs chats are made of.
WORDS = st.sampled_from([
    "Bob", "olive", "oil", "isn't", "Grundschule", "Kühlschrank", "l'école", "mañana", "niño",
    "日本語", "東京", "😀", "👍🏽", "—", "(", ")", "3.5", "48213", "e-mail", "a@b.de", "…",
    "naïve", "straße", "ÇA", "x\u200by", ",", ".", "?!", "#", "**bold**",
])
SPACE = st.sampled_from([" ", "  ", "\n", "\t", " \n "])
TEXT = st.lists(st.tuples(WORDS, SPACE), max_size=12).map(
    lambda parts: "".join(w + s for w, s in parts).strip())
HEADERS = st.sampled_from(["# What you remember\n{items}", "Notes:\n{items}\n(end)",
                           "{items}", "# Lately\n{items}\n", "no items here", "x{items}y"])


@settings(max_examples=300, deadline=None)
@given(header=HEADERS, items=st.lists(TEXT, max_size=8))
def test_a_surface_costs_exactly_what_its_rendered_text_costs(header: str,
                                                              items: list[str]) -> None:
    surface = _Surface("memories", header, list(items), placeholder="(nothing)")
    assert surface.tokens() == count_tokens(surface.render())


@settings(max_examples=300, deadline=None)
@given(text=TEXT, budget=st.integers(min_value=0, max_value=40))
def test_clipped_prose_fits_its_budget_and_keeps_the_longest_prefix_that_does(
    text: str, budget: int,
) -> None:
    clipped = _clip(text, budget)
    assert count_tokens(clipped) <= budget
    if clipped == text:
        return
    words = text.split()
    kept = len(clipped.split()) - 1 if clipped else 0  # less the ellipsis
    assert clipped == (" ".join(words[:kept]) + " …" if kept else "")
    if kept < len(words):  # one more word would not have fitted
        assert count_tokens(" ".join(words[: kept + 1]) + " …") > budget
