"""The Telegram face, in process: the real application, handlers and memory, a recording fake of
the Bot API (tests/bot/telegram_fake.py) and a scripted reply model."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import re
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from telegram import Update
from telegram.ext import ApplicationHandlerStop

from bot import texts
from bot.app import BotConfig, build_application, serve
from bot.context import Buttons, HearthApp, Pending, Strangers
from bot.ordering import ChatOrderedProcessor
from bot.replies import TELEGRAM_LIMIT, split_reply
from bot.settings import ConfigError, load_settings
from memory import MAX_TURN_CHARS as MAX_LINE_CHARS
from memory import AccessContext, Activity, Memory, Person, private_scope
from soul.files import Soul, load_soul
from soul.model import ModelError
from soul.tick import DreamReport, TickReport
from soul.turn import FALLBACK_REPLY
from tests.bot.telegram_fake import BOT_ID, BOT_USERNAME, FakeTelegram, People, as_update
from tests.helpers import HashEmbedder, raw_bytes

OWNER, BOB, ALICE, STRANGER = 1001, 1002, 1003, 5555
TOKEN = "123456:TEST-token"
GROUP = -500
SOUL: Soul = load_soul(None)


class Clock:
    """An injected clock, shared by memory and the bot."""

    def __init__(self) -> None:
        self.now = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@dataclass
class FakeModel:
    """Any object with async `reply` and `extract` will do for the bot."""

    answer: str | Callable[[list[dict[str, str]]], str] = "Lovely to hear from you."
    delay: float = 0.0
    error: Exception | None = None
    requests: list[list[dict[str, str]]] = field(default_factory=list)
    spans: list[tuple[str, float, float]] = field(default_factory=list)

    async def reply(self, messages: list[dict[str, str]], *, max_tokens: int = 400,
                    temperature: float = 0.7) -> str:
        self.requests.append(messages)
        start = asyncio.get_running_loop().time()
        if self.delay:
            await asyncio.sleep(self.delay)
        self.spans.append((messages[-1]["content"], start, asyncio.get_running_loop().time()))
        if self.error is not None:
            raise self.error
        return self.answer(messages) if callable(self.answer) else self.answer

    async def extract(self, messages: list[dict[str, str]], schema: type[Any]) -> Any:
        raise ModelError("no extraction in these tests")


@dataclass
class Bot:
    app: HearthApp
    telegram: FakeTelegram
    people: People
    memory: Memory
    model: FakeModel
    clock: Clock
    db: Path

    async def send(self, data: dict[str, Any]) -> None:
        await self.app.process_update(as_update(data, self.app))

    async def say(self, user_id: int, text: str, **kw: Any) -> None:
        await self.send(self.people.message(user_id, text, **kw))

    def to(self, chat_id: int) -> list[str]:
        return self.telegram.texts(chat_id)

    async def person(self, telegram_id: int) -> Person:
        found = await self.memory.people.by_telegram_id(telegram_id)
        assert found is not None
        return found

    async def remember(self, telegram_id: int, text: str, *, shared: bool = False) -> None:
        person = await self.person(telegram_id)
        outcome = await self.memory.beliefs.remember(person.person_id, text, shared=shared)
        assert outcome.status == "created"


BotFactory = Callable[..., Awaitable[Bot]]


@pytest.fixture
async def make_bot(tmp_path: Path) -> AsyncIterator[BotFactory]:
    opened: list[tuple[HearthApp, Memory]] = []

    async def make(*, household: bool = True, model: FakeModel | None = None,
                   owner_id: int = OWNER) -> Bot:
        clock = Clock()
        db = tmp_path / "hearth.db"
        memory = await Memory.open(db, embedder=HashEmbedder(), create=True, clock=clock)
        if household:
            await memory.people.add("Olivia", telegram_id=OWNER, owner=True)
            await memory.people.add("Bob", telegram_id=BOB)
            await memory.people.add("Alice", telegram_id=ALICE)
        telegram = FakeTelegram()
        model = model or FakeModel()
        app = build_application(
            BotConfig(token=TOKEN, owner_telegram_id=owner_id),
            memory=memory, soul=SOUL, model=model, request=telegram, clock=clock,
            typing_interval=0.02,
        )
        await app.initialize()
        opened.append((app, memory))
        telegram.clear()
        return Bot(app, telegram, People(telegram), memory, model, clock, db)

    yield make
    for app, memory in opened:
        if app.running:
            await app.stop()
        await app.shutdown()
        await memory.close()


@pytest.fixture
async def bot(make_bot: BotFactory) -> Bot:
    return await make_bot()


async def enable_group(bot: Bot) -> None:
    await bot.say(OWNER, "/household", chat_id=GROUP, name="Olivia")
    assert bot.to(GROUP)[-1] == texts.HOUSEHOLD_ENABLED
    bot.telegram.clear()


def button_tokens(bot: Bot) -> list[str]:
    """The callback data of the last message sent with an inline keyboard."""
    with_buttons = [c for c in bot.telegram.calls if "reply_markup" in c.params]
    markup = with_buttons[-1].params["reply_markup"]
    if isinstance(markup, str):
        markup = json.loads(markup)
    return [b["callback_data"] for row in markup["inline_keyboard"] for b in row]


def callback_answers(bot: Bot) -> list[str]:
    return [str(c.params.get("text", "")) for c in bot.telegram.sent(method="answerCallbackQuery")]


# --- strangers and joining ---------------------------------------------------------------------


async def test_a_stranger_is_refused_once_a_day_the_owner_is_told_and_nothing_is_kept(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    await bot.say(STRANGER, "my locker code is pineapple-4471", name="Mallory")
    await bot.say(STRANGER, "hello? pineapple-4471 again", name="Mallory")

    assert bot.to(STRANGER) == [texts.STRANGER_REFUSAL]
    (notice,) = bot.to(OWNER)
    assert str(STRANGER) in notice and "Mallory" in notice and "/invite" in notice
    assert "pineapple" not in notice
    assert bot.model.requests == []
    stats = await bot.memory.stats()
    assert stats["turns"] == 0 and stats["people"] == 3 and stats["beliefs"] == 0
    await bot.memory.checkpoint()
    assert b"pineapple" not in raw_bytes(bot.db)
    assert "pineapple" not in caplog.text

    bot.clock.advance(days=1)
    await bot.say(STRANGER, "it's a new day", name="Mallory")
    assert bot.to(STRANGER) == [texts.STRANGER_REFUSAL] * 2
    assert len(bot.to(OWNER)) == 2


async def test_the_owner_is_the_configured_id_never_the_first_to_write(
    make_bot: BotFactory,
) -> None:
    bot = await make_bot(household=False)
    await bot.say(STRANGER, "hi, I'm first here", name="Mallory")
    assert bot.to(STRANGER) == [texts.STRANGER_REFUSAL]
    assert await bot.memory.people.list() == []

    await bot.say(OWNER, "hello, it's me", name="Olivia")
    owner = await bot.person(OWNER)
    assert owner.is_owner and owner.name == "Olivia"
    assert bot.to(OWNER)[-1] == "Lovely to hear from you."


async def test_an_owner_id_the_database_disagrees_with_is_told_and_nothing_is_kept(
    make_bot: BotFactory, caplog: pytest.LogCaptureFixture
) -> None:
    bot = await make_bot(owner_id=9999)
    await bot.say(9999, "I'm the owner now", name="Ivan")
    assert bot.to(9999) == [texts.OWNER_MISMATCH]
    assert "does not match" in caplog.text
    assert await bot.memory.people.by_telegram_id(9999) is None
    await bot.say(OWNER, "/invite", name="Olivia")  # the database's owner is not served either
    assert bot.to(OWNER) == [texts.OWNER_MISMATCH]
    assert (await bot.memory.stats())["turns"] == 0


async def test_an_invite_link_makes_a_stranger_a_member_and_works_only_once(bot: Bot) -> None:
    await bot.say(OWNER, "/invite", name="Olivia")
    (answer,) = bot.to(OWNER)
    found = re.search(rf"https://t\.me/{BOT_USERNAME}\?start=([\w-]+)", answer)
    assert found is not None and "expires" in answer
    code = found.group(1)

    await bot.say(6000, f"/start {code}", name="Dana")
    assert bot.to(6000) == [texts.welcome("Dana")]
    dana = await bot.person(6000)
    assert not dana.is_owner
    assert bot.to(OWNER)[-1] == texts.joined_notice("Dana")

    await bot.say(6000, "so, what's for dinner?", name="Dana")
    assert bot.to(6000)[-1] == "Lovely to hear from you."

    await bot.say(6001, f"/start {code}", name="Eve")
    assert bot.to(6001) == [texts.INVITE_INVALID]
    assert await bot.memory.people.by_telegram_id(6001) is None
    await bot.say(6002, "/start not-a-real-code", name="Finn")
    assert bot.to(6002) == [texts.INVITE_INVALID]
    assert (await bot.memory.stats())["people"] == 4


async def test_an_expired_invite_is_refused_and_stores_nothing(bot: Bot) -> None:
    await bot.say(OWNER, "/invite", name="Olivia")
    code = bot.to(OWNER)[0].split("/start ")[1].split()[0]
    bot.clock.advance(days=3)
    await bot.say(6000, f"/start {code}", name="Dana")
    assert bot.to(6000) == [texts.INVITE_INVALID]
    assert await bot.memory.people.by_telegram_id(6000) is None
    assert (await bot.memory.stats())["turns"] == 0


async def test_a_member_who_starts_again_is_greeted_not_re_registered(bot: Bot) -> None:
    await bot.say(BOB, "/start", name="Bob")
    assert bot.to(BOB) == [texts.greeting("Bob", owner=False)]
    assert (await bot.memory.stats())["people"] == 3


# --- conversation ------------------------------------------------------------------------------


async def test_a_members_message_is_answered_and_kept_in_their_private_scope(bot: Bot) -> None:
    await bot.say(BOB, "I planted tulips by the gate today", name="Bob")
    assert bot.to(BOB) == ["Lovely to hear from you."]
    assert bot.model.requests[-1][-1]["content"] == "I planted tulips by the gate today"
    methods = bot.telegram.methods()
    assert methods.index("sendChatAction") < methods.index("sendMessage")

    bob = await bot.person(BOB)
    ctx = AccessContext.for_member(bob.person_id, Activity.DM_CONVERSATION, "a test read")
    lines = await bot.memory.transcript.lines(ctx, chat_id=f"dm:{BOB}")
    assert [t.text for t in lines] == ["I planted tulips by the gate today",
                                      "Lovely to hear from you."]
    assert {t.scope for t in lines} == {private_scope(bob.person_id)}
    alice = await bot.person(ALICE)
    other = AccessContext.for_member(alice.person_id, Activity.DM_CONVERSATION, "a test read")
    assert await bot.memory.transcript.lines(other) == []


async def test_when_the_model_fails_the_member_gets_the_fallback_and_their_line_is_kept(
    make_bot: BotFactory,
) -> None:
    bot = await make_bot(model=FakeModel(error=ModelError("the model is down")))
    await bot.say(BOB, "are you there?", name="Bob")
    assert bot.to(BOB) == [FALLBACK_REPLY]
    assert (await bot.memory.stats())["turns"] == 1


async def test_a_long_reply_is_split_at_paragraphs_within_telegrams_limit(
    make_bot: BotFactory,
) -> None:
    paragraphs = [("word " * 600).strip() for _ in range(3)]
    reply = "\n\n".join(paragraphs)
    bot = await make_bot(model=FakeModel(answer=reply))
    await bot.say(BOB, "tell me a long story", name="Bob")
    sent = bot.to(BOB)
    assert sent == paragraphs
    assert all(len(chunk) <= TELEGRAM_LIMIT for chunk in sent)


@pytest.mark.parametrize(
    "text",
    [
        "مرحبا، كيف حالك اليوم؟",
        "שלום! 🎉🎉 👨‍👩‍👧 family night",
        "\x01\x02\ufffd\u202e looks like binary \x7f",
        "a" * 4096,
    ],
)
async def test_right_to_left_emoji_and_binary_looking_text_are_answered(
    bot: Bot, text: str
) -> None:
    await bot.say(BOB, text, name="Bob")
    assert bot.to(BOB) == ["Lovely to hear from you."]
    assert bot.model.requests[-1][-1]["content"] == text


@pytest.mark.parametrize("text", ["   ", "\x00\x00", "\n\t"])
async def test_an_empty_message_gets_a_short_answer_and_nothing_is_stored(
    bot: Bot, text: str
) -> None:
    await bot.say(BOB, text, name="Bob")
    assert bot.to(BOB) == [texts.EMPTY]
    assert (await bot.memory.stats())["turns"] == 0


async def test_a_message_longer_than_memory_takes_gets_a_clear_answer(bot: Bot) -> None:
    await bot.say(BOB, "x " * (MAX_LINE_CHARS // 2 + 1), name="Bob")
    assert bot.to(BOB) == [texts.too_long(MAX_LINE_CHARS)]
    assert (await bot.memory.stats())["turns"] == 0


@pytest.mark.parametrize(
    "extra",
    [
        {"sticker": {"file_id": "s", "file_unique_id": "s", "type": "regular", "width": 1,
                     "height": 1, "is_animated": False, "is_video": False}},
        {"location": {"latitude": 51.5, "longitude": -0.1}},
    ],
)
async def test_messages_without_words_get_an_honest_answer_and_nothing_is_stored(
    bot: Bot, extra: dict[str, Any]
) -> None:
    await bot.send(bot.people.message(BOB, name="Bob", **extra))
    assert bot.to(BOB) == [texts.NON_TEXT]
    assert (await bot.memory.stats())["turns"] == 0


@pytest.mark.parametrize(
    ("kind", "extra"),
    [
        ("photo", {"photo": [{"file_id": "p", "file_unique_id": "p", "width": 1, "height": 1}]}),
        ("voice", {"voice": {"file_id": "v", "file_unique_id": "v", "duration": 2}}),
    ],
)
async def test_without_a_server_that_hears_or_sees_she_says_so_once_and_keeps_the_file(
    bot: Bot, kind: str, extra: dict[str, Any]
) -> None:
    await bot.send(bot.people.message(BOB, name="Bob", **extra))
    second = {k: ([v[0] | {"file_id": "again"}] if isinstance(v, list) else v | {
        "file_id": "again"}) for k, v in extra.items()}
    await bot.send(bot.people.message(BOB, name="Bob", **second))
    assert bot.to(BOB) == [texts.cannot_take_in(kind, able=False, first=True, fits=True),
                           texts.cannot_take_in(kind, able=False, first=False, fits=True)]
    assert (await bot.memory.stats())["turns"] == 0
    kept = await bot.memory.media.waiting((kind,))
    assert {w.file_id for w in kept} == {"again", "p" if kind == "photo" else "v"}


async def test_in_the_group_she_says_once_that_she_cannot_listen_and_then_only_keeps_notes(
    bot: Bot,
) -> None:
    await enable_group(bot)
    for n in range(3):
        voice = {"file_id": f"v{n}", "file_unique_id": f"v{n}", "duration": 2}
        await bot.send(bot.people.message(BOB, chat_id=GROUP, name="Bob", voice=voice))
    assert bot.to(GROUP)[-1:] == [
        texts.cannot_take_in("voice", able=False, first=True, fits=True)]
    assert len([t for t in bot.to(GROUP) if "voice" in t]) == 1
    assert len(await bot.memory.media.waiting(("voice",))) == 3


async def test_a_photos_caption_is_answered_as_words_when_she_cannot_see_it(bot: Bot) -> None:
    photo = [{"file_id": "p", "file_unique_id": "p", "width": 1, "height": 1}]
    await bot.send(bot.people.message(BOB, name="Bob", photo=photo, caption="look at this"))
    said = bot.to(BOB)
    assert said[0] == texts.cannot_take_in("photo", able=False, first=True, fits=True)
    assert len(said) == 2  # and her answer to the caption
    assert (await bot.memory.stats())["turns"] >= 1


async def test_a_document_telegram_cannot_hand_over_is_not_shelved(bot: Bot) -> None:
    document = {"file_id": "d", "file_unique_id": "d", "file_name": "notes.pdf"}
    await bot.send(bot.people.message(BOB, name="Bob", document=document))
    assert len(bot.to(BOB)) == 1 and "notes.pdf" not in bot.to(BOB)[0]
    assert (await bot.memory.stats())["turns"] == 0


async def test_an_edit_is_answered_with_how_to_send_it_again(bot: Bot) -> None:
    await bot.send(bot.people.message(BOB, "I meant Tuesday", name="Bob", kind="edited_message"))
    assert bot.to(BOB) == [texts.EDITED]
    assert (await bot.memory.stats())["turns"] == 0


async def test_channel_posts_and_other_updates_are_ignored_without_a_crash(bot: Bot) -> None:
    await bot.send({"update_id": 900, "channel_post": {
        "message_id": 1, "date": 1, "chat": {"id": -100123, "type": "channel", "title": "News"},
        "text": "breaking news"}})
    await bot.send({"update_id": 901, "my_chat_member": {
        "chat": {"id": GROUP, "type": "group", "title": "Home"},
        "from": People.user(OWNER, "Olivia"), "date": 1,
        "old_chat_member": {"status": "left", "user": {"id": BOT_ID, "is_bot": True,
                                                       "first_name": "Wren"}},
        "new_chat_member": {"status": "member", "user": {"id": BOT_ID, "is_bot": True,
                                                         "first_name": "Wren"}}}})
    assert bot.telegram.calls == []


async def test_unknown_commands_point_to_help(bot: Bot) -> None:
    await bot.say(BOB, "/dance", name="Bob")
    assert bot.to(BOB) == [texts.UNKNOWN_COMMAND]


# --- the household group -----------------------------------------------------------------------


async def test_the_group_is_served_only_after_the_owner_enables_it(bot: Bot) -> None:
    await bot.say(BOB, "hello everyone", chat_id=GROUP, name="Bob")
    await bot.say(BOB, "/household", chat_id=GROUP, name="Bob")
    assert bot.telegram.calls == []
    assert (await bot.memory.stats())["turns"] == 0

    await bot.say(OWNER, "/household", chat_id=GROUP, name="Olivia")
    assert bot.to(GROUP) == [texts.HOUSEHOLD_ENABLED]
    await bot.say(OWNER, "/household", chat_id=GROUP, name="Olivia")
    assert bot.to(GROUP)[-1] == texts.HOUSEHOLD_ALREADY
    bot.telegram.clear()

    await bot.say(BOB, "hello everyone", chat_id=GROUP, name="Bob")
    (call,) = bot.telegram.sent(GROUP)
    assert call.text == "Lovely to hear from you." and "reply_parameters" in call.params
    bob = await bot.person(BOB)
    ctx = AccessContext.for_group(Activity.GROUP_CONVERSATION, "a test read")
    lines = await bot.memory.transcript.lines(ctx, chat_id=f"group:{GROUP}")
    assert [t.scope for t in lines] == ["shared", "shared"]
    assert lines[0].speaker_id == bob.person_id


async def test_a_household_group_upgraded_to_a_supergroup_is_still_served(bot: Bot) -> None:
    await enable_group(bot)
    supergroup = -1009876543210
    await bot.send(bot.people.message(OWNER, None, chat_id=GROUP, name="Olivia",
                                      migrate_to_chat_id=supergroup))
    await bot.say(BOB, "hello from the new group", chat_id=supergroup, name="Bob")
    (call,) = bot.telegram.sent(supergroup)
    assert call.text == "Lovely to hear from you."
    elsewhere = -1001111111111  # a group that never was the household's stays unserved
    await bot.send(bot.people.message(OWNER, None, chat_id=-4242, name="Olivia",
                                      migrate_to_chat_id=elsewhere))
    await bot.say(BOB, "anyone here?", chat_id=elsewhere, name="Bob")
    assert bot.telegram.sent(elsewhere) == []


async def test_strangers_in_the_household_group_are_ignored_and_nothing_is_kept(
    bot: Bot,
) -> None:
    await enable_group(bot)
    await bot.say(STRANGER, "my pin is kumquat-99", chat_id=GROUP, name="Mallory")
    assert bot.telegram.calls == []
    assert (await bot.memory.stats())["turns"] == 0
    await bot.memory.checkpoint()
    assert b"kumquat" not in raw_bytes(bot.db)


@pytest.mark.parametrize("command", ["/me", "/export", "/forget cats", "/grants", "/invite",
                                     "/receipts", "/grant proactive health"])
async def test_private_commands_are_refused_in_the_group(bot: Bot, command: str) -> None:
    await enable_group(bot)
    await bot.remember(BOB, "Bob is allergic to cats")
    await bot.say(BOB, command, chat_id=GROUP, name="Bob")
    assert bot.to(GROUP) == [texts.PRIVATE_ONLY]
    assert bot.telegram.sent(GROUP, "sendDocument") == []


async def test_help_and_privacy_work_in_the_group(bot: Bot) -> None:
    await enable_group(bot)
    await bot.say(BOB, "/help", chat_id=GROUP, name="Bob")
    await bot.say(BOB, "/privacy", chat_id=GROUP, name="Bob")
    help_text, privacy_text = bot.to(GROUP)
    assert "/me" in help_text and "/invite" not in help_text
    assert privacy_text == texts.PRIVACY


async def test_in_the_group_a_photo_is_answered_only_when_it_replies_to_her(bot: Bot) -> None:
    await enable_group(bot)
    photo = [{"file_id": "p", "file_unique_id": "p", "width": 1, "height": 1}]
    await bot.send(bot.people.message(BOB, chat_id=GROUP, name="Bob", photo=photo))
    assert bot.telegram.calls == []
    await bot.send(bot.people.message(BOB, chat_id=GROUP, name="Bob", photo=photo,
                                      reply_to_bot=True))
    assert bot.to(GROUP) == [texts.cannot_take_in("photo", able=False, first=True, fits=True)]


# --- commands ----------------------------------------------------------------------------------


async def test_help_lists_the_owners_commands_only_to_the_owner(bot: Bot) -> None:
    await bot.say(BOB, "/help", name="Bob")
    await bot.say(OWNER, "/help", name="Olivia")
    (bob_help,), (owner_help,) = bot.to(BOB), bot.to(OWNER)
    assert "/forget" in bob_help and "/invite" not in bob_help
    assert "/invite" in owner_help and "/audit" in owner_help


async def test_me_lists_only_the_members_own_beliefs(bot: Bot) -> None:
    await bot.remember(BOB, "Bob is allergic to cats")
    await bot.remember(ALICE, "Alice is afraid of spiders")
    await bot.say(BOB, "/me", name="Bob")
    (answer,) = bot.to(BOB)
    assert "Bob is allergic to cats" in answer and "% sure" in answer
    assert "spiders" not in answer
    await bot.say(OWNER, "/me", name="Olivia")
    assert bot.to(OWNER) == [texts.ME_EMPTY]


async def test_forget_shows_what_will_go_and_forgets_on_confirmation_without_repeating_it(
    bot: Bot,
) -> None:
    await bot.remember(BOB, "Bob hides chocolate in the piano")
    await bot.remember(BOB, "Bob likes long walks")
    await bot.say(BOB, "/forget chocolate", name="Bob")
    (preview,) = bot.to(BOB)
    assert "Bob hides chocolate in the piano" in preview and "long walks" not in preview
    forget_token, keep_token = button_tokens(bot)
    assert "chocolate" not in forget_token + keep_token

    await bot.send(bot.people.press(BOB, forget_token, name="Bob"))
    (edit,) = bot.telegram.sent(method="editMessageText")
    assert edit.text == texts.forgotten(1) and "chocolate" not in edit.text
    bob = await bot.person(BOB)
    ctx = AccessContext.for_member(bob.person_id, Activity.MEMBER_INSPECT, "a test read")
    seen = await bot.memory.beliefs.inspect(ctx)
    assert [b.proposition for b in seen] == ["Bob likes long walks"]

    await bot.send(bot.people.press(BOB, keep_token, name="Bob"))
    assert callback_answers(bot)[-1] == texts.BUTTON_INVALID


async def test_forget_shows_that_the_words_go_from_what_was_said_too(bot: Bot) -> None:
    await bot.say(BOB, "I hide chocolate in the piano, do not tell Alice", name="Bob")
    await bot.remember(BOB, "Bob hides chocolate in the piano")
    before = len(bot.to(BOB))
    await bot.say(BOB, "/forget chocolate", name="Bob")
    preview = bot.to(BOB)[before:]
    assert len(preview) == 1
    assert "Bob hides chocolate in the piano" in preview[0]
    assert texts.forget_also(1) in preview[0]
    forget_token, _ = button_tokens(bot)
    await bot.send(bot.people.press(BOB, forget_token, name="Bob"))
    bob = await bot.person(BOB)
    ctx = AccessContext.for_member(bob.person_id, Activity.MEMBER_INSPECT, "a test read")
    lines = await bot.memory.transcript.lines(ctx)
    assert lines and not any("chocolate" in t.text for t in lines)


async def test_a_forged_foreign_or_expired_button_changes_nothing(bot: Bot) -> None:
    await bot.remember(BOB, "Bob hides chocolate in the piano")
    await bot.say(BOB, "/forget chocolate", name="Bob")
    forget_token, keep_token = button_tokens(bot)

    await bot.send(bot.people.press(ALICE, forget_token, name="Alice"))
    await bot.send(bot.people.press(BOB, "forget:chocolate", name="Bob"))
    await bot.send(bot.people.press(STRANGER, forget_token, name="Mallory"))
    assert callback_answers(bot) == [texts.BUTTON_INVALID] * 3
    assert bot.telegram.sent(method="editMessageText") == []
    assert (await bot.memory.stats())["beliefs"] == 1

    bot.clock.advance(minutes=11)
    await bot.send(bot.people.press(BOB, forget_token, name="Bob"))
    assert callback_answers(bot)[-1] == texts.BUTTON_INVALID
    assert (await bot.memory.stats())["beliefs"] == 1

    await bot.say(BOB, "/forget chocolate", name="Bob")
    _, keep_token = button_tokens(bot)
    await bot.send(bot.people.press(BOB, keep_token, name="Bob"))
    assert bot.telegram.sent(method="editMessageText")[-1].text == texts.KEPT
    assert (await bot.memory.stats())["beliefs"] == 1


async def test_forget_before_the_tick_leaves_the_words_nowhere_in_the_database(
    bot: Bot,
) -> None:
    await bot.say(ALICE, "I have been to Oslo once", name="Alice")  # another scope: stays
    bot.model.answer = "Oslo! Good luck with the job in Oslo."  # she repeats it to Bob
    await bot.say(BOB, "I am secretly applying for a job in Oslo", name="Bob")
    await bot.say(BOB, "remind me to email the Oslo recruiter", name="Bob")
    assert (await bot.memory.stats())["beliefs"] == 0  # the tick has not run
    bot.telegram.clear()

    await bot.say(BOB, "/forget Oslo", name="Bob")
    (question,) = bot.to(BOB)
    assert "haven't made a note of that yet" in question and "Oslo" not in question
    forget_token, _ = button_tokens(bot)
    await bot.send(bot.people.press(BOB, forget_token, name="Bob"))
    assert "gone, for good" in bot.telegram.sent(method="editMessageText")[-1].text

    bob = await bot.person(BOB)
    ctx = AccessContext.for_member(bob.person_id, Activity.MEMBER_INSPECT, "a test read")
    assert not any("oslo" in t.text.lower() for t in await bot.memory.transcript.lines(ctx))
    assert not any("oslo" in g.text.lower() for g in await bot.memory.goals.open(ctx))
    alice = await bot.person(ALICE)
    actx = AccessContext.for_member(alice.person_id, Activity.MEMBER_INSPECT, "a test read")
    assert any("Oslo" in t.text for t in await bot.memory.transcript.lines(actx))  # hers stays
    await bot.memory.checkpoint()
    assert raw_bytes(bot.db).count(b"Oslo") == 1  # only Alice's line is left


async def test_forget_with_nothing_matching_or_no_words_says_so(bot: Bot) -> None:
    await bot.say(BOB, "/forget", name="Bob")
    await bot.say(BOB, "/forget unicorns", name="Bob")
    assert bot.to(BOB) == [texts.FORGET_USAGE, texts.FORGET_NOTHING]


async def test_the_owner_can_forget_shared_notes_and_a_member_cannot(bot: Bot) -> None:
    await bot.remember(OWNER, "The wifi is called Hearthnet", shared=True)
    await bot.say(BOB, "/forget shared wifi", name="Bob")
    assert bot.to(BOB) == [texts.OWNER_ONLY]
    await bot.say(OWNER, "/forget shared wifi", name="Olivia")
    assert "Hearthnet" in bot.to(OWNER)[0]
    forget_token, _ = button_tokens(bot)
    await bot.send(bot.people.press(OWNER, forget_token, name="Olivia"))
    assert bot.telegram.sent(method="editMessageText")[-1].text == texts.forgotten(1)
    assert (await bot.memory.stats())["beliefs"] == 0


@pytest.mark.parametrize("command", ["/invite", "/remove Alice", "/audit", "/persona",
                                     "/household", "/grant shared proactive health"])
async def test_owner_commands_are_refused_to_members(bot: Bot, command: str) -> None:
    await bot.say(BOB, command, name="Bob")
    assert bot.to(BOB) == [texts.OWNER_ONLY]
    assert (await bot.memory.stats())["people"] == 3


@pytest.mark.parametrize(
    "command",
    ["/grant", "/grant proactive", "/grant proactive health soon", "/grant proactive health -3",
     "/grant a b c d"],
)
async def test_grant_with_bad_arguments_answers_with_the_usage_line(
    bot: Bot, command: str
) -> None:
    await bot.say(BOB, command, name="Bob")
    assert bot.to(BOB) == [texts.GRANT_USAGE]
    assert await bot.memory.grants.list() == []


async def test_a_grant_that_cannot_be_made_says_why_and_how(bot: Bot) -> None:
    await bot.say(BOB, "/grant proactive credentials", name="Bob")
    await bot.say(BOB, "/grant all credentials", name="Bob")
    await bot.say(BOB, "/grant sometimes health", name="Bob")
    for answer in bot.to(BOB):
        assert answer.startswith("I couldn't do that:") and texts.GRANT_USAGE in answer
    assert await bot.memory.grants.list() == []


async def test_grant_grants_and_revoke_work_over_the_members_own_facts(bot: Bot) -> None:
    await bot.say(BOB, "/grant proactive health 7", name="Bob")
    assert bot.to(BOB)[-1].startswith("Done: I may use your health notes when I write to you")
    await bot.say(BOB, "/grants", name="Bob")
    assert "health your notes, when I write to you first: active" in bot.to(BOB)[-1]
    await bot.say(BOB, "/revoke proactive health", name="Bob")
    assert bot.to(BOB)[-1] == texts.revoked(1)
    await bot.say(BOB, "/revoke proactive health", name="Bob")
    assert bot.to(BOB)[-1] == texts.REVOKE_NOTHING
    await bot.say(BOB, "/grant all all", name="Bob")
    assert bot.to(BOB)[-1].count("Done:") == 8 and "credentials" not in bot.to(BOB)[-1]
    bob = await bot.person(BOB)
    assert {g.grantor_id for g in await bot.memory.grants.list()} == {bob.person_id}


async def test_the_owners_group_grant_says_it_is_over_the_households_notes(bot: Bot) -> None:
    await bot.say(OWNER, "/grant group_conversation health", name="Olivia")
    assert bot.to(OWNER)[-1].startswith("Done: I may use the household's health notes")
    (made,) = await bot.memory.grants.list()
    assert made.scope == "shared"


async def test_the_owner_grants_over_shared_facts(bot: Bot) -> None:
    await bot.say(OWNER, "/grant shared group_conversation finance", name="Olivia")
    assert "the household's finance notes" in bot.to(OWNER)[-1]
    (made,) = await bot.memory.grants.list()
    assert made.scope == "shared"


async def test_receipts_show_when_and_why_without_content(bot: Bot) -> None:
    await bot.remember(BOB, "Bob keeps bees on the roof")
    await bot.say(BOB, "/me", name="Bob")
    await bot.say(BOB, "/receipts", name="Bob")
    answer = bot.to(BOB)[-1]
    assert answer.startswith(texts.RECEIPTS_HEADER)
    assert "the member asked what she knows about them" in answer and "bees" not in answer
    await bot.say(ALICE, "/receipts", name="Alice")
    assert bot.to(ALICE) == [texts.RECEIPTS_EMPTY]


async def test_export_sends_the_members_own_data_as_a_json_file(bot: Bot) -> None:
    await bot.remember(BOB, "Bob is allergic to cats")
    await bot.remember(ALICE, "Alice is afraid of spiders")
    await bot.say(BOB, "/export", name="Bob")
    (call,) = bot.telegram.sent(BOB, "sendDocument")
    ((name, content, _mime),) = call.files.values()
    assert name == "hearth-export-Bob.json"
    document = json.loads(content)
    assert [b["proposition"] for b in document["beliefs"]] == ["Bob is allergic to cats"]
    assert b"spiders" not in content


async def test_audit_shows_ledger_metadata_and_never_content(bot: Bot) -> None:
    await bot.remember(BOB, "Bob keeps bees on the roof")
    await bot.say(BOB, "/me", name="Bob")
    await bot.say(OWNER, "/audit", name="Olivia")
    answer = bot.to(OWNER)[-1]
    assert answer.startswith("Ledger: intact")
    assert "Members: 3" in answer and "inspect" in answer and "Bob" in answer
    assert "bees" not in answer and "asked what she knows" not in answer


async def test_the_owner_removes_a_member_who_becomes_a_stranger(bot: Bot) -> None:
    await bot.remember(ALICE, "Alice is afraid of spiders")
    await bot.say(OWNER, "/remove alice", name="Olivia")
    assert bot.to(OWNER) == [texts.removed("Alice", 1)]
    await bot.say(OWNER, "/remove Olivia", name="Olivia")
    await bot.say(OWNER, "/remove Zed", name="Olivia")
    assert bot.to(OWNER)[1:] == [texts.REMOVE_OWNER, texts.unknown_member("Zed")]
    await bot.say(ALICE, "hello?", name="Alice")
    assert bot.to(ALICE) == [texts.STRANGER_REFUSAL]


async def test_the_owner_approves_a_persona_proposal_with_a_button(bot: Bot) -> None:
    first = await bot.memory.state.propose_persona("Use shorter sentences.", "asked twice",
                                                   "hearth")
    second = await bot.memory.state.propose_persona("Say good night.", "a household habit",
                                                    "hearth")
    await bot.say(OWNER, "/persona", name="Olivia")
    assert len(bot.to(OWNER)) == 2 and "Use shorter sentences." in bot.to(OWNER)[0]
    approve, _reject = button_tokens(bot)  # the last proposal's buttons
    await bot.send(bot.people.press(OWNER, approve, name="Olivia"))
    assert bot.telegram.sent(method="editMessageText")[-1].text == texts.persona_decided(
        second, approve=True)
    await bot.say(OWNER, f"/persona reject {first}", name="Olivia")
    assert bot.to(OWNER)[-1] == texts.persona_decided(first, approve=False)
    await bot.say(OWNER, f"/persona reject {first}", name="Olivia")
    assert bot.to(OWNER)[-1] == texts.persona_missing(first)
    await bot.say(OWNER, "/persona", name="Olivia")
    assert bot.to(OWNER)[-1] == texts.PERSONA_NONE
    await bot.say(OWNER, "/persona maybe", name="Olivia")
    assert bot.to(OWNER)[-1] == texts.PERSONA_USAGE


# --- errors ------------------------------------------------------------------------------------


async def test_an_unexpected_error_is_logged_and_apologised_for_once(
    bot: Bot, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom: internal detail")

    monkeypatch.setattr("bot.handlers.respond", broken)
    caplog.set_level(logging.ERROR, logger="hearth.bot")
    await bot.say(BOB, "hello there", name="Bob")
    assert bot.to(BOB) == [texts.APOLOGY]
    assert all("boom" not in c.text for c in bot.telegram.calls)
    (record,) = [r for r in caplog.records if r.name == "hearth.bot"]
    bob = await bot.person(BOB)
    assert bob.person_id in record.getMessage() and record.exc_info is not None
    assert "hello there" not in caplog.text


async def test_a_failing_gate_stops_the_update_and_apologises_once(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the database is on fire")

    monkeypatch.setattr(bot.memory.people, "by_telegram_id", broken)
    await bot.say(STRANGER, "let me in", name="Mallory")
    assert bot.to(STRANGER) == [texts.APOLOGY]
    assert bot.model.requests == []


async def test_a_failed_typing_action_does_not_stop_the_reply(bot: Bot) -> None:
    bot.telegram.fail["sendChatAction"] = "Bad Request: not now"
    await bot.say(BOB, "still there?", name="Bob")
    assert bot.to(BOB) == ["Lovely to hear from you."]


# --- ordering ----------------------------------------------------------------------------------


async def test_turns_of_one_chat_stay_in_order_while_two_chats_overlap(
    make_bot: BotFactory,
) -> None:
    bot = await make_bot(model=FakeModel(delay=0.05))
    burst = []
    for n in range(4):
        burst.append(bot.people.message(BOB, f"bob {n}", name="Bob"))
        burst.append(bot.people.message(ALICE, f"alice {n}", name="Alice"))
    await bot.app.start()
    for data in burst:
        await bot.app.update_queue.put(as_update(data, bot.app))
    await asyncio.wait_for(bot.app.update_queue.join(), timeout=10)
    await bot.app.stop()

    spans = bot.model.spans
    for who in ("bob", "alice"):
        mine = [s for s in spans if s[0].startswith(who)]
        assert [s[0] for s in mine] == [f"{who} {n}" for n in range(4)]
        assert all(later[1] >= earlier[2] for earlier, later in itertools.pairwise(mine))
    bob = [s for s in spans if s[0].startswith("bob")]
    alice = [s for s in spans if s[0].startswith("alice")]
    assert max(bob[0][1], alice[0][1]) < min(bob[-1][2], alice[-1][2])
    processor = bot.app.update_processor
    assert isinstance(processor, ChatOrderedProcessor) and processor.active_chats == 0


async def test_an_update_without_a_chat_runs_unordered_and_locks_are_dropped() -> None:
    processor = ChatOrderedProcessor(4)
    order: list[str] = []

    async def work(name: str) -> None:
        await asyncio.sleep(0)
        order.append(name)

    await processor.process_update(object(), work("no chat"))
    assert order == ["no chat"] and processor.active_chats == 0


# --- the scheduled work and serving ------------------------------------------------------------


async def test_the_tick_and_the_dream_are_named_jobs_that_never_overlap(bot: Bot) -> None:
    queue = bot.app.job_queue
    assert queue is not None
    (tick,) = queue.get_jobs_by_name("tick")
    (dream,) = queue.get_jobs_by_name("dream")
    assert tick.job.max_instances == 1 and tick.job.coalesce is True
    assert tick.job.trigger.interval == timedelta(seconds=300)
    assert dream.job.max_instances == 1 and "hour='3'" in str(dream.job.trigger)


async def test_the_tick_logs_its_report_and_a_failed_tick_is_only_logged(
    bot: Bot, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[tuple[datetime, str, timedelta, bool, bool]] = []

    async def tick(memory: Memory, model: Any, *, now: datetime, assistant: str,
                   quiet_after: timedelta, drain: bool, model_classes: bool) -> TickReport:
        seen.append((now, assistant, quiet_after, drain, model_classes))
        return TickReport(batches=2, beliefs=3)

    async def dream(memory: Memory, soul: Soul, *, now: datetime) -> DreamReport:
        return DreamReport(report_id=7)

    monkeypatch.setattr("soul.tick.run_tick", tick)
    monkeypatch.setattr("soul.tick.run_dream", dream)
    caplog.set_level(logging.INFO, logger="hearth.bot")
    queue = bot.app.job_queue
    assert queue is not None
    await queue.get_jobs_by_name("tick")[0].run(bot.app)
    await queue.get_jobs_by_name("dream")[0].run(bot.app)
    # Her own lines are labelled with her name; a chat quiet for one tick period is taken;
    # the bot never drains what is still being said; the test's model is no configured
    # gateway, so its classes are not taken.
    assert seen == [(bot.clock.now, "Wren", timedelta(seconds=300), False, False)]
    assert "tick: consolidated 2 batch(es) into 3 belief(s)" in caplog.text
    assert "dream: dream report #7" in caplog.text

    async def failing(memory: Memory, model: Any, **_: Any) -> TickReport:
        raise RuntimeError("the tick broke")

    monkeypatch.setattr("soul.tick.run_tick", failing)
    await queue.get_jobs_by_name("tick")[0].run(bot.app)
    assert "the tick failed" in caplog.text
    assert bot.telegram.calls == []


async def test_serve_polls_sets_the_menu_answers_and_stops_cleanly(tmp_path: Path) -> None:
    memory = await Memory.open(tmp_path / "hearth.db", embedder=HashEmbedder(), create=True)
    try:
        await memory.people.add("Bob", telegram_id=BOB)
        telegram = FakeTelegram()
        config = BotConfig(token=TOKEN, owner_telegram_id=OWNER,
                           base_url="http://127.0.0.1:9/bot")
        app = build_application(config, memory=memory, soul=SOUL, model=FakeModel(),
                                request=telegram)
        telegram.inbox.append(People(telegram).message(BOB, "hello from polling", name="Bob"))
        stop = asyncio.Event()
        ready: list[str] = []
        task = asyncio.create_task(
            serve(app, config, stop=stop, on_ready=ready.append)
        )
        for _ in range(500):
            if telegram.texts(BOB):
                break
            await asyncio.sleep(0.01)
        stop.set()
        await asyncio.wait_for(task, timeout=10)
        assert ready == [BOT_USERNAME]
        assert telegram.texts(BOB) == ["Lovely to hear from you."]
        assert telegram.methods().count("setMyCommands") == 3
        assert not app.running
    finally:
        await memory.close()


async def test_a_webhook_takes_updates_only_at_its_secret_path_with_its_secret(
    tmp_path: Path,
) -> None:
    memory = await Memory.open(tmp_path / "hearth.db", embedder=HashEmbedder(), create=True)
    try:
        await memory.people.add("Bob", telegram_id=BOB)
        telegram = FakeTelegram()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        config = BotConfig(token=TOKEN, owner_telegram_id=OWNER,
                           webhook_url="https://hearth.example.org/tg", webhook_port=port)
        app = build_application(config, memory=memory, soul=SOUL, model=FakeModel(),
                                request=telegram)
        stop = asyncio.Event()
        ready = asyncio.Event()
        task = asyncio.create_task(serve(app, config, stop=stop, on_ready=lambda _: ready.set()))
        await asyncio.wait_for(ready.wait(), timeout=10)
        (registered,) = telegram.sent(method="setWebhook")
        assert registered.params["url"] == f"https://hearth.example.org/tg/{config.webhook_path}"
        assert registered.params["secret_token"] == config.webhook_secret
        url = f"http://127.0.0.1:{port}/{config.webhook_path}"
        update = People(telegram).message(BOB, "hello by webhook", name="Bob")
        async with httpx.AsyncClient(trust_env=False) as http:
            forged = await http.post(url, json=update,
                                     headers={"X-Telegram-Bot-Api-Secret-Token": "guess"})
            secret = {"X-Telegram-Bot-Api-Secret-Token": config.webhook_secret}
            genuine = await http.post(url, json=update, headers=secret)
        assert forged.status_code == 403 and genuine.status_code == 200
        for _ in range(500):
            if telegram.texts(BOB):
                break
            await asyncio.sleep(0.01)
        stop.set()
        await asyncio.wait_for(task, timeout=10)
        assert telegram.texts(BOB) == ["Lovely to hear from you."]
    finally:
        await memory.close()


def test_the_file_url_and_the_webhook_path_come_from_the_configuration() -> None:
    config = BotConfig(token=TOKEN, owner_telegram_id=1, base_url="http://127.0.0.1:8081/bot")
    assert config.base_file_url == "http://127.0.0.1:8081/file/bot"
    assert TOKEN not in repr(config)
    other = BotConfig(token=TOKEN + "x", owner_telegram_id=1)
    assert config.webhook_path != other.webhook_path
    assert "TEST" not in config.webhook_path and config.webhook_secret != config.webhook_path


async def test_a_bad_dream_schedule_is_one_clear_configuration_error(tmp_path: Path) -> None:
    memory = await Memory.open(tmp_path / "hearth.db", create=True)
    try:
        config = BotConfig(token=TOKEN, owner_telegram_id=OWNER, dream_cron="99 3 * * *")
        with pytest.raises(ConfigError, match="HEARTH_DREAM_CRON"):
            build_application(config, memory=memory, soul=SOUL, model=FakeModel(),
                              request=FakeTelegram())
    finally:
        await memory.close()


def test_the_bot_needs_a_token_and_an_owner(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TELEGRAM_BOT_TOKEN", "HEARTH_OWNER_TELEGRAM_ID"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigError, match="TELEGRAM_BOT_TOKEN"):
        BotConfig.from_settings(load_settings(_env_file=None))
    with pytest.raises(ConfigError, match="HEARTH_OWNER_TELEGRAM_ID"):
        BotConfig.from_settings(load_settings(_env_file=None, TELEGRAM_BOT_TOKEN=TOKEN))


# --- in-process books --------------------------------------------------------------------------


def test_a_stranger_is_refused_once_per_day_by_the_in_process_book() -> None:
    book = Strangers(limit=2)
    day = datetime(2025, 1, 1, 23, 59, tzinfo=UTC)
    assert book.first_today(1, day) and not book.first_today(1, day)
    assert book.first_today(2, day) and not book.first_today(3, day)  # over the day's limit
    assert book.first_today(1, day + timedelta(minutes=2))


def test_buttons_are_single_use_per_choice_and_only_for_their_member() -> None:
    buttons = Buttons()
    now = datetime(2025, 1, 1, tzinfo=UTC)
    yes, no = buttons.issue([Pending("forget", 1, "p1", "x"), Pending("keep", 1, "p1", "x")], now)
    assert yes != no and len(buttons) == 2
    assert buttons.redeem(yes, 2, now) is None and len(buttons) == 2
    redeemed = buttons.redeem(yes, 1, now)
    assert redeemed is not None and redeemed.action == "forget"
    assert buttons.redeem(no, 1, now) is None and len(buttons) == 0
    yes, _ = buttons.issue([Pending("forget", 1, "p1"), Pending("keep", 1, "p1")], now)
    assert buttons.redeem(yes, 1, now + timedelta(minutes=10)) is None
    assert buttons.redeem(None, 1, now) is None


def test_application_handler_stop_is_what_the_gate_raises() -> None:
    # The gate relies on python-telegram-bot stopping later groups on this exception.
    assert issubclass(ApplicationHandlerStop, Exception)
    assert isinstance(Update.de_json({"update_id": 1}, None), Update)


# --- splitting long replies --------------------------------------------------------------------


def _squeezed(text: str) -> str:
    return "".join(text.split())


def test_a_short_reply_is_one_chunk_and_an_empty_one_none() -> None:
    assert split_reply("hello") == ["hello"]
    assert split_reply("  \n ") == []


def test_split_prefers_paragraphs_then_lines_then_words() -> None:
    text = "aaaa bbbb\ncccc\n\ndddd eeee"
    assert split_reply(text, limit=14) == ["aaaa bbbb\ncccc", "dddd eeee"]
    assert split_reply(text, limit=10) == ["aaaa bbbb", "cccc", "dddd eeee"]
    assert split_reply(text, limit=5) == ["aaaa", "bbbb", "cccc", "dddd", "eeee"]
    assert split_reply("abcdefghij", limit=4) == ["abcd", "efgh", "ij"]


def test_split_counts_emoji_as_telegram_does() -> None:
    chunks = split_reply("🎉" * 5000)
    assert all(len(c.encode("utf-16-le")) // 2 <= TELEGRAM_LIMIT for c in chunks)
    assert "".join(chunks) == "🎉" * 5000


_words = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"]), min_size=0, max_size=30
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_words, st.sampled_from([" ", "\n", "\n\n", "  \n ", "\t"])),
             max_size=60),
    st.integers(min_value=2, max_value=80),
)
def test_split_chunks_fit_and_rejoin_to_the_text(
    pieces: list[tuple[str, str]], limit: int
) -> None:
    text = "".join(word + sep for word, sep in pieces)
    chunks = split_reply(text, limit)
    assert all(len(c.encode("utf-16-le")) // 2 <= limit for c in chunks)
    assert all(c.strip() == c and c for c in chunks)
    assert _squeezed("".join(chunks)) == _squeezed(text)
    if all(len(w.encode("utf-16-le")) // 2 <= limit for w in text.split()):
        assert " ".join(chunks).split() == text.split()  # no word was cut


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=300))
def test_split_handles_any_long_text_within_the_telegram_limit(base: str) -> None:
    text = base * (2 * TELEGRAM_LIMIT // len(base) + 1)
    chunks = split_reply(text)
    assert all(len(c) <= TELEGRAM_LIMIT for c in chunks)
    assert _squeezed("".join(chunks)) == _squeezed(text)


async def test_when_tells_a_things_history_newest_last_in_the_members_own_time_zone(
    bot: Bot,
) -> None:
    await enable_group(bot)
    bob = await bot.person(BOB)
    bot.clock.now = datetime(2025, 3, 1, 20, 0, tzinfo=UTC)
    old = await bot.memory.beliefs.remember(bob.person_id, "Bob works at the bakery")
    await bot.remember(OWNER, "The bins go out on Tuesday", shared=True)
    bot.clock.advance(days=30)
    new = await bot.memory.beliefs.remember(bob.person_id, "Bob works at the library")
    assert old.belief_id is not None and new.belief_id is not None
    ctx = AccessContext.for_member(bob.person_id, Activity.DM_CONVERSATION, "a test")
    assert await bot.memory.beliefs.supersede(ctx, old.belief_id, new.belief_id)
    bot.clock.advance(days=10)
    await bot.say(BOB, "/timezone Pacific/Auckland", name="Bob")
    await bot.say(BOB, "/when Bob work", name="Bob")
    # 20:00 UTC is 09:00 the next morning in Auckland.
    assert bot.to(BOB)[-1] == "\n".join([
        texts.WHEN_HEADER,
        "• Bob works at the bakery (Bob; from 2 Mar 2025 until 1 Apr 2025)",
        "• Bob works at the library (Bob; from 1 Apr 2025, still so)",
    ])
    await bot.say(BOB, "/when", name="Bob")
    assert bot.to(BOB)[-1] == texts.WHEN_USAGE
    # In the group, only what the household shares: Bob's own private note is not said there.
    await bot.say(BOB, "/when Bob work", chat_id=GROUP, name="Bob")
    assert bot.to(GROUP)[-1] == texts.WHEN_NOTHING
    await bot.say(ALICE, "/when bins", chat_id=GROUP, name="Alice")
    assert bot.to(GROUP)[-1].endswith("• The bins go out on Tuesday (the household; "
                                      "from 1 Mar 2025, still so)")
    # Alice's own chat: Bob's private job is nothing she can be told about.
    await bot.say(ALICE, "/when Bob work", name="Alice")
    assert bot.to(ALICE)[-1] == texts.WHEN_NOTHING


async def test_why_shows_what_her_last_reply_drew_on_and_never_another_members_private_note(
    bot: Bot,
) -> None:
    await enable_group(bot)
    await bot.remember(BOB, "Bob is allergic to cats")
    await bot.remember(OWNER, "The family dog is called Biscuit", shared=True)
    await bot.say(BOB, "Bob is allergic to cats", name="Bob")
    await bot.say(BOB, "/why", name="Bob")
    why = bot.to(BOB)[-1]
    assert why.startswith(texts.WHY_HEADER)
    assert "Bob is allergic to cats" in why and "answers (" in why
    # In the group, her last reply could draw only on what the household shares.
    await bot.say(ALICE, "The family dog is called Biscuit", chat_id=GROUP, name="Alice")
    await bot.say(ALICE, "/why", chat_id=GROUP, name="Alice")
    in_group = bot.to(GROUP)[-1]
    assert "Biscuit" in in_group and "allergic" not in in_group
    # Alice's own chat: she has had no reply there yet.
    await bot.say(ALICE, "/why", name="Alice")
    assert bot.to(ALICE)[-1] == texts.WHY_NOTHING
