"""Voice notes and photos, end to end: the real bot fetches them from the Bot API emulator and
has the local model server hear or see them (its transcription endpoint; a completion given an
image), so what a member said or showed becomes their line and is answered. Without a server
that hears or sees she says so, once in full, keeps the file's id, and takes it in after a
restart with one configured."""

from __future__ import annotations

import sqlite3
import time

from tests.e2e.household import (
    ANA,
    BEN,
    Json,
    Launcher,
    Member,
    Telegram,
    eventually,
    make_household,
    prompt_text,
    text_of,
)
from tests.support.model_server import seen_image, spoken_audio
from tests.support.telegram_emulator import TgChat

SENSES = {"HEARTH_AUDIO_MODEL": "test-whisper", "HEARTH_VISION_MODEL": "test-model"}


async def _send_media(tg: Telegram, member: Member, chat: TgChat, kind: str, data: bytes, *,
                      caption: str = "") -> str:
    """`member` sends a voice note or a photo into `chat`; returns her answer's text."""
    mime = "audio/ogg" if kind == "voice" else "image/jpeg"
    file_id = await tg.client.upload_file(data, f"{kind}.bin", mime)
    item: Json = {"file_id": file_id, "file_unique_id": "u-" + file_id, "file_size": len(data)}
    message: Json = {"chat": chat.to_dict(member.user), "from": member.user.to_dict(),
                     "date": int(time.time())}
    if kind == "voice":
        message["voice"] = item | {"duration": 4, "mime_type": mime}
    else:
        message["photo"] = [item | {"width": 800, "height": 600}]
    if caption:
        message["caption"] = caption
    before = await tg.count(chat)
    await tg.client.send_raw(message)
    messages = await tg.wait_count(chat, before + 1, timeout=60)
    return text_of(messages[before])


def _lines(db: object, needle: str) -> list[str]:
    with sqlite3.connect(str(db)) as conn:
        rows = conn.execute("SELECT text FROM turns WHERE role = 'user'").fetchall()
    return [r[0] for r in rows if needle in r[0]]


async def test_a_voice_note_and_a_photo_are_heard_and_seen_and_answered_as_the_members_line(
    hearth: Launcher, tg: Telegram,
) -> None:
    bot = await hearth.start(extra=SENSES)
    await make_household(tg)

    await _send_media(tg, ANA, ANA.dm, "voice",
                      spoken_audio("the piano tuner comes on Friday, can you believe it"))
    heard = [prompt_text(r) for r in hearth.model.requests
             if "piano tuner comes on Friday" in prompt_text(r)]
    assert heard, "the transcribed words reached her prompt"
    assert hearth.model.server.transcriptions == 1
    assert _lines(hearth.db, "(voice note, transcribed) the piano tuner comes on Friday")

    await _send_media(tg, BEN, BEN.dm, "photo", seen_image("a red kite above the allotment"),
                      caption="look what flew over")
    assert hearth.model.server.images == 1
    (line,) = _lines(hearth.db, "a red kite above the allotment")
    assert line.startswith("(photo, as she saw it)") and 'Caption: "look what flew over"' in line
    assert bot.alive


async def test_without_a_server_that_hears_she_says_so_once_and_takes_it_in_once_one_is_set(
    hearth: Launcher, tg: Telegram,
) -> None:
    bot = await hearth.start()
    await make_household(tg)

    first = await _send_media(tg, ANA, ANA.dm, "voice", spoken_audio("the boiler is leaking"))
    assert "can't listen to voice notes on this setup" in first and "HEARTH_AUDIO_MODEL" in first
    second = await _send_media(tg, ANA, ANA.dm, "voice",
                               spoken_audio("and the kitchen tap drips"))
    assert "kept this one too" in second and "HEARTH_AUDIO_MODEL" not in second
    shown = await _send_media(tg, ANA, ANA.dm, "photo", seen_image("a wet floor"),
                              caption="the floor this morning")
    assert "can't see photos" in shown
    # The caption is words she can read: it is answered as a line of its own.
    await eventually(lambda: bool(_lines(hearth.db, "the floor this morning")),
                     what="the photo's caption stored as Ana's line")
    assert hearth.model.server.transcriptions == 0
    assert not _lines(hearth.db, "boiler is leaking")
    assert await bot.stop() == 0

    restarted = await hearth.start(extra=SENSES)

    def waiting() -> int:
        with sqlite3.connect(str(hearth.db)) as conn:
            return int(conn.execute("SELECT count(*) FROM media_waiting").fetchone()[0])

    async def heard_later() -> bool:
        return waiting() == 0

    await eventually(heard_later, timeout=60, what="the kept voice notes and photo taken in")
    (line,) = _lines(hearth.db, "the boiler is leaking")
    assert "(voice note, transcribed)" in line and line.startswith("(sent ")
    assert _lines(hearth.db, "kitchen tap drips") and _lines(hearth.db, "a wet floor")
    assert restarted.alive
