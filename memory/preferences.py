"""Each member's own settings for the lane she writes first in: time zone and quiet hours.

Owns: the `member_settings` table (an IANA zone name, quiet hours as minutes past local
midnight). Must not: hold anything a member said, or decide what a zone or an hour means (the
soul reads them; memory only keeps them).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from memory.errors import InvalidRequest
from memory.models import Frozen
from memory.store import Row, Store

MINUTES_A_DAY = 24 * 60


class Preferences(Frozen):
    """A member's settings; None where they chose nothing (the household's zone, no quiet)."""

    person_id: str
    timezone: str | None = None
    quiet_start: int | None = None  # minutes past local midnight
    quiet_end: int | None = None

    @property
    def quiet(self) -> tuple[int, int] | None:
        if self.quiet_start is None or self.quiet_end is None:
            return None
        return self.quiet_start, self.quiet_end


def _preferences(row: Row) -> Preferences:
    return Preferences(person_id=str(row["person_id"]), timezone=row["timezone"],
                       quiet_start=row["quiet_start"], quiet_end=row["quiet_end"])


class PreferenceBook:
    """`memory.preferences`."""

    def __init__(self, store: Store, now: Callable[[], datetime]) -> None:
        self._store = store
        self._now = now

    async def get(self, person_id: str) -> Preferences:
        async with self._store.transaction() as tx:
            row = await tx.fetchone("SELECT * FROM member_settings WHERE person_id = ?",
                                    (person_id,))
        return Preferences(person_id=person_id) if row is None else _preferences(row)

    async def all(self) -> dict[str, Preferences]:
        async with self._store.transaction() as tx:
            rows = await tx.fetchall("SELECT * FROM member_settings")
        return {str(r["person_id"]): _preferences(r) for r in rows}

    async def set_timezone(self, person_id: str, zone: str | None) -> None:
        await self._upsert(person_id, "timezone", zone)

    async def set_quiet(self, person_id: str, quiet: tuple[int, int] | None) -> None:
        """Quiet hours from `start` to `end` (minutes past local midnight; they may wrap past
        midnight), or none."""
        if quiet is not None:
            start, end = quiet
            if not (0 <= start < MINUTES_A_DAY and 0 <= end < MINUTES_A_DAY) or start == end:
                raise InvalidRequest("quiet hours run from one time of day to another")
        async with self._store.transaction() as tx:
            await tx.execute(
                "INSERT INTO member_settings(person_id, quiet_start, quiet_end, updated_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT(person_id) DO UPDATE SET"
                " quiet_start = excluded.quiet_start, quiet_end = excluded.quiet_end,"
                " updated_at = excluded.updated_at",
                (person_id, None if quiet is None else quiet[0],
                 None if quiet is None else quiet[1], self._now().isoformat()),
            )

    async def _upsert(self, person_id: str, column: str, value: object) -> None:
        async with self._store.transaction() as tx:
            await tx.execute(
                f"INSERT INTO member_settings(person_id, {column}, updated_at) VALUES (?, ?, ?)"
                f" ON CONFLICT(person_id) DO UPDATE SET {column} = excluded.{column},"
                " updated_at = excluded.updated_at",
                (person_id, value, self._now().isoformat()),
            )
