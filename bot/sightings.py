"""What she knows of each chat's messages, so a send whose answer was lost is checked before it
goes again (`bot.request.PatientRequest`).

The Bot API has no idempotency key and no way to read a message back. What it has: an edit of
one of her own messages to exactly what it already says is refused as "message is not
modified", and an edit of a message that is not hers, or not there, is refused otherwise. So
after a `sendMessage` whose connection dropped, she asks, for each message id above the last
one she knows in that chat (the chat's floor), for an edit to the very text she sent: "not
modified" finds the message delivered, and it is not sent a second time.

That check must never change a message, and an edit changes one only when it is hers and says
something else. So the ids it asks about are only those above a floor below which every one of
her messages lies, where any message of hers above it is the one in doubt:

- the floor is her last message in the chat that Telegram confirmed, or a member's message that
  Telegram dated after she started (so any message of hers above it is one this process sent);
- sends to one chat take turns (`lock`), so no other message of hers is on its way meanwhile;
- a send that ended in doubt (its answer lost, not found by the check, not sent again with an
  answer) leaves the chat `doubtful`: a message of hers may sit above the floor, so no check is
  made there until her next confirmed message lifts the floor over it.

When the check cannot tell (Telegram unreachable, a server that does not answer edits as
Telegram does, no floor yet), the message goes again: at most one repeat, never a loss.
Must not: hold message text beyond the send it checks.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime

# How much later than her start Telegram must date a member's message for it to be a floor:
# room for the two clocks to disagree.
CLOCKS_MARGIN_S = 10.0


class Sightings:
    """Per chat: the floor, whether a message of hers may sit above it, and the turn-taking of
    sends. In memory only: after a restart every chat starts with no floor."""

    def __init__(self, started: float | None = None) -> None:
        self._started = time.time() if started is None else started
        self._floors: dict[int, int] = {}
        self._doubtful: set[int] = set()
        self._locks: dict[int, asyncio.Lock] = {}

    def lock(self, chat: int) -> asyncio.Lock:
        return self._locks.setdefault(chat, asyncio.Lock())

    def heard(self, chat: int, message_id: int, date: datetime) -> None:
        """A member's message reached her: a floor when Telegram dated it after she started."""
        if date.timestamp() >= self._started + CLOCKS_MARGIN_S:
            self._lift(chat, message_id)

    def sent(self, chat: int, message_id: int) -> None:
        """Telegram confirmed a message of hers (or the check found it)."""
        self._lift(chat, message_id)
        self._doubtful.discard(chat)

    def doubt(self, chat: int) -> None:
        """A send ended without knowing whether Telegram has it."""
        self._doubtful.add(chat)

    def floor(self, chat: int) -> int | None:
        """The id above which the chat may be checked, or None when it may not be."""
        if chat in self._doubtful:
            return None
        return self._floors.get(chat)

    def _lift(self, chat: int, message_id: int) -> None:
        if message_id > self._floors.get(chat, 0):
            self._floors[chat] = message_id
