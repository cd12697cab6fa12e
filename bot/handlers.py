"""The gatekeeper, the conversation and everything that is not a command.

Owns: who gets through (`gatekeeper`, handler group -1: the owner by the configured Telegram id,
members by their principal, strangers refused once a day with nothing of theirs stored, invite
codes redeemed), handing a text to `soul.turn.respond` (with the reminder desk) and sending the
reply, honest answers to
what she cannot read, and the one error handler. Must not: hold SQL or prompt text, store
anything a stranger said, or put an error's text in a chat.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from telegram import Audio, Message, MessageEntity, PhotoSize, Update, User, Voice
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import ApplicationHandlerStop

from bot import texts
from bot.context import Hearth, HearthContext
from bot.proactive import arm
from bot.replies import keep_typing
from memory import (
    MAX_DOCUMENT_BYTES,
    MAX_TURN_CHARS,
    SHARED,
    Delivery,
    InvalidRequest,
    Person,
    StoreBusy,
    UnknownPerson,
    Unreadable,
    dm_chat,
    group_chat,
    private_scope,
)
from soul.model import ModelError
from soul.turn import respond

log = logging.getLogger("hearth.bot")

_GROUPS = frozenset({ChatType.GROUP, ChatType.SUPERGROUP})
# The expected failures a member can act on; their messages are written for people.
USER_FACING = (InvalidRequest, UnknownPerson)


@dataclass(frozen=True)
class ParsedCommand:
    name: str
    args: list[str]


def command_of(message: Message | None, bot_username: str | None) -> ParsedCommand | None:
    """The command a message starts with, if it is addressed to this bot (or to no bot)."""
    if message is None or not message.text or not message.entities:
        return None
    first = message.entities[0]
    if first.type != MessageEntity.BOT_COMMAND or first.offset != 0:
        return None
    word = message.text[1 : first.length]
    name, _, target = word.partition("@")
    if target and (bot_username is None or target.lower() != bot_username.lower()):
        return None
    return ParsedCommand(name.lower(), message.text[first.length :].split())


def _display_name(user: User) -> str:
    return (user.full_name or "").strip() or "someone"


# --- the gate ----------------------------------------------------------------------------------


async def gatekeeper(update: Update, context: HearthContext) -> None:
    """Runs first for every update: admit a member (setting `context.person`) or stop.

    Raises ApplicationHandlerStop for everyone else, so no later handler ever sees them.
    """
    hearth = context.hearth
    user, chat = update.effective_user, update.effective_chat
    if update.message is None and update.edited_message is None and (
        update.callback_query is None
    ):
        # Channel posts, membership changes, polls, ...: there is no member to serve.
        raise ApplicationHandlerStop
    if user is None or chat is None or user.is_bot:
        raise ApplicationHandlerStop
    if chat.type == ChatType.PRIVATE:
        person = await _principal(update, context, user)
        if person is None:
            await _stranger(update, context, user)
            raise ApplicationHandlerStop
        context.group = False
    elif chat.type in _GROUPS:
        moved = update.message.migrate_to_chat_id if update.message is not None else None
        if moved is not None:
            # Telegram upgraded the group to a supergroup: a household group stays one.
            if await hearth.memory.household.move_group(str(chat.id), str(moved)):
                log.info("a household group moved to a new chat id")
            raise ApplicationHandlerStop
        if not await hearth.memory.household.is_household_group(str(chat.id)):
            command = command_of(update.message, context.bot.username)
            asks = command is not None and command.name == "household"
            if not (asks and user.id == hearth.owner_telegram_id):
                raise ApplicationHandlerStop  # not served until the owner enables it
        person = await _principal(update, context, user)
        if person is None:
            raise ApplicationHandlerStop  # a stranger's lines in a group are ignored
        context.group = True
    else:
        raise ApplicationHandlerStop
    context.person = person
    hearth.note_update(update.update_id, person.person_id)


async def _principal(update: Update, context: HearthContext, user: User) -> Person | None:
    """The member behind a Telegram user: the owner by the configured id, never by who wrote
    first; anyone else only if they hold a principal. When the database's owner and the
    configured id disagree, neither side is served until a person fixes it."""
    hearth = context.hearth
    try:
        if user.id == hearth.owner_telegram_id:
            return await hearth.memory.household.owner_principal(user.id, user.first_name or "")
        person = await hearth.memory.people.by_telegram_id(user.id)
        if person is not None and person.is_owner:
            raise InvalidRequest("the database's owner is not the configured owner")
    except InvalidRequest:
        log.error("the configured owner's Telegram id does not match the database's owner")
        chat = update.effective_chat
        if chat is not None and chat.type == ChatType.PRIVATE and update.message is not None:
            await context.bot.send_message(chat.id, texts.OWNER_MISMATCH)
        raise ApplicationHandlerStop from None
    return person


async def _stranger(update: Update, context: HearthContext, user: User) -> None:
    """A stranger in a private chat: redeem an invite, or refuse politely (once a day) and
    tell the owner. Nothing the stranger wrote is stored or logged."""
    hearth = context.hearth
    if update.callback_query is not None:
        await update.callback_query.answer(texts.BUTTON_INVALID)
        return
    message = update.message
    if message is None:  # an edit: not a new message, nothing to answer
        return
    command = command_of(message, context.bot.username)
    if command is not None and command.name == "start" and command.args:
        await _join(context, message, user, command.args[0])
        return
    if not hearth.strangers.first_today(user.id, hearth.now()):
        return
    log.info("refused a stranger in a private chat")
    await message.reply_text(texts.STRANGER_REFUSAL)
    notice = texts.stranger_notice(user.id, _display_name(user), user.username)
    await _tell_owner(context, notice)


async def _join(context: HearthContext, message: Message, user: User, code: str) -> None:
    hearth = context.hearth
    try:
        person = await hearth.memory.household.redeem_invite(code, user.id, user.first_name or "")
    except InvalidRequest as exc:
        log.warning("an invite could not be redeemed: %s", exc)
        person = None
    if person is None:
        await message.reply_text(texts.INVITE_INVALID)
        return
    log.info("member %s joined with an invite", person.person_id)
    await message.reply_text(texts.welcome(person.name))
    await _tell_owner(context, texts.joined_notice(person.name))


async def _tell_owner(context: HearthContext, text: str) -> None:
    """A DM to the owner; they may not have opened a chat with her yet, so failing is fine."""
    try:
        await context.bot.send_message(context.hearth.owner_telegram_id, text)
    except TelegramError as exc:
        log.warning("could not send the owner a notice: %s", type(exc).__name__)


# --- the conversation --------------------------------------------------------------------------


async def chat(update: Update, context: HearthContext) -> None:
    """A member's text: one turn through `soul.turn.respond`, the reply sent back."""
    message = update.message
    if message is None:
        return
    await _converse(update, context, message.text or "")


async def _converse(update: Update, context: HearthContext, text: str) -> None:
    """One turn of `text` as the member's line (what they typed, or what she heard or saw in
    what they sent), the reply sent back."""
    message, chat_ = update.message, update.effective_chat
    if message is None or chat_ is None or update.effective_user is None:
        return
    person, hearth = context.member, context.hearth
    if not text.replace("\x00", "").strip():
        await message.reply_text(texts.EMPTY)
        return
    if len(text) > MAX_TURN_CHARS:
        await message.reply_text(texts.too_long(MAX_TURN_CHARS))
        return
    group = context.group
    chat_id = group_chat(chat_.id) if group else dm_chat(person)
    durable = hearth.intake is not None and update.update_id in hearth.intake.durable
    delivery = Delivery(
        chat=chat_.id,
        reply_to=message.message_id if group else None,
        update_id=update.update_id if durable else None,
    )
    try:
        async with keep_typing(context.bot, chat_.id, hearth.typing_interval):
            reply = await respond(
                hearth.memory,
                hearth.soul,
                hearth.model,
                speaker=person,
                chat_id=chat_id,
                group=group,
                text=text,
                now=hearth.now(),
                delivery=delivery,
                desk=hearth.desk,
                telegram_chat=chat_.id,
            )
    except USER_FACING as exc:
        await message.reply_text(texts.could_not(str(exc)))
        return
    if durable and hearth.intake is not None:
        hearth.intake.completed(update)  # done in the same transaction as her reply
    if reply.fallback:
        log.warning("turn %s answered with the fallback reply", reply.user_turn_id)
    # The reply is in the outbox (stored with the turn); the courier sends it, or leaves it
    # pending for the resume job when Telegram does not take it yet.
    if hearth.courier is not None:
        await hearth.courier.deliver(context.bot, chat_.id)
    if reply.reminders:  # a reminder was made: the lane's one job is armed for it
        await arm(context.app)


async def document(update: Update, context: HearthContext) -> None:
    """A file a member sent: read onto the shelf (theirs in a private chat, the household's
    in the group) and confirmed, or refused with the reason. The file's bytes are read and
    let go; only its passages are kept. A file Telegram could not hand over yet stays in the
    inbox and is fetched again by the resume job."""
    message = update.message
    if message is None or message.document is None:
        return
    person, hearth = context.member, context.hearth
    sent = message.document
    title = sent.file_name or "document"
    if sent.file_size is not None and sent.file_size > MAX_DOCUMENT_BYTES:
        await message.reply_text(texts.document_too_large(title, MAX_DOCUMENT_BYTES // 2**20))
        return
    try:
        async with keep_typing(context.bot, message.chat_id, hearth.typing_interval):
            data = bytes(await (await sent.get_file()).download_as_bytearray())
            shelved = await hearth.memory.shelf.put(person.person_id, title, data,
                                                    shared=context.group)
    except Unreadable as exc:
        await message.reply_text(texts.unreadable(title, str(exc)))
        return
    except TelegramError as exc:
        log.warning("a document could not be fetched: %s", type(exc).__name__)
        durable = hearth.intake is not None and update.update_id in hearth.intake.durable
        if durable and hearth.intake is not None:
            hearth.intake.keep(update)
        await message.reply_text(texts.SHELF_FETCH_FAILED if durable else texts.APOLOGY)
        return
    log.info("a document of %d passage(s) was shelved", shelved.passages)
    await message.reply_text(texts.shelved(shelved.title, shelved.pages, shelved.passages,
                                           shared=context.group, replaced=shelved.replaced))


async def media(update: Update, context: HearthContext) -> None:
    """A voice note or a photo: heard or seen through the configured server and answered as
    the member's line ("(voice note, transcribed) ..."), the file let go once read. Without a
    server that hears or sees, or when it fails, the file's id waits (`memory.media`) to be
    taken in later, the member is told so (the whole story once, then briefly in their own
    chat; in the group, once only), and a photo's caption is answered as words. In the
    household group a photo is taken in only when it answers her, since a family group shares
    photos all day."""
    message = update.message
    if message is None or update.effective_chat is None:
        return
    person, hearth = context.member, context.hearth
    kind, sent, name, mime = _media_of(message)
    if sent is None:
        return
    if context.group and kind == "photo" and not _is_reply_to_her(message, context.bot.id):
        return
    caption = (message.caption or "").strip()
    able = kind in hearth.senses.kinds
    fits = sent.file_size is None or sent.file_size <= MAX_DOCUMENT_BYTES
    if able and fits:
        try:
            async with keep_typing(context.bot, message.chat_id, hearth.typing_interval):
                data = bytes(await (await sent.get_file()).download_as_bytearray())
                line = await hearth.senses.take_in(kind, data, filename=name, mime=mime,
                                                   caption=caption)
        except (TelegramError, ModelError) as exc:
            log.warning("a %s could not be taken in now: %s", kind, type(exc).__name__)
        else:
            if len(line) > MAX_TURN_CHARS:  # a long voice note: what fits in one line
                line = line[: MAX_TURN_CHARS - 1] + "…"
            await _converse(update, context, line)
            return
    if fits:
        await _keep_for_later(update, context, kind, sent.file_id)
    first = await hearth.memory.media.first_notice(person.person_id, kind)
    if first or able or not fits or not context.group:  # the group hears the story once
        await message.reply_text(texts.cannot_take_in(kind, able=able, first=first, fits=fits))
    if caption:
        await _converse(update, context, caption)


def _media_of(message: Message) -> tuple[str, Voice | Audio | PhotoSize | None, str, str]:
    """(kind, the file to fetch, a file name, its type) of a voice note, audio or photo."""
    if message.voice is not None:
        return "voice", message.voice, "voice.ogg", message.voice.mime_type or "audio/ogg"
    if message.audio is not None:
        name = message.audio.file_name or "audio.mp3"
        return "voice", message.audio, name, message.audio.mime_type or "audio/mpeg"
    if message.photo:
        return "photo", max(message.photo, key=lambda p: p.width * p.height), "photo.jpg", (
            "image/jpeg")
    return "photo", None, "", ""


async def _keep_for_later(update: Update, context: HearthContext, kind: str,
                          file_id: str) -> None:
    person, hearth = context.member, context.hearth
    chat_ = update.effective_chat
    if chat_ is None:
        return
    await hearth.memory.media.wait(
        kind=kind, file_id=file_id, telegram_chat=chat_.id, speaker_id=person.person_id,
        chat_id=group_chat(chat_.id) if context.group else dm_chat(person),
        scope=SHARED if context.group else private_scope(person.person_id))


def _is_reply_to_her(message: Message, bot_id: int) -> bool:
    replied = message.reply_to_message
    return bool(replied and replied.from_user and replied.from_user.id == bot_id)


async def non_text(update: Update, context: HearthContext) -> None:
    """Photos, stickers, voice, files, places...: an honest answer, nothing stored. In the
    household group only when it answers her, since a family group shares photos all day."""
    message = update.message
    if message is None:
        return
    if context.group and not _is_reply_to_her(message, context.bot.id):
        return
    await message.reply_text(texts.NON_TEXT)


async def edited(update: Update, context: HearthContext) -> None:
    """She keeps what was first said; an edit is answered in a private chat only."""
    message = update.edited_message
    if message is None or context.group:
        return
    await context.bot.send_message(message.chat_id, texts.EDITED)


async def unknown_command(update: Update, context: HearthContext) -> None:
    message = update.message
    if message is None or command_of(message, context.bot.username) is None:
        return  # addressed to another bot in a group
    await message.reply_text(texts.UNKNOWN_COMMAND)


# --- errors ------------------------------------------------------------------------------------


async def on_error(update: object, context: HearthContext) -> None:
    """The one error handler: log the exception by ids (never the update's content), apologise
    once in the chat, and stop every later handler for this update."""
    error = context.error
    hearth = context.hearth
    if isinstance(update, Update) and isinstance(error, StoreBusy):
        await _wait_for_the_database(update, context, hearth)
        raise ApplicationHandlerStop
    if isinstance(update, Update):
        person = hearth.recent.get(update.update_id, "-")
        log.error("update %s (person %s) failed", update.update_id, person, exc_info=error)
        await _apologise(update, context, hearth)
        raise ApplicationHandlerStop
    if error is not None and isinstance(error, TelegramError):
        log.warning("Telegram: %s", error)  # polling trouble: the updater retries by itself
    else:
        log.error("a background task failed", exc_info=error)


async def _wait_for_the_database(update: Update, context: HearthContext, hearth: Hearth) -> None:
    """The database stayed locked past the store's bound: a member's update stays in the inbox
    and is answered later (the resume job); the chat hears so once, not once per message."""
    intake = hearth.intake
    if intake is None or update.update_id not in intake.durable:
        log.warning("update %s could not be handled: the database is busy", update.update_id)
        await _apologise(update, context, hearth)
        return
    intake.keep(update)
    log.warning("update %s waits in the inbox: the database is busy", update.update_id)
    chat = update.effective_chat
    if chat is None or chat.id in intake.troubled:
        return
    intake.troubled.add(chat.id)
    try:
        await context.bot.send_message(chat.id, texts.TROUBLE_SAVING)
    except TelegramError as exc:
        log.warning("could not tell a chat about the busy database: %s", type(exc).__name__)


async def _apologise(update: Update, context: HearthContext, hearth: Hearth) -> None:
    chat = update.effective_chat
    if chat is None or (chat.type != ChatType.PRIVATE and chat.type not in _GROUPS):
        return
    if chat.type in _GROUPS and not await _safe_is_group(hearth, chat.id):
        return
    try:
        await context.bot.send_message(chat.id, texts.APOLOGY)
    except TelegramError as exc:
        log.warning("could not apologise in a chat: %s", type(exc).__name__)


async def _safe_is_group(hearth: Hearth, chat_id: int) -> bool:
    try:
        return await hearth.memory.household.is_household_group(str(chat_id))
    except Exception:  # noqa: BLE001 -- memory may be what failed; then stay quiet in groups
        return False
