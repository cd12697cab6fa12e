"""Goals from words: "remind me ..." from a member, and her own "I'll ..." promises.

Owns: recognising those phrasings (a member's request in English, German, French or Spanish)
and splitting each into what to do and the words that say when (`soul.when` reads those).
Must not: store anything itself (the turn hands the result to memory, which makes each open
goal once), or decide what a time means.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from soul.when import split_when

# A member asking to be reminded, by language (the language dateparser is asked first).
_TRIGGERS = {
    "en": r"remind\s+me",
    "de": r"erinnere?\s+mich",
    "fr": r"rappelle[sz]?[-\s]moi|rappelez[-\s]moi",
    "es": r"recu[ée]rd[ae]me",
}
_SENTENCE = r"(?P<rest>(?:(?![.!?](?:\s|$))[^\n]){3,240})"
_REQUEST = re.compile(
    r"(?<!\w)(?:please\s+|bitte\s+)?(?:"
    + "|".join(f"(?P<{lang}>{pattern})" for lang, pattern in _TRIGGERS.items())
    + r")(?!\w)" + _SENTENCE,
    re.I,
)
_REMIND_YOU = re.compile(r"(?:^|[.!?]\s+|\n)\s*I(?:'ll| will)\s+remind\s+you(?!\w)" + _SENTENCE,
                         re.I)
_PROMISE = re.compile(
    r"(?:^|[.!?]\s+|\n)\s*I(?:'ll| will)\s+(?P<what>(?:remind|check|look|remember|ask|let)"
    r"[^.!?\n]{3,160})",
    re.I,
)
# Words that join "remind me" to what: "to", "that", "about"; "an", "daran", "dass", "zu";
# "de", "d'", "que"; "que", "de". And politeness at either end.
_LEAD = re.compile(
    r"^(?:(?:to|that|about|of|an|daran|dass|zu|de|que|du|please|bitte)(?:\s+|\s*,\s*|$)"
    r"|d'|qu'|,\s*)+",
    re.I,
)
_TAIL = re.compile(r"(?:[\s,]+(?:please|bitte|s'il\s+te\s+pla[iî]t|por\s+favor|thanks?))+$",
                   re.I)
MIN_WHAT = 3
# What a request's words start with once the time is taken out: "remind me what's for dinner"
# is a question, "remind me to ..." a request. Spanish may go straight to an infinitive.
_CONNECTOR = {
    "en": re.compile(r"^\W*(?:please\W+)?(?:to|that|about|of)\b", re.I),
    "de": re.compile(r"^\W*(?:bitte\W+)?(?:an|daran|dass|zu)\b", re.I),
    "fr": re.compile(r"^\W*(?:de|d'|que|qu'|du)", re.I),
    "es": re.compile(r"^\W*(?:que\b|de\b|\w+(?:ar|er|ir)(?:me|te|le|lo|la|se)?\b)", re.I),
}


@dataclass(frozen=True)
class Request:
    """One reminder asked for: what (the member's own words), when (the words that say it,
    empty when none did) and the language it was asked in."""

    what: str
    when: str
    lang: str


def _tidy(text: str) -> str:
    cleaned = " ".join(text.split()).strip(" ,;:-")
    return cleaned[:1].upper() + cleaned[1:] if cleaned else cleaned


def _what(text: str) -> str:
    text = " ".join(text.split())
    previous = None
    while previous != text:
        previous = text
        text = _TAIL.sub("", _LEAD.sub("", text)).strip(" ,;:-")
    return _tidy(text)


def requested(text: str) -> list[Request]:
    """The reminders a member asked for in a message, in order, each `what` once."""
    found: dict[str, Request] = {}
    for match in _REQUEST.finditer(text.replace("\u2019", "'")):
        lang = next(lang for lang in _TRIGGERS if match.group(lang))
        split = split_when(match.group("rest"))
        if not _CONNECTOR[lang].match(split.what):
            continue
        what = _what(split.what)
        if len(what) >= MIN_WHAT and what.casefold() not in found:
            found[what.casefold()] = Request(what, split.when, lang)
    return list(found.values())


def requested_goals(text: str) -> list[str]:
    """What a member asked to be reminded of, in order, without duplicates."""
    return [r.what for r in requested(text)]


def promised_reminders(reply: str) -> list[Request]:
    """Her own "I'll remind you ..." in a reply, split like a member's request."""
    found: dict[str, Request] = {}
    for match in _REMIND_YOU.finditer(reply.replace("\u2019", "'")):
        split = split_when(match.group("rest"))
        if not _CONNECTOR["en"].match(split.what):
            continue
        what = _what(split.what)
        if len(what) >= MIN_WHAT and what.casefold() not in found:
            found[what.casefold()] = Request(what, split.when, "en")
    return list(found.values())


def promised_goals(reply: str) -> list[str]:
    """What she promised in a reply ("I'll check in on Friday")."""
    found: dict[str, None] = {}
    for match in _PROMISE.finditer(reply):
        found.setdefault(_tidy(match.group("what")), None)
    return [g for g in found if g]
