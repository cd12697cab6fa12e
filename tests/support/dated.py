"""Which test modules name a date or a clock, for the pass that runs them a year ahead.

A test can rot with the calendar only where it pins a time (a `datetime(...)`, an injected
clock, a `now=`, a year in a line the code reads, a benchmark's dated conversations) while the
code under it reads the real clock. A module that names none of those reads the real clock
alone, and a clock moved ahead moves all of it together: running it again a year ahead tells
nothing the first run did not. The choice is made from each module's source whenever the pass
runs, so a new test that pins a date is in it without anyone listing it.
"""

from __future__ import annotations

import re

NAMES_A_DATE = re.compile(
    r"datetime\("                 # a datetime built, pinned or parsed
    r"|\bdate\("                  # a date built, or a datetime's day taken
    r"|Clock\("                   # the tests' injected clock
    r"|\bclock\s*="               # a clock passed to the code
    r"|\bnow\s*="                 # a `now` passed to the code
    r"|timedelta\("               # a span added to some time
    r"|fromisoformat|strptime|fromtimestamp"
    r"|\b20[2-9]\d\b"             # a year written out: an ISO date, a date in words
    r"|\bbench\b"                 # the benchmarks' households, each line at its own time
    r"|time\.time\(|utc_now\("    # the real clock, read beside something pinned
)


def names_a_date(source: str) -> bool:
    """Whether a test module's source pins or reads a time anywhere."""
    return NAMES_A_DATE.search(source) is not None
