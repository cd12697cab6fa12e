"""The exception tree of memory. Expected outcomes are values, not exceptions.

    HearthError
    ├── StoreError        the database is missing, corrupt, locked or from a newer hearth
    ├── UnknownPerson     a name or id that is not a household member
    ├── InvalidRequest    input the caller can fix (empty text, an activity that cannot be granted)
    └── LedgerError       the install secret is missing or unreadable

Messages are one line, written for the person at the keyboard, and never carry remembered
content or a secret token.
"""

from __future__ import annotations


class HearthError(Exception):
    """The root of every error hearth raises on purpose."""


class StoreError(HearthError):
    pass


class UnknownPerson(HearthError):
    pass


class InvalidRequest(HearthError):
    pass


class LedgerError(HearthError):
    pass
