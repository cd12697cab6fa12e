"""A rule-based stand-in for a model's consolidation and compaction answers.

Given the prompt hearth sends, it answers the way a careful model would, deterministically:
each first-person statement a member made becomes a third-person item about them ("Ana: my
sister is Maya" -> "Ana's sister is Maya"); questions, commands and her own lines are skipped.
Used by the in-process fake model and by the end-to-end model server, so both exercise the same
structured-output path without a real model.
"""

from __future__ import annotations

import re
from typing import Any

_LINE = re.compile(r"^(\d+)\. ([^:]{1,64}): (.*)$")
_ASSISTANT = re.compile(r"companion, ([^,]+), |for ([^,]+), a household companion")
_FIRST_PERSON = (
    (re.compile(r"\bI am\b|\bI'm\b", re.IGNORECASE), "{name} is"),
    (re.compile(r"\bI have\b|\bI've\b", re.IGNORECASE), "{name} has"),
    (re.compile(r"\bI was\b", re.IGNORECASE), "{name} was"),
    (re.compile(r"\bmy\b", re.IGNORECASE), "{name}'s"),
    (re.compile(r"\bI\b"), "{name}"),
    (re.compile(r"\bme\b", re.IGNORECASE), "{name}"),
)
_NAME = re.compile(r"^([A-Z][a-z]+)\b")
_NOT_NAMES = frozenset({"The", "A", "An", "We", "Our", "It", "This", "That", "There", "Please"})


def assistant_name(system: str) -> str:
    found = _ASSISTANT.search(system)
    return (found.group(1) or found.group(2)) if found else "hearth"


def numbered_lines(text: str) -> list[tuple[int, str, str]]:
    """(number, speaker, text) for each numbered transcript line of a prompt."""
    out = []
    for raw in text.splitlines():
        found = _LINE.match(raw.strip())
        if found:
            out.append((int(found.group(1)), found.group(2), found.group(3)))
    return out


def third_person(speaker: str, text: str) -> tuple[str, str | None]:
    """The statement about its subject, and who it is about."""
    statement = text.strip().rstrip(".!")
    first_person = False
    for pattern, replacement in _FIRST_PERSON:
        statement, n = pattern.subn(replacement.format(name=speaker), statement)
        first_person = first_person or n > 0
    if first_person:
        return statement, speaker
    found = _NAME.match(statement)
    about = found.group(1) if found and found.group(1) not in _NOT_NAMES else None
    return statement, about


def extraction_for(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON a careful model returns for hearth's consolidation prompt."""
    system = str(messages[0].get("content", "")) if messages else ""
    assistant = assistant_name(system)
    items = []
    for number, speaker, text in numbered_lines(str(messages[-1].get("content", ""))):
        words = text.split()
        if speaker in (assistant, "Someone") or text.startswith("/") or text.endswith("?"):
            continue
        if len(words) < 3 or "[forgotten]" in text:
            continue
        statement, about = third_person(speaker, text)
        items.append({"statement": statement, "kind": "fact", "about": about, "lines": [number]})
    return {"items": items}


def summary_for(messages: list[dict[str, Any]]) -> str:
    """A summary that names what each line said, in order (so tests can see what it used)."""
    system = str(messages[0].get("content", "")) if messages else ""
    assistant = assistant_name(system)
    parts = [
        f"{speaker} said {text}"
        for _, speaker, text in numbered_lines(str(messages[-1].get("content", "")))
        if speaker != assistant
    ]
    return ("Summary: " + "; ".join(parts))[:1500] if parts else "Summary: nothing new."


def is_consolidation(messages: list[dict[str, Any]]) -> bool:
    return bool(messages) and "worth remembering" in str(messages[0].get("content", ""))


def is_compaction(messages: list[dict[str, Any]]) -> bool:
    return bool(messages) and "running summary" in str(messages[0].get("content", ""))


def is_judging(messages: list[dict[str, Any]]) -> bool:
    return bool(messages) and "which of her memories answer" in str(
        messages[0].get("content", ""))


_JUDGED = re.compile(r'^(m\d+): .*?: "(.*)"$', re.MULTILINE)


def verdicts_for(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Recall's model judge, by rule: a memory answers when it shares two words of four
    letters or more with the member's message, is related with one, and is unrelated else."""
    shown = str(messages[-1].get("content", ""))
    message, _, listing = shown.partition("\n\nMemories:\n")
    asked = {w.casefold() for w in re.findall(r"\w{4,}", message)}
    out = []
    for ref, text in _JUDGED.findall(listing):
        shared = asked & {w.casefold() for w in re.findall(r"\w{4,}", text)}
        verdict = "answers" if len(shared) >= 2 else "related" if shared else "unrelated"
        out.append({"ref": ref, "verdict": verdict})
    return {"verdicts": out}
