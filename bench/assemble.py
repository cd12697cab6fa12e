"""Prompt assembly latency as memory grows: `python -m bench.assemble`.

Seeds five members with a history (30 transcript lines in each DM, 30 in the household group, a
rolling summary for every chat) and then 1k and 10k beliefs across the members and the shared
scope through the facade's write path, like `bench.recall`. At each size it times
`assemble(memory, soul, intent)` end to end for 200 varied member messages across the DMs and
the group: everything a turn does before the model call (recall with its query embedding, the
partner model, summary, goals, recent turns, mood, each read's receipt, and composing within the
soul's budgets). The line store and the mood update that `respond` does around it are not
timed. Prints a table, then one JSON line per size.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.recall import MEMBERS, QUERIES, percentile, propositions, seed
from bench.report import print_report, profiled
from memory import SHARED, Memory, Person, Role, make_embedder, private_scope
from soul.assembler import Intent, assemble
from soul.files import Soul, load_soul
from soul.turn import chat_id_for

HISTORY_LINES = 30
GROUP = "group:household"
CHAT = ["Morning! Slept badly again.", "Can you remind me what's for dinner?",
        "The bins go out tomorrow, right?", "I finally finished that book.",
        "Ugh, the train was late again.", "Do you think it'll rain this weekend?",
        "I'm thinking of repainting the hall.", "Work was a lot today.",
        "Any ideas for a birthday present?", "The cat knocked the plant over.",
        "We should plan a picnic.", "I can't find my keys anywhere."]
ANSWERS = ["Oh no, I'm sorry to hear that.", "Let me think about that with you.",
           "That sounds lovely.", "I'll keep that in mind.", "Good for you!",
           "Hmm, shall we make a plan?"]


def messages(rng: random.Random, count: int) -> list[str]:
    """Varied member messages: recall-shaped questions, small talk, and longer mixed lines."""
    out: list[str] = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.4:
            out.append(rng.choice(QUERIES).capitalize() + "?")
        elif kind < 0.7:
            out.append(rng.choice(CHAT))
        else:
            out.append(f"{rng.choice(CHAT)} Also, {rng.choice(QUERIES)}? "
                       f"{rng.choice(CHAT)}")
    return out


async def seed_history(memory: Memory, people: list[Person], rng: random.Random) -> None:
    """Thirty lines in each member's DM and in the group, and a rolling summary for each."""
    chats = [(chat_id_for(p, group=False), private_scope(p.person_id), [p]) for p in people]
    chats.append((GROUP, SHARED, people))
    for chat_id, scope, speakers in chats:
        last = 0
        for i in range(HISTORY_LINES):
            user = i % 2 == 0
            last = await memory.transcript.append(
                chat_id=chat_id,
                speaker_id=rng.choice(speakers).person_id if user else None,
                role=Role.USER if user else Role.ASSISTANT,
                scope=scope,
                text=rng.choice(CHAT) if user else rng.choice(ANSWERS),
            )
        summary = " ".join(
            f"They talked about {t.lower()}" for t in propositions(rng, 4, set())
        )
        await memory.summaries.write(scope, chat_id, summary, last)


def intents(people: list[Person], rng: random.Random, count: int) -> list[Intent]:
    out: list[Intent] = []
    for text in messages(rng, count):
        speaker = rng.choice(people)
        group = rng.random() < 0.3
        out.append(Intent(speaker=speaker, chat_id=chat_id_for(speaker, group=group),
                          group=group, text=text, now=datetime.now(UTC)))
    return out


async def measure(memory: Memory, soul: Soul, batch: list[Intent], *, label: str = "",
                  profile: int = 0) -> list[float]:
    for intent in batch[:5]:  # warm-up
        await assemble(memory, soul, intent)
    timings: list[float] = []
    with profiled(label, profile):
        for intent in batch:
            start = time.perf_counter()
            await assemble(memory, soul, intent)
            timings.append((time.perf_counter() - start) * 1000)
    return timings


async def run(sizes: list[int], count: int, embedder_name: str,
              profile: int = 0) -> list[dict[str, object]]:
    rng = random.Random(20261201)
    soul = load_soul()
    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as folder:
        memory = await Memory.open(Path(folder) / "bench.db", create=True,
                                   embedder=make_embedder(embedder_name))
        try:
            people = [await memory.people.add(n, telegram_id=1001 + i, owner=i == 0)
                      for i, n in enumerate(MEMBERS)]
            for person in people:  # the steady state: every member has met her
                await memory.state.retire_bootstrap(person.person_id)
            await seed_history(memory, people, rng)
            scopes = [SHARED, *(private_scope(p.person_id) for p in people)]
            seen: set[str] = set()
            have = 0
            for size in sorted(sizes):
                t0 = time.perf_counter()
                await seed(memory, scopes, rng, size - have, seen)
                have = size
                seeded_s = time.perf_counter() - t0
                batch = intents(people, rng, count)
                timings = await measure(memory, soul, batch, label=f"assemble at {size} beliefs",
                                        profile=profile)
                results.append({
                    "bench": "assemble",
                    "beliefs": size,
                    "p50_ms": round(percentile(timings, 0.50), 2),
                    "p95_ms": round(percentile(timings, 0.95), 2),
                    "max_ms": round(max(timings), 2),
                    "messages": count,
                    "group_share": round(sum(i.group for i in batch) / len(batch), 2),
                    "embedder": embedder_name,
                    "seed_s": round(seeded_s, 1),
                })
                print(f"  seeded {size} beliefs ({seeded_s:.1f}s), assembled {count} prompts",
                      file=sys.stderr)
        finally:
            await memory.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--embedder", default="e5", choices=["e5", "minilm", "none"])
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="print where the time goes: the N costliest functions (cProfile)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results = asyncio.run(run(sizes, args.messages, args.embedder, args.profile))
    print_report(results, [("beliefs", "beliefs"), ("p50_ms", "p50 ms"), ("p95_ms", "p95 ms"),
                           ("max_ms", "max ms")])


if __name__ == "__main__":
    main()
