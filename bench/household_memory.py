"""Household memory: does she find what a family told her, months later and in other words,
and nothing that one member told her in private when another asks?
Run it as `python -m bench.household_memory`.

The data is the project's own (bench/household/, see its README): four members (Maya the owner,
Tom, Ellie, Lukas), January to June 2026 in each member's DM and in the family group, and
questions of six kinds: `paraphrase` (a fact asked in other words), `update` (a fact changed
later; the newer line is the answer and the older one is stale), `other_member` (a fact about
another member), `temporal` ("when did I ..."), `as_of` (what was true in a past time the
question names: the line that held then is the answer, not the `newer` one said after it),
`absent` (never told, beside a near miss) and `privacy` (told only where the asker may not
look: another member's DM, the asker's own DM asked in the group, or a health or money line
said in the group, which the group's conversation may not use without a grant).

1. Replay. A fresh household is made with `Memory.open` and `memory.people.add`; every line is
   replayed in time order with the memory's clock at the line's timestamp: stored in the
   transcript (`memory.transcript.append`) in the scope it was said in, and for a fact line one
   `told` belief through `memory.beliefs.remember`, in the same scope (a DM line in the
   speaker's private scope, a group line shared). That stands in for consolidation, which would
   extract one belief per fact line; chatter stays transcript only.
2. Asking. Every question through `memory.recall.search` as the asker in that chat (a DM: the
   member's DM conversation; the group: the group conversation, with the member who asks as
   its actor, as the bot's group turn has it), the clock at `ask_at` plus a minute per
   question. Questions are asked round-robin across the five chats, so the repetition penalty
   (a reader's last few recalls) falls on different topics, as in a real household.
3. Scoring. Asked through `memory.recall.recollect` (beliefs and members' lines in one
   ranking). A recalled belief is matched to its line by the id `remember` returned (or, for a
   row that did not come from this replay, by its text), a recalled line by its id. For
   answerable questions: recall@1/5/10 and MRR of the expected lines over the ranked evidence,
   and answer accuracy (the first row she would tell as a memory, a `sure` one, is an expected
   line; for an as-of question, `newer1st`: a newer line came before every line that held
   then); for questions whose right answer is nothing: abstention (no row is sure; the false
   memory rate is the share where one is). BM25 tells its first row, always. A recalled line the
   asker may not see in that chat is a leak.

`--baseline bm25` (the default) ranks the same visible lines with plain BM25 (`bm25s`: lower
case words, its English stopwords, no stemming; nothing returned when no word matches) so
the two are measured in the same run; `--bm25-corpus facts` gives BM25 the fact lines only,
the rows hearth ranks. `--model` has the configured model (`OPENAI_BASE_URL`, `HEARTH_MODEL`)
judge what recall hands over for each question, as a turn's judge does (`soul.judge`: one
recall hands it the first candidates whatever their verdicts), in a replay of its own, and
scores what it would tell in a table of its own, its time apart. Prints a table per system,
then one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import zip_longest
from pathlib import Path
from typing import Any

from bench.judging import configured, judged
from bench.recall import percentile
from memory import (
    SHARED,
    AccessContext,
    Activity,
    Embedder,
    Memory,
    Person,
    Role,
    Sensitivity,
    dm_chat,
    group_chat,
    make_embedder,
    normalize,
    private_scope,
)
from memory.classifier import classify
from memory.recall import LIMIT
from memory.recall.periods import asked_period
from soul.judge import StructuredModel
from soul.model import Gateway

DATA = Path(__file__).resolve().with_name("household")
ANSWERABLE_KINDS = ("paraphrase", "update", "other_member", "temporal", "alias", "as_of")
ABSTAIN_KINDS = ("absent", "privacy")
KINDS = ANSWERABLE_KINDS + ABSTAIN_KINDS
PRIVACY = ("visible", "private_other", "dm_only", "lens")
CHATS = ("dm", "group")
KS = (1, 5, 10)
PURPOSE = "household memory benchmark"


# --- the data -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Member:
    key: str
    name: str
    telegram_id: int
    owner: bool


@dataclass(frozen=True)
class Line:
    key: str
    at: datetime
    chat: str  # "group" or "dm:<member key>"
    speaker: str
    text: str
    fact: bool
    belief: str | None = None  # what consolidation would extract, when not the line itself
    about: str | None = None  # the member a fact line is about (its speaker or another), if any

    @property
    def group(self) -> bool:
        return self.chat == "group"

    @property
    def proposition(self) -> str:
        return self.belief or self.text

    @property
    def sensitivity(self) -> Sensitivity:
        return classify(self.proposition if self.fact else self.text)


@dataclass(frozen=True)
class Question:
    qid: str
    kind: str
    asker: str
    chat: str  # "dm" or "group"
    text: str
    evidence: tuple[str, ...]
    stale: tuple[str, ...]
    near_miss: tuple[str, ...]
    forbidden: tuple[str, ...]
    privacy: str
    answer: str
    lang: str = ""  # the language the question is asked in, when the data says
    newer: tuple[str, ...] = ()  # for an as-of question, the lines said after the time it names

    @property
    def abstain(self) -> bool:
        return not self.evidence

    @property
    def stream(self) -> str:
        """The chat the question is asked in: a member's DM, or the group."""
        return "group" if self.chat == "group" else f"dm:{self.asker}"


@dataclass(frozen=True)
class Household:
    members: tuple[Member, ...]
    group_chat: int
    ask_at: datetime
    lines: tuple[Line, ...]
    questions: tuple[Question, ...]
    by_key: dict[str, Line] = field(compare=False, repr=False)
    name: str = ""
    language: str = "en"  # the language most of it is written in
    split: str = "fit"  # "fit": the judge's weights may be fitted on it; "held_out": never

    def boundary(self, q: Question) -> bool:
        """Whether the question crosses the group/DM line: asked in one, about lines said in
        the other, or about a group line the group's conversation may not use."""
        keys = (*q.evidence, *q.stale, *q.near_miss, *q.forbidden)
        return q.privacy == "lens" or any(self.by_key[k].group != (q.chat == "group")
                                          for k in keys if k in self.by_key)


def _when(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(row) for row in path.read_text(encoding="utf-8").splitlines()
            if row.strip()]


def load_household(folder: Path = DATA) -> Household:
    meta = json.loads((folder / "household.json").read_text(encoding="utf-8"))
    members = tuple(Member(m["key"], m["name"], int(m["telegram_id"]), bool(m["owner"]))
                    for m in meta["members"])
    lines = tuple(
        Line(r["key"], _when(r["at"]), r["chat"], r["speaker"], r["text"], bool(r["fact"]),
             r.get("belief"), r.get("about"))
        for r in _jsonl(folder / "dialogue.jsonl")
    )
    questions = tuple(
        Question(r["id"], r["kind"], r["asker"], r["chat"], r["text"],
                 tuple(r["evidence"]), tuple(r["stale"]), tuple(r["near_miss"]),
                 tuple(r["forbidden"]), r["privacy"], r.get("answer", ""), r.get("lang", ""),
                 tuple(r.get("newer", ())))
        for r in _jsonl(folder / "questions.jsonl")
    )
    return Household(members, int(meta["group_chat"]), _when(meta["ask_at"]), lines,
                     questions, {line.key: line for line in lines},
                     name=str(meta.get("name", folder.name)),
                     language=str(meta.get("language", "en")),
                     split=str(meta.get("split", "fit")))


def visible(line: Line, q: Question) -> bool:
    """What the asker may be shown in that chat, by the household's rules (not hearth's code):
    in a DM, the group's lines and their own DM's, any class; in the group, the group's lines
    that are ordinary (health and money need a grant there, and the bench grants none)."""
    if q.chat == "group":
        return line.group and line.sensitivity is Sensitivity.ORDINARY
    return line.group or line.chat == f"dm:{q.asker}"


def validate(household: Household) -> list[str]:
    """Everything wrong with the data; [] when it is well-formed."""
    problems = _line_problems(household)
    ids = [q.qid for q in household.questions]
    if len(ids) != len(set(ids)):
        problems.append("question ids repeat")
    for q in household.questions:
        problems.extend(f"{q.qid}: {problem}" for problem in _question_problems(household, q))
    return problems


def _line_problems(household: Household) -> list[str]:
    problems: list[str] = []
    members = {m.key for m in household.members}
    if sum(m.owner for m in household.members) != 1:
        problems.append("the household needs exactly one owner")
    keys = [line.key for line in household.lines]
    if len(keys) != len(set(keys)):
        problems.append("line keys repeat")
    times = [line.at for line in household.lines]
    if times != sorted(times):
        problems.append("lines are not in time order")
    if household.split not in ("fit", "held_out"):
        problems.append("split must be fit or held_out")
    if household.lines and household.ask_at <= household.lines[-1].at:
        problems.append("questions must be asked after the last line")
    for line in household.lines:
        if line.speaker not in members:
            problems.append(f"{line.key}: unknown speaker {line.speaker}")
        if not line.group and line.chat != f"dm:{line.speaker}":
            problems.append(f"{line.key}: a DM line is said by the DM's member")
        if not line.text.strip():
            problems.append(f"{line.key}: empty line")
        if line.about is not None and line.about not in members:
            problems.append(f"{line.key}: about an unknown member {line.about}")
        if line.about is not None and not line.fact:
            problems.append(f"{line.key}: only a fact line says whom it is about")
    return problems


def _question_problems(household: Household, q: Question) -> list[str]:
    problems: list[str] = []
    if q.kind not in KINDS:
        problems.append(f"unknown kind {q.kind}")
    if q.asker not in {m.key for m in household.members}:
        problems.append(f"unknown asker {q.asker}")
    if q.chat not in CHATS:
        problems.append("chat must be dm or group")
    if q.privacy not in PRIVACY:
        problems.append(f"unknown privacy {q.privacy}")
    missing = [k for k in (*q.evidence, *q.stale, *q.near_miss, *q.forbidden, *q.newer)
               if k not in household.by_key]
    if missing:
        return [*problems, f"no such line {missing}"]
    line = household.by_key
    if (q.kind in ABSTAIN_KINDS) != q.abstain:
        problems.append(f"{q.kind} questions "
                        f"{'have no' if q.kind in ABSTAIN_KINDS else 'need'} evidence")
    for key in (*q.evidence, *q.stale, *q.near_miss, *q.newer):
        if not line[key].fact:
            problems.append(f"{key} is not a fact line")
        if not visible(line[key], q):
            problems.append(f"{key} is not visible to the asker there")
    problems.extend(f"forbidden {key} is visible to the asker there"
                    for key in q.forbidden if visible(line[key], q))
    if q.privacy != "visible" and not (q.abstain and q.forbidden):
        problems.append("a privacy expectation names forbidden lines and no evidence")
    if q.privacy == "visible" and q.forbidden:
        problems.append("forbidden lines need a privacy expectation")
    if q.kind == "update" and not q.stale:
        problems.append("an update names its stale lines")
    if (q.kind == "as_of") != bool(q.newer):
        problems.append("an as-of question, and only one, names its newer lines")
    elif q.newer:
        problems.extend(_as_of_problems(household, q))
    if q.stale and q.evidence and (max(line[k].at for k in q.stale)
                                   >= min(line[k].at for k in q.evidence)):
        problems.append("stale lines must come before the evidence")
    if q.privacy == "lens" and any(line[k].sensitivity is Sensitivity.ORDINARY
                                   or not line[k].group for k in q.forbidden):
        problems.append("a lens question is about a sensitive group line")
    if q.privacy == "dm_only" and (q.chat != "group" or any(
            line[k].chat != f"dm:{q.asker}" for k in q.forbidden)):
        problems.append("dm_only is the asker's own DM, asked in the group")
    if q.privacy == "private_other" and any(
            line[k].group or line[k].chat == f"dm:{q.asker}" for k in q.forbidden):
        problems.append("private_other is another member's DM")
    return problems


def _as_of_problems(household: Household, q: Question) -> list[str]:
    """An as-of question names a past time in which its evidence held and its newer lines had
    not been said yet (read as hearth reads it, `memory.recall.periods`)."""
    period = asked_period(q.text, household.ask_at)
    if period is None:
        return ["an as-of question names a past time"]
    line = household.by_key
    if not all(line[k].at < period.end for k in q.evidence):
        return ["an as-of question's evidence was said only after the time it names"]
    if not all(line[k].at >= period.end for k in q.newer):
        return ["an as-of question's newer lines were said before the time it names ended"]
    return []


def asking_order(questions: Sequence[Question]) -> list[Question]:
    """Round-robin across the chats (each member's DM, the group), each in file order."""
    streams: dict[str, list[Question]] = {}
    for q in questions:
        streams.setdefault(q.stream, []).append(q)
    return [q for turn in zip_longest(*streams.values()) for q in turn if q is not None]


# --- running it ---------------------------------------------------------------------------

class Clock:
    """The household's time, set line by line."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Answer:
    """What one system returned for one question."""

    keys: list[str]  # matched lines, best first (the ranked evidence)
    returned: int  # how many rows it would tell as memories (0: it abstains)
    ms: float = 0.0
    told: list[str] = field(default_factory=list)  # the lines of the first row it would tell


Results = dict[str, Answer]


async def _tell(memory: Memory, clock: Clock, household: Household,
                people: dict[str, Person], counts: dict[str, int],
                ) -> tuple[dict[int, list[str]], dict[int, str]]:
    """Every line stored where it was said, at its time, and a fact line's belief remembered;
    which lines each belief and each stored line stand for."""
    group = group_chat(household.group_chat)
    belief_lines: dict[int, list[str]] = {}
    turn_lines: dict[int, str] = {}
    for line in household.lines:
        clock.now = line.at
        person = people[line.speaker]
        turn = await memory.transcript.append(
            chat_id=group if line.group else dm_chat(person),
            speaker_id=person.person_id, role=Role.USER,
            scope=SHARED if line.group else private_scope(person.person_id),
            text=line.text,
        )
        turn_lines[turn] = line.key
        counts["lines"] += 1
        if line.fact:
            outcome = await memory.beliefs.remember(person.person_id, line.proposition,
                                                    shared=line.group)
            if outcome.belief_id is None:
                counts["refused"] += 1
                continue
            belief_lines.setdefault(outcome.belief_id, []).append(line.key)
            counts["beliefs"] += outcome.status == "created"
    return belief_lines, turn_lines


async def run_hearth(household: Household, embedder: Embedder | None, folder: Path,
                     limit: int, model: StructuredModel | None = None,
                     ) -> tuple[Results, dict[str, int]]:
    """Replay the household into a fresh memory, then ask every question through recall; with
    a `model`, the model judges what recall hands over, as a turn's judge does, and what it
    would tell is the answer (its time the answer's)."""
    first = household.lines[0].at if household.lines else household.ask_at
    clock = Clock(first - timedelta(days=1))
    memory = await Memory.open(folder / "household.db", create=True, embedder=embedder,
                               clock=clock)
    counts = {"lines": 0, "beliefs": 0, "refused": 0}
    try:
        people = {}
        for m in household.members:
            people[m.key] = await memory.people.add(m.name, telegram_id=m.telegram_id,
                                                    owner=m.owner)
        belief_lines, turn_lines = await _tell(memory, clock, household, people, counts)
        by_text: dict[str, list[str]] = {}
        for line in household.lines:
            by_text.setdefault(normalize(line.proposition if line.fact else line.text),
                               []).append(line.key)

        def keys_of(item: Any) -> list[str]:
            belief = getattr(item, "belief", None)
            if belief is not None:
                return belief_lines.get(belief.belief_id) or by_text.get(
                    normalize(belief.proposition), [])
            turn = getattr(item, "turn", None)
            if turn is not None:
                found = turn_lines.get(turn.turn_id)
                return [found] if found else by_text.get(normalize(turn.text), [])
            return []

        results: Results = {}
        names = {p.person_id: p.name for p in people.values()}
        for i, q in enumerate(asking_order(household.questions)):
            clock.now = household.ask_at + timedelta(minutes=i)
            # In the group the member who asks is the recall's actor, as the bot's turn makes
            # it (`soul.assembler`): "I" and "my" in the question are theirs.
            ctx = (AccessContext.for_group(Activity.GROUP_CONVERSATION, PURPOSE,
                                           actor=people[q.asker].person_id)
                   if q.chat == "group" else
                   AccessContext.for_member(people[q.asker].person_id,
                                            Activity.DM_CONVERSATION, PURPOSE))
            start = time.perf_counter()
            # With a model, one recall hands it the first candidates whatever their verdicts,
            # as a turn's does; the model's time is its own.
            recalled = await memory.recall.recollect(
                ctx, q.text, limit=limit if model is None else LIMIT, unrelated=model is not None)
            ms = (time.perf_counter() - start) * 1000
            if model is not None:
                verdicts = await judged(model, recalled, question=q.text,
                                        asker=people[q.asker].name, names=names, now=clock.now)
                recalled, ms = verdicts.items, verdicts.ms
            keys: list[str] = []
            for item in recalled:
                for key in keys_of(item):
                    if key not in keys:
                        keys.append(key)
            sure = [item for item in recalled if item.sure]
            results[q.qid] = Answer(keys, len(sure), ms,
                                    told=keys_of(sure[0]) if sure else [])
    finally:
        await memory.close()
    return results, counts

_WORD = re.compile(r"[^\W_]+")


def run_bm25(household: Household, corpus: str, limit: int) -> Results:
    """Plain BM25 over the lines each asker may see in that chat (one index per view)."""
    import bm25s  # type: ignore[import-untyped]  # noqa: PLC0415 -- dev extra, baseline only
    from bm25s.stopwords import STOPWORDS_EN  # type: ignore[import-untyped]  # noqa: PLC0415

    stop = frozenset(STOPWORDS_EN)

    def tokens(text: str) -> list[str]:
        return [w for w in _WORD.findall(text.casefold()) if w not in stop]

    views: dict[str, tuple[Any, list[Line]]] = {}
    results: Results = {}
    for q in household.questions:
        if q.stream not in views:
            docs = [line for line in household.lines
                    if visible(line, q) and (corpus == "lines" or line.fact)]
            index = bm25s.BM25()
            index.index([tokens(line.proposition if corpus == "facts" else line.text)
                         for line in docs], show_progress=False)
            views[q.stream] = (index, docs)
        index, docs = views[q.stream]
        start = time.perf_counter()
        query = [t for t in tokens(q.text) if t in index.vocab_dict]
        keys: list[str] = []
        if query:
            scores = index.get_scores(query)
            ranked = sorted((i for i in range(len(docs)) if scores[i] > 0),
                            key=lambda i: (-float(scores[i]), i))
            keys = [docs[i].key for i in ranked[:limit]]
        results[q.qid] = Answer(keys, len(keys), (time.perf_counter() - start) * 1000,
                                told=keys[:1])
    return results


# --- scoring ------------------------------------------------------------------------------

def _rate(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 3) if denominator else None


def leaked(household: Household, q: Question, answer: Answer) -> list[str]:
    return [k for k in answer.keys if k in q.forbidden or not visible(household.by_key[k], q)]


def first_rank(q: Question, answer: Answer) -> int | None:
    return next((i + 1 for i, k in enumerate(answer.keys) if k in q.evidence), None)


def summarise(household: Household, questions: Sequence[Question],
              results: Results) -> dict[str, Any]:
    answerable = [q for q in questions if not q.abstain]
    abstain = [q for q in questions if q.abstain]
    ranks = {q.qid: first_rank(q, results[q.qid]) for q in answerable}
    out: dict[str, Any] = {"n": len(questions), "answerable": len(answerable),
                           "abstain": len(abstain)}
    for k in KS:
        hits = sum(1 for q in answerable if (r := ranks[q.qid]) is not None and r <= k)
        out[f"recall_at_{k}"] = _rate(hits, len(answerable))
    out["mrr"] = (round(sum(1 / r for r in ranks.values() if r) / len(answerable), 3)
                  if answerable else None)
    empty_right = sum(1 for q in abstain if results[q.qid].returned == 0)
    empty_wrong = sum(1 for q in answerable if results[q.qid].returned == 0)
    out["abstention_recall"] = _rate(empty_right, len(abstain))
    out["abstention_precision"] = _rate(empty_right, empty_right + empty_wrong)
    out["false_abstention_rate"] = _rate(empty_wrong, len(answerable))
    out["false_memory_rate"] = _rate(len(abstain) - empty_right, len(abstain))
    out["answer_accuracy"] = _rate(
        sum(1 for q in answerable if set(results[q.qid].told) & set(q.evidence)),
        len(answerable))
    near = [q for q in abstain if q.near_miss]
    out["near_miss_at_1"] = _rate(
        sum(1 for q in near if results[q.qid].keys[:1] and results[q.qid].keys[0]
            in q.near_miss), len(near))
    updates = [q for q in answerable if q.stale]
    out["stale_first_rate"] = _rate(sum(1 for q in updates if stale_first(q, results[q.qid])),
                                    len(updates))
    as_of = [q for q in answerable if q.newer]
    out["newer_first_rate"] = _rate(sum(1 for q in as_of if newer_first(q, results[q.qid])),
                                    len(as_of))
    leaks = {q.qid: leaked(household, q, results[q.qid]) for q in questions}
    out["leaks"] = sum(1 for found in leaks.values() if found)
    out["leaked_items"] = sum(len(found) for found in leaks.values())
    return out


def stale_first(q: Question, answer: Answer) -> bool:
    """A stale line ranked above every line that answers (or returned without one)."""
    stale = next((i for i, k in enumerate(answer.keys) if k in q.stale), None)
    good = next((i for i, k in enumerate(answer.keys) if k in q.evidence), None)
    return stale is not None and (good is None or stale < good)


def newer_first(q: Question, answer: Answer) -> bool:
    """A line said after the time an as-of question names, ranked above every line that held
    then (or returned without one)."""
    newer = next((i for i, k in enumerate(answer.keys) if k in q.newer), None)
    good = next((i for i, k in enumerate(answer.keys) if k in q.evidence), None)
    return newer is not None and (good is None or newer < good)


def report(household: Household, results: Results) -> dict[str, Any]:
    questions = household.questions
    summary = summarise(household, questions, results)
    summary["per_kind"] = {kind: summarise(household, [q for q in questions if q.kind == kind],
                                           results) for kind in KINDS}
    summary["boundary"] = summarise(household, [q for q in questions if household.boundary(q)],
                                    results)
    return summary


def _cell(value: object) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def print_table(title: str, summary: dict[str, Any]) -> None:
    print(title)
    columns = [("n", "n"), ("recall_at_1", "R@1"), ("recall_at_5", "R@5"),
               ("recall_at_10", "R@10"), ("mrr", "MRR"), ("answer_accuracy", "told"),
               ("false_abstention_rate", "empty"),
               ("abstention_recall", "abstain"), ("near_miss_at_1", "near@1"),
               ("stale_first_rate", "stale1st"), ("newer_first_rate", "newer1st"),
               ("leaks", "leaks")]
    print(f"{'kind':<13}" + "".join(f"{h:>9}" for _, h in columns))
    rows = [*summary["per_kind"].items(), ("boundary", summary["boundary"]), ("all", summary)]
    for name, row in rows:
        print(f"{name:<13}" + "".join(f"{_cell(row[key]):>9}" for key, _ in columns))
    print(f"  abstention precision {_cell(summary['abstention_precision'])},"
          f" recall {_cell(summary['abstention_recall'])};"
          f" false memory {_cell(summary['false_memory_rate'])};"
          f" answerable with nothing returned {_cell(summary['false_abstention_rate'])}")


def similarities(embedder: Embedder | None, query: str, texts: Sequence[str]) -> list[float]:
    """Cosine similarity of the query to each text under the embedder (for the miss list)."""
    if embedder is None or not texts:
        return []
    vectors = embedder.embed([query, *texts])
    return [float(vectors[0] @ row) for row in vectors[1:]]


def print_misses(household: Household, name: str, results: Results, limit: int,
                 embedder: Embedder | None = None) -> None:
    """The questions a system got wrong; with an embedder, how close the query came (cosine
    to the expected line, and to what came first instead)."""

    def sims(q: Question, keys: Sequence[str]) -> str:
        found = similarities(embedder, q.text, [household.by_key[k].proposition for k in keys])
        return " sim " + "/".join(f"{s:.2f}" for s in found) if found else ""

    print(f"\n{name}: answerable questions missed in the top {limit}"
          " (question -> what came first)")
    for q in household.questions:
        answer = results[q.qid]
        if not q.abstain and first_rank(q, answer) is None:
            top = answer.keys[:1]
            print(f"  {q.qid} {q.asker}/{q.chat} {q.text!r} wants {list(q.evidence)}"
                  f"{sims(q, q.evidence)} -> {top[0] if top else 'nothing'}{sims(q, top)}")
    print(f"{name}: questions to abstain on that recalled something (the first three)")
    for q in household.questions:
        answer = results[q.qid]
        if q.abstain and answer.returned:
            print(f"  {q.qid} {q.asker}/{q.chat} {q.text!r} -> {answer.keys[:3]}"
                  f"{sims(q, answer.keys[:1])}"
                  f"{' LEAK' if leaked(household, q, answer) else ''}")


def headline(summary: dict[str, Any]) -> dict[str, Any]:
    keep = ("recall_at_1", "recall_at_5", "recall_at_10", "mrr", "abstention_precision",
            "abstention_recall", "false_abstention_rate", "false_memory_rate",
            "answer_accuracy", "near_miss_at_1", "stale_first_rate", "newer_first_rate",
            "leaks", "leaked_items")
    out = {key: summary[key] for key in keep}
    out["per_kind"] = {
        kind: {key: row[key] for key in ("n", "recall_at_1", "recall_at_10", "answer_accuracy",
                                         "newer_first_rate", "abstention_recall",
                                         "false_abstention_rate", "leaks")}
        for kind, row in summary["per_kind"].items()
    }
    out["boundary"] = {key: summary["boundary"][key]
                       for key in ("n", "recall_at_10", "abstention_recall", "leaks")}
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    household = load_household(Path(args.data))
    problems = validate(household)
    if problems:
        raise SystemExit("the household data is not well-formed:\n  " + "\n  ".join(problems))
    if args.check:
        kinds = {kind: sum(q.kind == kind for q in household.questions) for kind in KINDS}
        print(f"{household.name}: well-formed; {len(household.lines)} lines,"
              f" {sum(line.fact for line in household.lines)} facts,"
              f" {len(household.questions)} questions {kinds}")
        return {"bench": "household_memory", "check": "ok"}
    embedder = make_embedder(args.embedder)
    config = await configured() if args.model else None
    gateway = None if config is None else Gateway(config)
    try:
        with tempfile.TemporaryDirectory() as folder:
            results, counts = await run_hearth(household, embedder, Path(folder), args.limit)
        by_model: Results = {}
        if gateway is not None:  # a household of its own: the recalls it makes are its own
            with tempfile.TemporaryDirectory() as folder:
                by_model, _ = await run_hearth(household, embedder, Path(folder), args.limit,
                                               gateway)
    finally:
        if gateway is not None:
            await gateway.aclose()
    summary = report(household, results)
    name = "none" if embedder is None else embedder.name
    print(f"household memory: {len(household.questions)} questions"
          f" ({summary['answerable']} answerable, {summary['abstain']} to abstain on,"
          f" {summary['boundary']['n']} across the group/DM line), {counts['lines']} lines,"
          f" {counts['beliefs']} beliefs"
          + (f" ({counts['refused']} fact lines refused)" if counts["refused"] else ""))
    print_table(f"\nhearth recall (embedder {name}, limit {args.limit})", summary)
    timings = [a.ms for a in results.values()]
    print(f"  recall latency p50 {percentile(timings, 0.50):.1f} ms,"
          f" p95 {percentile(timings, 0.95):.1f} ms")
    line: dict[str, Any] = {
        "bench": "household_memory",
        "questions": len(household.questions),
        "answerable": summary["answerable"],
        "abstain": summary["abstain"],
        **headline(summary),
        "p50_ms": round(percentile(timings, 0.50), 2),
        "p95_ms": round(percentile(timings, 0.95), 2),
        "lines": counts["lines"],
        "beliefs": counts["beliefs"],
        "embedder": name,
    }
    if config is not None:
        judged_by = report(household, by_model)
        print_table(f"\nhearth recall, {config.model} judging what it hands over", judged_by)
        spent = [a.ms for a in by_model.values()]
        print(f"  model judge p50 {percentile(spent, 0.50):.0f} ms,"
              f" p95 {percentile(spent, 0.95):.0f} ms")
        line["model"] = {"name": config.model, **headline(judged_by),
                         "p50_ms": round(percentile(spent, 0.50), 1),
                         "p95_ms": round(percentile(spent, 0.95), 1)}
    baseline: Results | None = None
    if args.baseline == "bm25":
        baseline = run_bm25(household, args.bm25_corpus, args.limit)
        base = report(household, baseline)
        print_table(f"\nBM25 baseline (bm25s over the visible {args.bm25_corpus})", base)
        line["baseline"] = {"name": "bm25", "corpus": args.bm25_corpus, **headline(base)}
        if summary["recall_at_10"] is not None and base["recall_at_10"] is not None:
            line["recall_at_10_vs_baseline"] = round(
                summary["recall_at_10"] - base["recall_at_10"], 3)
    if args.misses:
        print_misses(household, "hearth", results, args.limit, embedder)
        if baseline is not None:
            print_misses(household, "bm25", baseline, args.limit)
    line["seconds"] = round(time.perf_counter() - started, 1)
    return line


def arguments() -> argparse.ArgumentParser:
    """The benchmark's options, with their defaults (`bench.memory_quality` runs it with
    them too)."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="e5", choices=["e5", "minilm", "none"])
    parser.add_argument("--baseline", default="bm25", choices=["bm25", "none"],
                        help="rank the same visible lines with plain BM25 too (default)")
    parser.add_argument("--bm25-corpus", default="lines", choices=["lines", "facts"],
                        help="BM25 over every visible line, or the visible fact lines only")
    parser.add_argument("--limit", type=int, default=max(KS),
                        help="how many rows each question may return")
    parser.add_argument("--misses", action="store_true",
                        help="list the questions each system got wrong")
    parser.add_argument("--data", default=str(DATA), help="the household's folder")
    parser.add_argument("--check", action="store_true",
                        help="only check that the data is well-formed")
    parser.add_argument("--model", action="store_true",
                        help="the configured model judges too (OPENAI_BASE_URL, HEARTH_MODEL)")
    return parser


def main() -> None:
    args = arguments().parse_args()
    print(json.dumps(asyncio.run(run(args)), ensure_ascii=False))


if __name__ == "__main__":
    main()
