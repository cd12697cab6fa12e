"""The time a question asks about: "what did Maria share on 16 June?", "what did Tom say in
March?", "what happened yesterday?".

Recall prefers what was said in that time (`memory.recall`): the words of a line seldom carry
the date it was said on, and a question naming a day is asked about what was said then as often
as about a date a line mentions (which the keywords find). Dates are read in the four languages
the classifier knows: a day and a month ("16 June", "June 16th", "le 3 mars"), with a year or
without, a month ("in March", "March 2023"), a year ("in 2023"), and "yesterday", "last week",
"last month" and "last year". A month or day without a year is the latest one not after now
("what did Ellie do in December?" asked in July is last December); a time still to come ("in
2031") names no period, since nothing was said then yet.

A question may also ask what held before a change ("when did I first book the Lisbon trip?",
"my old passport"): `asks_before`, which keeps recall from putting a newer word first. One
asking when something is or will be (`asks_for_a_time`) is answered only by words naming a time
(`names_a_time`).

Owns: the month names, the periods and those words. Must not: guess: a word that is only maybe
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


# Words asking what held before a change: "when did I first book the trip?", "my old passport",
# "where did I use to work?", in the four languages. "First" counts as the adverb only (after
# a pronoun: "did I first"), not "my first day"; "old" only as what was had ("my old
# passport"), not "how old is Ellie?"; "use to" only after "did" ("where did I use to work?",
# not "what does Nate use to make it?").
_BEFORE = re.compile(
    r"\b(?:originally|initially|at first|used to|did(?: \w+){1,4} use to|previously|former"
    r"|earlier"
    r"|(?:my|your|his|her|our|their|the) old"
    r"|ursprünglich|anfangs|zuerst|früher|alte[nmrs]?|au début|d'abord|ancien(?:ne)?s?"
    r"|al principio|originalmente|antes|antigu[oa]s?)\b"
    r"|\b(?:i|we|you|he|she|they|ich|wir|je|nous|yo)\s+first\b")


def asks_before(text: str) -> bool:
    """Whether `text` asks what held before a change ("when did I first book the Lisbon
    trip?" after the holiday moved to Porto): then a newer word on the thing does not come
    first (`memory.recall`)."""
    return _BEFORE.search(text.casefold()) is not None


# What a text says when it changes what was said before: "instead", "changed her mind",
# "pushed back to", "switched to", "moved to", "no longer", "change of plan", "cancelled", and
# the same in German, French and Spanish.
_REVISING = re.compile(
    r"\b(?:instead|change[ds]? (?:of plan|(?:her|his|my|their|our) minds?|to)|changed"
    r"|(?:pushed|put|moved) (?:back|forward)|postponed|rescheduled|cancell?ed|called off"
    r"|switched|swapped|moved to|no longer|not any ?more|anymore|after all|now)\b"
    r"|\b(?:stattdessen|jetzt|verschoben|abgesagt|geändert|nicht mehr"
    r"|plutôt|finalement|reporté|annulé|changé|plus maintenant|maintenant"
    r"|en cambio|al final|aplazad[oa]|cancelad[oa]|cambiad[oa]|ya no|ahora)\b")


def revises(text: str) -> bool:
    """Whether `text` speaks as a change to something said before ("Gillian changed her mind,
    she's staying", "the expedition got pushed back to 23 May", "Waterstones on Saturdays
    instead"): what lets a newer word join the older one it changes (`memory.recall`)."""
    return _REVISING.search(text.casefold()) is not None


_NOW = re.compile(
    r"\b(?:still|now|nowadays|these days|at the moment|currently|any ?more|in the end|latest"
    r"|noch|jetzt|mittlerweile|inzwischen|encore|maintenant|actuellement|désormais"
    r"|todavía|aún|ahora|actualmente)\b")


def asks_now(text: str) -> bool:
    """Whether `text` asks what holds now, after any change ("is my boss still leaving in
    April?", "where's Sunday lunch these days?", "which day was the plumber booked for in the
    end?"): then the newer word on a thing is wanted even where the question's words leave it
    out (`memory.recall`)."""
    return _NOW.search(text.casefold()) is not None


# A question asking when something is or will be ("When is mum's operation?", "Hey, what night
# is netball practice?", "wann ist ...?") is answered only by words naming a time: a day, a month,
# a date, an hour or a time of the day, week or year ("Thursday nights", "next week", "at
# 5pm"). One asking when something was ("When did I pass my theory test?", "Which date did
# the appointment end up on?") may be answered by when a line was said ("Passed my theory test
# today!", "Dentist done, no fillings!"), so it asks for no such words.
_ASKS_WHEN = re.compile(
    r"(?:^|[,.!?;:])\W*(?:when\s+(?:is|are|will|does|do|am)\b|when['\u2019]s\b"
    r"|(?:what|which)\s+(?:night|day|date|time|evening|morning|afternoon|month|year|weekend"
    r"|week)s?\s+(?:is|are|will|does|do|should|shall|am)\b"
    r"|what\s+time\s+(?:is|are|will|does|do|should|shall|am)\b"
    r"|wann\s+(?:ist|sind|wird|werden|habe|hat|haben)\b|quand\s+(?:est|sont|aura|aurai)\b"
    r"|cu[áa]ndo\s+(?:es|son|ser[áa]|tengo|tiene)\b)")
_WEEKDAYS = (
    "monday tuesday wednesday thursday friday saturday sunday montag dienstag mittwoch"
    " donnerstag freitag samstag sonntag lundi mardi mercredi jeudi vendredi samedi dimanche"
    " lunes martes miércoles miercoles jueves viernes sábado sabado domingo"
)
_TIMES = (
    "today tonight tomorrow yesterday weekend week month year morning evening night afternoon"
    " noon midnight spring summer autumn fall winter christmas easter weekday daily weekly"
    " monthly yearly fortnight heute morgen gestern abend nacht woche wochenende monat jahr"
    " sommer winter demain soir nuit semaine mois année été hiver hoy mañana noche semana"
    " mes año verano invierno"
)
_NAMES_A_TIME = re.compile(
    r"\b(?:" + "|".join(f"{w}s?" for w in (*_WEEKDAYS.split(), *_TIMES.split())) + "|"
    + _MONTH + r")\b|\b\d{1,2}(?:[:.]\d\d)?\s*(?:am|pm|h|uhr)\b|\bo'clock\b"
    r"|\b\d{1,2}[./]\d{1,2}\b|\b(?:19|20)\d\d\b|\b\d{1,2}(?:st|nd|rd|th)\b")


def asks_for_a_time(question: str) -> bool:
    """Whether `question` asks when something is or will be (`_ASKS_WHEN`)."""
    return _ASKS_WHEN.search(question.casefold()) is not None


def names_a_time(text: str) -> bool:
    """Whether `text` names a time: a day, a month, a date, an hour, a time of the day, week or
    year."""
    return _NAMES_A_TIME.search(text.casefold()) is not None
