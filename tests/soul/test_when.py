"""Time in words (soul/when.py): what a member says, read in their zone, from a fixed now."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from soul.goals import promised_reminders, requested
from soul.when import next_occurrence, split_when, understand, zone_of

BERLIN = ZoneInfo("Europe/Berlin")
# Tuesday 1 December 2026, 15:30 in Berlin. Every reading is from this instant: no test here
# looks at the real clock.
NOW = datetime(2026, 12, 1, 14, 30, tzinfo=UTC)


def _read(phrase: str) -> tuple[str, bool, str | None]:
    when = understand(phrase, NOW, BERLIN)
    assert when is not None, phrase
    return when.local.strftime("%a %d %b %H:%M"), when.exact, when.recurrence


@pytest.mark.parametrize(
    ("phrase", "local", "exact", "recurrence"),
    [
        ("tomorrow", "Wed 02 Dec 09:00", False, None),
        ("tomorrow at 9", "Wed 02 Dec 09:00", True, None),
        ("at 9", "Wed 02 Dec 09:00", True, None),  # 09:00 today has passed
        ("at 5", "Tue 01 Dec 17:00", True, None),  # a bare small hour is the afternoon
        ("at 9pm", "Tue 01 Dec 21:00", True, None),
        ("at noon", "Wed 02 Dec 12:00", True, None),
        ("tonight", "Tue 01 Dec 20:00", False, None),
        ("on Friday evening", "Fri 04 Dec 18:00", False, None),
        ("in two hours", "Tue 01 Dec 17:30", True, None),
        ("in 2 minutes", "Tue 01 Dec 15:32", True, None),
        ("in half an hour", "Tue 01 Dec 16:00", True, None),
        ("in 3 days", "Fri 04 Dec 09:00", False, None),
        ("next Tuesday at 14:30", "Tue 08 Dec 14:30", True, None),
        ("on 24 December at 10:00", "Thu 24 Dec 10:00", True, None),
        ("on the 5th", "Sat 05 Dec 09:00", False, None),
        ("tomorrow morning at 7", "Wed 02 Dec 07:00", True, None),
        ("every Monday", "Mon 07 Dec 09:00", False, "weekly:0"),
        ("every day at 8am", "Wed 02 Dec 08:00", True, "daily"),
        # German
        ("morgen um 9", "Wed 02 Dec 09:00", True, None),
        ("am Freitag um 18:00", "Fri 04 Dec 18:00", True, None),
        ("in zwei Stunden", "Tue 01 Dec 17:30", True, None),
        ("heute Abend", "Tue 01 Dec 18:00", False, None),
        ("nächsten Dienstag um 14:30", "Tue 08 Dec 14:30", True, None),
        ("jeden Montag um 8 Uhr", "Mon 07 Dec 08:00", True, "weekly:0"),
        # French
        ("demain à 9h", "Wed 02 Dec 09:00", True, None),
        ("vendredi soir", "Fri 04 Dec 18:00", False, None),
        ("dans deux heures", "Tue 01 Dec 17:30", True, None),
        ("mardi prochain à 14h30", "Tue 08 Dec 14:30", True, None),
        ("tous les lundis à 8h", "Mon 07 Dec 08:00", True, "weekly:0"),
        # Spanish
        ("mañana a las 9", "Wed 02 Dec 09:00", True, None),
        ("el viernes por la tarde", "Fri 04 Dec 15:00", False, None),
        ("en dos horas", "Tue 01 Dec 17:30", True, None),
        ("todos los lunes a las 8", "Mon 07 Dec 08:00", True, "weekly:0"),
    ],
)
def test_a_time_in_words_is_read_in_the_members_zone(
    phrase: str, local: str, exact: bool, recurrence: str | None
) -> None:
    assert _read(phrase) == (local, exact, recurrence)


@pytest.mark.parametrize(
    "phrase",
    ["", "later", "soon", "at 25:00", "every 2 hours", "in 3 years", "in 2 hours at 9",
     "on 31 February"],
)
def test_what_cannot_be_placed_is_not_guessed(phrase: str) -> None:
    assert understand(phrase, NOW, BERLIN) is None


def test_the_same_words_mean_the_same_local_time_in_another_zone() -> None:
    tokyo = understand("tomorrow at 9", NOW, ZoneInfo("Asia/Tokyo"))
    berlin = understand("tomorrow at 9", NOW, BERLIN)
    assert tokyo is not None and berlin is not None
    assert tokyo.local.hour == berlin.local.hour == 9
    assert berlin.due - tokyo.due == timedelta(hours=8)


def test_a_wall_time_stays_put_and_a_delay_does_not_across_the_autumn_change() -> None:
    # Saturday 24 October 2026, 12:00 in Berlin; the clocks go back at 03:00 on Sunday.
    saturday = datetime(2026, 10, 24, 10, 0, tzinfo=UTC)
    nine = understand("tomorrow at 9", saturday, BERLIN)
    assert nine is not None
    assert (nine.local.hour, nine.due.hour) == (9, 8)  # 09:00 CET is 08:00 UTC
    day = understand("in 24 hours", saturday, BERLIN)
    assert day is not None
    assert day.due == saturday + timedelta(hours=24)
    assert day.local.hour == 11  # a day of 25 hours: the same instant reads an hour earlier


def test_a_time_the_spring_change_skips_is_read_as_after_it() -> None:
    saturday = datetime(2027, 3, 27, 12, 0, tzinfo=UTC)
    when = understand("tomorrow at 2:30", saturday, BERLIN)
    assert when is not None
    assert when.due == datetime(2027, 3, 28, 1, 30, tzinfo=UTC)  # 03:30 summer time
    assert when.local.strftime("%H:%M %Z") == "03:30 CEST"


def test_a_recurrence_keeps_its_local_time_through_both_changes() -> None:
    seen = []
    after = datetime(2026, 10, 17, 12, 0, tzinfo=UTC)
    for _ in range(3):
        after = next_occurrence("weekly:6", "09:00", after, BERLIN)
        seen.append((after.astimezone(BERLIN).strftime("%d %b %H:%M"), after.hour))
    assert seen == [("18 Oct 09:00", 7), ("25 Oct 09:00", 8), ("01 Nov 09:00", 8)]
    spring = next_occurrence("daily", "02:30", datetime(2027, 3, 27, 12, 0, tzinfo=UTC), BERLIN)
    assert spring.astimezone(BERLIN).strftime("%d %b %H:%M") == "28 Mar 03:30"


def test_an_unknown_zone_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="not a time zone"):
        zone_of("Mars/Olympus_Mons")


@pytest.mark.parametrize(
    ("text", "what", "when", "lang"),
    [
        ("Remind me to call the dentist tomorrow.", "Call the dentist", "tomorrow", "en"),
        ("remind me tomorrow at 9 to call the dentist", "Call the dentist", "tomorrow at 9",
         "en"),
        ("Can you remind me in 2 minutes to stretch?", "Stretch", "in 2 minutes", "en"),
        ("please remind me every Monday at 8 to take out the bins, thanks",
         "Take out the bins", "every Monday at 8", "en"),
        ("remind me to buy milk", "Buy milk", "", "en"),
        ("Erinnere mich morgen um 9 daran, den Zahnarzt anzurufen", "Den Zahnarzt anzurufen",
         "morgen um 9", "de"),
        # A typographic apostrophe, as phones type it.
        ("Rappelle-moi demain à 9h d\u2019appeler le dentiste", "Appeler le dentiste",
         "demain à 9h", "fr"),
        ("Recuérdame mañana a las 9 llamar al dentista", "Llamar al dentista",
         "mañana a las 9", "es"),
    ],
)
def test_a_request_is_split_into_what_and_when(text: str, what: str, when: str,
                                               lang: str) -> None:
    (request,) = requested(text)
    assert (request.what, request.when, request.lang) == (what, when, lang)


def test_a_question_that_only_mentions_reminding_is_not_a_request() -> None:
    assert requested("Can you remind me what's for dinner?") == []
    assert requested("rappelle-moi ton nom") == []
    (request,) = requested("remind me, please, to call mum")
    assert request.what == "Call mum"


def test_words_that_only_look_like_times_stay_in_what() -> None:
    assert split_when("to buy a 2nd hand bike").when == ""
    assert split_when("to read chapter 3 and take 2 pills").when == ""


def test_her_own_promise_to_remind_is_split_too() -> None:
    (promise,) = promised_reminders("Of course! I'll remind you tomorrow at 9 to call Anna.")
    assert (promise.what, promise.when) == ("Call Anna", "tomorrow at 9")
    assert promised_reminders("I'll check in with you soon.") == []
