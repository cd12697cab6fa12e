"""The context assembler: what enters the model's window for one reply, and what does not.

Owns: the surfaces of a prompt (constitution, honesty rule, persona, scenario or bootstrap,
examples, lore, situation, the chat's snapshot, partner model, memories, shelf, summary, affect,
goals, recent turns), their
templates, their token budgets and the overflow policy declared in soul.yaml. `gather` reads
everything through the memory facade with the one context a chat allows (a member's own view in
their DM, the shared view in a group); `compose` is pure, so the same state and the same
`template_version` give the same prompt, byte for byte.

Must not: read memory around the facade, ask a group chat's memory for anyone's private view,
or drop the constitution, the persona, the partner model or the honesty rule.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memory import (
    RECALL_LIMIT,
    AccessContext,
    Activity,
    Belief,
    Found,
    Goal,
    Memory,
    Person,
    Quoted,
    Recalled,
    Role,
    Snapshot,
    Summary,
    Turn,
    Verdict,
    normalize,
    scope_owner,
)
from soul.affect import Affect, decay, elapsed_hours
from soul.files import FULL, Soul, lore_hits
from soul.judge import StructuredModel, judge_all
from soul.tokens import count_tokens

# The templates. Changing any of them (or the soul's budgets and policy) changes
# template_version, so every logged turn says exactly which wording produced it.
TEMPLATES: dict[str, str] = {
    "constitution": "# Who you are (binding, always)\n{text}",
    "honesty": (
        "# Honesty rule\n"
        "Only say you remember something if it is listed under 'What you remember' or "
        "'What you know about {name}'. If it is not there, say plainly that you don't know or "
        "weren't told. What is listed under 'Possibly related' may not answer the message: if "
        "you use it, say you are not sure. Never invent a memory, and keep what you guess "
        "apart from what you know."
    ),
    "group_privacy": (
        "This is the household group. Speak only from what the household shares. Never "
        "mention anything any member told you in private, not even to the member who told you."
    ),
    "persona": "# Your persona\n{text}",
    "persona_edit": "- {text}",
    "scenario": "# Scenario\n{text}",
    "bootstrap": (
        "# Meeting {name} for the first time\nOpen with something like: {cold_open}\n"
        "Over the conversation, without an interview, learn:\n{journey}"
    ),
    "examples": "# How you sound (examples)\n{items}",
    "example": "## {title}\n{text}",
    "lore": "# Household notes\n{items}",
    "lore_entry": "- {title}: {text}",
    "situation": "# Situation\nNow: {time}. Chat: {chat}. Present: {present}. Speaking: {name}.",
    # The chat's snapshot from the last tick: who spoke in it lately, questions no member has
    # followed up, reminders due soon (times in UTC, as the situation's).
    "snapshot": "# Lately in this chat (as of {made})\n{items}",
    "snapshot_around": "- Around in the last day: {names}",
    "snapshot_question": '- Left open: {who} asked {when}: "{text}"',
    "snapshot_reminder": '- Reminder for {who}, due {when} (in {until}): "{text}"',
    "partner": "# What you know about {name}\n{items}",
    "partner_empty": "(nothing yet: ask rather than assume)",
    # Who said it and when, quoted: a bare first-person sentence ("I play bass") reads, to a
    # small model, as something she said about herself.
    "belief": '- {who} on {date}: "{text}" ({age}, confidence {confidence:.2f}{status})',
    # A belief that has stopped holding (superseded, or replaced by a newer word): when.
    "belief_until": ", true until {date}",
    "line": '- On {date} {who} said{where}: "{text}" (their words, not a conclusion)',
    "line_group": " in the group",
    "belief_private": "{name} told you",
    "belief_shared": "The household told you",
    "memories": "# What you remember (relevant to this message)\n{items}",
    "memories_empty": "(nothing relevant)",
    "memories_none": "(nothing that answers it)",
    "related": "# Possibly related (not known to answer it; say you are not sure if you use it)",
    "shelf": (
        "# From the documents on the shelf (may answer this message; what a document says, "
        "not a memory: use only what a passage says, and name the document and the page or "
        "section)\n{items}"
    ),
    "passage": '- {citation}: "{text}"',
    "summary": "# The conversation so far\n{text}",
    "affect": "# Your mood in this chat\n{text}",
    "goals": "# Open goals and promises\n{items}",
    "goal": "- {text}{due}",
    "group_line": "{name}: {text}",
}

NEVER_DROP = ("constitution", "honesty", "persona", "partner")
# Surfaces, in the order they appear in the system message.
ORDER = (
    "constitution", "honesty", "persona", "scenario", "examples", "lore", "situation",
    "snapshot", "partner", "memories", "shelf", "summary", "affect", "goals",
)
PARTNER_LIMIT = 12
SHELF_LIMIT = 3  # passages of documents offered to one reply
SHELF_JUDGED = 5  # passages the model judges, when it does
RECENT_TURNS = 24


@dataclass(frozen=True)
class Intent:
    """One incoming message to answer."""

    speaker: Person
    chat_id: str
    group: bool
    text: str
    now: datetime
    turn_id: int | None = None  # the stored line of `text`, left out of the recent turns
    mood: Affect | None = None  # her mood toward the chat as this turn just moved it


@dataclass(frozen=True)
class Gathered:
    """Everything a reply may draw on, already through the gate."""

    intent: Intent
    present: tuple[str, ...]
    names: dict[str, str]
    memories: tuple[Recalled | Quoted, ...]  # what recall's judge found answers
    related: tuple[Recalled | Quoted, ...]  # what it found related, for a capable model only
    partner: tuple[Belief, ...]
    summary: Summary | None
    goals: tuple[Goal, ...]
    recent: tuple[Turn, ...]
    affect: Affect
    persona_edits: tuple[str, ...]
    introduced: bool
    passages: tuple[Found, ...] = ()  # the shelf's passages that answer the message
    snapshot: Snapshot | None = None  # the chat's, as the last tick made it


@dataclass(frozen=True)
class Prompt:
    messages: tuple[dict[str, str], ...]
    template_version: str
    tokens: dict[str, int]
    belief_ids: tuple[int, ...]
    dropped: tuple[str, ...] = field(default=())
    # The memories the prompt holds, as the turn log keeps them for a member's /why: tier, id,
    # verdict and why (the judge's words carry numbers, never a row's or a question's words).
    memories: tuple[tuple[str, int, str, str], ...] = field(default=())
    # Where her reply ends, when the soul's sampling asks (`stop_at_new_speaker`): a new line
    # opening the way this prompt labels a turn.
    stop: tuple[str, ...] = field(default=())

    @property
    def text(self) -> str:
        return "\n\n".join(m["content"] for m in self.messages)


def template_version(soul: Soul) -> str:
    """A hash of the templates and the policy (budgets, window, reserve, overflow)."""
    policy = soul.manifest.model_dump(
        mode="json", include={"budgets", "window", "reply_reserve", "overflow"}
    )
    body = json.dumps({"templates": TEMPLATES, "policy": policy, "order": ORDER},
                      sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def context_for(intent: Intent, purpose: str) -> AccessContext:
    """The one context a chat allows: the member's own view in a DM, the shared view in a group
    (a member's private fact is never said in front of others, even when they are speaking)."""
    if intent.group:
        return AccessContext.for_group(
            Activity.GROUP_CONVERSATION, purpose, actor=intent.speaker.person_id
        )
    return AccessContext.for_member(intent.speaker.person_id, Activity.DM_CONVERSATION, purpose)


def affect_key(intent: Intent) -> str:
    return f"group:{intent.chat_id}" if intent.group else f"person:{intent.speaker.person_id}"


async def current_affect(memory: Memory, soul: Soul, key: str, now: datetime) -> Affect:
    """Her mood toward this chat now: the stored state decayed toward the baseline."""
    temper = soul.temperament
    baseline = Affect(temper.baseline.valence, temper.baseline.arousal, dict(temper.drives))
    row = await memory.state.affect(key)
    if row is None:
        return baseline
    stored = Affect(row.valence, row.arousal, dict(row.drives))
    since = datetime.fromisoformat(row.updated_at)
    return decay(stored, baseline, temper.half_life_hours, elapsed_hours(since, now))


async def gather(memory: Memory, soul: Soul, intent: Intent,
                 judge: StructuredModel | None = None) -> Gathered:
    """Read what this reply may use, through the facade, with the chat's one context. With a
    `judge` (a capable model), recall's candidates and the shelf's passages are judged by it
    once more, in one call."""
    where = "the household group" if intent.group else "their private chat"
    ctx = context_for(intent, f"reply to {intent.speaker.name} in {where}")
    # Both tiers of her memory, judged: what answers is told as remembered, what is related
    # is shown apart to a model able to hold the difference, never to a small one. A model
    # that judges is given the first of them whatever the signals said (what it finds
    # unrelated, or what stays unrelated when it cannot judge, is not shown). While the
    # question's meaning embeds, the rest of what the reply reads is read, at one trip.
    recalling = asyncio.ensure_future(
        memory.recall.recollect(ctx, intent.text, limit=RECALL_LIMIT,
                                unrelated=judge is not None))
    try:
        async with memory.together(ctx):
            people = await memory.people.list()
            partner = await memory.beliefs.about(ctx, intent.speaker.person_id,
                                                 limit=PARTNER_LIMIT)
            summary = await memory.summaries.get(ctx, intent.chat_id)
            snapshot = await memory.snapshots.get(ctx, intent.chat_id)  # made on the tick
            goals = await memory.goals.open(ctx)
            recent = [
                t for t in await memory.transcript.lines(ctx, chat_id=intent.chat_id,
                                                         limit=RECENT_TURNS + 1)
                if t.turn_id != intent.turn_id
            ][-RECENT_TURNS:]
            affect = (intent.mood if intent.mood is not None
                      else await current_affect(memory, soul, affect_key(intent), intent.now))
            persona_edits = tuple(await memory.state.approved_persona_edits())
            introduced = (intent.group
                          or await memory.state.is_introduced(intent.speaker.person_id))
        names = {p.person_id: p.name for p in people}
        recalled = await recalling
    finally:  # a failed read leaves no recall running behind it
        if not recalling.done():
            recalling.cancel()
    found = [m for m in recalled
             if not (isinstance(m, Quoted) and m.turn.turn_id == intent.turn_id)]
    # The shelf's passages: those its signals tell, or, for the model to judge with the
    # memories, the best few whether told or not.
    passages = await memory.shelf.search(ctx, intent.text,
                                         limit=SHELF_LIMIT if judge is None else SHELF_JUDGED,
                                         told_only=judge is None)
    if judge is not None and (found or passages):  # nothing to ask about: no call
        found, passages = await judge_all(judge, found, passages, question=intent.text,
                                          asker=intent.speaker.name, names=names,
                                          now=intent.now, before=recent)
    passages = [p for p in passages if p.told][:SHELF_LIMIT]
    memories = [m for m in found if m.verdict is Verdict.ANSWERS]
    related = ([m for m in found if m.verdict is Verdict.RELATED]
               if soul.profile == FULL else [])
    present = tuple(sorted(names.values())) if intent.group else (intent.speaker.name,)
    return Gathered(
        intent=intent,
        present=present,
        names=names,
        memories=tuple(memories),
        related=tuple(related),
        passages=tuple(passages),
        partner=tuple(partner),
        summary=summary,
        snapshot=snapshot,
        goals=tuple(goals),
        recent=tuple(recent),
        affect=affect,
        persona_edits=persona_edits,
        introduced=introduced,
    )


async def assemble(memory: Memory, soul: Soul, intent: Intent,
                   judge: StructuredModel | None = None) -> Prompt:
    """Gather through the gate, then compose within the soul's budgets."""
    return compose(soul, await gather(memory, soul, intent, judge))


# --- composing (pure) ---------------------------------------------------------------------------


def _age(then: str, now: datetime) -> str:
    days = (now - datetime.fromisoformat(then)).total_seconds() / 86400
    if days < 1:
        return "learned today"
    if days < 2:
        return "learned yesterday"
    if days < 60:
        return f"learned {int(days)} days ago"
    return f"learned {int(days // 30)} months ago"


def _told_on(then: str, now: datetime) -> str:
    moment = datetime.fromisoformat(then)
    day = f"{moment.day} {moment.strftime('%B')}"
    return day if moment.year == now.year else f"{day} {moment.year}"


def _belief_line(belief: Belief, now: datetime, names: dict[str, str]) -> str:
    status = "" if belief.status == "active" else f", {belief.status}"
    if belief.valid_to is not None and belief.valid_to <= now.isoformat():
        status = TEMPLATES["belief_until"].format(date=_told_on(belief.valid_to, now))
    owner = scope_owner(belief.scope)
    who = (TEMPLATES["belief_shared"] if owner is None
           else TEMPLATES["belief_private"].format(name=names.get(owner, "A member")))
    return TEMPLATES["belief"].format(
        who=who, date=_told_on(belief.created_at, now), text=belief.proposition,
        age=_age(belief.updated_at, now), confidence=belief.confidence, status=status,
    )


def _quoted_line(turn: Turn, now: datetime, names: dict[str, str]) -> str:
    who = names.get(turn.speaker_id or "", "A member")
    where = TEMPLATES["line_group"] if scope_owner(turn.scope) is None else ""
    return TEMPLATES["line"].format(date=_told_on(turn.at, now), who=who, where=where,
                                    text=" ".join(turn.text.split()))


def _unprinted(beliefs: Sequence[Belief], printed: Sequence[Belief]) -> list[Belief]:
    """Beliefs not already in the prompt: one belief, or the same words kept in two scopes, is
    printed under one heading only (the first it reaches: what is relevant to the message)."""
    seen_ids = {b.belief_id for b in printed}
    seen_words = {normalize(b.proposition) for b in printed}
    out: list[Belief] = []
    for belief in beliefs:
        words = normalize(belief.proposition)
        if belief.belief_id in seen_ids or words in seen_words:
            continue
        seen_ids.add(belief.belief_id)
        seen_words.add(words)
        out.append(belief)
    return out


# Token counts add up across whitespace: the counter's tokenizer splits text at whitespace
# before it cuts words into pieces, so no token spans two words. A text joined from parts with
# whitespace costs the sum of its parts, each counted once and remembered (`count_tokens`).


def _clip(text: str, budget: int) -> str:
    """Cut text to the budget at a word boundary (for prose surfaces that may shrink)."""
    if count_tokens(text) <= budget:
        return text
    room = budget - count_tokens("…")
    words = text.split()
    kept, spent = 0, 0
    for word in words:  # the longest prefix of words that fits, with the ellipsis
        spent += count_tokens(word)
        if spent > room:
            break
        kept += 1
    return " ".join(words[:kept]) + " …" if kept else ""


@dataclass
class _Surface:
    name: str
    header: str  # the template with {items} left to fill, or the whole text
    items: list[str]
    ids: list[int | None] = field(default_factory=list)  # belief ids (None: a line), memories
    placeholder: str = ""
    _counted: tuple[tuple[str, str, tuple[str, ...]], int] | None = None

    def render(self) -> str:
        if "{items}" not in self.header:
            return self.header
        body = "\n".join(self.items) if self.items else self.placeholder
        return self.header.replace("{items}", body) if body else ""

    def tokens(self) -> int:
        """The rendered surface's tokens, counted again only when it changed: the overflow
        loop asks every surface after each drop."""
        key = (self.header, self.placeholder, tuple(self.items))
        if self._counted is None or self._counted[0] != key:
            self._counted = (key, self._count())
        return self._counted[1]

    def _count(self) -> int:
        """The rendered surface's tokens: its frame's and each item's, summed, when the items
        stand between whitespace (they are joined by newlines); otherwise the whole render."""
        before, found, after = self.header.partition("{items}")
        if (not found or self.items in ([], [""]) or (before and not before[-1].isspace())
                or (after and not after[0].isspace()) or "{items}" in after):
            return count_tokens(self.render())
        return (count_tokens(before) + count_tokens(after)
                + sum(count_tokens(item) for item in self.items))

    def drop_last(self) -> None:
        """Drop the lowest-ranked item (and its belief id, for memories)."""
        self.items.pop()
        if self.ids:
            self.ids.pop()


def _fit_items(surface: _Surface, budget: int) -> list[str]:
    """Keep the longest prefix of items, in rank order, whose rendered surface stays within
    its budget (fewer items never render longer, so a binary search finds it)."""
    items, ids = surface.items, surface.ids
    if not items or surface.tokens() <= budget:
        return []
    low, high = 0, len(items) - 1  # `high` items still overflow at most; `low` is the floor
    while low < high:
        mid = (low + high + 1) // 2
        surface.items = items[:mid]
        if surface.tokens() <= budget:
            low = mid
        else:
            high = mid - 1
    surface.items = items[:low]
    if ids:
        surface.ids = ids[:low]
    return [surface.name] * (len(items) - low)


def compose(soul: Soul, state: Gathered) -> Prompt:
    """One prompt from gathered state; deterministic and within the declared budgets."""
    budgets = soul.manifest.budgets
    intent, now = state.intent, state.intent.now
    name = intent.speaker.name
    persona = soul.persona + "".join(
        "\n" + TEMPLATES["persona_edit"].format(text=edit) for edit in state.persona_edits
    )
    honesty = TEMPLATES["honesty"].format(name=name)
    if intent.group:
        honesty += "\n" + TEMPLATES["group_privacy"]
    if state.introduced:
        scenario_text = soul.scenario
    else:
        journey = "\n".join(f"{i}. {beat}" for i, beat in enumerate(soul.journey, start=1))
        scenario_text = TEMPLATES["bootstrap"].format(
            name=name, cold_open=soul.cold_open.replace("{name}", name), journey=journey
        )
    chat = "the household group" if intent.group else f"a private chat with {name}"
    lore = lore_hits(soul, intent.text)
    recalled = _unprinted([r.belief for r in state.memories if isinstance(r, Recalled)], [])
    # What she concluded first, then what was said: each in recall's order; then, apart, what
    # is only related. Each entry: its line, its belief id (None: a line or a heading) and what
    # the turn log keeps of it (None: a heading).
    remembered = _memory_items(state, recalled, now)
    surfaces = {
        "constitution": _Surface("constitution",
                                 TEMPLATES["constitution"].format(text=soul.constitution), []),
        "honesty": _Surface("honesty", honesty, []),
        "persona": _Surface("persona", TEMPLATES["persona"].format(text=persona), []),
        "scenario": _Surface("scenario", TEMPLATES["scenario"].format(
            text=_clip(scenario_text, budgets.scenario - 4)), []),
        "examples": _Surface("examples", TEMPLATES["examples"], [
            TEMPLATES["example"].format(
                title=e.title,
                text=e.text.replace("{{char}}", soul.manifest.name).replace("{{user}}", name),
            )
            for e in soul.examples
        ]),
        "lore": _Surface("lore", TEMPLATES["lore"], [
            TEMPLATES["lore_entry"].format(title=e.title, text=e.text) for e in lore
        ]),
        "situation": _Surface("situation", TEMPLATES["situation"].format(
            time=now.strftime("%A %d %B %Y, %H:%M UTC"), chat=chat,
            present=", ".join(state.present), name=name), []),
        "snapshot": _snapshot_surface(state),
        "partner": _Surface("partner", TEMPLATES["partner"].replace("{name}", name), [],
                            placeholder=TEMPLATES["partner_empty"]),
        "memories": _Surface("memories", TEMPLATES["memories"], [
            line for line, _, _ in remembered
        ], ids=[belief_id for _, belief_id, _ in remembered],
            placeholder=TEMPLATES["memories_empty"]),
        "shelf": _Surface("shelf", TEMPLATES["shelf"], [
            TEMPLATES["passage"].format(citation=f.citation, text=" ".join(f.text.split()))
            for f in state.passages
        ]),
        "summary": _Surface("summary", TEMPLATES["summary"].format(
            text=_clip(state.summary.text, budgets.summary - 8)) if state.summary else "", []),
        "affect": _Surface("affect", TEMPLATES["affect"].format(text=state.affect.describe()),
                           []),
        "goals": _Surface("goals", TEMPLATES["goals"], [
            TEMPLATES["goal"].format(text=g.text, due=f" (due {g.due})" if g.due else "")
            for g in state.goals
        ]),
    }
    dropped: list[str] = []
    for key in ("examples", "lore", "snapshot", "memories", "shelf", "partner", "goals"):
        if key == "partner":  # what "What you remember" kept is not printed a second time
            kept = recalled[: len(surfaces["memories"].items)]  # beliefs come first
            surfaces[key].items = [_belief_line(b, now, state.names)
                                   for b in _unprinted(state.partner, kept)]
        dropped += _fit_items(surfaces[key], getattr(budgets, key))

    turns = _turn_messages(state)
    while turns and sum(t[1] for t in turns) > budgets.recent_turns:
        turns.pop(0)
        dropped.append("recent_turns")
    user = _user_message(state)
    window = soul.manifest.window - soul.manifest.reply_reserve

    def total() -> int:
        return (sum(s.tokens() for s in surfaces.values()) + sum(t[1] for t in turns)
                + count_tokens(user["content"]))

    # The declared overflow order decides who loses; never the order of assembly.
    # A surface the soul predates goes where it costs least: the snapshot (a picture of the
    # chat, not an answer) before what the soul declares, the shelf after it.
    declared = soul.manifest.overflow
    named = (*declared.drop_order, *declared.never_drop)
    first = [k for k in ("snapshot",) if k not in named]
    undeclared = [k for k in ("shelf",) if k not in named]
    for key in (*first, *declared.drop_order, *undeclared):
        surface = surfaces[key]
        while total() > window and surface.items:
            surface.drop_last()
            dropped.append(key)
        if total() > window and key in ("examples", "lore"):
            surface.header = ""
    while total() > window and turns:
        turns.pop(0)
        dropped.append("recent_turns")

    _no_dangling_heading(surfaces["memories"])
    system = "\n\n".join(text for key in ORDER if (text := surfaces[key].render()))
    tokens = {key: surfaces[key].tokens() for key in ORDER}
    tokens["recent_turns"] = sum(t[1] for t in turns)
    tokens["message"] = count_tokens(user["content"])
    messages = ({"role": "system", "content": system}, *(t[0] for t in turns), user)
    return Prompt(
        messages=tuple(messages),
        template_version=template_version(soul),
        tokens=tokens,
        belief_ids=tuple(i for i in surfaces["memories"].ids if i is not None),
        dropped=tuple(dropped),
        memories=tuple(used for _, _, used in remembered[: len(surfaces["memories"].items)]
                       if used is not None),
        stop=_speaker_stops(soul, state),
    )


def _moment(at: str) -> str:
    return datetime.fromisoformat(at).strftime("%A %H:%M UTC")


def _until(due: str, now: datetime) -> str:
    minutes = max(0, int((datetime.fromisoformat(due) - now).total_seconds() // 60))
    if minutes < 60:
        return f"{minutes} minutes"
    hours = minutes // 60
    return f"{hours} hour{'s' if hours != 1 else ''}"


def _snapshot_surface(state: Gathered) -> _Surface:
    """The chat's snapshot: who has been around (when anyone besides the speaker was), open
    questions newest first, then reminders still ahead, soonest first (the goals surface lists
    them too, so they are the first to go when the window is full)."""
    snapshot, now = state.snapshot, state.intent.now
    if snapshot is None:
        return _Surface("snapshot", "", [])
    items: list[str] = []
    around = [state.names[p] for p in snapshot.around if p in state.names]
    if any(n != state.intent.speaker.name for n in around):
        items.append(TEMPLATES["snapshot_around"].format(names=", ".join(around)))
    items += [TEMPLATES["snapshot_question"].format(
        who=state.names.get(q.person_id or "", "A member"), when=_moment(q.at),
        text=q.text) for q in snapshot.questions]
    items += [TEMPLATES["snapshot_reminder"].format(
        who=state.names.get(r.person_id or "", "a member"), when=_moment(r.at),
        until=_until(r.at, now), text=r.text)
        for r in snapshot.reminders if datetime.fromisoformat(r.at) >= now]
    return _Surface("snapshot", TEMPLATES["snapshot"].replace(
        "{made}", _moment(snapshot.made_at)), items)


MemoryItem = tuple[str, int | None, tuple[str, int, str, str] | None]


def _memory_items(state: Gathered, recalled: Sequence[Belief], now: datetime) -> list[MemoryItem]:
    """The memories surface's items: what answers (beliefs, then lines), then under their own
    heading what is only related; a belief printed once, whichever list reaches it first."""
    def kept(item: Recalled | Quoted) -> tuple[str, int, str, str]:
        if isinstance(item, Recalled):
            return ("beliefs", item.belief.belief_id, item.verdict.value, item.why)
        return ("turns", item.turn.turn_id, item.verdict.value, item.why)

    answers = {m.belief.belief_id: m for m in state.memories if isinstance(m, Recalled)}
    out: list[MemoryItem] = [(_belief_line(b, now, state.names), b.belief_id,
                              kept(answers[b.belief_id])) for b in recalled]
    out += [(_quoted_line(q.turn, now, state.names), None, kept(q))
            for q in state.memories if isinstance(q, Quoted)]
    related_by_id = {m.belief.belief_id: m for m in state.related if isinstance(m, Recalled)}
    related: list[MemoryItem] = [
        (_belief_line(b, now, state.names), b.belief_id, kept(related_by_id[b.belief_id]))
        for b in _unprinted([m.belief for m in state.related if isinstance(m, Recalled)],
                            recalled)]
    related += [(_quoted_line(q.turn, now, state.names), None, kept(q))
                for q in state.related if isinstance(q, Quoted)]
    if related:
        if not out:
            out.append((TEMPLATES["memories_none"], None, None))
        out.append((TEMPLATES["related"], None, None))
        out += related
    return out


def _no_dangling_heading(surface: _Surface) -> None:
    """A heading whose items were all dropped goes too, and a lone "nothing that answers it"."""
    while surface.items and surface.items[-1] in (TEMPLATES["related"],
                                                  TEMPLATES["memories_none"]):
        surface.drop_last()


def _speaker_stops(soul: Soul, state: Gathered) -> tuple[str, ...]:
    """A new line opening as a turn is labelled here (her name and the members', as the
    examples and the group's lines write them): a small model that gets there has begun to
    write the conversation's next turns itself."""
    if not soul.manifest.sampling.stop_at_new_speaker:
        return ()
    names = (soul.manifest.name, state.intent.speaker.name, *state.present)
    labels = (TEMPLATES["group_line"].format(name=n, text="").rstrip() for n in names)
    return tuple(dict.fromkeys(f"\n{label}" for label in labels))


def _turn_messages(state: Gathered) -> list[tuple[dict[str, str], int]]:
    out: list[tuple[dict[str, str], int]] = []
    for turn in state.recent:
        if turn.role == Role.ASSISTANT:
            message = {"role": "assistant", "content": turn.text}
        else:
            who = state.names.get(turn.speaker_id or "", "someone")
            text = (TEMPLATES["group_line"].format(name=who, text=turn.text)
                    if state.intent.group else turn.text)
            message = {"role": "user", "content": text}
        out.append((message, count_tokens(message["content"])))
    return out


def _user_message(state: Gathered) -> dict[str, str]:
    intent = state.intent
    if intent.group:
        return {"role": "user", "content": TEMPLATES["group_line"].format(
            name=intent.speaker.name, text=intent.text)}
    return {"role": "user", "content": intent.text}
