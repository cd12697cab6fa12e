"""How every benchmark reports: a readable table, then one JSON line per measured point."""

from __future__ import annotations

import json
from collections.abc import Sequence


def print_report(results: Sequence[dict[str, object]], columns: Sequence[tuple[str, str]]) -> None:
    """`columns` pairs a result key with its table heading; the JSON lines carry every key."""
    print(" ".join(f"{heading:>8}" for _, heading in columns))
    for result in results:
        print(" ".join(f"{result[key]!s:>8}" for key, _ in columns))
    for result in results:
        print(json.dumps(result))
