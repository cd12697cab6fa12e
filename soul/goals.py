"""Goals from words: "remind me to ..." from a member, and her own "I'll ..." promises.

Owns: recognising those phrasings and turning them into goal text. Must not: store anything
itself (the turn hands the result to memory, which makes each open goal once).
"""

from __future__ import annotations

import re

_REMIND = re.compile(
    r"\b(?:please\s+)?remind\s+me\s+(?:to|that|about)\s+(?P<what>[^.!?\n]{3,160})", re.I
)
_PROMISE = re.compile(
    r"(?:^|[.!?]\s+|\n)\s*I(?:'ll| will)\s+(?P<what>(?:remind|check|look|remember|ask|let)"
    r"[^.!?\n]{3,160})",
    re.I,
)


def _tidy(text: str) -> str:
    cleaned = " ".join(text.split()).strip(" ,;:-")
    return cleaned[:1].upper() + cleaned[1:] if cleaned else cleaned


def requested_goals(text: str) -> list[str]:
    """What a member asked to be reminded of, in order, without duplicates."""
    found: dict[str, None] = {}
    for match in _REMIND.finditer(text):
        found.setdefault(_tidy(match.group("what")), None)
    return [g for g in found if g]


def promised_goals(reply: str) -> list[str]:
    """What she promised in a reply ("I'll check in on Friday")."""
    found: dict[str, None] = {}
    for match in _PROMISE.finditer(reply):
        found.setdefault(_tidy(match.group("what")), None)
    return [g for g in found if g]
