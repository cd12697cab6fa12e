"""The model judges what she recalled, when it can: through the real gateway, over only what the
reader may see, and the signal judge's verdicts stand whenever it cannot answer."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory import Memory, Quoted, Role, Verdict, dm_chat, private_scope
from soul.assembler import Intent, context_for, gather
from soul.files import FULL, SMALL, load_soul
from soul.judge import Judged, judge, wanted
from soul.model import Gateway, ModelConfig
from tests.helpers import HashEmbedder, TestClock

NOW = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def answering(verdict: str, seen: list[str]) -> httpx.MockTransport:
    """A model that judges every memory it is shown `verdict`, keeping what it was sent."""
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        text = "\n".join(m["content"] for m in body["messages"])
        seen.append(text)
        refs = re.findall(r"^(m\d+): ", text, flags=re.MULTILINE)
        answer = {"verdicts": [{"ref": r, "verdict": verdict} for r in refs]}
        return httpx.Response(200, json={
            "id": "1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": json.dumps(answer)}}]})
    return httpx.MockTransport(handler)


def gateway(transport: httpx.MockTransport) -> Gateway:
    config = ModelConfig(base_url="http://model.test/v1", api_key="k", model="m", timeout_s=2.0,
                         attempts=1)
    return Gateway(config, http_client=httpx.AsyncClient(transport=transport))


async def household(tmp_path: Path) -> tuple[Memory, Any, Any]:
    clock = TestClock(NOW)
    memory = await Memory.open(tmp_path / "h.db", embedder=HashEmbedder(), create=True,
                               clock=clock)
    bob = await memory.people.add("Bob", telegram_id=2, owner=True)
    alice = await memory.people.add("Alice", telegram_id=3)
    for person, text in ((alice, "My passport expires in November, passport office booked"),
                         (bob, "My passport expires in August, passport renewal form")):
        await memory.transcript.append(chat_id=dm_chat(person), speaker_id=person.person_id,
                                       role=Role.USER, scope=private_scope(person.person_id),
                                       text=text)
    return memory, bob, alice


def intent(person: Any, text: str) -> Intent:
    return Intent(speaker=person, chat_id=dm_chat(person), group=False, text=text, now=NOW)


async def test_the_model_judge_is_sent_only_what_the_reader_may_see_and_its_verdicts_apply(
    tmp_path: Path,
) -> None:
    memory, bob, _ = await household(tmp_path)
    seen: list[str] = []
    soul = load_soul(None, profile=FULL)
    try:
        async with gateway(answering("answers", seen)) as model:
            state = await gather(memory, soul, intent(bob, "When does my passport expire?"),
                                 judge=model)
    finally:
        await memory.close()
    assert len(seen) == 1  # one structured call per turn
    assert "August" in seen[0]
    assert "November" not in seen[0]  # Alice's private line is never shown to the model
    told = [m for m in state.memories if isinstance(m, Quoted)]
    assert [m.turn.text for m in told] == ["My passport expires in August, passport renewal form"]
    assert all(m.verdict is Verdict.ANSWERS and "as the model judged it" in m.why for m in told)


async def test_the_model_judge_sees_the_chats_last_lines_so_a_short_follow_up_is_understood(
    tmp_path: Path,
) -> None:
    memory, bob, alice = await household(tmp_path)
    chat, scope = dm_chat(bob), private_scope(bob.person_id)
    await memory.transcript.append(chat_id=dm_chat(alice), speaker_id=alice.person_id,
                                   role=Role.USER, scope=private_scope(alice.person_id),
                                   text="Alice's own chat: the spare key is under the blue pot")
    for role, speaker, text in ((Role.USER, bob.person_id, "I need to renew my passport soon"),
                                (Role.ASSISTANT, None, "Happy to help with that."),
                                (Role.USER, bob.person_id, "Remind me what the form is called")):
        await memory.transcript.append(chat_id=chat, speaker_id=speaker, role=role,
                                       scope=scope, text=text)
    seen: list[str] = []
    soul = load_soul(None, profile=FULL)
    try:
        async with gateway(answering("answers", seen)) as model:
            await gather(memory, soul, intent(bob, "and when does it run out?"), judge=model)
    finally:
        await memory.close()
    assert len(seen) == 1
    before, message = seen[0].split("Bob's message: ")
    assert "Bob: I need to renew my passport soon" in before
    assert "she (the companion): Happy to help with that." in before
    assert "Bob: Remind me what the form is called" in before
    assert message.startswith("and when does it run out?")
    assert "blue pot" not in seen[0]  # another member's chat is never shown


async def test_an_answer_that_does_not_fit_the_schema_leaves_the_signal_judges_verdicts(
    tmp_path: Path,
) -> None:
    memory, bob, _ = await household(tmp_path)
    soul = load_soul(None, profile=FULL)

    def nonsense(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={
            "id": "1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "I think m1 answers"}}]})

    question = "When does my passport expire?"
    try:
        ctx_items = await memory.recall.recollect(
            context_for(
                intent(bob, question), "a test"), question)
        async with gateway(httpx.MockTransport(nonsense)) as model:
            state = await gather(memory, soul, intent(bob, question), judge=model)
    finally:
        await memory.close()
    signal = [(type(m), m.verdict) for m in ctx_items if m.verdict is Verdict.ANSWERS]
    assert [(type(m), m.verdict) for m in state.memories] == signal
    assert all("as the model judged it" not in m.why for m in state.memories)


async def test_a_memory_the_signals_found_unrelated_is_told_when_the_model_says_it_answers(
    tmp_path: Path,
) -> None:
    memory, bob, _ = await household(tmp_path)
    for line in ("The engineer comes on Thursday at nine for the boiler",
                 "Heating oil is cheaper in the summer, fix the tank gauge",
                 "Someone is coming to read the heating meter next week",
                 "The cat knocked a mug off the shelf again",
                 "Ordered new wellies for the allotment",
                 "The choir meets in the church hall on Mondays"):
        await memory.transcript.append(chat_id=dm_chat(bob), speaker_id=bob.person_id,
                                       role=Role.USER, scope=private_scope(bob.person_id),
                                       text=line)
    question = "When is someone coming to fix the heating?"
    soul = load_soul(None, profile=FULL)
    try:
        signals = await memory.recall.recollect(context_for(intent(bob, question), "a test"),
                                                question, unrelated=True)
        seen: list[str] = []
        async with gateway(answering("answers", seen)) as model:
            judged = await gather(memory, soul, intent(bob, question), judge=model)
        async with gateway(answering("unrelated", [])) as model:
            refused = await gather(memory, soul, intent(bob, question), judge=model)
        unjudged = await gather(memory, soul, intent(bob, question))
    finally:
        await memory.close()
    # What the signals alone find unrelated is told to no one without a model that reads it;
    # a model that judges is given it, and its verdict stands.
    unrelated = [m.turn.text for m in signals
                 if isinstance(m, Quoted) and m.verdict is Verdict.UNRELATED]
    assert unrelated
    shown = [m.turn.text for m in (*unjudged.memories, *unjudged.related)
             if isinstance(m, Quoted)]
    assert not set(unrelated) & set(shown)
    assert all(text in seen[0] for text in unrelated)
    told = [m.turn.text for m in judged.memories if isinstance(m, Quoted)]
    assert set(unrelated) <= set(told)
    assert not refused.memories and not refused.related


class Slow:
    """A model that takes longer than a member may wait."""

    async def extract(self, messages: list[dict[str, str]], schema: type[Judged], *,
                      max_tokens: int = 0, temperature: float = 0.0) -> Judged:
        await asyncio.sleep(5)
        raise AssertionError("not reached")


async def test_a_model_too_slow_to_judge_leaves_the_items_as_they_were(tmp_path: Path) -> None:
    memory, bob, _ = await household(tmp_path)
    try:
        items = await memory.recall.recollect(
            context_for(
                intent(bob, "passport"), "a test"), "When does my passport expire?",
            unrelated=True)
    finally:
        await memory.close()
    assert items
    kept = await judge(Slow(), items, question="When does my passport expire?", asker="Bob",
                       names={}, now=NOW, timeout_s=0.05)
    assert kept == items


class JudgesOnlyTheFirst:
    """A model whose answer leaves out every memory but the first, which it finds unrelated."""

    async def extract(self, messages: list[dict[str, str]], schema: type[Judged], *,
                      max_tokens: int = 0, temperature: float = 0.0) -> Judged:
        return schema.model_validate({"verdicts": [{"ref": "m1", "verdict": "unrelated"}]})


async def test_a_memory_the_model_leaves_out_keeps_the_signals_verdict_and_the_rest_take_its(
        tmp_path: Path) -> None:
    memory, bob, _ = await household(tmp_path)
    await memory.transcript.append(chat_id=dm_chat(bob), speaker_id=bob.person_id,
                                   role=Role.USER, scope=private_scope(bob.person_id),
                                   text="The passport photos are in the kitchen drawer")
    question = "When does my passport expire?"
    try:
        items = await memory.recall.recollect(context_for(intent(bob, "passport"), "a test"),
                                              question, unrelated=True)
    finally:
        await memory.close()
    assert len(items) >= 2
    judged = await judge(JudgesOnlyTheFirst(), items, question=question, asker="Bob", names={},
                         now=NOW)
    first, rest = items[0], items[1:]
    assert len(judged) == len(items)
    (model_judged,) = [m for m in judged if "as the model judged it" in m.why]
    assert model_judged.verdict is Verdict.UNRELATED
    assert model_judged.model_copy(update={"verdict": first.verdict, "why": first.why}) == first
    # The memories the answer left out are as the signals judged them, verdict and why.
    assert sorted((m for m in judged if m is not model_judged), key=items.index) == rest


@pytest.mark.parametrize(("profile", "gateway_model", "expected"), [
    (FULL, True, True),
    (FULL, False, False),  # anything but the gateway to a configured model
    (SMALL, True, False),  # the embedded model's profile never judges
])
async def test_only_the_full_profile_over_the_gateway_judges(profile: str, gateway_model: bool,
                                                              expected: bool) -> None:
    async with gateway(answering("answers", [])) as model:
        assert wanted(load_soul(None, profile=profile),
                      model if gateway_model else Slow()) is expected


def judging(verdicts: dict[str, str], seen: list[str]) -> httpx.MockTransport:
    """A model that judges each ref it is shown by the first word of `verdicts` its line holds
    (else "unrelated"), keeping what it was sent."""
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        text = "\n".join(m["content"] for m in body["messages"])
        seen.append(text)
        answer = {"verdicts": [
            {"ref": ref, "verdict": next((v for w, v in verdicts.items() if w in line),
                                         "unrelated")}
            for ref, line in re.findall(r"^([md]\d+): (.*)$", text, flags=re.MULTILINE)]}
        return httpx.Response(200, json={
            "id": "1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": json.dumps(answer)}}]})
    return httpx.MockTransport(handler)


async def test_the_model_judges_the_shelfs_passages_in_the_same_call_and_only_answers_are_shown(
    tmp_path: Path,
) -> None:
    memory, bob, _ = await household(tmp_path)
    manual = ("# Passport office\n\n## Renewals\n\nA renewal takes three weeks; bring the old "
              "passport and two photos.\n\n## Opening hours\n\nThe office opens at nine on "
              "weekdays and is closed on Saturdays.\n")
    await memory.shelf.put(bob.person_id, "passport-office.md", manual.encode())
    seen: list[str] = []
    soul = load_soul(None, profile=FULL)
    try:
        async with gateway(judging({"three weeks": "answers", "August": "answers"},
                                   seen)) as model:
            state = await gather(memory, soul, intent(bob, "How long does a passport renewal "
                                                           "take, mine expires in August?"),
                                 judge=model)
    finally:
        await memory.close()
    assert len(seen) == 1  # memories and passages in one call
    assert "d1: the document" in seen[0] and "passport-office.md" in seen[0]
    assert [p.citation for p in state.passages] == ["passport-office.md, Passport office / "
                                                    "Renewals"]
    assert "as the model judged it" in state.passages[0].why
