"""Documents sent in chat, end to end: the real bot fetches a file from the Bot API emulator,
puts it on the right shelf (a private chat's: the member's; the household group's: shared),
answers with a citation from it, lists it, refuses what it cannot read, and drops it on
/forget, down to the bytes."""

from __future__ import annotations

import time

from tests.e2e.household import (
    ANA,
    BEN,
    GROUP,
    Json,
    Launcher,
    Member,
    Telegram,
    eventually,
    make_household,
    prompt_text,
    text_of,
    turn_prompt,
)
from tests.helpers import raw_bytes
from tests.support.pdf import make_pdf
from tests.support.telegram_emulator import TgChat

TERMS = make_pdf([
    ["Riverside Primary School", "Term dates for the school year 2027 to 2028",
     "Autumn term begins on Monday 6 September 2027."],
    ["Half term holiday: 25 October to 29 October 2027.",
     "Parents evening is on Thursday 18 November at 17:30 in the Kestrel hall."],
    ["Christmas holidays: school closes on 17 December 2027 at 14:00."],
])
BOILER = b"""# Boiler manual

## Error codes

E35 means the water pressure is too low: refill to 1.5 bar with the bronze filling loop.

## Servicing

Have the boiler serviced every twelve months by a registered engineer.
"""


async def _send_file(tg: Telegram, member: Member, chat: TgChat, name: str, data: bytes, *,
                     mime: str) -> str:
    """`member` sends a file into `chat`; returns her answer's text."""
    file_id = await tg.client.upload_file(data, name, mime)
    before = await tg.count(chat)
    message: Json = {
        "chat": chat.to_dict(member.user), "from": member.user.to_dict(),
        "date": int(time.time()),
        "document": {"file_id": file_id, "file_unique_id": "u-" + file_id, "file_name": name,
                     "mime_type": mime, "file_size": len(data)},
    }
    await tg.client.send_raw(message)
    messages = await tg.wait_count(chat, before + 1, timeout=60)
    return text_of(messages[before])


async def test_a_document_is_shelved_for_its_chat_cited_in_answers_and_dropped_on_forget(
    hearth: Launcher, tg: Telegram,
) -> None:
    bot = await hearth.start()
    await make_household(tg)

    said = await _send_file(tg, ANA, ANA.dm, "term-dates.pdf", TERMS, mime="application/pdf")
    assert "term-dates.pdf" in said and "only you can see it" in said
    said = await _send_file(tg, BEN, GROUP, "boiler.md", BOILER, mime="text/markdown")
    assert "household's shelf" in said
    said = await _send_file(tg, ANA, ANA.dm, "broken.pdf", b"%PDF-1.7 not a pdf at all",
                            mime="application/pdf")
    assert "couldn't read" in said and "damaged" in said

    # Ana's question is answered from her document, with its page; Ben's same question in his
    # own chat is given nothing of hers.
    question = "When is the parents evening at school?"
    await tg.say(ANA.user, ANA.dm, question)
    await tg.say(BEN.user, BEN.dm, question)
    prompts = [prompt_text(r) for r in hearth.model.requests
               if "parents evening" in prompt_text(r).lower()
               and "From the documents on the shelf" in prompt_text(r)]
    assert len(prompts) == 1, "only Ana's prompt holds the passage"
    assert "term-dates.pdf, p. 2" in prompts[0] and "Kestrel hall" in prompts[0]

    # The household's document, sent in the group, is Ana's to ask about too.
    pressure = "what does E35 on the boiler mean?"
    await tg.say(ANA.user, ANA.dm, pressure)
    asked = prompt_text(turn_prompt(hearth.model.requests, pressure))
    assert "bronze filling loop" in asked and "boiler.md, Boiler manual / Error codes" in asked

    listed = text_of(await tg.say(ANA.user, ANA.dm, "/docs"))
    assert "term-dates.pdf" in listed and "boiler.md" in listed and "broken.pdf" not in listed
    assert "term-dates.pdf" not in text_of(await tg.say(BEN.user, BEN.dm, "/docs"))

    # /forget names the document: a button drops it, and its words leave the file.
    preview = await tg.say(ANA.user, ANA.dm, "/forget term-dates.pdf")
    assert "term-dates.pdf" in text_of(preview)
    buttons = [b for row in preview["reply_markup"]["inline_keyboard"] for b in row]
    drop = next(b for b in buttons if "drop" in b["text"].lower())
    await tg.client.send_callback(ANA.user, ANA.dm, preview["message_id"], drop["callback_data"])

    async def dropped() -> bool:
        return any("Dropped" in text_of(m) for m in await tg.messages(ANA.dm))

    await eventually(dropped, what="the document to be dropped")
    assert "term-dates.pdf" not in text_of(await tg.say(ANA.user, ANA.dm, "/docs"))

    async def gone() -> bool:
        return b"kestrel hall" not in raw_bytes(hearth.db).lower()

    await eventually(gone, what="the dropped words to leave the database file")
    assert bot.alive
