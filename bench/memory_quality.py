"""Memory quality: does she recall what she was told, and keep quiet about what she was not?
Run it as `python -m bench.memory_quality`.

One household (Olivia, Bob, Alice), the probes of `bench.probes` for Bob, in his DM:

1. Telling. Every present fact goes through `respond()` (which stores Bob's line) and then
   `memory.beliefs.remember()` stores it as a `told` belief, exactly as he said it. The tick
   that will one day consolidate lines into beliefs does not exist yet, so telling is simulated by
   `remember`; nothing else becomes a belief (the distractor chat stays transcript only).
2. Chatting. Every probe's two or three distractor lines go through `respond()`.
3. Asking. The present and absent questions, alternating, go through `respond()`.

The model is scripted (`ScriptedModel`): it reads only the prompt's "# What you remember"
surface and answers with the first belief listed there, or "I don't know." when none is. So
the figures measure recall and the assembler, never a language model's judgement:

- recall accuracy: the share of present probes whose reply contains the probe's answer keyword;
- false memory rate: the share of absent probes whose reply is not "I don't know." (anything
  recalled at all for a question about something never told);
- topical false memory rate (reported beside it): the share of absent probes where a recalled
  belief contains one of the probe's `betrays` keywords as a word (the keyword plus at most
  three more letters, case-insensitive), i.e. where the recalled text could pass for an answer.

The ranking and abstention are memory/recall.py's as they stand (its constants were tuned on
these probes and the household benchmark together). For each failing probe the table shows
where the probe's own fact ranked, how alike it is to the question in meaning, and which words
they share. Prints a table and one JSON line; then (unless `--no-household`) the household
benchmark of `bench.household_memory`, per category, beside plain BM25 over the same lines,
with its own table and JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench import household_memory
from bench.probes import ABSENT, MEMBER, PRESENT, Absent, Present
from memory import Embedder, Memory, make_embedder
from memory.terms import query_terms, stems
from memory.terms import words as content_words
from soul.files import Soul, load_soul
from soul.turn import Reply, chat_id_for, respond

DONT_KNOW = "I don't know."
MEMORIES_HEADER = "# What you remember"
# One rendered memory: a belief, '- {who} on {date}: "{text}" (learned ..., confidence ...)',
# or a member's line, '- On {date} {who} said: "{text}" (their words, not a conclusion)'.
_BELIEF_LINE = re.compile(
    r'^- (?:.* on [^:]+|On .+ said[^:]*): "(?P<text>.*)"'
    r' \((?:learned [^,()]*, confidence [0-9.]+[^()]*|their words, not a conclusion)\)$'
)
START = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def remembered(messages: Sequence[dict[str, str]]) -> list[str]:
    """The belief texts listed under "# What you remember", in the order shown."""
    if not messages or messages[0]["role"] != "system":
        return []
    lines = messages[0]["content"].split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith(MEMORIES_HEADER)), None)
    if start is None:
        return []
    found: list[str] = []
    for line in lines[start + 1:]:
        if not line.strip() or line.startswith("# "):
            break
        match = _BELIEF_LINE.match(line)
        if match:
            found.append(match.group("text"))
    return found


class ScriptedModel:
    """Answers only from "What you remember": the first belief listed, else "I don't know."."""

    async def reply(
        self, messages: list[dict[str, str]], *, max_tokens: int = 400, temperature: float = 0.7
    ) -> str:
        found = remembered(messages)
        return found[0] if found else DONT_KNOW


class Clock:
    """The household's time: a minute passes with every line."""

    def __init__(self, now: datetime = START) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def tick(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def betrayed(keywords: Sequence[str], texts: Sequence[str]) -> bool:
    """Whether any text holds one of the keywords as a word (plus at most three letters)."""
    return any(
        re.search(rf"\b{re.escape(k)}\w{{0,3}}\b", text, re.IGNORECASE)
        for k in keywords
        for text in texts
    )


@dataclass(frozen=True)
class PresentOutcome:
    probe: Present
    reply: str
    recalled: tuple[str, ...]  # what the prompt listed under "What you remember"
    rank: int | None  # 1-based position of the probe's own fact there; None when absent

    @property
    def correct(self) -> bool:
        return self.probe.answer.casefold() in self.reply.casefold()


@dataclass(frozen=True)
class AbsentOutcome:
    probe: Absent
    reply: str
    recalled: tuple[str, ...]

    @property
    def false_memory(self) -> bool:
        return self.reply != DONT_KNOW

    @property
    def topical(self) -> bool:
        return betrayed(self.probe.betrays, self.recalled)


@dataclass(frozen=True)
class Report:
    embedder: str
    present: tuple[PresentOutcome, ...]
    absent: tuple[AbsentOutcome, ...]

    @property
    def recall_accuracy(self) -> float:
        return sum(o.correct for o in self.present) / len(self.present)

    @property
    def false_memory_rate(self) -> float:
        return sum(o.false_memory for o in self.absent) / len(self.absent)

    @property
    def topical_false_memory_rate(self) -> float:
        return sum(o.topical for o in self.absent) / len(self.absent)

    @property
    def probes(self) -> int:
        return len(self.present) + len(self.absent)


async def run_probes(
    embedder: Embedder | None,
    folder: Path,
    *,
    soul: Soul | None = None,
    present: Sequence[Present] = PRESENT,
    absent: Sequence[Absent] = ABSENT,
) -> Report:
    """Tell every present fact, chat, then ask every question, in one household."""
    soul = soul or load_soul()
    clock = Clock()
    memory = await Memory.open(folder / "quality.db", create=True, embedder=embedder,
                               clock=clock)
    try:
        await memory.people.add("Olivia", telegram_id=1001, owner=True)
        member = await memory.people.add(MEMBER, telegram_id=1002)
        await memory.people.add("Alice", telegram_id=1003)
        model = ScriptedModel()
        chat_id = chat_id_for(member, group=False)

        async def say(text: str) -> Reply:
            return await respond(memory, soul, model, speaker=member, chat_id=chat_id,
                                 group=False, text=text, now=clock.tick())

        fact_ids: dict[str, int | None] = {}
        for probe in present:
            await say(probe.fact)
            fact_ids[probe.fact] = (await memory.beliefs.remember(member.person_id,
                    probe.fact)).belief_id
        for probe in present:
            for line in probe.distractors:
                await say(line)

        present_out: list[PresentOutcome] = []
        absent_out: list[AbsentOutcome] = []
        for i in range(max(len(present), len(absent))):
            if i < len(present):
                p = present[i]
                reply = await say(p.question)
                ids = reply.prompt.belief_ids
                own = fact_ids[p.fact]
                rank = ids.index(own) + 1 if own in ids else None
                present_out.append(PresentOutcome(
                    p, reply.text, tuple(remembered(reply.prompt.messages)), rank))
            if i < len(absent):
                a = absent[i]
                reply = await say(a.question)
                absent_out.append(AbsentOutcome(
                    a, reply.text, tuple(remembered(reply.prompt.messages))))
    finally:
        await memory.close()
    name = "none" if embedder is None else embedder.name
    return Report(name, tuple(present_out), tuple(absent_out))


def relevance_note(embedder: Embedder | None, query: str, proposition: str) -> str:
    """How alike the question and a fact are, in meaning and in words (for the report)."""
    words = query_terms(query)
    document_ = [stems(w) for w in content_words(proposition)]
    shared = [t.word for t in words if t.count_in(document_)]
    note = f"words shared {shared or 'none'} of {[t.word for t in words]}"
    if embedder is None:
        return note
    vectors = embedder.embed([query, proposition])
    return f"semantic {float(vectors[0] @ vectors[1]):.2f}, {note}"


def print_report(report: Report, embedder: Embedder | None) -> None:
    present_ok = sum(o.correct for o in report.present)
    absent_false = sum(o.false_memory for o in report.absent)
    absent_topical = sum(o.topical for o in report.absent)
    print(f"memory quality, embedder {report.embedder}")
    print(f"{'probes':<10} {'count':>6} {'scored':>8} {'rate':>7}")
    print(f"{'present':<10} {len(report.present):>6} {present_ok:>8}"
          f" {report.recall_accuracy:>7.3f}   recalled (reply holds the answer)")
    print(f"{'absent':<10} {len(report.absent):>6} {absent_false:>8}"
          f" {report.false_memory_rate:>7.3f}   answered instead of \"I don't know.\"")
    print(f"{'':<10} {'':>6} {absent_topical:>8}"
          f" {report.topical_false_memory_rate:>7.3f}   recalled a belief with a betraying word")
    failed = [o for o in report.present if not o.correct]
    if failed:
        print("\nfailing present probes (question -> reply; own fact's rank; why)")
        for o in failed:
            where = "not recalled" if o.rank is None else f"rank {o.rank}"
            print(f"  {o.probe.question!r} -> {o.reply!r}; {where};"
                  f" {relevance_note(embedder, o.probe.question, o.probe.fact)}")
    wrong = [o for o in report.absent if o.false_memory]
    if wrong:
        print("\nfalse memories (question -> reply; topical?; why)")
        for a in wrong:
            print(f"  {a.probe.question!r} -> {a.reply!r};"
                  f" {'topical' if a.topical else 'off-topic'};"
                  f" {relevance_note(embedder, a.probe.question, a.reply)}")


def result_line(report: Report) -> dict[str, object]:
    return {
        "bench": "memory_quality",
        "recall_accuracy": round(report.recall_accuracy, 3),
        "false_memory_rate": round(report.false_memory_rate, 3),
        "probes": report.probes,
        "topical_false_memory_rate": round(report.topical_false_memory_rate, 3),
        "present": len(report.present),
        "absent": len(report.absent),
        "embedder": report.embedder,
    }


async def run(embedder_name: str, household: bool) -> None:
    embedder = make_embedder(embedder_name)
    with tempfile.TemporaryDirectory() as folder:
        report = await run_probes(embedder, Path(folder))
    print_report(report, embedder)
    print(json.dumps(result_line(report)))
    if household:  # the household benchmark, per category, beside BM25 in the same run
        print()
        line = await household_memory.run(
            household_memory.arguments().parse_args(["--embedder", embedder_name]))
        print(json.dumps(line))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="e5", choices=["e5", "minilm", "none"])
    parser.add_argument("--no-household", action="store_true",
                        help="the probes only, without the household benchmark")
    args = parser.parse_args()
    asyncio.run(run(args.embedder, household=not args.no_household))


if __name__ == "__main__":
    main()
