"""A real python-telegram-bot Application against the Telegram emulator, over real HTTP.

These prove the harness (tests/support/telegram_emulator.py and tests/e2e/emulator/server.js)
before hearth's own end-to-end tests lean on it. They need Node 20 and
`npm ci --prefix tests/e2e/emulator`.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeAlias

import pytest
from telegram import (
    BotCommand,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Update,
)
from telegram.constants import ChatAction
from telegram.error import BadRequest
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    ExtBot,
    JobQueue,
    MessageHandler,
    TypeHandler,
    filters,
)

from tests.support.telegram_emulator import (
    INSTALL_COMMAND,
    Emulator,
    EmulatorError,
    TgChat,
    TgUser,
)

ALICE = TgUser(1001, "Alice", "alice")
BOB = TgUser(1002, "Bob")
HOUSEHOLD = TgChat.group(-4001, "The Household")
COMMANDS = [BotCommand("start", "say hello"), BotCommand("report", "send the weekly report")]
REPORT = "week 12: 3 chores done\nnon-ASCII survives: ü ✓\n".encode()

Ctx = ContextTypes.DEFAULT_TYPE
App: TypeAlias = Application[
    ExtBot[None], Ctx, dict[Any, Any], dict[Any, Any], dict[Any, Any], JobQueue[Ctx]
]


async def echo(update: Update, context: Ctx) -> None:
    assert update.effective_message is not None and update.effective_user is not None
    text = update.effective_message.text
    await update.effective_message.reply_text(f"{update.effective_user.first_name}: {text}")


async def start(update: Update, context: Ctx) -> None:
    assert update.effective_message is not None and update.effective_user is not None
    keyboard = InlineKeyboardMarkup(
        [[InlineKeyboardButton("yes", callback_data="yes"),
          InlineKeyboardButton("no", callback_data="no")]]
    )  # fmt: skip
    await update.effective_message.reply_text(
        f"hello {update.effective_user.first_name}, args={context.args}", reply_markup=keyboard
    )


async def pressed(update: Update, context: Ctx) -> None:
    query = update.callback_query
    assert query is not None
    await query.answer(f"noted: {query.data}")
    await query.edit_message_text(f"you chose {query.data}")


async def report(update: Update, context: Ctx) -> None:
    assert update.effective_chat is not None and update.effective_message is not None
    await context.bot.send_chat_action(update.effective_chat.id, ChatAction.UPLOAD_DOCUMENT)
    await update.effective_message.reply_document(
        REPORT, filename="report-week-12.txt", caption="your weekly report"
    )


async def edited(update: Update, context: Ctx) -> None:
    assert update.edited_message is not None
    await update.edited_message.reply_text(f"you changed it to {update.edited_message.text}")


async def sticker(update: Update, context: Ctx) -> None:
    assert update.effective_message is not None and update.effective_message.sticker
    await update.effective_message.reply_text(f"nice {update.effective_message.sticker.emoji}")


async def photo(update: Update, context: Ctx) -> None:
    message = update.effective_message
    assert message is not None
    file = await message.photo[-1].get_file()
    content = await file.download_as_bytearray()
    await message.reply_text(f"got {len(content)} bytes: {bytes(content).decode()}")


async def post_init(app: App) -> None:
    await app.bot.set_my_commands(COMMANDS)


def build_app(emu: Emulator, seen: list[Update]) -> App:
    async def record(update: Update, context: Ctx) -> None:
        seen.append(update)

    app = (
        ApplicationBuilder()
        .token(emu.token)
        .base_url(emu.base_url)
        .base_file_url(emu.base_file_url)
        .post_init(post_init)
        .build()
    )
    app.add_handler(TypeHandler(Update, record), group=-1)
    app.add_handler(CommandHandler("start", start))
    app.add_handler(CommandHandler("report", report))
    app.add_handler(CallbackQueryHandler(pressed))
    app.add_handler(MessageHandler(filters.UpdateType.EDITED_MESSAGE & filters.TEXT, edited))
    app.add_handler(MessageHandler(filters.Sticker.ALL, sticker))
    app.add_handler(MessageHandler(filters.PHOTO, photo))
    app.add_handler(
        MessageHandler(filters.UpdateType.MESSAGE & filters.TEXT & ~filters.COMMAND, echo)
    )
    return app


@asynccontextmanager
async def running_bot(emu: Emulator) -> AsyncIterator[list[Update]]:
    """Run the bot as `run_polling` would (post_init included) until the block ends; yields
    the list of updates it has received so far."""
    seen: list[Update] = []
    app = build_app(emu, seen)
    async with app:
        assert app.post_init is not None
        await app.post_init(app)  # run_polling calls it; a hand-driven app must do so itself
        await app.start()
        assert app.updater is not None
        await app.updater.start_polling(poll_interval=0.05)
        try:
            yield seen
        finally:
            await app.updater.stop()
            await app.stop()


async def test_two_users_and_a_group_each_see_only_the_replies_meant_for_them() -> None:
    async with Emulator() as emu, running_bot(emu):
        await emu.send_text(ALICE, TgChat.private(ALICE), "hi from alice")
        await emu.send_text(BOB, TgChat.private(BOB), "hi from bob")
        asked = await emu.send_text(BOB, HOUSEHOLD, "who does the dishes?")

        to_alice = await emu.wait_for_messages(ALICE.id, 1)
        to_bob = await emu.wait_for_messages(BOB.id, 1)
        to_group = await emu.wait_for_messages(HOUSEHOLD.id, 1)

        assert [m["text"] for m in to_alice] == ["Alice: hi from alice"]
        assert [m["text"] for m in to_bob] == ["Bob: hi from bob"]
        assert [m["text"] for m in to_group] == ["Bob: who does the dishes?"]
        assert to_alice[0]["chat"] == {
            "id": ALICE.id, "type": "private", "first_name": "Alice", "username": "alice"
        }  # fmt: skip
        assert to_group[0]["chat"] == {"id": -4001, "type": "group", "title": "The Household"}
        assert to_group[0]["from"]["is_bot"] is True
        assert to_group[0]["from"]["username"] == emu.bot_username
        # PTB quotes the message it answers in a group; the emulator resolves the quote.
        assert to_group[0]["reply_to_message"]["message_id"] == asked
        assert abs(to_alice[0]["date"] - time.time()) < 60  # seconds, not milliseconds


async def test_a_command_reply_carries_buttons_and_pressing_one_edits_that_message() -> None:
    async with Emulator() as emu, running_bot(emu):
        await emu.send_command(ALICE, TgChat.private(ALICE), "/start from-link")
        [greeting] = await emu.wait_for_messages(ALICE.id, 1)
        assert greeting["text"] == "hello Alice, args=['from-link']"
        buttons = greeting["reply_markup"]["inline_keyboard"][0]
        assert [b["callback_data"] for b in buttons] == ["yes", "no"]

        query_id = await emu.send_callback(
            ALICE, TgChat.private(ALICE), greeting["message_id"], "yes"
        )
        for _ in range(250):
            [message] = await emu.bot_messages(ALICE.id)
            if message["text"] != greeting["text"]:
                break
            await asyncio.sleep(0.02)

        assert message["message_id"] == greeting["message_id"]
        assert message["text"] == "you chose yes"
        assert "reply_markup" not in message  # editing the text without markup drops the keys
        assert "edit_date" in message
        answers = await emu.callback_answers()
        assert [(a["callback_query_id"], a["text"]) for a in answers] == [(query_id, "noted: yes")]


async def test_a_command_in_a_group_addressed_to_the_bot_by_name_is_answered() -> None:
    async with Emulator() as emu, running_bot(emu):
        await emu.send_command(BOB, HOUSEHOLD, f"/start@{emu.bot_username} now")
        await emu.send_command(BOB, HOUSEHOLD, "/start@some_other_bot never")
        await emu.send_text(BOB, HOUSEHOLD, "after")
        messages = await emu.wait_for_messages(HOUSEHOLD.id, 2)
        assert [m["text"] for m in messages] == ["hello Bob, args=['now']", "Bob: after"]


async def test_a_handler_shows_a_chat_action_and_sends_a_document_the_user_can_read() -> None:
    async with Emulator() as emu, running_bot(emu):
        await emu.send_command(BOB, HOUSEHOLD, "/report")
        [message] = await emu.wait_for_messages(HOUSEHOLD.id, 1)

        assert message["caption"] == "your weekly report"
        assert message["document"]["file_name"] == "report-week-12.txt"
        [document] = await emu.documents(HOUSEHOLD.id)
        assert document.content == REPORT
        assert document.file_name == "report-week-12.txt"
        assert document.mime_type == "text/plain"
        assert document.message_id == message["message_id"]
        assert [a.action for a in await emu.chat_actions(HOUSEHOLD.id)] == ["upload_document"]
        assert await emu.documents(ALICE.id) == []
        assert await emu.chat_actions(ALICE.id) == []


async def test_the_commands_set_in_post_init_are_what_telegram_shows() -> None:
    async with Emulator() as emu, running_bot(emu):
        assert await emu.my_commands() == [c.to_dict() for c in COMMANDS]


async def test_unknown_methods_and_broken_requests_are_bad_requests_not_network_errors() -> None:
    async with Emulator() as emu:
        app = ApplicationBuilder().token(emu.token).base_url(emu.base_url).build()
        async with app:
            assert app.bot.username == emu.bot_username
            assert app.bot.id == emu.bot_id
            with pytest.raises(BadRequest, match=r"(?i)not emulated"):
                await app.bot.send_dice(ALICE.id)
            with pytest.raises(BadRequest, match=r"(?i)text is empty"):
                await app.bot.send_message(ALICE.id, " ")
            with pytest.raises(BadRequest, match="too long"):
                await app.bot.send_message(ALICE.id, "x" * 4097)
            with pytest.raises(BadRequest, match=r"(?i)message to edit not found"):
                await app.bot.edit_message_text("new", chat_id=ALICE.id, message_id=999)
            sent = await app.bot.send_message(ALICE.id, "same")
            assert sent.from_user is not None and sent.from_user.id == emu.bot_id
            with pytest.raises(BadRequest, match="not modified"):
                await sent.edit_text("same")
            edited = await sent.edit_text("changed")
            assert not isinstance(edited, bool) and edited.text == "changed"
            with pytest.raises(BadRequest, match=r"(?i)bot_command_invalid"):
                await app.bot.set_my_commands([BotCommand("Start", "capitalised")])
            chat = await app.bot.get_chat(HOUSEHOLD.id)
            assert chat.type == "group"
            assert await app.bot.delete_message(ALICE.id, sent.message_id) is True
            assert await emu.bot_messages(ALICE.id) == []


async def test_edited_messages_stickers_and_photos_reach_the_bot_through_send_raw() -> None:
    async with Emulator() as emu, running_bot(emu) as seen:
        chat = TgChat.private(ALICE)
        original = await emu.send_text(ALICE, chat, "buy milk")
        await emu.wait_for_messages(ALICE.id, 1)
        await emu.edit_text(ALICE, chat, original, "buy oat milk")
        await emu.send_raw({
            "from": ALICE.to_dict(), "chat": chat.to_dict(ALICE),
            "sticker": {"file_id": "stk", "file_unique_id": "stk-u", "type": "regular",
                        "width": 512, "height": 512, "is_animated": False,
                        "is_video": False, "emoji": "🐈"},
        })  # fmt: skip
        file_id = await emu.upload_file(b"tiny picture", "cat.jpg", "image/jpeg")
        await emu.send_raw({
            "from": ALICE.to_dict(), "chat": chat.to_dict(ALICE),
            "photo": [{"file_id": file_id, "file_unique_id": "p-u", "width": 1, "height": 1}],
        })  # fmt: skip

        messages = await emu.wait_for_messages(ALICE.id, 4)
        assert [m["text"] for m in messages] == [
            "Alice: buy milk",
            "you changed it to buy oat milk",
            "nice 🐈",
            "got 12 bytes: tiny picture",
        ]
        assert seen[1].edited_message is not None
        assert seen[1].edited_message.message_id == original


async def test_an_update_sent_while_the_bot_is_down_is_delivered_on_the_next_start() -> None:
    async with Emulator() as emu:
        async with running_bot(emu):
            await emu.send_text(ALICE, TgChat.private(ALICE), "one")
            await emu.wait_for_messages(ALICE.id, 1)
        await emu.send_text(ALICE, TgChat.private(ALICE), "two")
        async with running_bot(emu) as seen:
            messages = await emu.wait_for_messages(ALICE.id, 2)
        assert [m["text"] for m in messages] == ["Alice: one", "Alice: two"]
        assert [u.effective_message.text for u in seen if u.effective_message] == ["two"]


async def test_a_second_bot_token_on_the_same_emulator_has_its_own_chats() -> None:
    async with Emulator() as emu:
        other = emu.client("222:other-bot")
        await other.send_text(ALICE, TgChat.private(ALICE), "to the other bot")
        async with running_bot(emu):
            await emu.send_text(ALICE, TgChat.private(ALICE), "to hearth")
            await emu.wait_for_messages(ALICE.id, 1)
            await asyncio.sleep(0.2)
        assert [m["text"] for m in await emu.bot_messages(ALICE.id)] == ["Alice: to hearth"]
        assert await other.bot_messages(ALICE.id) == []


def test_a_synchronous_start_and_stop_leaves_no_process_behind() -> None:
    emu = Emulator()
    emu.start()
    pid = emu.pid
    assert pid is not None
    try:
        assert emu.base_url == f"http://127.0.0.1:{emu.port}/bot"
        assert emu.base_file_url == f"http://127.0.0.1:{emu.port}/file/bot"
        assert asyncio.run(emu.bot_messages(ALICE.id)) == []
    finally:
        emu.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # gone and reaped, not a zombie
    with pytest.raises(EmulatorError, match="not running"):
        _ = emu.base_url


def test_without_its_npm_packages_the_harness_says_how_to_install_them(tmp_path: Path) -> None:
    with pytest.raises(EmulatorError, match=INSTALL_COMMAND):
        Emulator(emulator_dir=tmp_path).start()
