"""Words as recall matches them: content words, and the stems they share across languages.

Owns: the caches of anything computed from remembered text (`text_cache`), which a forget
empties all at once (`forget_cached_texts`); splitting text into content words (stopwords of
the four languages the classifier knows left out), stemming each word with the Snowball
stemmers of English, German, French and Spanish (a word's stems are all of theirs, so
"diagnosis" and "diagnosed" meet on "diagnos" and "Fahrräder" on "fahrrad"), the text the
keyword indexes hold (`index_text`, which the store gives SQL as `stems()` so the index
triggers stem exactly as the query does), and the FTS5 query for one word's stems.
Must not: read the store; it is pure text.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

import snowballstemmer  # type: ignore[import-untyped]

F = TypeVar("F", bound=Callable[..., Any])
_TEXT_CACHES: list[Any] = []


def text_cache(maxsize: int) -> Callable[[F], F]:
    """`functools.lru_cache` for a function of remembered text (a line, a belief, a word of
    one): its keys are that text, so a forget must empty it, and `forget_cached_texts` empties
    every cache made here. Memory's and soul's caches of text are made only this way."""

    def wrap(fn: F) -> F:
        cached = functools.lru_cache(maxsize=maxsize)(fn)
        _TEXT_CACHES.append(cached)
        return cached  # type: ignore[return-value]  # lru_cache keeps the signature

    return wrap


def forget_cached_texts() -> None:
    """Empty every cache of text (`text_cache`): after a forget, no copy of the forgotten
    words stays in the process's memory as a key."""
    for cached in _TEXT_CACHES:
        cached.cache_clear()


def cached_texts() -> int:
    """How many texts the caches hold now (what a test of forgetting looks at)."""
    return sum(cached.cache_info().currsize for cached in _TEXT_CACHES)


_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_LANGUAGES = ("english", "german", "french", "spanish")
_STEMMERS = tuple(snowballstemmer.stemmer(language) for language in _LANGUAGES)

_STOPWORDS = (
    # English, with the words a question to her always carries ("remember", "tell", "know").
    "a an the and or but if of to in on at by for with from as is are was were be been being"
    " am do does did doing have has had having i me my mine you your yours he him his she her"
    " hers it its we us our they them their this that these those what which who whom whose"
    " when where why how there here not no so than too very can could would should will shall"
    " may might must just about into over under again further then once all any both each few"
    " more most other some such only own same s t don now tell know remember anything"
    " something ll ve re d m hi hey ok okay yes oh"
    # German
    " der die das den dem des ein eine einen einem einer eines und oder aber ist sind war waren"
    " bist sein ich du er sie es wir ihr mich mir dich dir uns euch mein meine meinen"
    " meinem meiner dein deine sich nicht kein keine zu im am vom zum zur auf aus bei mit nach"
    " von wie was wer wo wann warum welche welcher welches dass auch noch schon"
    # French
    " le la les un une des du et ou mais est sont était je tu il elle nous vous ils elles me"
    " te se moi toi mon mes ton ta tes sa ses notre nos votre vos leur leurs ce cet"
    " cette ces qui que quoi quand où comment pourquoi ne pas dans sur avec pour par au aux"
    # Spanish
    " el los las unos unas y o pero es era soy eres yo tú él ella nosotros vosotros ellos"
    " mi mis tu tus su sus nuestro nuestra lo al del en con por para qué quién cuándo dónde"
    " cómo porque muy ya"
)
# Words two languages share are kept when one of them means something ("son", "bin", "ma").
STOPWORDS = frozenset(_STOPWORDS.split())


def _plain(text: str) -> str:
    """Lower case without diacritics (the index's tokenizer drops them too)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str) -> list[str]:
    """A text's sentences, each with its closing mark."""
    return [part for part in _SENTENCE.split(text) if part.strip()]


@text_cache(maxsize=50_000)
def asks_only(text: str) -> bool:
    """Whether every sentence of `text` is a question: it tells nothing ("When is the party?"),
    where "Blue's my favourite. What's yours?" tells something before it asks."""
    parts = sentences(text)
    return bool(parts) and all(part.rstrip().endswith("?") for part in parts)


def words(text: str) -> list[str]:
    """The content words of `text`, in order, repeats kept (a document's term counts)."""
    return [w for w in _WORD.findall(text.casefold()) if len(w) > 1 and w not in STOPWORDS]


@text_cache(maxsize=200_000)
def stems(word: str) -> frozenset[str]:
    """Every stem the four stemmers give one (lower-case) word, without diacritics."""
    if word.isdecimal():  # a number, which no stemmer changes: most of the words never seen
        return frozenset({_plain(word)})
    return frozenset(_plain(stemmer.stemWord(word)) for stemmer in _STEMMERS) | {_plain(word)}


def index_text(text: str | None) -> str:
    """What the keyword index holds for a text: each content word's stems, space-separated.
    A deterministic SQL function of every connection (`stems(text)`), so the triggers that keep
    the indexes and the queries that search them stem alike."""
    if not text:
        return ""
    out: list[str] = []
    for word in words(text):
        out.extend(sorted(stems(word)))
    return " ".join(out)


@dataclass(frozen=True)
class Term:
    """One content word of a query, and the stems a document word may share with it."""

    word: str
    stems: frozenset[str]

    def fts(self) -> str:
        """An FTS5 query matching any of the stems (quoted: user text is never FTS syntax)."""
        return " OR ".join('"' + s.replace('"', '""') + '"' for s in sorted(self.stems))

    def count_in(self, document: Iterable[frozenset[str]]) -> int:
        return sum(1 for word_stems in document if word_stems & self.stems)


def query_terms(text: str, most: int | None = None) -> list[Term]:
    """The distinct content words of a query, each with its stems, in order; at most `most` of
    them, the longest (the earlier of two alike), when the text has more: a page pasted whole
    is searched by its longer words, which are the rarer as a rule."""
    distinct = list(dict.fromkeys(words(text)))
    if most is not None and len(distinct) > most:
        longest = sorted(range(len(distinct)), key=lambda i: (-len(distinct[i]), i))
        distinct = [distinct[i] for i in sorted(longest[:max(0, most)])]
    return [Term(word, stems(word)) for word in distinct]


@text_cache(maxsize=50_000)
def document(text: str) -> tuple[frozenset[str], ...]:
    """A document as BM25 counts it: its content words' stem sets, in order. Cached: recall
    meets the same rows again and again, and a row's words do not change."""
    return tuple(stems(w) for w in words(text))
