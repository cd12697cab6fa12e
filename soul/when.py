"""Time in words: when a member means, read in their own time zone.

Owns: finding the words that say *when* in a reminder ("tomorrow at 9", "in two hours", "on
Friday evening", "next Tuesday at 14:30", "every Monday", and the same in German, French and
Spanish, the languages the classifier knows) and turning them into an instant.

Dates and durations are read by dateparser (a maintained library that knows these four
languages' day names, months, "tomorrow" and "in 3 days"). Two things it does not do well are
read here: the clock time ("at 9" is the 9th of a month to dateparser, "um 9 Uhr" is ignored)
and the part of the day ("evening" in English only); and recurrence ("every Monday"), which it
has no notion of. A time of day the member did not name is hearth's choice (09:00 for a day,
18:00 for an evening) and is marked as not exact, so quiet hours may hold it back.

Must not: guess. What it cannot place (no time at all, "later", a time already past, more than
two years away) is None, and the caller asks one short question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import dateparser

LANGUAGES = ("en", "de", "fr", "es")
DEFAULT_HOUR = 9  # a day without a time: its morning
FARTHEST = timedelta(days=731)
SOONEST = timedelta(seconds=30)

# Parts of the day and the hour hearth takes for each (the member named no clock time).
_PARTS: tuple[tuple[str, int], ...] = (
    (r"(?:this|in\s+the|tomorrow)\s+morning|morning|heute\s+morgen|am\s+morgen|morgens|früh"
     r"|vormittags?|ce\s+matin|le\s+matin|du\s+matin|matin|por\s+la\s+mañana"
     r"|de\s+la\s+mañana", 9),
    (r"(?:this|in\s+the)\s+afternoon|afternoon|am\s+nachmittag|nachmittags?"
     r"|cet\s+après-midi|l'après-midi|après-midi|de\s+l'après-midi|por\s+la\s+tarde"
     r"|de\s+la\s+tarde|esta\s+tarde", 15),
    (r"(?:this|in\s+the)\s+evening|evening|heute\s+abend|am\s+abend|abends|abend"
     r"|ce\s+soir|le\s+soir|du\s+soir|soir", 18),
    (r"tonight|at\s+night|night|heute\s+nacht|nachts|cette\s+nuit|la\s+nuit"
     r"|esta\s+noche|por\s+la\s+noche|de\s+la\s+noche|noche", 20),
)
_NOON = r"noon|midday|mittags?|midi|mediodía"
_MIDNIGHT = r"midnight|mitternacht|minuit|medianoche"

_WEEKDAYS: dict[str, int] = {}
for _index, _names in enumerate((
    "monday mon montag lundi lunes", "tuesday tue tues dienstag mardi martes",
    "wednesday wed mittwoch mercredi miércoles miercoles",
    "thursday thu thurs donnerstag jeudi jueves", "friday fri freitag vendredi viernes",
    "saturday sat samstag sonnabend samedi sábado sabado",
    "sunday sun sonntag dimanche domingo",
)):
    for _name in _names.split():
        _WEEKDAYS[_name] = _index
_DAY_NAMES = "|".join(sorted((n for n in _WEEKDAYS if len(n) > 3), key=len, reverse=True))
_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
    "|januar|jänner|februar|märz|mai|juni|juli|oktober|dezember"
    "|janvier|février|fevrier|mars|avril|juin|juillet|août|aout|septembre|octobre|novembre"
    "|décembre|decembre|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre"
    "|setiembre|octubre|noviembre|diciembre"
)
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "ein": 1, "eine": 1, "einer": 1, "einem": 1, "un": 1, "une": 1,
    "uno": 1, "una": 1, "two": 2, "zwei": 2, "deux": 2, "dos": 2, "three": 3, "drei": 3,
    "trois": 3, "tres": 3, "four": 4, "vier": 4, "quatre": 4, "cuatro": 4, "five": 5,
    "fünf": 5, "cinq": 5, "cinco": 5, "six": 6, "sechs": 6, "seis": 6, "seven": 7, "sieben": 7,
    "sept": 7, "siete": 7, "eight": 8, "acht": 8, "huit": 8, "ocho": 8, "nine": 9, "neun": 9,
    "neuf": 9, "nueve": 9, "ten": 10, "zehn": 10, "dix": 10, "diez": 10, "twelve": 12,
    "zwölf": 12, "douze": 12, "doce": 12, "fifteen": 15, "fünfzehn": 15, "quinze": 15,
    "quince": 15, "twenty": 20, "zwanzig": 20, "vingt": 20, "veinte": 20, "thirty": 30,
    "dreißig": 30, "trente": 30, "treinta": 30,
}
_NUMBER = r"\d{1,3}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True))
_UNIT = (
    r"minutes?|mins?|hours?|hrs?|days?|weeks?|months?|minuten?|stunden?|std|tagen?|wochen?"
    r"|monaten?|heures?|jours?|semaines?|mois|minutos?|horas?|días?|dias?|semanas?|meses|mes"
)
_CLOCK_UNITS = (r"(?<!\w)(?:minutes?|mins?|hours?|hrs?|minuten?|stunden?|std|heures?|minutos?"
                r"|horas?)(?!\w)")
_HALF_HOUR = (r"half\s+an\s+hour|einer\s+halben\s+stunde|une\s+demi-heure|une\s+demi\s+heure"
              r"|media\s+hora")
_RELATIVE = (rf"(?:in|dans|en|dentro\s+de)\s+(?:(?:{_NUMBER})\s+(?:{_UNIT})|{_HALF_HOUR})"
             rf"(?:\s+(?:and|und|et|y)\s+(?:{_NUMBER})\s+(?:{_UNIT}))?")
_AMPM = r"a\.?m\.?|p\.?m\.?"
_CLOCK = (
    rf"(?:(?:at|um|à|a\s+las?|gegen|vers|around|about)\s+)?(?:{_NOON}|{_MIDNIGHT})"
    rf"|(?:at|um|à|a\s+las?|gegen|vers|around)\s+\d{{1,2}}(?:[:.h]\d{{2}})?"
    rf"(?:\s*(?:{_AMPM}|uhr|h))?(?!\d)"
    rf"|\d{{1,2}}(?:[:.]\d{{2}})?\s*(?:{_AMPM})(?![a-z])|\d{{1,2}}:\d{{2}}(?:\s*uhr)?"
    rf"|\d{{1,2}}\s*uhr|\d{{1,2}}h\d{{2}}|\d{{1,2}}h(?![a-z])"
)
_DAYWORD = (
    r"the\s+day\s+after\s+tomorrow|day\s+after\s+tomorrow|tomorrow|today|übermorgen|morgen"
    r"|heute|après-demain|apres-demain|demain|aujourd'hui|pasado\s+mañana|mañana|hoy"
)
_WEEKDAY = (
    rf"(?:(?:on|this|next|coming|am|nächsten|nächste|kommenden|diesen|le|ce|el|este|el\s+"
    rf"próximo|próximo)\s+)?(?:{_DAY_NAMES})(?:\s+(?:prochain|que\s+viene|next\s+week))?"
)
_DATE = (
    rf"(?:(?:on|am|le|el)\s+)?(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th|\.|er)?\s+(?:of\s+|de\s+)?"
    rf"(?:{_MONTHS})\.?(?:\s+\d{{4}})?"
    rf"|(?:(?:on|am|le|el)\s+)?(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
    rf"|on\s+(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)(?![\w.])|(?:am|le|el)\s+\d{{1,2}}(?:\.|er)?(?![\w.:])"
    rf"|(?:(?:on|am|le|el)\s+)?\d{{1,2}}[./]\d{{1,2}}(?:[./](?:\d{{4}}|\d{{2}}))?\.?(?!\d)"
    rf"|\d{{4}}-\d{{2}}-\d{{2}}"
)
_PART = "|".join(p for p, _ in _PARTS)
_RECUR_UNIT = (rf"{_DAY_NAMES}|day|tag|jour|día|dia|morning|morgen|matin|mañana|evening|abend"
               r"|soir|night|nacht|nuit|noche")
_RECURRING = (
    rf"(?:every|each|jeden|jede|jedes|chaque|cada)\s+(?:{_RECUR_UNIT})s?"
    rf"|(?:tous|toutes)\s+les\s+(?:{_RECUR_UNIT})s?|(?:todos|todas)\s+l[oa]s\s+(?:{_RECUR_UNIT})s?"
    r"|daily|täglich|quotidiennement|diariamente|montags|dienstags|mittwochs|donnerstags"
    r"|freitags|samstags|sonntags"
)
_PIECE = re.compile(
    rf"(?<![\w'])(?:{_RECURRING}|{_RELATIVE}|{_DAYWORD}|{_DATE}|{_WEEKDAY}|{_CLOCK}|{_PART})"
    r"(?![\w])",
    re.IGNORECASE,
)
# What may stand between two pieces of one time ("tomorrow at 9", "Friday, 18:00").
_GLUE = re.compile(r"^[\s,]*(?:(?:at|um|à|a|and|und|et|y|on|am|le|el)\s+)?[\s,]*$", re.I)


@dataclass(frozen=True)
class Found:
    """A message split into what to do and when: `when` is empty when no time was said."""

    what: str
    when: str


def split_when(text: str) -> Found:
    """The words that say when (joined, in order) and the rest of the text."""
    text = text.replace("\u2019", "'")
    spans: list[tuple[int, int]] = []
    for match in _PIECE.finditer(text):
        start, end = match.span()
        if spans and _GLUE.match(text[spans[-1][1]:start]):
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    when = " ".join(text[a:b] for a, b in spans)
    rest, last = [], 0
    for a, b in spans:
        rest.append(text[last:a])
        last = b
    rest.append(text[last:])
    what = " ".join(" ".join(rest).split())
    return Found(what=what, when=" ".join(when.split()))


@dataclass(frozen=True)
class When:
    """An understood time: the first (or only) instant, and how it recurs."""

    due: datetime  # UTC
    local: datetime  # the same instant in the member's zone, for wording it back
    exact: bool  # the member named this very time (a clock time, or a delay from now)
    recurrence: str | None = None  # "daily", or "weekly:N" (0 is Monday)
    wall: str | None = None  # "HH:MM": the local time a recurring reminder keeps


def zone_of(name: str) -> ZoneInfo:
    """An IANA zone; ValueError for a name the time zone database does not know."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"{name!r} is not a time zone (try one like Europe/Berlin)") from None


def localize(day: date, at: time, zone: ZoneInfo) -> datetime:
    """A local wall time as an instant. A time the clocks skip (a spring-forward night) is read
    as the same length after the change; a time they pass twice, as its first passing."""
    return datetime.combine(day, at).replace(tzinfo=zone, fold=0)


def next_occurrence(recurrence: str, wall: str, after: datetime, zone: ZoneInfo) -> datetime:
    """The first local `wall` time of a recurrence strictly after `after`, in UTC."""
    hour, minute = (int(p) for p in wall.split(":"))
    local = after.astimezone(zone)
    day = local.date()
    for _ in range(9):
        if recurrence == "daily" or day.weekday() == int(recurrence.split(":")[1]):
            moment = localize(day, time(hour, minute), zone)
            if moment.astimezone(UTC) > after:
                return moment.astimezone(UTC)
        day += timedelta(days=1)
    raise ValueError(f"not a recurrence: {recurrence!r}")


def _clock(phrase: str) -> tuple[int, int, bool] | None:
    """(hour, minute, said with am/pm) of the clock time in `phrase`, if it names one."""
    lowered = phrase.lower()
    if re.search(rf"(?<!\w)(?:{_NOON})(?!\w)", lowered):
        return 12, 0, True
    if re.search(rf"(?<!\w)(?:{_MIDNIGHT})(?!\w)", lowered):
        return 0, 0, True
    match = re.search(
        rf"(?:(?:at|um|à|a\s+las?|gegen|vers|around)\s+(?P<h1>\d{{1,2}})(?:[:.h](?P<m1>\d{{2}}))?"
        rf"|(?P<h2>\d{{1,2}})(?:[:.h](?P<m2>\d{{2}}))?\s*(?=(?:{_AMPM}|uhr|h)(?![a-z]))"
        rf"|(?P<h3>\d{{1,2}}):(?P<m3>\d{{2}}))(?:\s*(?P<ampm>{_AMPM}))?",
        lowered,
    )
    if match is None:
        return None
    hour = int(match.group("h1") or match.group("h2") or match.group("h3"))
    minute = int(match.group("m1") or match.group("m2") or match.group("m3") or 0)
    ampm = (match.group("ampm") or "").replace(".", "")
    if hour > 23 or minute > 59 or (ampm and not 1 <= hour <= 12):
        return None
    if ampm == "pm" and hour < 12:
        hour += 12
    elif ampm == "am" and hour == 12:
        hour = 0
    return hour, minute, bool(ampm) or bool(match.group("m1") or match.group("m2")
                                            or match.group("m3")) or hour > 12


def _part_hour(phrase: str) -> int | None:
    lowered = phrase.lower()
    for pattern, hour in _PARTS:
        if re.search(rf"(?<![\w'])(?:{pattern})(?!\w)", lowered):
            return hour
    return None


def _recurrence(phrase: str) -> str | None:
    lowered = phrase.lower()
    match = re.search(rf"(?<!\w)(?:{_RECURRING})(?!\w)", lowered)
    if match is None:
        return None
    said = match.group(0)
    for name, index in _WEEKDAYS.items():
        if len(name) > 3 and re.search(rf"{name}", said):
            return f"weekly:{index}"
    return "daily"


def _numbers_as_digits(phrase: str) -> str:
    def digits(match: re.Match[str]) -> str:
        word = match.group(1).lower()
        return f"{_NUMBER_WORDS.get(word, word)} {match.group(2)}"

    phrase = re.sub(_HALF_HOUR, "30 minutes", phrase, flags=re.I)
    return re.sub(rf"\b({_NUMBER})\s+({_UNIT})\b", digits, phrase, flags=re.I)


def _parse_date(phrase: str, base: datetime, lang: str | None) -> datetime | None:
    """dateparser on the date words alone, in the member's language first."""
    settings = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": "future",
                "RETURN_AS_TIMEZONE_AWARE": False}
    cleaned = re.sub(r"^(?:on|am|el|nächsten|nächste|kommenden|diesen|próximo|este)\s+", "",
                     phrase.strip(), flags=re.I)
    cleaned = re.sub(r"\s+(?:prochain|que\s+viene)$", "", cleaned, flags=re.I)
    cleaned = re.sub(r"^(?:the\s+)?day\s+after\s+tomorrow$", "in 2 days", cleaned, flags=re.I)
    cleaned = re.sub(r"^pasado\s+mañana$", "en 2 días", cleaned, flags=re.I)
    ordinal = re.fullmatch(r"(?:the\s+|le\s+|el\s+)?(\d{1,2})(?:st|nd|rd|th|\.|er)?", cleaned,
                           re.I)
    if ordinal is not None:
        return _day_of_month(int(ordinal.group(1)), base)
    orders = [[lang]] if lang in LANGUAGES else []
    for languages in [*orders, list(LANGUAGES)]:
        found = dateparser.parse(cleaned, languages=languages, settings=settings)
        if isinstance(found, datetime):
            return found
    return None


def _day_of_month(day: int, base: datetime) -> datetime | None:
    """"The 5th": this month's, or next month's once this month's has passed."""
    year, month = base.year, base.month
    for _ in range(3):
        try:
            found = datetime(year, month, day)
        except ValueError:
            found = None
        if found is not None and found.date() >= base.date():
            return found
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None


def understand(phrase: str, now: datetime, zone: ZoneInfo, *,
               lang: str | None = None) -> When | None:
    """When `phrase` (the words `split_when` found) means, seen from `now` in `zone`; None
    when it does not say (or says something that cannot be a reminder's time)."""
    phrase = _numbers_as_digits(" ".join(phrase.replace("\u2019", "'").split()))
    if not phrase:
        return None
    now = now.astimezone(UTC)
    local_now = now.astimezone(zone)
    recurrence = _recurrence(phrase)
    clock = _clock(phrase)
    part = _part_hour(phrase)
    rest = re.sub(rf"(?<!\w)(?:{_RECURRING})(?!\w)", " ", phrase, flags=re.I)
    rest = re.sub(rf"(?<![\w'])(?:{_CLOCK}|{_PART})(?!\w)", " ", rest, flags=re.I)
    rest = re.sub(r"(?<!\w)(?:at|um|à|and|und|et|y)(?!\w)", " ", rest, flags=re.I)
    rest = " ".join(rest.replace(",", " ").split())
    hour: int | None = None
    minute = 0
    exact = False
    if clock is not None:
        hour, minute, explicit = clock
        if part is not None and part >= 15 and hour < 12:
            hour += 12  # "at 8 in the evening"
        elif not explicit and part is None and 1 <= hour <= 7:
            hour += 12  # a bare "at 3" is the afternoon: no one asks for 3 a.m. unsaid
        exact = True
    elif part is not None:
        hour = part
    if recurrence is not None:
        if re.search(_RELATIVE, rest, re.I):
            return None  # "every two hours" is not a reminder hearth keeps
        wall = f"{hour if hour is not None else DEFAULT_HOUR:02d}:{minute:02d}"
        due = next_occurrence(recurrence, wall, now, zone)
        return When(due, due.astimezone(zone), exact, recurrence, wall)
    base = local_now.replace(tzinfo=None, microsecond=0)
    if rest and re.fullmatch(_RELATIVE, rest, re.I):
        moved = _parse_date(rest, base, lang)
        if moved is None:
            return None
        delta = moved - base
        if re.search(_CLOCK_UNITS, rest, re.I):
            if hour is not None:
                return None  # "in 2 hours at 9" says two different times
            due = now + delta  # "in 2 hours": from now, whatever the clocks do meanwhile
            return _checked(When(due, due.astimezone(zone), True), now)
        day = (local_now + delta).date()
    elif rest:
        parsed = _parse_date(rest, base, lang)
        if parsed is None:
            return None
        day = parsed.date()
    else:
        if hour is None:
            return None
        day = local_now.date()
        if localize(day, time(hour, minute), zone) <= local_now:
            day += timedelta(days=1)
    due_local = localize(day, time(hour if hour is not None else DEFAULT_HOUR, minute), zone)
    due = due_local.astimezone(UTC)
    return _checked(When(due, due.astimezone(zone), exact), now)


def _checked(when: When, now: datetime) -> When | None:
    if when.due < now + SOONEST or when.due > now + FARTHEST:
        return None
    return when


__all__ = ["Found", "When", "localize", "next_occurrence", "split_when", "understand", "zone_of"]
