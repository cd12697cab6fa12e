"""What she knows of a chat's messages decides whether a lost send may be looked for."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.sightings import CLOCKS_MARGIN_S, Sightings

STARTED = 1_800_000_000.0
CHAT = 1002


def _at(seconds_after_start: float) -> datetime:
    return datetime.fromtimestamp(STARTED + seconds_after_start, UTC)


def test_a_members_message_from_before_she_started_gives_no_floor_and_a_later_one_does() -> None:
    seen = Sightings(started=STARTED)
    seen.heard(CHAT, 40, _at(-120))  # waiting at Telegram while she was down
    seen.heard(CHAT, 41, _at(CLOCKS_MARGIN_S / 2))  # the clocks may disagree this much
    assert seen.floor(CHAT) is None
    seen.heard(CHAT, 42, _at(CLOCKS_MARGIN_S + 1))
    assert seen.floor(CHAT) == 42
    seen.heard(CHAT, 39, _at(CLOCKS_MARGIN_S + 2))  # an older id never lowers it
    assert seen.floor(CHAT) == 42


def test_her_confirmed_message_lifts_the_floor_and_ends_a_doubt() -> None:
    seen = Sightings(started=STARTED)
    seen.sent(CHAT, 50)
    assert seen.floor(CHAT) == 50
    seen.doubt(CHAT)  # a message of hers may now sit above 50, unknown
    assert seen.floor(CHAT) is None
    seen.heard(CHAT, 52, _at(CLOCKS_MARGIN_S + 1))  # a member's word does not end the doubt
    assert seen.floor(CHAT) is None
    seen.sent(CHAT, 53)
    assert seen.floor(CHAT) == 53
    assert seen.floor(CHAT + 1) is None  # each chat its own
