"""The model judges what she recalled, when it can: one structured call per turn.

With a capable model configured (the soul's full profile), the candidates recall judged for a
reply are shown to the model once more, each under an opaque ref made for this call alone
(`m1`, `m2`, ...), with who said it and when; the model answers a JSON verdict per ref
(`answers`, `related` or `unrelated`). Only what recall handed back is sent: it came through
the gate for this reader, so nothing outside their visible set can be. A timeout, a model
error, or an answer that does not fit the schema leaves the signal judge's verdicts as they
were; a memory the model's answer leaves out keeps the signals' verdict, the others take the
model's. The last few lines of the chat before the message are shown too, so that a message
that leans on them ("and hers?") is judged for what it asks; they were read for this reply
through the gate, and the reply's own prompt holds them anyway. The embedded model's profile
never uses it (`wanted`).

Owns: the judging prompt, its schema, and applying the model's verdicts. Must not: read
memory, or send anything recall did not hand back.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from memory import Found, HearthError, Quoted, Recalled, Role, Turn, Verdict, scope_owner
from soul.files import FULL, Soul
from soul.model import Gateway

log = logging.getLogger("hearth.judge")

TIMEOUT_S = 8.0  # a member waits for this at most before the signal judge's verdicts stand
MAX_TEXT = 400  # characters of one memory shown to the judge
BEFORE_LINES = 4  # lines of the chat before the message shown for what it refers to

INSTRUCTIONS = """\
You help a household companion decide which of her memories answer a member's message.
For each memory, answer one verdict:
- "answers": it states what the message asks for (or exactly what it is about), for the \
person the message is about;
- "related": same topic, but it does not answer (another person, another thing, another \
time, or only part of it);
- "unrelated": it has nothing to do with the message.
A line that quotes a document (refs d1, d2, ...) "answers" only when its words say what the \
message asks for.
Mind who said each memory and about whom: "my" in the message is its speaker's. A newer \
memory on the same thing replaces an older one. The lines before the message, when shown, \
only say what a short message refers to: they are not memories to judge. Answer with JSON \
only: one verdict per ref."""


class _Verdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ref: str
    verdict: Literal["answers", "related", "unrelated"]


class Judged(BaseModel):
    """What the model answers: one verdict per memory it was shown."""

    model_config = ConfigDict(extra="forbid")

    verdicts: list[_Verdict]


class StructuredModel(Protocol):
    async def extract(self, messages: list[dict[str, str]], schema: type[Judged], *,
                      max_tokens: int = ..., temperature: float = ...) -> Judged: ...


Item = Recalled | Quoted


def wanted(soul: Soul, model: object) -> bool:
    """Whether this soul and model judge with the model: the full profile, over the gateway
    to a configured model (the embedded small model's profile never does)."""
    return soul.profile == FULL and isinstance(model, Gateway)


def _shown(ref: str, item: Item, names: Mapping[str, str], now: datetime) -> str:
    if isinstance(item, Recalled):
        owner = scope_owner(item.belief.scope)
        who = "the household" if owner is None else names.get(owner, "a member")
        text, when = item.belief.proposition, item.belief.created_at
        said = f"{who} told her"
    else:
        who = names.get(item.turn.speaker_id or "", "a member")
        text, when = item.turn.text, item.turn.at
        said = f"{who} said"
    day = datetime.fromisoformat(when)
    ago = max(0, (now - day).days)
    text = " ".join(text.split())[:MAX_TEXT]
    return f'{ref}: on {day:%d %B %Y} ({ago} days ago) {said}: "{text}"'


def _before(lines: Sequence[Turn], names: Mapping[str, str]) -> str:
    shown = []
    for turn in lines[-BEFORE_LINES:]:
        who = ("she (the companion)" if turn.role == Role.ASSISTANT
               else names.get(turn.speaker_id or "", "a member"))
        shown.append(f"{who}: {' '.join(turn.text.split())[:MAX_TEXT]}")
    return "\n".join(shown)


async def judge(model: StructuredModel, items: Sequence[Item], *, question: str, asker: str,
                names: Mapping[str, str], now: datetime, before: Sequence[Turn] = (),
                timeout_s: float = TIMEOUT_S) -> list[Item]:
    """The items with the model's verdicts (and a why saying so), answers first; the items as
    they were when the model cannot judge them. `before`: the chat's lines before the message,
    oldest first (the last few are shown)."""
    judged, _ = await judge_all(model, items, (), question=question, asker=asker, names=names,
                                now=now, before=before, timeout_s=timeout_s)
    return judged


async def judge_all(model: StructuredModel, items: Sequence[Item], passages: Sequence[Found],
                    *, question: str, asker: str, names: Mapping[str, str], now: datetime,
                    before: Sequence[Turn] = (),
                    timeout_s: float = TIMEOUT_S) -> tuple[list[Item], list[Found]]:
    """`judge`, and in the same call the shelf's passages (refs `d1`, `d2`, ...): a passage is
    told when the model says it answers, and not otherwise. Both as they were when the model
    cannot judge them."""
    if not items and not passages:
        return list(items), list(passages)
    refs = {f"m{i}": item for i, item in enumerate(items, start=1)}
    shelf = {f"d{i}": found for i, found in enumerate(passages, start=1)}
    listing = "\n".join(_shown(ref, item, names, now) for ref, item in refs.items())
    if shelf:
        listing += "\n" + "\n".join(
            f'{ref}: the document "{f.citation}" says: "{" ".join(f.text.split())[:MAX_TEXT]}"'
            for ref, f in shelf.items())
    context = _before(before, names)
    context = f"The lines just before it:\n{context}\n\n" if context else ""
    messages = [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": f"{context}{asker}'s message: {' '.join(question.split())}"
                                    f"\n\nMemories:\n{listing}"},
    ]
    wanted_refs = len(refs) + len(shelf)
    try:
        answer = await asyncio.wait_for(
            model.extract(messages, Judged, max_tokens=40 + 20 * wanted_refs, temperature=0.0),
            timeout_s)
    except (TimeoutError, HearthError) as exc:
        log.warning("the model could not judge recall (%s); the signal judge stands",
                    type(exc).__name__)
        return list(items), list(passages)
    except Exception:  # a judge that fails in any other way must not cost the member a reply
        log.exception("the model judge failed; the signal judge stands")
        return list(items), list(passages)
    given = {v.ref: Verdict(v.verdict) for v in answer.verdicts if v.ref in refs or v.ref in shelf}
    if not given:
        log.warning("the model judged none of the %d memories; the signal judge stands",
                    wanted_refs)
        return list(items), list(passages)
    if len(given) < wanted_refs:  # what it judged counts; the signals' verdicts stand for the rest
        log.info("the model judged %d of %d memories", len(given), wanted_refs)
    judged = [item.model_copy(update={
        "verdict": given[ref],
        "why": f"{given[ref].value}, as the model judged it (the signals said {item.why})",
    }) if ref in given else item for ref, item in refs.items()]
    order = {Verdict.ANSWERS: 0, Verdict.RELATED: 1, Verdict.UNRELATED: 2}
    read = [dataclasses.replace(
        found, told=given[ref] is Verdict.ANSWERS,
        why=f"{given[ref].value}, as the model judged it (the signals said {found.why})")
        if ref in given else found for ref, found in shelf.items()]
    return sorted(judged, key=lambda item: order[item.verdict]), read
