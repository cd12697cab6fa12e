"""The time a question asks about: "what did Anna share on 16 June?", "what did Tom say in
March?", "what happened yesterday?".

Recall prefers what was said in that time (`memory.recall`): the words of a line seldom carry
the date it was said on, and a question naming a day is asked about what was said then as often
as about a date a line mentions (which the keywords find). Dates are read in the four languages
the classifier knows: a day and a month ("16 June", "June 16th", "le 3 mars"), with a year or
without, a month ("in March", "March 2023"), a year ("in 2023"), and "yesterday", "last week",
"last month" and "last year". A month or day without a year is the latest one not after now
("what did Ellie do in December?" asked in July is last December); a time still to come ("in
2031") names no period, since nothing was said then yet.

Owns: the month names and the periods. Must not: guess: a word that is only maybe
a month ("may", "march") counts only beside a day, a year or "in".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

_MONTH_NAMES = (
    "january jan januar jänner janvier enero",
    "february feb februar février fevrier febrero",
    "march mar märz mars marzo",
    "april apr avril abril",
    "may mai mayo",
    "june jun juni juin junio",
    "july jul juli juillet julio",
    "august aug août aout agosto",
    "september sep sept septembre septiembre setiembre",
    "october oct oktober octobre octubre",
    "november nov novembre noviembre",
    "december dec dezember décembre decembre diciembre",
)
MONTHS: dict[str, int] = {name: number for number, names in enumerate(_MONTH_NAMES, start=1)
                          for name in names.split()}
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th|er|\.)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
# Most specific first: a day of a month, a month of a year, a month after "in", a year.
_PATTERNS = (
    re.compile(rf"\b{_DAY}\s+(?:of\s+|de\s+)?(?P<month>{_MONTH})\b\.?(?:,?\s+(?:de\s+)?{_YEAR})?"),
    re.compile(rf"\b(?P<month>{_MONTH})\b\.?\s+{_DAY}\b(?:,?\s+{_YEAR})?"),
    re.compile(rf"\b(?P<month>{_MONTH})\b\.?,?\s+(?:de\s+)?{_YEAR}\b"),
    re.compile(rf"\b(?:in|during|since|im|en|au\s+mois\s+de)\s+(?P<month>{_MONTH})\b"),
    re.compile(rf"\b(?:in|during|im|en)\s+{_YEAR}\b"),
)
_RELATIVE = {
    # Not the French "hier": it is German for "here".
    "yesterday": "day", "gestern": "day", "ayer": "day",
    "last week": "week", "letzte woche": "week", "semaine dernière": "week",
    "la semana pasada": "week",
    "last month": "month", "letzten monat": "month", "mois dernier": "month",
    "el mes pasado": "month",
    "last year": "year", "letztes jahr": "year", "année dernière": "year",
    "el año pasado": "year",
}
_RELATIVE_PATTERN = re.compile(
    r"\b(?:" + "|".join(re.escape(k) for k in sorted(_RELATIVE, key=len, reverse=True)) + r")\b")


@dataclass(frozen=True)
class Period:
    """A stretch of time, UTC, `start` included and `end` not; `phrase`: the words naming it."""

    start: datetime
    end: datetime
    phrase: str = field(default="", compare=False)

    def holds(self, at: str) -> bool:
        """Whether an ISO instant (a row's `at`) falls in the period."""
        when = datetime.fromisoformat(at)
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return self.start <= when < self.end


def asked_period(text: str, now: datetime) -> Period | None:
    """The period `text` names, or None. A day is taken with a day either side (what was said
    the evening before, or the morning after, still belongs to it)."""
    folded = text.casefold()
    for pattern in _PATTERNS:
        found = pattern.search(folded)
        if found is None:
            continue
        parts = found.groupdict()
        year = int(parts["year"]) if parts.get("year") else None
        month = MONTHS[parts["month"]] if parts.get("month") else None
        day = int(parts["day"]) if parts.get("day") else None
        period = _period(year, month, day, now)
        if period is not None:
            return replace(period, phrase=found.group()) if period.start <= now else None
    relative = _RELATIVE_PATTERN.search(folded)
    if relative is None:
        return None
    return replace(_relative(_RELATIVE[relative.group()], now), phrase=relative.group())


def _period(year: int | None, month: int | None, day: int | None,
            now: datetime) -> Period | None:
    if month is None:
        if year is None:
            return None
        return Period(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))
    if year is None:  # the latest such month (or day) not after now
        year = now.year
        if (month, day or 1) > (now.month, now.day):
            year -= 1
    try:
        if day is not None:
            start = datetime(year, month, day, tzinfo=UTC)
            return Period(start - timedelta(days=1), start + timedelta(days=2))
        start = datetime(year, month, 1, tzinfo=UTC)
    except ValueError:  # "31 June": no such day
        return None
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return Period(start, end)


def _relative(unit: str, now: datetime) -> Period:
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "day":
        return Period(today - timedelta(days=1), today)
    if unit == "week":
        monday = today - timedelta(days=today.weekday())
        return Period(monday - timedelta(days=7), monday)
    if unit == "month":
        first = today.replace(day=1)
        return Period((first - timedelta(days=1)).replace(day=1), first)
    first = today.replace(month=1, day=1)
    return Period(first.replace(year=first.year - 1), first)
