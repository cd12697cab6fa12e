"""The exception tree of memory. Expected outcomes are values, not exceptions.

    HearthError
    ├── StoreError        the database is missing, corrupt, locked or from a newer hearth
    │   └── StoreBusy     locked by another program past the wait bound, or cannot be written
    │                     just now (disk full, I/O): nothing was stored; try the same work later
    ├── UnknownPerson     a name or id that is not a household member
    ├── UnknownMind       a token that is no live mind's credential (unknown, revoked, malformed)
    ├── InvalidRequest    input the caller can fix (empty text, an activity that cannot be granted)
    └── LedgerError       the install secret is missing or unreadable

Outside the tree, because no member's input can cause it: `ContentRefused`, a statement that
tried to read or write remembered content beside the gate (a defect in the code, never
caught).

Messages are one line, written for the person at the keyboard, and never carry remembered
content or a secret token.
"""

from __future__ import annotations


class HearthError(Exception):
    """The root of every error hearth raises on purpose."""


class StoreError(HearthError):
    pass


class StoreBusy(StoreError):
    """Nothing was written: the database stayed locked past the wait bound, or could not be
    written just now. The caller keeps what it was saving and tries again later."""


class UnknownPerson(HearthError):
    pass


class UnknownMind(HearthError):
    """Every refused token gets this one message, whichever way it failed."""


class InvalidRequest(HearthError):
    pass


class LedgerError(HearthError):
    pass


class ContentRefused(RuntimeError):
    """A statement read or wrote a walled table through a transaction, not through the gate
    (or a lane was handed a condition that reads past its scope)."""
