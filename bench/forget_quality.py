"""What a forget scrubs: `python -m bench.forget_quality [--embedder e5|minilm]`.

A forget redacts every line of the scope that says a forgotten belief again: by its words
(`memory.forget`: the longer words of the belief, in any language) or by its meaning
(`VectorIndex.standing_out`: a cosine to the belief that stands out from the scope's lines,
`memory.vectors.REPEATS`). This bench measures both on the project's households
(`bench/households`): each fact line's belief against every member's line of its chat. The
line the fact was said in is the one to find; every other line is one a forget should leave
(a few of them say the fact again, so "taken" slightly overstates the loss). One row per
language, a table and a JSON line.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memory import make_embedder
from memory.beliefs import normalize
from memory.forget import _marks, _repeats
from memory.vectors import REPEATS, REPLACES, REPLACES_UNMEASURED, VectorIndex

HOUSEHOLDS = Path(__file__).resolve().with_name("households")


def _rate(hits: Sequence[bool]) -> float:
    return round(float(np.mean(hits)), 4) if hits else 0.0


def measure(embedder_name: str) -> dict[str, dict[str, Any]]:
    embedder = make_embedder(embedder_name)
    if embedder is None:
        raise SystemExit("a forget's meaning needs an embedder")
    floor = REPEATS.get(embedder.name)
    if floor is None:
        raise SystemExit(f"{embedder.name} has no measured floor in memory.vectors.REPEATS")
    few = REPLACES.get(embedder.name, REPLACES_UNMEASURED)[0]
    tally: dict[str, dict[str, list[bool]]] = {}
    for home in sorted(p for p in HOUSEHOLDS.iterdir() if p.is_dir()):
        language = home.name[:2]
        said = [json.loads(line) for line in
                (home / "dialogue.jsonl").read_text(encoding="utf-8").splitlines() if line]
        chats: dict[str, list[dict[str, Any]]] = {}
        for line in said:
            chats.setdefault(str(line["chat"]), []).append(line)
        for chat, lines in chats.items():
            facts = [i for i, line in enumerate(lines) if line.get("fact") and line.get("belief")]
            if not facts:
                continue
            index = VectorIndex(embedder.dim)
            texts = [str(line["text"]) for line in lines]
            index.add(chat, list(range(len(lines))), embedder.embed(texts))
            beliefs = embedder.embed([str(lines[i]["belief"]) for i in facts])
            for row, i in enumerate(facts):
                norm = normalize(str(lines[i]["belief"]))
                marks = [_marks(norm)]
                alike = index.standing_out(chat, beliefs[row : row + 1], floor, few)
                counts = tally.setdefault(language, {k: [] for k in (
                    "words_found", "words_taken", "meaning_found", "meaning_taken",
                    "either_found", "either_taken")})
                for j, line in enumerate(lines):
                    by_words = _repeats(str(line["text"]), {norm}, marks)
                    by_meaning = j in alike
                    side = "found" if j == i else "taken"
                    counts[f"words_{side}"].append(by_words)
                    counts[f"meaning_{side}"].append(by_meaning)
                    counts[f"either_{side}"].append(by_words or by_meaning)
    return {language: {key: _rate(hits) for key, hits in counts.items()}
            | {"facts": len(counts["words_found"])}
            for language, counts in sorted(tally.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="e5", choices=("e5", "minilm"))
    args = parser.parse_args()
    rows = measure(args.embedder)
    print(f"{'language':<9}{'facts':>6}  {'words found/taken':>18}  {'meaning found/taken':>20}"
          f"  {'either found/taken':>19}")
    for language, r in rows.items():
        print(f"{language:<9}{r['facts']:>6}  {r['words_found']:>9.2f} / {r['words_taken']:.4f}"
              f"  {r['meaning_found']:>10.2f} / {r['meaning_taken']:.4f}"
              f"  {r['either_found']:>9.2f} / {r['either_taken']:.4f}")
    print(json.dumps({"bench": "forget_quality", "embedder": args.embedder, "languages": rows}))


if __name__ == "__main__":
    main()
