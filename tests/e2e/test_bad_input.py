"""Bad input, end to end: malformed and unusual updates sent to the real bot process one after
another. None may crash it; each gets a clear answer where one is due and silence where none is;
nothing is stored that should not be.

Each case runs alone: the test notes how many messages the bot has sent in the case's chat,
sends the update, then either waits for the answer (and checks it), or, where silence is due,
sends an ordinary probe into the same chat and checks that the probe's answer is the very next
message (the bot serves a chat's updates in order, so a late answer would show up first).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from memory import AccessContext, Activity, Memory, Role
from tests.e2e.household import (
    ANA,
    BEN,
    GROUP,
    GROUP_MARKER,
    OLGA,
    STRANGER,
    Json,
    Launcher,
    Member,
    Telegram,
    dm_script,
    eventually,
    make_household,
    prompt_text,
    send_all,
    text_of,
)
from tests.helpers import raw_bytes
from tests.support.telegram_emulator import TgChat, TgUser

ANA_FACT = f"my secret nickname is Zephyrine {ANA.marker}"
STRANGER_WORD = "Quetzalrandom"
OTHER_GROUP = TgChat.group(-100999, title="Not the household")
CHANNEL_ID = -100777
CHANNEL: Json = {"id": CHANNEL_ID, "type": "channel", "title": "Some channel"}
ANOTHER_BOT = TgUser(5098, "Spambot", "spam_bot")
NAMELESS = TgUser(5097, "")

# What the bot says, in words a member would recognise (see bot/texts.py for the full lines).
EMPTY = "looks empty"
NON_TEXT = "only read text"
CANNOT_SEE = "can't see photos on this setup"  # no server that sees: the file waits
CANNOT_HEAR = "can't listen to voice notes on this setup"
TOO_LONG = "longer than I can take"
UNKNOWN = "don't know that command"
OWNER_ONLY = "for the household's owner"
PRIVATE_ONLY = "private chat"
EDITED = "edited"
INVALID_BUTTON = "no longer valid"

Expect = str | Callable[[str], bool] | None  # a substring, a predicate, or None for silence


@dataclass
class Case:
    label: str
    chat: TgChat
    send: Callable[[], Awaitable[Any]]
    expect: Expect
    prober: Member | None = None  # who probes the chat when silence is due
    stored: str | None = None  # a tag that must be in exactly one kept line ("" = don't care)


def any_answer(text: str) -> bool:
    return bool(text.strip())


def noted(text: str) -> bool:
    return text.startswith("Noted: ")


def sticker(file_id: str = "sticker-1") -> Json:
    return {"file_id": file_id, "file_unique_id": "u-" + file_id, "width": 512, "height": 512,
            "is_animated": False, "is_video": False, "type": "regular", "emoji": "🦘"}


def photo(file_id: str) -> list[Json]:
    return [{"file_id": file_id, "file_unique_id": "u-" + file_id, "width": 90, "height": 90}]


def raw(user: TgUser | None, chat: TgChat | Json, **fields: Any) -> Json:
    message: Json = {"chat": chat if isinstance(chat, dict) else chat.to_dict(user or ANA.user)}
    if user is not None:
        message["from"] = user.to_dict()
    message.update(fields)
    return message


def bot_command(text: str, offset: int = 0, length: int | None = None) -> list[Json]:
    size = len(text.split(maxsplit=1)[0]) if length is None else length
    return [{"type": "bot_command", "offset": offset, "length": size}]


async def test_fifty_malformed_or_unusual_updates_never_crash_the_bot_and_store_nothing_extra(
    hearth: Launcher, tg: Telegram
) -> None:
    model = hearth.model
    bot = await hearth.start()
    await make_household(tg)
    c = tg.client
    dm, group = ANA.dm, GROUP

    # Ana tells her one fact and chats until the tick can consolidate it (a /forget button
    # needs something to forget).
    before = await tg.count(dm)
    script = dm_script(ANA, [ANA_FACT])
    await send_all(tg, script)
    await tg.wait_count(dm, before + len(script))
    uploaded = await c.upload_file(b"\x89PNG\r\n\x1a\n not really a picture", "p.png", "image/png")
    to_edit = f"an ordinary line to edit later {ANA.marker}"
    first_ana_text = await c.send_text(ANA.user, dm, to_edit)
    await tg.wait_count(dm, before + len(script) + 1)
    first_ben_group = await c.send_text(BEN.user, group, f"a group line Ben edits {GROUP_MARKER}")
    await tg.wait_for(group, "a group line Ben edits")

    long_ok = f"{ANA.marker} tag10k " + ("lorem ipsum " * 900)[:9_980]
    too_long = f"{ANA.marker} tag20k " + "x" * 20_000
    stranger_dm = TgChat.private(STRANGER)
    bot_id = int(tg.token.split(":")[0])
    her = {"id": bot_id, "is_bot": True, "first_name": "Hearth", "username": "hearth_test_bot"}

    def text(user: TgUser, chat: TgChat, body: str) -> Callable[[], Awaitable[Any]]:
        return lambda: c.send_text(user, chat, body)

    def command(user: TgUser, chat: TgChat, body: str) -> Callable[[], Awaitable[Any]]:
        return lambda: c.send_command(user, chat, body)

    def update(message: Json, kind: str = "message") -> Callable[[], Awaitable[Any]]:
        return lambda: c.send_raw(message, kind=kind)

    cases = [
        # Text that is empty, blank, huge, binary-looking or in other scripts.
        Case("empty text", dm, update(raw(ANA.user, dm, text="")),
             lambda t: EMPTY in t or NON_TEXT in t, ANA),
        Case("whitespace only", dm, text(ANA.user, dm, "   \n\t   "), EMPTY, ANA),
        Case("NUL characters only", dm, text(ANA.user, dm, "\x00 \x00\x00"), EMPTY, ANA),
        Case("10 000 characters", dm, text(ANA.user, dm, long_ok), noted, stored="tag10k"),
        Case("20 000 characters", dm, text(ANA.user, dm, too_long), TOO_LONG, ANA),
        Case("control characters", dm,
             text(ANA.user, dm, f"{ANA.marker} tagctl \x01\x02\x07\x1b[31m\x7f\x08 bin"), noted,
             stored="tagctl"),
        Case("Arabic, right to left", dm,
             text(ANA.user, dm, f"مرحبا، كيف حالك اليوم tagrtl {ANA.marker}"), noted,
             stored="tagrtl"),
        Case("bidi override characters", dm,
             text(ANA.user, dm, f"\u202e\u05e9\u05dc\u05d5\u05dd\u202c tagbidi {ANA.marker}"),
             noted, stored="tagbidi"),
        Case("emoji with joiners", dm,
             text(ANA.user, dm, f"👨\u200d👩\u200d👧\u200d👦🔥🏳️\u200d🌈 tagemoji {ANA.marker}"),
             noted, stored="tagemoji"),
        Case("combining marks", dm,
             text(ANA.user, dm, f"Z\u0337\u0322a\u0335l\u0338g\u0336o tagzalgo {ANA.marker}"),
             noted, stored="tagzalgo"),
        Case("Unicode noncharacters", dm,
             text(ANA.user, dm, f"{ANA.marker} tagnonchar \ufffe\uffff\ufffd\U0010ffff"),
             noted, stored="tagnonchar"),
        Case("only a mention of her", dm, text(ANA.user, dm, "@hearth_test_bot"), noted,
             stored="@hearth_test_bot"),
        Case("forwarded text", dm, update(raw(ANA.user, dm, text=f"tagfwd fwd {ANA.marker}",
             forward_origin={"type": "hidden_user", "date": int(time.time()),
                             "sender_user_name": "Someone"})), noted, stored="tagfwd"),
        Case("a command entity past the text's end", dm,
             update(raw(ANA.user, dm, text=f"tagent hello {ANA.marker}",
                        entities=bot_command("x", offset=5, length=400))),
             any_answer, ANA, stored=""),
        # Commands nobody has, and commands with missing or bad arguments.
        Case("unknown command", dm, command(ANA.user, dm, "/frobnicate"), UNKNOWN),
        Case("unknown command in capitals", dm, command(ANA.user, dm, "/FROBNICATE now"), UNKNOWN),
        Case("a bare slash", dm, command(ANA.user, dm, "/"),
             lambda t: UNKNOWN in t or noted(t), ANA),
        Case("a command for another bot", dm, command(ANA.user, dm, "/help@some_other_bot"),
             None, ANA),
        Case("a command for her by name", dm, command(ANA.user, dm, "/help@hearth_test_bot"),
             "/forget"),
        Case("/forget with no words", dm, command(ANA.user, dm, "/forget"), "what to forget"),
        Case("/forget with blanks", dm, command(ANA.user, dm, "/forget    "), "what to forget"),
        Case("/forget of nothing known", dm, command(ANA.user, dm, "/forget unicorns on mars"),
             "don't have anything like that"),
        Case("/forget shared by a member", dm, command(ANA.user, dm, "/forget shared wifi"),
             OWNER_ONLY),
        Case("/grant with no arguments", dm, command(ANA.user, dm, "/grant"), "Usage: /grant"),
        Case("/grant with no class", dm, command(ANA.user, dm, "/grant group_conversation"),
             "Usage: /grant"),
        Case("/grant of an unknown activity", dm, command(ANA.user, dm, "/grant teleport health"),
             "unknown activity"),
        Case("/grant for negative days", dm,
             command(ANA.user, dm, "/grant group_conversation health -3"), "Usage: /grant"),
        Case("/grant for nan days", dm,
             command(ANA.user, dm, "/grant group_conversation health nan"), "Usage: /grant"),
        Case("/grant of credentials", dm,
             command(ANA.user, dm, "/grant group_conversation credentials"),
             lambda t: "couldn't" in t.lower() and "Done" not in t),
        Case("/revoke with no arguments", dm, command(ANA.user, dm, "/revoke"), "Usage: /revoke"),
        Case("/revoke of nothing granted", dm, command(ANA.user, dm, "/revoke dream finance"),
             "no active grant"),
        Case("/invite by a member", dm, command(ANA.user, dm, "/invite"), OWNER_ONLY),
        Case("/remove by a member", dm, command(ANA.user, dm, "/remove Olga"), OWNER_ONLY),
        Case("/persona by a member", dm, command(ANA.user, dm, "/persona approve 1"), OWNER_ONLY),
        Case("/start CODE by a member", dm, command(ANA.user, dm, "/start not-a-code"), "Hello"),
        Case("/remove with no name", OLGA.dm, command(OLGA.user, OLGA.dm, "/remove"),
             "Usage: /remove"),
        Case("/remove of nobody", OLGA.dm, command(OLGA.user, OLGA.dm, "/remove Nobody"),
             "don't know anyone called Nobody"),
        Case("/remove of the owner", OLGA.dm, command(OLGA.user, OLGA.dm, "/remove Olga"),
             "can't remove the household's owner"),
        Case("/persona with bad arguments", OLGA.dm,
             command(OLGA.user, OLGA.dm, "/persona approve banana"), "Usage: /persona"),
        Case("/persona of a missing proposal", OLGA.dm,
             command(OLGA.user, OLGA.dm, "/persona reject 999"), "no pending proposal #999"),
        Case("/household in a private chat", OLGA.dm, command(OLGA.user, OLGA.dm, "/household"),
             "group chat"),
        Case("/me in the group", group, command(ANA.user, group, "/me"), PRIVATE_ONLY),
        Case("/household again", group, command(OLGA.user, group, "/household"), "already"),
        # Edits, and what is not text.
        Case("an edited message", dm,
             lambda: c.edit_text(ANA.user, dm, first_ana_text, f"tagedit {ANA.marker}"), EDITED),
        Case("an edited group message", group,
             lambda: c.edit_text(BEN.user, group, first_ben_group, f"tagedit2 {GROUP_MARKER}"),
             None, ANA),
        Case("a sticker", dm, update(raw(ANA.user, dm, sticker=sticker())), NON_TEXT),
        Case("a photo", dm, update(raw(ANA.user, dm, photo=photo(uploaded))), CANNOT_SEE),
        Case("a location", dm,
             update(raw(ANA.user, dm, location={"latitude": 51.5, "longitude": -0.12})), NON_TEXT),
        Case("a voice note", dm, update(raw(ANA.user, dm, voice={
            "file_id": "voice-1", "file_unique_id": "u-voice-1", "duration": 3})), CANNOT_HEAR),
        Case("a sticker in the group", group, update(raw(BEN.user, group, sticker=sticker())),
             None, ANA),
        # Who may not be heard in the group.
        Case("a stranger in the group", group,
             text(STRANGER, group, f"{STRANGER_WORD} in the group {GROUP_MARKER}"), None, ANA),
        Case("another bot in the group", group,
             update(raw(ANOTHER_BOT, group, text=f"tagbot {GROUP_MARKER}") | {
                 "from": ANOTHER_BOT.to_dict() | {"is_bot": True}}), None, ANA),
        Case("an anonymous admin in the group", group,
             update(raw(None, group, text=f"taganon {GROUP_MARKER}",
                        sender_chat={"id": GROUP.id, "type": "group", "title": "Household"})),
             None, ANA),
        # Chats she does not serve, and updates she never asked Telegram for.
        Case("a member in a group she was never enabled in", OTHER_GROUP,
             text(ANA.user, OTHER_GROUP, f"tagother hello {ANA.marker}"), None),
        Case("the owner's /help in that group", OTHER_GROUP,
             command(OLGA.user, OTHER_GROUP, "/help"), None),
        Case("a channel post", dm, update({"chat": CHANNEL, "text": "tagchannel"},
                                          kind="channel_post"), None, ANA),
        Case("she was added to a group", dm, update({
            "chat": OTHER_GROUP.to_dict(ANA.user), "from": ANA.user.to_dict(),
            "date": int(time.time()),
            "old_chat_member": {"status": "left", "user": her},
            "new_chat_member": {"status": "member", "user": her}}, kind="my_chat_member"),
             None, ANA),
        # A stranger in private: one refusal, then a clear no to a made-up code.
        Case("a stranger's first message", stranger_dm,
             text(STRANGER, stranger_dm, f"{STRANGER_WORD} wants to talk"), "only talk with"),
        Case("a stranger's forged invite", stranger_dm,
             command(STRANGER, stranger_dm, "/start " + "A" * 100), "didn't work"),
        Case("a stranger with no name", TgChat.private(NAMELESS),
             text(NAMELESS, TgChat.private(NAMELESS), f"{STRANGER_WORD} from nobody"),
             "only talk with"),
    ]

    probes = itertools.count(1)
    kept_probes: list[str] = []

    async def probe(chat: TgChat, member: Member, after: int) -> None:
        n = next(probes)
        line = f"probe {n} {GROUP_MARKER if chat == GROUP else member.marker}?"
        kept_probes.append(line)
        await c.send_text(member.user, chat, line)
        messages = await tg.wait_count(chat, after + 1)
        first = text_of(messages[after])
        assert first.endswith(line), f"the answer after the probe was {first[:200]!r}"

    for case in cases:
        after = await tg.count(case.chat)
        await case.send()
        if case.expect is None:
            if case.prober is not None:  # else: a chat nobody can probe, checked at the end
                await probe(case.chat, case.prober, after)
            continue
        messages = await tg.wait_count(case.chat, after + 1)
        answer = text_of(messages[after])
        print(f"{case.label}: {answer[:90]!r}")  # shown when the test fails
        ok = case.expect(answer) if callable(case.expect) else case.expect in answer
        assert ok, f"{case.label}: answered {answer[:300]!r}"
        if case.prober is not None:  # and nothing more than that one answer
            await probe(case.chat, case.prober, after + 1)
    assert bot.alive

    # Buttons: forged data, a button on no message, someone else's button, a stranger's press.
    async def ana_knows() -> bool:
        return "Zephyrine" in text_of(await tg.say(ANA.user, dm, "/me"))

    await eventually(ana_knows, interval=1.0, what="the tick to consolidate Ana's fact")
    preview = await tg.say(ANA.user, dm, "/forget secret nickname")
    tokens = [b["callback_data"] for row in preview["reply_markup"]["inline_keyboard"]
              for b in row]
    pressed: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
        ("forged data", lambda: c.send_callback(ANA.user, dm, preview["message_id"],
                                                "forget:everything")),
        ("empty data", lambda: c.send_callback(ANA.user, dm, preview["message_id"], "")),
        ("4 KB of data", lambda: c.send_callback(ANA.user, dm, preview["message_id"],
                                                 "A" * 4096)),
        ("Ben pressing Ana's button", lambda: c.send_callback(BEN.user, dm,
                                                             preview["message_id"], tokens[0])),
        ("a stranger pressing it", lambda: c.send_callback(STRANGER, dm, preview["message_id"],
                                                           tokens[0])),
        ("a press with no message", lambda: c.send_raw(
            {"id": "cb-no-message", "from": ANA.user.to_dict(), "chat_instance": "x",
             "data": tokens[0]}, kind="callback_query")),
    ]
    async def callback_answer(seen: int, label: str) -> Json:
        deadline = time.monotonic() + 10
        while True:
            answers = await c.callback_answers()
            if len(answers) > seen:
                return answers[seen]
            assert time.monotonic() < deadline, f"no answer to the press: {label}"
            await asyncio.sleep(0.05)

    for label, press in pressed:
        answers = len(await c.callback_answers())
        await press()
        if label == "a press with no message":
            await probe(dm, ANA, await tg.count(dm))
            continue
        found = await callback_answer(answers, label)
        assert INVALID_BUTTON in str(found.get("text")), (label, found)
    current = next(m for m in await tg.messages(dm) if m["message_id"] == preview["message_id"])
    assert text_of(current) == text_of(preview)  # no press changed it
    assert "Zephyrine" in text_of(await tg.say(ANA.user, dm, "/me"))  # nothing was forgotten

    # Still serving, and a stranger's second message today gets no second refusal.
    await c.send_text(STRANGER, stranger_dm, f"{STRANGER_WORD} once more")
    final = await tg.say(ANA.user, dm, f"still there {ANA.marker}?")
    assert final["text"] == f"Noted: still there {ANA.marker}?"
    await eventually(lambda: bot.alive, timeout=1)
    assert len(await tg.messages(stranger_dm)) == 2
    assert await tg.messages(OTHER_GROUP) == [] and await tg.messages(CHANNEL_ID) == []
    assert bot.alive
    assert await bot.stop() == 0

    # Nothing stored that should not be.
    assert not any(STRANGER_WORD in prompt_text(r) for r in model.requests)
    data = raw_bytes(hearth.db)
    assert b"tagrtl" in data  # positive control: the bytes hold what was kept
    assert STRANGER_WORD.encode() not in data
    memory = await Memory.open(hearth.db)
    try:
        people = {p.name: p for p in await memory.people.list()}
        lines = []
        for name in ("Ana", "Ben", "Olga"):
            ctx = AccessContext.for_member(people[name].person_id, Activity.MEMBER_INSPECT,
                                           "e2e check")
            lines += await memory.transcript.lines(ctx, limit=100_000)
    finally:
        await memory.close()
    said = {t.turn_id: t.text for t in lines if t.role == Role.USER}
    texts = list(said.values())
    expected = [text for _, _, text in script] + kept_probes + [
        f"an ordinary line to edit later {ANA.marker}", f"a group line Ben edits {GROUP_MARKER}",
        f"still there {ANA.marker}?",
    ]
    for line in expected:
        assert texts.count(line) == 1, f"{line!r} kept {texts.count(line)} times"
    for case in cases:
        if case.stored:
            assert sum(case.stored in t for t in texts) == 1, (case.label, case.stored)
    tags = [case.stored for case in cases if case.stored is not None]
    extra = [t for t in texts if t not in expected and not any(tag and tag in t for tag in tags)
             and "tagent" not in t]
    assert extra == [], f"lines kept that should not be: {extra!r}"
    for word in ("tagedit", "tagbot", "taganon", "tagother", "tagchannel", STRANGER_WORD,
                 "forget:everything"):
        assert not any(word in t for t in texts), word
    assert len(cases) + len(pressed) >= 50

    # Every stranger got their one refusal, the owner heard of each (with no words of theirs),
    # and no update made a handler fail (the error handler is a last resort, not a path).
    owner_texts = await tg.texts(OLGA.dm)
    for stranger in (STRANGER, NAMELESS):
        notices = [t for t in owner_texts if str(stranger.id) in t]
        assert len(notices) == 1 and STRANGER_WORD not in notices[0], (stranger, notices)
    nameless = await tg.texts(TgChat.private(NAMELESS))
    assert len(nameless) == 1, f"a stranger with an empty name was answered {nameless!r}"
    log = bot.log()
    assert "Traceback" not in log, f"a handler failed; the bot's log:\n{log[-6000:]}"
