"""Transcript lines: secret tokens masked before storing, classified, bounded, NUL-free, and
seen only through the wall (a DM line is the sender's, a group line the household's)."""

from __future__ import annotations

import pytest

from memory import (
    SHARED,
    Activity,
    InvalidRequest,
    Person,
    Role,
    Sensitivity,
    Turn,
    chat_scope,
    private_scope,
)
from memory.transcript import MAX_TURN_CHARS
from tests.helpers import Household, raw_bytes

# Example tokens, assembled from pieces so no scanner mistakes this file for a leak.
OPENAI_KEY = "sk-" + "proj-" + "Ab3dEf6hIj9kLmN0pQrStUvWxYz12345_abcXYZ"
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
CARD = "4111 1111 1111 1111"


async def _dm(home: Household, person: Person, text: str, role: Role = Role.USER) -> int:
    return await home.memory.transcript.append(
        chat_id=f"dm:{person.telegram_id}",
        speaker_id=person.person_id if role == Role.USER else None,
        role=role,
        scope=private_scope(person.person_id),
        text=text,
    )


async def _group(home: Household, person: Person, text: str) -> int:
    return await home.memory.transcript.append(
        chat_id="group:-100", speaker_id=person.person_id, role=Role.USER, scope=SHARED,
        text=text,
    )


async def _line(home: Household, person: Person, turn_id: int) -> Turn:
    lines = await home.memory.transcript.lines(home.dm(person))
    (turn,) = [t for t in lines if t.turn_id == turn_id]
    return turn


# --- masking -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "token"),
    [
        (f"here is my key {OPENAI_KEY} keep it safe", OPENAI_KEY),
        (f"token={GITHUB_TOKEN}", GITHUB_TOKEN),
        (f"card {CARD} expires soon", CARD),
    ],
    ids=["openai-key", "github-token", "card-number"],
)
async def test_a_secret_token_is_masked_before_the_line_is_stored(
    home: Household, text: str, token: str
) -> None:
    m = home.memory
    for i in range(20):  # other lines on the same pages
        await _group(home, home.alice, f"ordinary chatter about the garden, number {i}")
    turn_id = await _dm(home, home.bob, text)
    turn = await _line(home, home.bob, turn_id)
    assert token not in turn.text
    assert "[masked " in turn.text
    await m.checkpoint()
    raw = raw_bytes(m.path)
    assert token.encode() not in raw
    assert token[-12:].encode() not in raw
    assert b"ordinary chatter about the garden" in raw


async def test_a_line_without_secrets_is_stored_as_said(home: Household) -> None:
    text = "Can you remind me about the 4:30 dentist appointment on the 12th?"
    turn_id = await _dm(home, home.bob, text)
    assert (await _line(home, home.bob, turn_id)).text == text


# --- classification ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sensitivity"),
    [
        ("I've been diagnosed with type 2 diabetes.", Sensitivity.HEALTH),
        ("the wifi password is hunter2", Sensitivity.CREDENTIALS),
        ("I owe the bank twelve thousand pounds on my car loan", Sensitivity.FINANCE),
        ("we should repaint the fence this weekend", Sensitivity.ORDINARY),
    ],
)
async def test_a_line_is_classified_when_stored(
    home: Household, text: str, sensitivity: Sensitivity
) -> None:
    turn_id = await _dm(home, home.bob, text)
    assert (await _line(home, home.bob, turn_id)).sensitivity == sensitivity


async def test_a_health_line_is_kept_from_proactive_work_without_a_grant(
    home: Household,
) -> None:
    m = home.memory
    health = await _dm(home, home.bob, "I've been diagnosed with type 2 diabetes.")
    ordinary = await _dm(home, home.bob, "we should repaint the fence this weekend")
    proactive = home.dm(home.bob, Activity.PROACTIVE)
    assert [t.turn_id for t in await m.transcript.lines(proactive)] == [ordinary]
    await m.grants.give(home.bob.person_id, Activity.PROACTIVE, Sensitivity.HEALTH)
    assert [t.turn_id for t in await m.transcript.lines(proactive)] == [health, ordinary]


# --- bounds --------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", " ", "\n\t  \n"])
async def test_an_empty_line_is_refused(home: Household, text: str) -> None:
    with pytest.raises(InvalidRequest, match="empty"):
        await _dm(home, home.bob, text)
    assert await home.memory.transcript.lines(home.dm(home.bob)) == []


async def test_a_line_of_only_nul_bytes_is_refused_as_empty(home: Household) -> None:
    # What would be stored is the text without its NULs: nothing, so nothing is stored.
    with pytest.raises(InvalidRequest, match="empty"):
        await _dm(home, home.bob, "\x00\x00 \x00")
    assert await home.memory.transcript.lines(home.dm(home.bob)) == []


async def test_a_line_longer_than_the_limit_is_refused(home: Household) -> None:
    assert MAX_TURN_CHARS == 16_000
    with pytest.raises(InvalidRequest, match="16000"):
        await _dm(home, home.bob, "a" * (MAX_TURN_CHARS + 1))
    turn_id = await _dm(home, home.bob, "b" * MAX_TURN_CHARS)
    assert (await _line(home, home.bob, turn_id)).text == "b" * MAX_TURN_CHARS


async def test_a_stored_line_holds_no_nul_bytes(home: Household) -> None:
    turn_id = await _dm(home, home.bob, "hel\x00lo the\x00re")
    turn = await _line(home, home.bob, turn_id)
    assert turn.text == "hello there"
    assert "\x00" not in turn.text


async def test_a_line_with_a_malformed_scope_is_refused(home: Household) -> None:
    for scope in ("", "private:", "public", "shared "):
        with pytest.raises(InvalidRequest, match="scope"):
            await home.memory.transcript.append(chat_id="dm:1002", speaker_id=None,
                                          role=Role.USER, scope=scope, text="hello")


# --- scope and visibility ------------------------------------------------------------------


async def test_dm_lines_are_the_senders_and_group_lines_are_shared(home: Household) -> None:
    m = home.memory
    bob_dm = await _dm(home, home.bob, "I'm planning a surprise party for Alice")
    bob_reply = await _dm(home, home.bob, "Lovely, I'll keep it between us.", Role.ASSISTANT)
    alice_dm = await _dm(home, home.alice, "I think Bob is up to something")
    group = await _group(home, home.bob, "dinner is at seven everyone")

    bob_view = await m.transcript.lines(home.dm(home.bob))
    assert [t.turn_id for t in bob_view] == [bob_dm, bob_reply, group]
    assert {t.turn_id: t.scope for t in bob_view} == {
        bob_dm: private_scope(home.bob.person_id),
        bob_reply: private_scope(home.bob.person_id),
        group: SHARED,
    }
    assert [t.role for t in bob_view] == [Role.USER, Role.ASSISTANT, Role.USER]

    alice_view = await m.transcript.lines(home.dm(home.alice))
    assert [t.turn_id for t in alice_view] == [alice_dm, group]
    owner_view = await m.transcript.lines(home.dm(home.owner))
    assert [t.turn_id for t in owner_view] == [group]
    group_view = await m.transcript.lines(home.group())
    assert [t.turn_id for t in group_view] == [group]
    # naming another member's chat does not open it
    assert await m.transcript.lines(home.dm(home.alice), chat_id="dm:1002") == []
    assert [t.turn_id for t in await m.transcript.lines(home.dm(home.bob), chat_id="dm:1002")] == [
        bob_dm, bob_reply
    ]


async def test_transcript_returns_the_most_recent_lines_oldest_first(home: Household) -> None:
    ids = [await _dm(home, home.bob, f"line number {i}") for i in range(10)]
    recent = await home.memory.transcript.lines(home.dm(home.bob), limit=3)
    assert [t.turn_id for t in recent] == ids[-3:]
    assert [t.text for t in recent] == ["line number 7", "line number 8", "line number 9"]
    assert await home.memory.transcript.lines(home.dm(home.bob), limit=0) == []


def test_a_dm_line_is_the_members_scope_and_a_group_line_is_shared() -> None:
    assert chat_scope(group=False, member_id="pabc") == "private:pabc"
    assert chat_scope(group=True, member_id="pabc") == SHARED
