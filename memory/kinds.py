"""Which thing a question asks after, and which kind of it, by the English noun phrase.

"When did I pass my practical driving test?" is not answered by "Passed my driving theory test
today!", nor "When is Tom's knee operation?" by "Tom's got his hernia operation on 19 May":
each line names the thing asked after (the test, the operation) as another kind of it. A
sentence embedding puts the two very close, and so do the words they share; what tells them
apart is the English noun phrase. After a determiner or an owner ("my", "the", "Tom's"), the
words up to the next small word name one thing, its last word the thing itself ("test") and
the words before it what kind ("practical", "driving"). When a line names that same thing
after a noun of its own that the question does not use ("theory", "hernia"), and the question
has a word before it that the line does not use, the line may name another kind of the thing:
`other_kinds` gives those pairs, and recall tells the line as a memory only when the words of
a pair mean alike ("design internship", "fashion internship": `memory.recall`). The same
holds for a line that does not use the question's noun and puts another in its place after
the same verb: "The plumber is coming on Monday to fix the shower" for "When is the plumber
coming to fix the kitchen sink?".

A noun that is no adjective classifies what it comes before (a theory test, a hernia
operation); an adjective describes it ("an amazing trail" is a "new trail" too), so only the
first kind of word counts, by the English lexicon of `lemminflect`. Members' names, other
names, roles, times and numbers end a phrase: who and when are `memory.roles`' and
`memory.periods`' to judge. Other languages put the kind after the noun or in one word
("Theorieprüfung"), so they are left to the rest of recall.

Owns: reading those noun phrases. Must not: decide relevance otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lemminflect import getAllLemmas

from memory.periods import names_a_time
from memory.roles import role_stems
from memory.terms import STOPWORDS, document, sentences, stems, text_cache

_TOKEN = re.compile(r"[^\W_]+(?:-[^\W_]+)*(?:['\u2019]s\b)?|[^\w\s]", re.UNICODE)
# What opens a noun phrase, besides an owner's "'s".
_DETERMINER_WORDS = "the a an my your his her our their its this that these those"
_DETERMINERS = frozenset(_DETERMINER_WORDS.split())
_MODIFIERS = 2  # the words before a phrase's noun that say what kind of it the question asks

Words = tuple[tuple[str, frozenset[str]], ...]  # a phrase's words (lower case), their stems


@dataclass(frozen=True)
class Phrase:
    """A noun phrase: its words, and the word before its determiner with that word's stems
    ("fix" in "to fix the sink"; None when an owner opens it, or a small word or a sign comes
    before the determiner)."""

    words: Words
    after: tuple[str, frozenset[str]] | None


@text_cache(maxsize=50_000)
def _noun(word: str) -> bool:
    """Whether an English word may be a noun and is no adjective (`lemminflect`'s lexicon)."""
    kinds = getAllLemmas(word)
    return "NOUN" in kinds and "ADJ" not in kinds


@text_cache(maxsize=50_000)
def _verb(word: str) -> bool:
    """Whether an English word may be a verb (`lemminflect`'s lexicon)."""
    return "VERB" in getAllLemmas(word)


@text_cache(maxsize=50_000)
def noun_phrases(text: str) -> tuple[Phrase, ...]:
    """The runs of content words that follow a determiner or an owner, in order."""
    found: list[Phrase] = []
    for sentence in sentences(text):
        run: list[tuple[str, frozenset[str]]] = []
        opened, after, before = False, None, None
        for i, token in enumerate(_TOKEN.findall(sentence)):
            folded = token.casefold()
            bare = folded.removesuffix("'s").removesuffix("\u2019s")
            owner = bare != folded
            ends = (not token[0].isalnum() or bare in STOPWORDS or any(c.isdigit() for c in bare)
                    or (i > 0 and token[0].isupper()) or bool(role_stems(bare))
                    or names_a_time(bare))
            if not ends:
                run.append((bare, stems(bare)))
            if ends or owner:
                if opened and run:
                    found.append(Phrase(tuple(run), after))
                run = []
                opened = folded in _DETERMINERS or owner
                after = before if folded in _DETERMINERS else None
            before = (bare, stems(bare)) if not ends and not owner else None
        if opened and run:
            found.append(Phrase(tuple(run), after))
    return tuple(found)


def _stems(text: str) -> frozenset[str]:
    return frozenset().union(*document(text))


def names_the_thing(question: str, candidate: str) -> bool:
    """Whether `candidate` uses the noun of the question's last noun phrase ("sink" of "when
    is the plumber coming to fix the kitchen sink?")."""
    asked = noun_phrases(question)
    return bool(asked) and bool(asked[-1].words[-1][1] & _stems(candidate))


@text_cache(maxsize=50_000)
def other_kinds(question: str, candidate: str) -> tuple[tuple[tuple[str, ...], str], ...]:
    """Where `candidate` may name the thing `question` asks after as another: for the
    question's last noun phrase ("my practical driving test"), as (the question's words the
    candidate does not use, the candidate's noun in their place),
    - each phrase of the candidate ending in the same noun after a noun of its own ("my
      driving theory test": (("practical",), "theory"));
    - when the candidate does not use that noun, each of its phrases after the same verb
      ("to fix the kitchen sink", "to fix the shower": (("kitchen", "sink"), "shower")).
    Empty when there is none."""
    asked = noun_phrases(question)
    if not asked:
        return ()
    phrase = asked[-1]
    thing, *kind = reversed(phrase.words)
    if not _noun(thing[0]):
        return ()
    told, said = _stems(candidate), _stems(question)
    pairs: list[tuple[tuple[str, ...], str]] = []
    if not thing[1] & told:
        if phrase.after is not None and _verb(phrase.after[0]):
            missing = tuple(word for word, word_stems in phrase.words if not word_stems & told)
            pairs += [(missing, other.words[-1][0]) for other in noun_phrases(candidate)
                      if other.after is not None and other.after[1] & phrase.after[1]
                      and not other.words[-1][1] & said and _noun(other.words[-1][0])]
        return tuple(pairs)
    missing = tuple(word for word, word_stems in reversed(kind[:_MODIFIERS])
                    if not word_stems & told)
    if missing:
        for other in noun_phrases(candidate):
            if len(other.words) < 2:
                continue
            (word, word_stems), (_, end_stems) = other.words[-2], other.words[-1]
            if end_stems & thing[1] and not word_stems & said and _noun(word):
                pairs.append((missing, word))
    return tuple(pairs)
