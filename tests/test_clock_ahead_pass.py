"""CI runs the unit tests a second time with the clock a year ahead, but only the modules that
name a date or a clock: these tests hold that choice to what it promises."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.dated import names_a_date

TESTS = Path(__file__).parent


@pytest.mark.parametrize("pinned", [
    "clock = Clock(datetime(2026, 3, 1, 9, tzinfo=UTC))",
    "await desk.create(lane, now=clock(), text=text)",
    'code, out, _ = household("beliefs", "--as-of", "2026-05-01")',
    'docs = ["School closes on 17 December 2027 at 14:00."]',
    "later = start + timedelta(days=3)",
    "from bench.household_memory import replay",
    "when = datetime.fromisoformat(row['at'])",
])
def test_a_module_that_pins_a_time_is_run_again_a_year_ahead(pinned: str) -> None:
    assert names_a_date(f"async def test_it() -> None:\n    {pinned}\n")


@pytest.mark.parametrize("unpinned", [
    'household("remember", "--as", "Bob", "Bob plays the tuba on Sundays")',
    "assert await home.memory.receipts.verify()",
    "for i in range(20):  # other lines on the same pages",
    "updated = await store.update(row_id)",
])
def test_a_module_that_reads_only_the_real_clock_is_run_once(unpinned: str) -> None:
    assert not names_a_date(f"async def test_it() -> None:\n    {unpinned}\n")


def test_the_tests_that_move_through_time_are_all_in_the_year_ahead_pass() -> None:
    for module in ("soul/test_when.py", "memory/test_reminders.py", "bot/test_reminders.py",
                   "memory/recall/test_as_of.py", "soul/test_tick.py", "memory/test_dream.py",
                   "test_bench_household.py", "memory/test_shelf.py"):
        assert names_a_date((TESTS / module).read_text(encoding="utf-8")), module
