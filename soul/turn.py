"""One conversational turn: transcript in, assemble, model, transcript out.

Owns: the order of a turn and what happens when the model fails (an honest short reply; the
member's line is already stored, so nothing is lost and the tick catches up later). Also the
small per-turn side effects: goals from "remind me to ..." and her own promises, her mood, the
turn log, and retiring the bootstrap once the first exchange is stored. With a reminder desk
(`soul.reminders.Desk`), a message asking for reminders is answered by the desk's one-line
confirmation (or its one question about when) instead of the model, and her own "I'll remind
you ..." with a time becomes a reminder she started, noted at the end of her reply.
Must not: read memory except through the facade (via the assembler), or echo a model error.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

from memory import Delivery, HearthError, Memory, Person, Role, chat_scope, dm_chat, group_chat
from soul.affect import Affect, apply_event, appraise
from soul.assembler import Intent, Prompt, affect_key, assemble, context_for, current_affect
from soul.files import Soul
from soul.goals import promised_goals, requested_goals
from soul.judge import wanted
from soul.model import Gateway
from soul.reminders import Desk

log = logging.getLogger("hearth.turn")

# The turn log's name for a reply the reminder desk wrote (no prompt, no model).
DESK_VERSION = "reminder-desk-1"

FALLBACK_REPLY = (
    "I'm sorry, I can't think straight just now (my thinking engine isn't answering). "
    "I've kept what you said and I'll catch up as soon as I can."
)


class ReplyModel(Protocol):
    async def reply(
        self, messages: list[dict[str, str]], *, max_tokens: int = ..., temperature: float = ...,
        stop: Sequence[str] = ...,
    ) -> str: ...


@dataclass(frozen=True)
class Reply:
    text: str
    prompt: Prompt
    user_turn_id: int
    reply_turn_id: int | None  # None for the fallback, which is not kept as something she said
    fallback: bool
    reminders: bool = False  # reminders were made or changed: the lane looks again


def chat_id_for(person: Person, *, group: bool) -> str:
    """The chat a command-line conversation stands for (`memory.dm_chat`, `memory.group_chat`)."""
    return group_chat() if group else dm_chat(person)


async def respond(
    memory: Memory,
    soul: Soul,
    model: ReplyModel,
    *,
    speaker: Person,
    chat_id: str,
    group: bool,
    text: str,
    now: datetime,
    delivery: Delivery | None = None,
    desk: Desk | None = None,
    telegram_chat: int | None = None,
) -> Reply:
    """Answer one message from a member, in their DM or in the household group.

    With a `delivery` (a line that came from Telegram), the reply is queued for it and the
    update completed in the same transaction that stores the reply; a turn replayed after a
    crash finds the member's line already stored and does not store it, or its goals, twice.
    With a `desk`, reminders are made as well; `telegram_chat` is where they go on Telegram
    (the member's DM, or the household group), None for the terminal's own group."""
    scope = chat_scope(group=group, member_id=speaker.person_id)
    # The line and the mood it moves are stored at one trip to the database.
    async with memory.at_once():
        user_turn, fresh = await memory.transcript.receive(
            chat_id=chat_id, speaker_id=speaker.person_id, role=Role.USER, scope=scope,
            text=text, source_update=delivery.update_id if delivery is not None else None,
            file_later=True,
        )
        intent = Intent(speaker=speaker, chat_id=chat_id, group=group, text=text, now=now,
                        turn_id=user_turn)
        # Her recall's question embeds while the turn does what comes before it.
        memory.recall.foresee(context_for(intent, "a reply"), text)
        if fresh:  # the reply reads her mood as it just moved, not again from the store
            intent = replace(intent, mood=await _feel(memory, soul, intent))
    if desk is not None:
        # Made again on a replayed turn, idempotently: the reminders of this line come back.
        taken = await desk.take(memory, speaker=speaker, chat_id=chat_id, scope=scope,
                                group=group, text=text, now=now, source_turn_id=user_turn,
                                telegram_chat=telegram_chat)
        if taken is not None:
            reply_turn = await memory.transcript.record_reply(
                chat_id=chat_id, scope=scope, text=taken.text, template_version=DESK_VERSION,
                tokens={}, belief_ids=(), delivery=delivery,
            )
            prompt = Prompt(messages=(), template_version=DESK_VERSION, tokens={},
                            belief_ids=())
            return Reply(taken.text, prompt, user_turn, reply_turn, False, reminders=True)
    elif fresh:
        for goal in requested_goals(text):
            await memory.goals.add(speaker.person_id, goal, scope=scope, provenance="requested",
                                  source_turn_id=user_turn)
    judge = model if isinstance(model, Gateway) and wanted(soul, model) else None
    assembling = time.monotonic()
    prompt = await assemble(memory, soul, intent, judge=judge)
    fallback = False
    try:
        if judge is not None:
            # The judge's wait comes out of the member's: a model that hangs while it judges
            # keeps her no longer than one that hangs while it replies (at least half of a
            # reply's own time is left to the reply).
            left = judge.reply_deadline_s - (time.monotonic() - assembling)
            answer = await judge.reply(list(prompt.messages),
                                       max_tokens=soul.manifest.reply_reserve, stop=prompt.stop,
                                       within_s=max(judge.reply_deadline_s / 2, left))
        elif prompt.stop:  # only a profile that asks for stops passes any
            answer = await model.reply(list(prompt.messages),
                                       max_tokens=soul.manifest.reply_reserve, stop=prompt.stop)
        else:
            answer = await model.reply(list(prompt.messages),
                                       max_tokens=soul.manifest.reply_reserve)
    except HearthError as exc:
        # Errors go to the log, never into the chat; the member's line is already stored.
        log.warning("model failed for turn %s: %s", user_turn, exc)
        answer, fallback = FALLBACK_REPLY, True
    if fallback:
        # The apology is not kept as something she said: in later prompts a small model would
        # copy it, and the exchange did not happen. The member's line stays for the tick.
        if delivery is not None:
            await memory.outbox.queue(delivery, answer)
        return Reply(answer, prompt, user_turn, None, fallback)
    kept: list[str] = []
    if desk is not None:
        promises, noted = await desk.promise(
            memory, speaker=speaker, chat_id=chat_id, scope=scope, reply=answer, now=now,
            source_turn_id=user_turn, telegram_chat=telegram_chat,
        )
        kept = [p.what.casefold() for p in promises]
        if noted:
            answer = "\n".join([answer, *noted])
    # Her reply and the end of a first meeting commit together.
    async with memory.at_once():
        reply_turn = await memory.transcript.record_reply(
            chat_id=chat_id, scope=scope, text=answer, template_version=prompt.template_version,
            tokens=prompt.tokens, belief_ids=prompt.belief_ids, delivery=delivery,
            memories=prompt.memories,
        )
        if not group:
            await memory.state.retire_bootstrap(speaker.person_id)
    # A goal's class may be read by meaning (an embedding): never while the database is held.
    for goal in promised_goals(answer):
        if kept and goal.casefold().startswith("remind you"):
            continue  # kept as a reminder she started, with its goal
        await memory.goals.add(speaker.person_id, goal, scope=scope, provenance="promised",
                              source_turn_id=reply_turn)
    return Reply(answer, prompt, user_turn, reply_turn, fallback, reminders=bool(kept))


async def _feel(memory: Memory, soul: Soul, intent: Intent) -> Affect:
    """Her mood toward this chat: decayed to now, then nudged (bounded) by the message."""
    key = affect_key(intent)
    state = await current_affect(memory, soul, key, intent.now)
    d_valence, d_arousal = appraise(intent.text)
    moved = apply_event(state, d_valence, d_arousal, soul.temperament.max_delta)
    await memory.state.save_affect(key, moved.valence, moved.arousal, moved.drives,
                                   intent.now.isoformat())
    return moved
