"""A household on Telegram, end to end: the real bot process, the Telegram emulator and a local
OpenAI-compatible model server. What each person sees, what reaches the model, and what is left
in the database file.

Every private fact carries a secret word only its owner may ever get back; every line carries its
scope's marker word (tests/e2e/household.py), so a prompt's scopes can be read off its words.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory import AccessContext, Activity, Memory
from tests.e2e.household import (
    ANA,
    BEN,
    GROUP,
    GROUP_MARKER,
    MEMBERS,
    MESSAGES_PER_BATCH,
    OLGA,
    STRANGER,
    Json,
    Launcher,
    Member,
    Telegram,
    background_lines,
    compactions,
    consolidations,
    dm_script,
    eventually,
    explain_requests,
    group_script,
    interleave,
    is_background,
    last_user_text,
    make_household,
    markers_in,
    prompt_text,
    send_all,
    text_of,
    turn_prompt,
    wait_replies,
)
from tests.helpers import raw_bytes
from tests.support.telegram_emulator import TgChat

# Private facts, told in each member's own DM, and the secret word in each.
ANA_FACT = f"my secret nickname is Zephyrine {ANA.marker}"
BEN_FACT = f"I am learning the theremin in secret {BEN.marker}"
OLGA_FACT = f"I am planning a surprise trip to Reykjavik {OLGA.marker}"
SECRET = {ANA: "Zephyrine", BEN: "theremin", OLGA: "Reykjavik"}
# A shared fact, said in the group; its word may appear anywhere in the household.
GAZEBO_FACT = f"I am the one who fixes the gazebo {GROUP_MARKER}"


async def me_lists(tg: Telegram, member: Member, word: str) -> bool:
    """`member` sends /me; True when the answer names `word`."""
    reply = await tg.say(member.user, member.dm, "/me")
    return word.lower() in text_of(reply).lower()


async def wait_until_known(tg: Telegram, member: Member, word: str) -> str:
    """Poll /me (every second or so) until the tick has made `word` one of `member`'s beliefs;
    returns that /me answer."""
    answer = ""

    async def known() -> bool:
        nonlocal answer
        answer = text_of(await tg.say(member.user, member.dm, "/me"))
        return word.lower() in answer.lower()

    await eventually(known, interval=1.0, what=f"{member.name}'s /me to list {word!r}")
    return answer


def requests_holding(requests: Sequence[Json], word: str) -> list[Json]:
    return [r for r in requests if word.lower() in prompt_text(r).lower()]


async def _has_document(tg: Telegram, member: Member) -> bool:
    return bool(await tg.client.documents(member.dm.id))


def is_dm_turn_of(request: Json, member: Member) -> bool:
    """A conversation request answering a line in `member`'s private chat: the reply, or the
    model judging her memories for it (whose message comes first, before what it may show:
    the shared scope's lines too, which a private chat sees)."""
    asked = last_user_text(request).split("\n\nMemories:", 1)[0]
    return not is_background(request) and markers_in(asked) == {member.marker}


async def test_each_members_private_facts_reach_only_their_own_chat_and_come_back_to_them_there(
    hearth: Launcher, tg: Telegram
) -> None:
    model = hearth.model
    bot = await hearth.start()
    await make_household(tg)
    chats = [OLGA.dm, ANA.dm, BEN.dm, GROUP]
    before = {chat.id: await tg.count(chat) for chat in chats}

    # Each member tells her one private thing in their DM, Ben says a shared thing in the
    # group, and everyone chats on until each scope has a full batch for the tick.
    script = interleave(
        dm_script(OLGA, [OLGA_FACT]),
        dm_script(ANA, [ANA_FACT]),
        dm_script(BEN, [BEN_FACT]),
        group_script([(BEN, GAZEBO_FACT)]),
    )
    await send_all(tg, script)
    await wait_replies(tg, {c.id: before[c.id] + MESSAGES_PER_BATCH for c in chats})
    for chat in chats:
        answers = (await tg.texts(chat))[before[chat.id]:]
        assert all(a.startswith("Noted: ") for a in answers), answers  # the model answered

    # The tick consolidates each scope; each member then finds their fact in their own /me.
    me = {m: await wait_until_known(tg, m, SECRET[m]) for m in MEMBERS}
    for member in MEMBERS:
        for other in MEMBERS:
            if other != member:
                assert SECRET[other].lower() not in me[member].lower(), (member.name, me[member])

    # Later questions: in her own DM the fact is in the prompt; anywhere else it is not.
    ana_q = f"what is my secret nickname {ANA.marker}?"
    ben_q = f"what is Ana's secret nickname, and where is Olga's surprise trip {BEN.marker}?"
    olga_q = f"what is Ana's secret nickname, and what is Ben learning in secret {OLGA.marker}?"
    group_ana_q = f"what is my secret nickname {GROUP_MARKER}?"
    group_ben_q = f"what am I learning in secret {GROUP_MARKER}?"
    for member, chat, question in (
        (ANA, ANA.dm, ana_q), (BEN, BEN.dm, ben_q), (OLGA, OLGA.dm, olga_q),
        (ANA, GROUP, group_ana_q), (BEN, GROUP, group_ben_q),
    ):  # fmt: skip
        reply = await tg.say(member.user, chat, question)
        assert text_of(reply).startswith("Noted: "), text_of(reply)

    requests = list(model.requests)
    ana_prompt = prompt_text(turn_prompt(requests, ana_q))
    assert "Zephyrine" in ana_prompt  # positive control: her own fact comes back to her
    ben_prompt = prompt_text(turn_prompt(requests, ben_q))
    assert "theremin" in ben_prompt  # his own fact is used in his own chat...
    assert "Zephyrine" not in ben_prompt and "Reykjavik" not in ben_prompt  # ...nobody else's
    olga_prompt = prompt_text(turn_prompt(requests, olga_q))
    assert "Reykjavik" in olga_prompt
    assert "Zephyrine" not in olga_prompt and "theremin" not in olga_prompt  # the owner too
    for question in (group_ana_q, group_ben_q):
        group_prompt = prompt_text(turn_prompt(requests, question))
        assert "gazebo" in group_prompt  # the shared fact does reach the group...
        for secret in SECRET.values():  # ...and no one's private fact, the speaker's included
            assert secret not in group_prompt, (question, secret)

    # Every prompt the model ever saw: a secret only in its owner's DM turns, or in background
    # work over that owner's lines alone.
    for member, secret in SECRET.items():
        holding = requests_holding(requests, secret)
        assert holding, f"no prompt ever held {secret!r}: the test proved nothing"
        for request in holding:
            own_turn = is_dm_turn_of(request, member)
            own_batch = is_background(request) and markers_in(
                last_user_text(request)
            ) == {member.marker}
            assert own_turn or own_batch, (
                f"{member.name}'s {secret!r} reached a prompt outside their own chat:\n"
                f"{explain_requests([request])}"
            )

    # Exports: each member's file holds their own fact and nobody else's; the owner's audit
    # shows the ledger's metadata, never a member's words.
    for member in MEMBERS:
        await tg.client.send_command(member.user, member.dm, "/export")
    for member in MEMBERS:
        await eventually(lambda m=member: _has_document(tg, m), timeout=10,
                         what=f"{member.name}'s export")
        [document] = await tg.client.documents(member.dm.id)
        exported = document.content.decode("utf-8")
        assert SECRET[member] in exported, f"{member.name}'s export lacks their own fact"
        for other in MEMBERS:
            if other != member:
                assert SECRET[other] not in exported, (member.name, SECRET[other])
    audit = text_of(await tg.say(OLGA.user, OLGA.dm, "/audit"))
    assert "Ledger" in audit and "intact" in audit, audit
    receipts = text_of(await tg.say(OLGA.user, OLGA.dm, "/receipts"))
    assert receipts

    # What the bot said: no one's secret in another's chat or in the group.
    for chat in chats:
        said = "\n".join(await tg.texts(chat))
        for member, secret in SECRET.items():
            if chat != member.dm:
                assert secret.lower() not in said.lower(), (chat.id, secret)
    assert await bot.stop() == 0


async def test_every_consolidation_and_compaction_prompt_holds_the_lines_of_one_scope_only(
    hearth: Launcher, tg: Telegram
) -> None:
    model = hearth.model
    bot = await hearth.start()
    await make_household(tg)
    chats = [OLGA.dm, ANA.dm, BEN.dm, GROUP]
    before = {chat.id: await tg.count(chat) for chat in chats}
    per_chat = MESSAGES_PER_BATCH + 4  # a full batch and a few lines more, in every chat
    script = interleave(  # lines of the four scopes alternate in the transcript
        dm_script(OLGA, [OLGA_FACT, f"Ana is planning a party for me {OLGA.marker}"], per_chat),
        dm_script(ANA, [ANA_FACT, f"Ben is terrible at parking {ANA.marker}"], per_chat),
        dm_script(BEN, [BEN_FACT, f"Olga is turning fifty soon {BEN.marker}"], per_chat),
        group_script([(BEN, GAZEBO_FACT), (ANA, f"I walk the dog on Sundays {GROUP_MARKER}")],
                     per_chat),
    )
    await send_all(tg, script)
    await wait_replies(tg, {c.id: before[c.id] + per_chat for c in chats})

    scopes = {OLGA.marker, ANA.marker, BEN.marker, GROUP_MARKER}

    def background_scopes(kind: str) -> set[str]:
        found = consolidations(model.requests) if kind == "c" else compactions(model.requests)
        return set().union(*(markers_in(last_user_text(r)) for r in found))

    # Positive control: every scope was consolidated, and every chat's summary refreshed.
    await eventually(lambda: background_scopes("c") == scopes and background_scopes("s") == scopes,
                     what="a consolidation and a compaction prompt for each of the four scopes")

    requests = list(model.requests)
    background = [r for r in requests if is_background(r)]
    assert len(consolidations(requests)) >= 4 and len(compactions(requests)) >= 4
    for request in background:
        whole = markers_in(last_user_text(request))
        assert len(whole) == 1, (
            f"a background prompt mixed scopes {sorted(whole)}:\n{explain_requests([request])}"
        )
        lines = background_lines(request)
        assert lines, explain_requests([request])
        for number, speaker, text in lines:
            assert markers_in(text) == whole, (number, speaker, text, whole)
    assert await bot.stop() == 0


async def test_forget_makes_a_fact_unrecallable_and_leaves_no_trace_of_its_words_in_the_database(
    hearth: Launcher, tg: Telegram
) -> None:
    model = hearth.model
    bot = await hearth.start()
    await make_household(tg)
    tea = f"my favourite tea is rooibos {ANA.marker}"
    before = await tg.count(ANA.dm)
    await send_all(tg, dm_script(ANA, [ANA_FACT, tea]))
    await tg.wait_count(ANA.dm, before + MESSAGES_PER_BATCH)
    await wait_until_known(tg, ANA, "Zephyrine")
    assert await me_lists(tg, ANA, "rooibos")

    # /forget shows what would go, with buttons; Ben pressing them changes nothing.
    preview = await tg.say(ANA.user, ANA.dm, "/forget secret nickname")
    assert "Zephyrine" in text_of(preview) and "rooibos" not in text_of(preview)
    buttons = [b for row in preview["reply_markup"]["inline_keyboard"] for b in row]
    assert len(buttons) == 2, buttons
    forget_button = next(b for b in buttons if "forget" in b["text"].lower())
    await tg.client.send_callback(BEN.user, ANA.dm, preview["message_id"],
                                  forget_button["callback_data"])
    assert await me_lists(tg, ANA, "Zephyrine")  # still there: it was not Ben's to press
    await tg.client.send_callback(ANA.user, ANA.dm, preview["message_id"],
                                  forget_button["callback_data"])

    async def confirmed() -> bool:
        for message in await tg.messages(ANA.dm):
            if message["message_id"] == preview["message_id"]:
                return "forgotten" in text_of(message).lower()
        return False

    await eventually(confirmed, timeout=10, what="the /forget message to say it forgot")

    # Unrecallable: not in /me, not in the prompt of a question about it...
    assert not await me_lists(tg, ANA, "Zephyrine")
    assert await me_lists(tg, ANA, "rooibos")  # positive control: the rest stays
    question = f"do you remember my secret nickname {ANA.marker}?"
    await tg.say(ANA.user, ANA.dm, question)
    assert "Zephyrine" not in prompt_text(turn_prompt(model.requests, question))
    assert await bot.stop() == 0

    # ...and not in the database file or its WAL, in any case.
    data = raw_bytes(hearth.db).lower()
    assert b"rooibos" in data  # positive control: raw_bytes does see what is kept
    assert b"zephyrine" not in data, "the forgotten word is still in the database bytes"
    memory = await Memory.open(hearth.db)
    try:
        ana = next(p for p in await memory.people.list() if p.name == ANA.name)
        ctx = AccessContext.for_member(ana.person_id, Activity.MEMBER_INSPECT, "e2e check")
        kept = [b.proposition for b in await memory.beliefs.inspect(ctx)]
        lines = [t.text for t in await memory.transcript.lines(ctx, limit=10_000)]
    finally:
        await memory.close()
    assert any("rooibos" in p for p in kept) and not any("Zephyrine" in p for p in kept)
    assert not any("zephyrine" in line.lower() for line in lines)


async def test_a_grant_opens_a_shared_health_fact_to_the_group_and_a_revoke_closes_it_again(
    hearth: Launcher, tg: Telegram
) -> None:
    model = hearth.model
    bot = await hearth.start()
    await make_household(tg)
    penicillin = f"I am allergic to penicillin {GROUP_MARKER}"  # shared, health
    debt = f"I owe the bank 400 pounds {GROUP_MARKER}"  # shared, finance
    asthma = f"I have asthma {ANA.marker}"  # Ana's private health fact
    before = {c.id: await tg.count(c) for c in (ANA.dm, GROUP)}
    await send_all(tg, interleave(
        dm_script(ANA, [asthma]),
        group_script([(BEN, penicillin), (BEN, debt), (BEN, GAZEBO_FACT)]),
    ))  # fmt: skip
    await wait_replies(tg, {c: n + MESSAGES_PER_BATCH for c, n in before.items()})
    await wait_until_known(tg, ANA, "asthma")
    await wait_until_known(tg, BEN, "penicillin")  # shared facts about Ben, in his /me
    assert await me_lists(tg, BEN, "400 pounds")

    async def group_prompt(n: int) -> str:
        question = f"anything I should keep in mind today {GROUP_MARKER} {n}?"
        reply = await tg.say(BEN.user, GROUP, question)
        assert text_of(reply).startswith("Noted: "), text_of(reply)
        return prompt_text(turn_prompt(model.requests, question))

    # No grant: the group's prompt holds shared ordinary facts, not the health one.
    closed = await group_prompt(1)
    assert "gazebo" in closed  # positive control: Ben's shared facts do reach this prompt
    assert "penicillin" not in closed and "400 pounds" not in closed and "asthma" not in closed

    granted = await tg.say(OLGA.user, OLGA.dm, "/grant shared group_conversation health")
    assert "Done" in text_of(granted), text_of(granted)
    listed = text_of(await tg.say(OLGA.user, OLGA.dm, "/grants"))
    assert "health" in listed and "active" in listed, listed
    opened = await group_prompt(2)
    assert "gazebo" in opened and "penicillin" in opened  # the grant opened health...
    assert "400 pounds" not in opened  # ...and not finance...
    assert "asthma" not in opened  # ...and never a member's private fact (a grant is no wall)

    revoked = await tg.say(OLGA.user, OLGA.dm, "/revoke shared group_conversation health")
    assert "Revoked" in text_of(revoked), text_of(revoked)
    shut = await group_prompt(3)
    assert "gazebo" in shut
    assert "penicillin" not in shut and "400 pounds" not in shut and "asthma" not in shut

    # Nothing else changed: the grant was for group conversation only, so no background work
    # (compaction) ever used the health or money lines, before, during or after it.
    requests = list(model.requests)
    assert compactions(requests), "no compaction ran: the check below would prove nothing"
    for request in compactions(requests):
        text = prompt_text(request)
        for word in ("penicillin", "400 pounds", "asthma"):
            assert word not in text, f"{word!r} reached compaction:\n{explain_requests([request])}"
    assert await bot.stop() == 0


async def test_a_stranger_gets_one_polite_refusal_a_day_and_nothing_they_say_is_kept(
    hearth: Launcher, tg: Telegram
) -> None:
    model = hearth.model
    bot = await hearth.start()
    await make_household(tg)
    stranger_dm = TgChat.private(STRANGER)
    word = "Xylophonic"
    owner_before = await tg.count(OLGA.dm)

    refusal = await tg.say(STRANGER, stranger_dm, f"hello, my name is {word} and I need help")
    assert "only talk with" in text_of(refusal) or "household" in text_of(refusal)
    assert word not in text_of(refusal)
    notice = await tg.wait_for(OLGA.dm, "don't know", after=owner_before)  # the owner is told
    assert word not in text_of(notice) and str(STRANGER.id) in text_of(notice)

    # A second message the same day: silence. A made-up invite code: a clear no. In the group:
    # ignored, while the members there are answered.
    await tg.client.send_text(STRANGER, stranger_dm, f"{word} again, please answer")
    await tg.client.send_command(STRANGER, stranger_dm, f"/start {word}")
    [first, second] = await tg.wait_count(stranger_dm, 2)
    assert first == refusal and "invite code didn't work" in text_of(second), text_of(second)
    group_before = await tg.count(GROUP)
    await tg.client.send_text(STRANGER, GROUP, f"{word} says hi to the group")
    member_line = f"kumquat jam on Saturday {GROUP_MARKER}"
    answer = await tg.say(ANA.user, GROUP, member_line)
    assert text_of(answer).startswith("Noted: ") and word not in text_of(answer)
    assert (await tg.count(GROUP)) == group_before + 1  # only Ana was answered
    assert len(await tg.messages(stranger_dm)) == 2  # still no second refusal

    assert await bot.stop() == 0
    assert not requests_holding(model.requests, word), "a stranger's words reached the model"
    data = raw_bytes(hearth.db).lower()
    assert b"kumquat" in data  # positive control: the member's line of the same minute is kept
    assert word.lower().encode() not in data, "a stranger's words are in the database"
    memory = await Memory.open(hearth.db)
    try:
        people = await memory.people.list()
    finally:
        await memory.close()
    assert sorted(p.name for p in people) == ["Ana", "Ben", "Olga"]
    assert all(p.telegram_id != STRANGER.id for p in people)


async def test_with_the_bundled_embedder_a_private_fact_is_recalled_for_its_owner_alone(
    hearth: Launcher, tg: Telegram
) -> None:
    """A bundled embedder (MiniLM, offline) in the real process: the same question, by
    words and by meaning, finds Ana's fact in her DM and nowhere else."""
    model = hearth.model
    bot = await hearth.start(embedder="minilm")
    await make_household(tg)
    key = f"the spare house key is under the blue flowerpot {ANA.marker}"  # about no one
    before = await tg.count(ANA.dm)
    await send_all(tg, dm_script(ANA, [key]))
    await tg.wait_count(ANA.dm, before + MESSAGES_PER_BATCH)
    await wait_until_known(tg, ANA, "flowerpot")

    asks = [(ANA, ANA.dm, f"where is the spare key kept {ANA.marker}?"),
            (BEN, BEN.dm, f"where is the spare key kept {BEN.marker}?"),
            (OLGA, OLGA.dm, f"where is the spare key kept {OLGA.marker}?"),
            (ANA, GROUP, f"where is the spare key kept {GROUP_MARKER}?")]
    for member, chat, question in asks:
        await tg.say(member.user, chat, question)
    prompts = [prompt_text(turn_prompt(model.requests, q)) for _, _, q in asks]
    # Positive control: recalled (by words and meaning) for Ana, in the memories surface.
    memories = prompts[0].split("# What you remember", 1)[1].split("\n# ", 1)[0]
    assert "flowerpot" in memories, memories
    for (member, chat, _), prompt in zip(asks[1:], prompts[1:], strict=True):
        assert "flowerpot" not in prompt, (member.name, chat.id)
    assert await bot.stop() == 0
