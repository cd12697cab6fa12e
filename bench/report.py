"""How every benchmark reports: a readable table, then one JSON line per measured point."""

from __future__ import annotations

import contextlib
import cProfile
import io
import json
import pstats
import sys
from collections.abc import Iterator, Sequence


def print_report(results: Sequence[dict[str, object]], columns: Sequence[tuple[str, str]]) -> None:
    """`columns` pairs a result key with its table heading; the JSON lines carry every key."""
    print(" ".join(f"{heading:>8}" for _, heading in columns))
    for result in results:
        print(" ".join(f"{result[key]!s:>8}" for key, _ in columns))
    for result in results:
        print(json.dumps(result))


@contextlib.contextmanager
def profiled(label: str, top: int) -> Iterator[None]:
    """With `top` above 0, profile the block with cProfile and print on stderr its `top`
    functions by their own time, then by their cumulative time. Only the event loop's thread is
    profiled: the embedding's and the database's threads show as the loop's waits. The block's
    timings then include the profiler's cost, so figures are read from a run without it."""
    if top <= 0:
        yield
        return
    profile = cProfile.Profile()
    profile.enable()
    try:
        yield
    finally:
        profile.disable()
        out = io.StringIO()
        stats = pstats.Stats(profile, stream=out).strip_dirs()
        stats.sort_stats("tottime").print_stats(top)
        stats.sort_stats("cumulative").print_stats(top)
        print(f"--- profile: {label} (this run's timings include the profiler) ---\n"
              f"{out.getvalue()}", file=sys.stderr)
