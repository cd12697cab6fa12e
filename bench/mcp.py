"""The MCP door's latency: `python -m bench.mcp`.

Seeds beliefs and members' lines as `bench.recall` does (five members and the shared scope),
gives Bob a mind, serves the door on streamable HTTP on loopback, and times `recall` tool calls
end to end through the official SDK's client: the HTTP request with its bearer token, the
token's check, the walled and receipted recall, and the answer's JSON. Client and server share
this process (and its two cores), as a desktop agent and hearth would share one machine.
Prints a table, then one JSON line per size.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from bench.recall import QUERIES, percentile, rss_mb, seed, seed_lines
from bench.report import print_report
from bot.mcp import Door, HttpDoor
from memory import SHARED, Embedder, Memory, make_embedder, private_scope

MEMBERS = ["Olivia", "Bob", "Alice", "Sam", "Priya"]


async def measure(url: str, token: str, rng: random.Random, calls: int) -> list[float]:
    timings: list[float] = []
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for _ in range(5):  # warm-up
            await session.call_tool("recall", {"query": rng.choice(QUERIES)})
        for _ in range(calls):
            start = time.perf_counter()
            result = await session.call_tool("recall", {"query": rng.choice(QUERIES)})
            timings.append((time.perf_counter() - start) * 1000)
            if result.is_error:
                raise RuntimeError(f"a recall failed: {result.content}")
    return timings


async def run(sizes: list[int], calls: int, embedder_name: str,
              embedder: Embedder | None) -> list[dict[str, object]]:
    rng = random.Random(20261206)
    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.db"
        memory = await Memory.open(path, create=True, embedder=embedder)
        try:
            people = [await memory.people.add(n, owner=i == 0) for i, n in enumerate(MEMBERS)]
            scopes = [SHARED, *(private_scope(p.person_id) for p in people)]
            token = (await memory.minds.add("bench-agent", people[1].person_id)).token
            seen: set[str] = set()
            have = 0
            for size in sorted(sizes):
                t0 = time.perf_counter()
                await seed(memory, scopes, rng, size - have, seen)
                await seed_lines(path, people, rng, size - have, seen)
                await memory.vectors.sync()
                have = size
                seeded_s = time.perf_counter() - t0
                door = Door(memory, transport="http", household_zone="UTC")
                async with HttpDoor(door, "127.0.0.1", 0) as http:
                    timings = await measure(http.url, token, rng, calls)
                results.append({
                    "bench": "mcp",
                    "beliefs": size,
                    "p50_ms": round(percentile(timings, 0.50), 2),
                    "p95_ms": round(percentile(timings, 0.95), 2),
                    "calls": calls,
                    "transport": "http",
                    "embedder": embedder_name,
                    "rss_mb": round(rss_mb(), 1),
                })
                print(f"  seeded {size} beliefs and {size} lines ({seeded_s:.1f}s),"
                      f" measured {calls} recall calls", file=sys.stderr)
        finally:
            await memory.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--embedder", default="e5", choices=["e5", "minilm", "none"])
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results = asyncio.run(run(sizes, args.calls, args.embedder, make_embedder(args.embedder)))
    print_report(results, [("beliefs", "beliefs"), ("p50_ms", "p50 ms"), ("p95_ms", "p95 ms"),
                           ("calls", "calls"), ("rss_mb", "rss MB")])


if __name__ == "__main__":
    main()
