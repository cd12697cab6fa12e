"""Faults, end to end: the model failing or hanging, the bot killed in the middle of a tick, and
a burst of messages. Members must always get an honest answer, and nothing may be lost or
stored twice."""

from __future__ import annotations

import asyncio
import signal
import time
from collections import Counter

from memory import AccessContext, Activity, Memory, Role, Turn
from tests.e2e.household import (
    ANA,
    BEN,
    FALLBACK_WORDS,
    GROUP,
    GROUP_MARKER,
    MEMBERS,
    MESSAGES_PER_BATCH,
    OLGA,
    HangingConsolidation,
    Launcher,
    Member,
    Telegram,
    consolidations,
    dm_script,
    eventually,
    filler,
    group_script,
    interleave,
    make_household,
    prompt_text,
    send_all,
    text_of,
    wait_replies,
)

ANA_FACT = f"my secret nickname is Zephyrine {ANA.marker}"
TEA_FACT = f"my favourite tea is rooibos {ANA.marker}"
GAZEBO_FACT = f"I am the one who fixes the gazebo {GROUP_MARKER}"
# How long a member may wait for the honest answer when the model fails at once (503s): the
# bot's retries with backoff take about a second.
FAILING_REPLY_DEADLINE_S = 10.0
# ...and when the model hangs: one model request's timeout (30 s by default) and a little slack;
# a person is waiting, so retrying a request that already timed out is no use to her.
HANGING_REPLY_DEADLINE_S = 40.0
# How long the test keeps waiting past that deadline, to report how late the answer was.
HANGING_PATIENCE_S = 100.0


async def known_to(tg: Telegram, member: Member, *words: str) -> bool:
    reply = text_of(await tg.say(member.user, member.dm, "/me")).lower()
    return all(w.lower() in reply for w in words)


async def kept_lines(hearth: Launcher, name: str) -> list[Turn]:
    """Every transcript line `name` may see (their DM and the group), after the bot stopped."""
    memory = await Memory.open(hearth.db)
    try:
        person = next(p for p in await memory.people.list() if p.name == name)
        ctx = AccessContext.for_member(person.person_id, Activity.MEMBER_INSPECT, "e2e check")
        return await memory.transcript.lines(ctx, limit=100_000)
    finally:
        await memory.close()


async def beliefs_of(hearth: Launcher, name: str) -> list[tuple[str, int]]:
    """(proposition, evidence count) of every belief `name` may inspect."""
    memory = await Memory.open(hearth.db)
    try:
        person = next(p for p in await memory.people.list() if p.name == name)
        ctx = AccessContext.for_member(person.person_id, Activity.MEMBER_INSPECT, "e2e check")
        return [(b.proposition, b.evidence_count) for b in await memory.beliefs.inspect(ctx)]
    finally:
        await memory.close()


async def test_while_the_model_answers_503_members_get_an_honest_reply_and_the_tick_catches_up(
    hearth: Launcher, tg: Telegram
) -> None:
    model = hearth.model
    bot = await hearth.start()
    await make_household(tg)
    # 15 exchanges (30 lines) while the model is up: the batch is two lines short of full.
    fillers = [filler(ANA.marker, n) for n in range(1, MESSAGES_PER_BATCH)]
    before = await tg.count(ANA.dm)
    await send_all(tg, [(ANA.user, ANA.dm, text) for text in fillers])
    await tg.wait_count(ANA.dm, before + len(fillers))

    model.switch.status = 503
    down_from = len(model.requests)
    during = [ANA_FACT, filler(ANA.marker, 99)]
    for text in during:
        started = time.monotonic()
        reply = await tg.say(ANA.user, ANA.dm, text, timeout=FAILING_REPLY_DEADLINE_S)
        assert FALLBACK_WORDS in text_of(reply), text_of(reply)
        assert time.monotonic() - started < FAILING_REPLY_DEADLINE_S
    group_line = f"is anyone cooking tonight {GROUP_MARKER}?"
    group_reply = await tg.say(BEN.user, GROUP, group_line, timeout=FAILING_REPLY_DEADLINE_S)
    assert FALLBACK_WORDS in text_of(group_reply), text_of(group_reply)

    # The batch is full now (her two lines; the apology is not kept): the tick tries it and
    # fails while the model is down.
    def tried_while_down() -> bool:
        return any(ANA_FACT in prompt_text(r) for r in consolidations(model.requests[down_from:]))

    await eventually(tried_while_down, what="a consolidation attempt while the model is down")
    assert not await known_to(tg, ANA, "Zephyrine")

    model.switch.status = 200
    up_from = len(model.requests)
    await eventually(lambda: known_to(tg, ANA, "Zephyrine"), interval=1.0,
                     what="the tick to consolidate her line once the model is back")
    assert any(ANA_FACT in prompt_text(r) for r in consolidations(model.requests[up_from:]))
    after = await tg.say(ANA.user, ANA.dm, f"are you back {ANA.marker}?")
    assert text_of(after).startswith("Noted: "), text_of(after)
    assert await bot.stop() == 0

    lines = await kept_lines(hearth, ANA.name)
    said = Counter(t.text for t in lines if t.role == Role.USER)
    for text in [*fillers, *during, group_line]:
        assert said[text] == 1, f"{text!r} kept {said[text]} times"
    assert not any(FALLBACK_WORDS in t.text for t in lines)  # the apology is not a memory
    beliefs = await beliefs_of(hearth, ANA.name)
    nickname = [(p, n) for p, n in beliefs if "Zephyrine" in p]
    assert len(nickname) == 1 and nickname[0][1] == 1, beliefs


async def test_while_the_model_hangs_members_still_get_an_honest_reply_in_time(
    hearth: Launcher, tg: Telegram
) -> None:
    model = hearth.model
    bot = await hearth.start()
    await make_household(tg)
    first = await tg.say(ANA.user, ANA.dm, f"good morning {ANA.marker}")
    assert text_of(first).startswith("Noted: ")

    model.switch.delay_s = 300.0  # every request hangs (far past any sensible timeout)
    text = f"my train is late again today {ANA.marker}"
    before = await tg.count(ANA.dm)
    started = time.monotonic()
    await tg.client.send_text(ANA.user, ANA.dm, text)
    [reply] = (await tg.wait_count(ANA.dm, before + 1, timeout=HANGING_PATIENCE_S))[before:]
    waited = time.monotonic() - started
    print(f"the honest reply came {waited:.1f} s after her message")
    assert FALLBACK_WORDS in text_of(reply), text_of(reply)
    typing = [a for a in await tg.client.chat_actions(ANA.user.id) if a.action == "typing"]
    assert typing, "no 'typing...' while she waited for the model"
    assert waited <= HANGING_REPLY_DEADLINE_S, (
        f"the honest reply to a member came {waited:.1f} s after her message while the model "
        f"hung; she should not wait more than {HANGING_REPLY_DEADLINE_S:.0f} s"
    )

    model.switch.delay_s = 0.0
    again = await tg.say(ANA.user, ANA.dm, f"are you back {ANA.marker}?", timeout=30)
    assert text_of(again).startswith("Noted: "), text_of(again)
    assert await bot.stop() == 0
    said = [t.text for t in await kept_lines(hearth, ANA.name) if t.role == Role.USER]
    assert said.count(text) == 1, said  # nothing lost


async def test_a_bot_killed_in_the_middle_of_a_tick_loses_no_turn_and_doubles_no_belief(
    hearth: Launcher, tg: Telegram
) -> None:
    model = hearth.model
    # Long enough for the kill to land first; fails rather than answers if it ever returns.
    hang = HangingConsolidation(delay_s=4.0)
    model.switch.inner = hang
    bot = await hearth.start()
    await make_household(tg)
    dm = dm_script(ANA, [ANA_FACT, TEA_FACT])
    group = group_script([(BEN, GAZEBO_FACT)])
    before = {c.id: await tg.count(c) for c in (ANA.dm, GROUP)}
    await send_all(tg, interleave(dm, group))
    await wait_replies(tg, {c: n + MESSAGES_PER_BATCH for c, n in before.items()})

    await eventually(lambda: bool(consolidations(model.requests)),
                     what="the tick to send a consolidation request")
    # A moment for the courier to record the last reply Telegram took: a kill in between
    # sends it again (tests/e2e/test_durability.py), which is not what this test is about.
    await asyncio.sleep(0.5)
    await bot.kill()  # kill -9 while that request is in flight (it hangs for 4 s)
    assert bot.returncode == -signal.SIGKILL
    assert not bot.alive

    # While she is down, Ana writes again: Telegram keeps it for the next start.
    late = f"did you hear me while you were away {ANA.marker}?"
    before_late = await tg.count(ANA.dm)
    await tg.client.send_text(ANA.user, ANA.dm, late)

    hang.on = False
    restarted = await hearth.start()
    [reply] = (await tg.wait_count(ANA.dm, before_late + 1, timeout=20))[before_late:]
    assert text_of(reply) == f"Noted: {late}"
    await eventually(lambda: known_to(tg, ANA, "Zephyrine", "rooibos"), interval=1.0,
                     what="the restarted bot's tick to consolidate Ana's batch")
    await eventually(lambda: known_to(tg, BEN, "gazebo"), interval=1.0,
                     what="the restarted bot's tick to consolidate the group's batch")
    ticks = restarted.log().count("tick: consolidated")
    await eventually(lambda: restarted.log().count("tick: consolidated") > ticks,
                     what="one more tick after the catch-up, to replay anything it would")
    assert await restarted.stop() == 0

    sent = [text for _, _, text in dm] + [late]
    said = Counter(t.text for t in await kept_lines(hearth, ANA.name)
                   if t.role == Role.USER and t.chat_id.startswith("dm:"))
    assert sorted(said) == sorted(sent), "a turn was lost or added"
    assert all(n == 1 for n in said.values()), said
    beliefs = await beliefs_of(hearth, ANA.name)
    for word in ("Zephyrine", "rooibos"):
        found = [(p, n) for p, n in beliefs if word in p]
        assert len(found) == 1 and found[0][1] == 1, (word, beliefs)
    ben = await beliefs_of(hearth, BEN.name)
    gazebo = [(p, n) for p, n in ben if "gazebo" in p]
    assert len(gazebo) == 1 and gazebo[0][1] == 1, ben


async def test_a_burst_of_200_messages_across_four_chats_is_answered_in_full_and_in_order(
    hearth: Launcher, tg: Telegram
) -> None:
    model = hearth.model
    bot = await hearth.start()
    await make_household(tg)
    per_chat = 50
    chats = [(OLGA, OLGA.dm), (ANA, ANA.dm), (BEN, BEN.dm)]
    scripts = [
        [(m.user, chat, f"{m.marker} burst {n:03d}?") for n in range(per_chat)]
        for m, chat in chats
    ]
    scripts.append([
        (MEMBERS[n % 3].user, GROUP, f"{GROUP_MARKER} burst {n:03d}?") for n in range(per_chat)
    ])  # fmt: skip
    before = {chat.id: await tg.count(chat) for chat in (OLGA.dm, ANA.dm, BEN.dm, GROUP)}
    script = interleave(*scripts)
    assert len(script) == 200
    started = time.monotonic()
    await send_all(tg, script)
    await wait_replies(tg, {c: n + per_chat for c, n in before.items()}, timeout=120)
    elapsed = time.monotonic() - started

    names = {m.user.id: m.name for m in MEMBERS}
    for lines in scripts:
        chat = lines[0][1]
        got = (await tg.texts(chat))[before[chat.id]:]
        expected = [
            f"Noted: {names[user.id]}: {text}" if chat == GROUP else f"Noted: {text}"
            for user, _, text in lines
        ]
        assert got == expected, f"chat {chat.id}: answers missing, extra or out of order"
    assert len([r for r in model.requests if "burst" in prompt_text(r)]) >= 200
    assert await bot.stop() == 0
    print(f"200 messages answered in {elapsed:.1f} s")

    said = Counter(
        t.text for t in await kept_lines(hearth, ANA.name) if t.role == Role.USER
    )  # Ana sees her DM and the group
    for lines in (scripts[1], scripts[3]):
        for _, _, text in lines:
            assert said[text] == 1, f"{text!r} kept {said[text]} times"
