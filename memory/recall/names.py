"""The household's names, as recall reads them in a question or a line.

A name is data, not vocabulary: the roster comes from the `people` table, so it works in any
language a household writes. Recall takes the names out of the question before embedding it (a
short question's embedding is mostly its names) and tells the judge which members a question
names, so whom a candidate is about can be compared with its stored speaker and subject.

Owns: matching the roster's names to words. Must not: guess whom an unnamed text is about.
"""

from __future__ import annotations

import re

from memory.terms import STOPWORDS, stems, text_cache, words

_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)?", re.UNICODE)
# A name with a possessive ending is still the name: "Jonas's", "Anna's", "Annas" (German
# genitive), "Jonas'". Only endings, never a list of words.
_POSSESSIVE = re.compile(r"(?:['\u2019]s?|s)$")
# A name after an elided word is still the name: "d'Inès", "qu'Elio", "l'Ana". Only the shape
# (letters, then an apostrophe, then the name), never a list of words.
_ELIDED = re.compile(r"^[^\W\d_]+['\u2019]")
# A hyphenated or spaced name's parts are split where a text's words are ("Jean-Marc").
_BETWEEN_PARTS = re.compile(r"[\s\-\u2010\u2011]+")


def _parts(name: str) -> list[str]:
    """A name's parts as a text's words split it: at spaces and hyphens."""
    return [part for part in _BETWEEN_PARTS.split(name) if part]


@text_cache(maxsize=50_000)
def _distinct_words(text: str) -> tuple[str, ...]:
    """A text's distinct words, as a name would be read from them (recall meets the same rows
    again and again)."""
    return tuple(dict.fromkeys(_WORD.findall(text)))


class Roster:
    """The members by the words of their names."""

    def __init__(self, members: dict[str, str]) -> None:
        self._by_word: dict[str, str] = {}
        for person_id, name in sorted(members.items()):
            # The whole name and each of its parts, as a text's words are read ("Jean-Marc" is
            # read as "Jean", "Marc").
            folded = name.casefold()
            for word in {folded, *_parts(folded)}:
                # A name that is also a common word ("Me", the terminal's member) names no one.
                if word in STOPWORDS or len(word) < 2:
                    continue
                self._by_word.setdefault(word, person_id)
        self.ids = frozenset(members)
        self._stems = {person_id: tuple(stems(word) for word in _parts(name.casefold()))
                       for person_id, name in members.items()}

    def member(self, word: str) -> str | None:
        """The member a word names, possessive ending or not, if any."""
        folded = word.casefold()
        found = self._by_word.get(folded)
        if found is None:
            bare = _POSSESSIVE.sub("", folded)
            found = self._by_word.get(bare) if bare != folded else None
        if found is None and _ELIDED.match(folded):
            return self.member(_ELIDED.sub("", folded))
        return found

    def named(self, text: str) -> frozenset[str]:
        """The members a text names."""
        return frozenset(m for w in _distinct_words(text) if (m := self.member(w)) is not None)

    def name_stems(self, *people: str | None) -> tuple[frozenset[str], ...]:
        """The stems of these members' names, as a document's words (`memory.terms`)."""
        return tuple(s for p in dict.fromkeys(people) if p for s in self._stems.get(p, ()))

    def without_names(self, text: str) -> str:
        """The text with the members' names taken out ("When is Jonas's dentist appointment?"
        -> "When is dentist appointment?"): what it asks, apart from whom it asks about. A text
        that is names alone stays as it is."""
        kept = _WORD.sub(lambda m: "" if self.member(m.group()) else m.group(), text)
        kept = " ".join(kept.split())
        return kept if words(kept) else text
