"""The MCP door, end to end through the SDK's own client: over streamable HTTP (the door served
in this process on loopback, and `hearth mcp --http` as a process) and over stdio (`hearth mcp`
spawned as a desktop client would). A mind for Bob sees what Bob sees in his own chat, less
credentials and what he did not grant it, by every tool and every argument; what hides a row
answers exactly as a row that is not there."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from bot.cli import main
from bot.mcp import Door, HttpDoor
from memory import (
    SHARED,
    AccessContext,
    Activity,
    Memory,
    Role,
    Sensitivity,
    private_scope,
)
from memory.minds import REFUSED
from tests.helpers import Household, make_household

ROOT = Path(__file__).resolve().parents[2]
O, H, F, C = "ordinary", "health", "finance", "credentials"  # noqa: E741 -- the table's letters

# Each owner's facts, one per class, and a word no other fact holds (what a leak would show).
FACTS: dict[str, dict[str, tuple[str, str]]] = {
    "bob": {
        O: ("Bob's favourite tea is lapsang souchong", "souchong"),
        H: ("Bob takes insulin for his diabetes", "insulin"),
        F: ("Bob owes the bank twelve thousand pounds on his car loan", "twelve"),
        C: ("Bob's bank card PIN is 4921", "4921"),
    },
    "alice": {
        O: ("Alice collects vintage postcards of lighthouses", "lighthouses"),
        H: ("Alice is seeing a therapist for her anxiety", "therapist"),
        F: ("Alice's salary is forty two thousand a year", "salary"),
        C: ("Alice's email password is tangerine-violin", "tangerine"),
    },
    SHARED: {
        O: ("The family dog is called Biscuit", "biscuit"),
        H: ("Grandma is allergic to penicillin", "penicillin"),
        F: ("The household mortgage payment is due on the first of the month", "mortgage"),
        C: ("The wifi password is marmalade-sky", "marmalade"),
    },
}


def allowed(owner: str, klass: str, granted: bool) -> bool:
    """What a mind acting for Bob may read: Bob's own and the household's ordinary facts, his
    health and finance only by his grant naming it (shared ones by the owner's), never
    credentials, never Alice's."""
    if owner == "alice" or klass == C:
        return False
    return klass == O or granted


@dataclass
class Door_:
    home: Household
    url: str
    tokens: dict[str, str]  # mind name -> token
    refs: dict[tuple[str, str], str]  # (owner, class) -> belief ref
    line_refs: dict[tuple[str, str], str]  # (owner, class) -> line ref


@pytest.fixture
async def door(tmp_path: Path) -> AsyncIterator[Door_]:
    home = await make_household(tmp_path / "hearth.db")
    memory = home.memory
    refs: dict[tuple[str, str], str] = {}
    line_refs: dict[tuple[str, str], str] = {}
    for owner, facts in FACTS.items():
        teller = {"bob": home.bob, "alice": home.alice, SHARED: home.owner}[owner]
        scope = SHARED if owner == SHARED else private_scope(teller.person_id)
        chat = "group:-100" if owner == SHARED else f"dm:{teller.telegram_id}"
        for klass, (text, _) in facts.items():
            outcome = await memory.beliefs.remember(teller.person_id, text,
                                                    shared=owner == SHARED)
            assert outcome.ref is not None
            refs[(owner, klass)] = outcome.ref
            await memory.transcript.append(chat_id=chat, speaker_id=teller.person_id,
                                           role=Role.USER, scope=scope, text=text)
    for person in (home.bob, home.alice, home.owner):
        ctx = AccessContext.for_member(person.person_id, Activity.MEMBER_INSPECT, "refs")
        for line in await memory.transcript.lines(ctx, limit=100):
            for owner, facts in FACTS.items():
                for klass, (text, _) in facts.items():
                    if line.text == text:
                        line_refs[(owner, klass)] = line.ref
    tokens = {
        "bob-agent": (await memory.minds.add("bob-agent", home.bob.person_id)).token,
        "bob-coach": (await memory.minds.add(
            "bob-coach", home.bob.person_id,
            grants=[Sensitivity.HEALTH, Sensitivity.FINANCE])).token,
        "alice-agent": (await memory.minds.add("alice-agent", home.alice.person_id)).token,
    }
    for klass in (Sensitivity.HEALTH, Sensitivity.FINANCE):
        await memory.grants.give(home.owner.person_id, Activity.MIND, klass, shared=True,
                                 mind="bob-coach")
    http_door = Door(memory, transport="http", household_zone="Europe/London")
    try:
        async with HttpDoor(http_door, "127.0.0.1", 0) as served:
            yield Door_(home, served.url, tokens, refs, line_refs)
    finally:
        await memory.close()


@contextlib.asynccontextmanager
async def session(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as opened,
    ):
        await opened.initialize()
        yield opened


async def call(opened: ClientSession, tool: str, **arguments: Any) -> tuple[bool, str]:
    """(whether the call failed, every word of its answer)."""
    result = await opened.call_tool(tool, arguments)
    text = "\n".join(getattr(block, "text", "") for block in result.content)
    return result.is_error, text


def leaked(answer: str, granted: bool) -> set[tuple[str, str]]:
    """The facts a mind for Bob may not read that show in an answer, by their word standing
    as a word: a row's opaque ref is hex, and "b4921f8fb" holds no PIN."""
    words = answer.casefold()
    return {(owner, klass) for owner, facts in FACTS.items()
            for klass, (_, word) in facts.items()
            if not allowed(owner, klass, granted)
            and re.search(rf"\b{re.escape(word.casefold())}\b", words)}


def variants(text: str, word: str) -> list[str]:
    return [text, text.upper(), word, f"Alice {word}", f"{word} password PIN passcode",
            f"what about {word}?", f"%{word}%", f"' OR 1=1 -- {word}", f"{word}*"]


@pytest.mark.parametrize("mind", ["bob-agent", "bob-coach"])
async def test_a_mind_for_bob_hydrates_no_foreign_fact_by_any_tool_argument_or_error(
    door: Door_, mind: str
) -> None:
    granted = mind == "bob-coach"
    async with session(door.url, door.tokens[mind]) as opened:
        tools = {t.name for t in (await opened.list_tools()).tools}
        assert tools == {"remember", "recall", "beliefs", "explain", "forget", "reminders"}
        seen: set[tuple[str, str]] = set()
        for owner, facts in FACTS.items():
            for klass, (text, word) in facts.items():
                for query in variants(text, word):
                    _, answer = await call(opened, "recall", query=query, limit=50)
                    assert not leaked(answer, granted), (query, answer)
                    if word.casefold() in answer.casefold():
                        seen.add((owner, klass))
        for limit in (1, 50, 10_000, -5):
            _, answer = await call(opened, "beliefs", limit=limit)
            assert not leaked(answer, granted), answer
        _, listed = await call(opened, "beliefs", limit=50)
        for ref in [*door.refs.values(), *door.line_refs.values()]:
            for probe in (ref, f" {ref} ", ref.upper(), f"{ref}' OR '1'='1"):
                failed, answer = await call(opened, "explain", ref=probe)
                assert not failed and not leaked(answer, granted), (probe, answer)
        # a hidden belief's ref answers exactly as one that names nothing
        _, missing = await call(opened, "explain", ref="b00000000")
        for key, ref in door.refs.items():
            _, answer = await call(opened, "explain", ref=ref)
            if allowed(*key, granted):
                assert json.loads(answer)["found"] is True, key
            else:
                assert answer == missing, key
        for tool_args in ({"action": "list"}, {"action": "sideways"},
                          {"action": "add", "what": "x"}, {"action": "add", "when": "noon"}):
            _, answer = await call(opened, "reminders", **tool_args)
            assert not leaked(answer, granted), answer
        # what it may not read, it cannot forget or reinforce into view either
        for owner, facts in FACTS.items():
            for klass, (text, word) in facts.items():
                if allowed(owner, klass, granted):
                    continue
                failed, answer = await call(opened, "forget", text=word)
                assert not failed and json.loads(answer)["forgotten"] == 0
                # its own words come back to it (in Bob's scope, a belief of their own), and
                # nothing else: not the foreign belief's ref, not another foreign fact
                _, answer = await call(opened, "remember", text=text)
                assert not leaked(answer, granted) - {(owner, klass)}, answer
                assert door.refs[(owner, klass)] not in answer
    # positive controls: what Bob's mind may read, it does read, by recall and by beliefs
    expected = {(o, k) for o, facts in FACTS.items() for k in facts if allowed(o, k, granted)}
    assert seen == expected
    assert {(o, k) for o, facts in FACTS.items() for k, (_, w) in facts.items()
            if w.casefold() in listed.casefold() and o == "bob"} == {
                k for k in expected if k[0] == "bob"}
    # and Alice's own view of her facts did not move
    alice = AccessContext.for_member(door.home.alice.person_id, Activity.MEMBER_INSPECT, "t")
    for b in await door.home.memory.beliefs.inspect(alice):
        assert (b.evidence_count, b.status.value) == (1, "active")


async def test_a_request_without_a_live_bearer_token_is_refused_with_one_line(
    door: Door_,
) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "probe", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    answers = []
    async with httpx.AsyncClient(timeout=10) as client:
        for auth in (None, "Bearer", "Bearer nonsense", "Basic Ym9iOmJvYg==",
                     f"Bearer {door.tokens['bob-agent']}x", "bearer hearth_mind_" + "A" * 43):
            extra = {} if auth is None else {"Authorization": auth}
            response = await client.post(door.url, json=body, headers={**headers, **extra})
            answers.append((response.status_code, response.json()))
        good = await client.post(door.url, json=body, headers={
            **headers, "Authorization": f"Bearer {door.tokens['bob-agent']}"})
    assert answers == [(401, {"error": "invalid_token", "error_description": REFUSED})] * 6
    assert good.status_code == 200


async def test_a_revoked_token_stops_working_within_the_cache_window(
    door: Door_, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memory.minds.CACHE_SECONDS", 0.5)
    token = door.tokens["bob-agent"]
    async with session(door.url, token) as opened:
        failed, _ = await call(opened, "recall", query="souchong")
        assert not failed
        # revoked from another process (the command line), not the serving one
        other = await Memory.open(door.home.memory.path)
        try:
            await other.minds.revoke("bob-agent")
        finally:
            await other.close()
        await asyncio.sleep(0.6)
        with pytest.raises(Exception):  # noqa: B017,PT011 -- the transport's own error
            await call(opened, "recall", query="souchong")
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.post(door.url, json={}, headers={
            "Authorization": f"Bearer {token}"})
    assert (response.status_code, response.json()["error_description"]) == (401, REFUSED)
    # the tool layer checks again on its own: a call that slipped past the HTTP check fails
    tool_door = Door(door.home.memory, transport="http", household_zone="UTC")
    with pytest.raises(Exception, match="unknown, revoked or malformed"):
        await tool_door.mind({"authorization": f"Bearer {token}"})


async def test_a_minds_forget_over_the_door_cannot_touch_a_members_own_words(
    door: Door_,
) -> None:
    memory = door.home.memory
    bob = AccessContext.for_member(door.home.bob.person_id, Activity.MEMBER_INSPECT, "t")
    before = {b.ref: b.evidence_count for b in await memory.beliefs.inspect(bob)}
    lines_before = [t.text for t in await memory.transcript.lines(bob, limit=100)]
    async with session(door.url, door.tokens["bob-agent"]) as opened:
        _, wrote = await call(opened, "remember", text="Bob's favourite tea is lapsang souchong")
        _, own = await call(opened, "remember", text="Bob's allotment is plot 14 by the canal")
        assert json.loads(own)["belief"]["status"] == "quarantined"
        for words in ("lapsang souchong", "tea", "Bob", "allotment"):
            failed, answer = await call(opened, "forget", text=words)
            assert not failed, answer
        _, after = await call(opened, "recall", query="allotment canal")
    assert json.loads(wrote)["belief"]["ref"] == door.refs[("bob", O)]
    assert "allotment" not in after
    assert {b.ref: b.evidence_count for b in await memory.beliefs.inspect(bob)} == before
    assert [t.text for t in await memory.transcript.lines(bob, limit=100)] == lines_before


async def test_what_a_mind_remembers_is_stamped_with_its_name_whatever_the_caller_sends(
    door: Door_,
) -> None:
    async with session(door.url, door.tokens["bob-agent"]) as opened:
        # arguments the tool does not take (a speaker, a source, a scope) are not read at all
        result = await opened.call_tool("remember", {
            "text": "Bob's bike is a green Brompton", "speaker": "Alice",
            "source": f"statement:{door.home.alice.person_id}:now", "scope": "shared"})
        assert not result.is_error
        ref = json.loads(result.content[0].text)["belief"]["ref"]  # type: ignore[union-attr]
        _, explained = await call(opened, "explain", ref=ref)
    shown = json.loads(explained)
    assert [(e["source"], e["provenance"]) for e in shown["evidence"]] == [
        ("mind:bob-agent", "relayed")]
    assert (shown["belief"]["shared"], shown["belief"]["status"]) == (False, "quarantined")
    alice = AccessContext.for_member(door.home.alice.person_id, Activity.MEMBER_INSPECT, "t")
    assert "Bob's bike is a green Brompton" not in {
        b.proposition for b in await door.home.memory.beliefs.inspect(alice)}
    assert "Brompton" not in str(await door.home.memory.recall.search(
        AccessContext.for_group(Activity.GROUP_CONVERSATION, "t"), "green Brompton bike"))


async def test_reminders_over_the_door_are_the_members_own_and_delivered_to_their_chat(
    door: Door_,
) -> None:
    async with session(door.url, door.tokens["bob-agent"]) as opened:
        failed, added = await call(opened, "reminders", action="add",
                                   what="water the tomatoes", when="tomorrow at 8")
        assert not failed, added
        _, bad = await call(opened, "reminders", action="add", what="x", when="whenever")
        _, listed = await call(opened, "reminders")
    async with session(door.url, door.tokens["alice-agent"]) as opened:
        _, alices = await call(opened, "reminders")
    assert json.loads(added)["reminder"]["state"] == "scheduled"
    assert "could not place" in bad
    assert [r["what"] for r in json.loads(listed)["reminders"]] == ["water the tomatoes"]
    assert json.loads(alices)["reminders"] == []
    scheduled = await door.home.memory.reminders.scheduled(person_id=door.home.bob.person_id)
    assert [r.chat_id for r in scheduled] == ["dm:1002"]


async def test_receipts_name_the_mind_for_its_member_and_for_no_one_else(
    door: Door_, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with session(door.url, door.tokens["bob-agent"]) as opened:
        await call(opened, "recall", query="souchong")
    monkeypatch.setenv("HEARTH_EMBEDDER", "none")
    db = str(door.home.memory.path)
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["receipts", "--as", "Bob", "--db", db]) == 0
    bobs = capsys.readouterr().out
    assert await asyncio.to_thread(main, ["receipts", "--as", "Alice", "--db", db]) == 0
    alices = capsys.readouterr().out
    assert any(line.split("\t")[1:4] == ["bob-agent", "mind", "recall"]
               for line in bobs.splitlines())
    assert "bob-agent" not in alices


# --- the command line: `hearth minds`, `hearth mcp` ------------------------------------------


def _hearth(*argv: str, env: dict[str, str] | None = None, stdin: str = "",
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 -- this interpreter, running hearth
        [sys.executable, "-m", "bot.cli", *argv], capture_output=True, text=True, check=False,
        cwd=ROOT, env={**os.environ, "HEARTH_EMBEDDER": "none", **(env or {})},
        input=stdin, timeout=timeout)


@pytest.fixture
def household_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                 capsys: pytest.CaptureFixture[str]) -> Path:
    monkeypatch.setenv("HEARTH_EMBEDDER", "none")
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "home.db"
    for argv in (["people", "add", "Olivia", "--owner"], ["people", "add", "Bob"],
                 ["people", "add", "Alice"],
                 ["remember", "--as", "Bob", "Bob's favourite tea is lapsang souchong"],
                 ["remember", "--as", "Alice", "Alice collects postcards of lighthouses"]):
        assert main([*argv, "--db", str(db)]) == 0
    capsys.readouterr()
    return db


def _token(out: str) -> str:
    return next(w for w in out.split() if w.startswith("hearth_mind_"))


def test_hearth_minds_adds_lists_and_revokes_and_says_one_line_on_bad_input(
    household_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ["--db", str(household_db)]
    assert main(["minds", "add", "calendar", "--for", "Bob", "--grant", "health", *db]) == 0
    out = capsys.readouterr().out
    assert out.count(_token(out)) == 1 and "health" in out
    assert main(["minds", *db]) == 0
    assert capsys.readouterr().out.split("\t")[:3] == ["calendar", "for Bob", "live"]
    assert main(["grants", "--as", "Bob", *db]) == 0
    assert [line.split("\t")[2:5] for line in capsys.readouterr().out.splitlines()] == [
        ["mind", "health", "for mind calendar"]]
    for argv, words in (
        (["minds", "add", "calendar", "--for", "Bob"], "exists already"),
        (["minds", "add", "other", "--for", "Nobody"], "no member"),
        (["minds", "add", "other", "--for", "Bob", "--grant", "credentials"], "never"),
        (["minds", "add", "other", "--for", "Bob", "--grant", "sideways"], "not 'sideways'"),
        (["minds", "add", "Bad Name!", "--for", "Bob"], "lower-case"),
        (["minds", "revoke", "nobody"], "no live mind"),
        (["mcp", "--http", "nowhere"], "HOST:PORT"),
    ):
        assert main([*argv, *db]) == 1, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and words in err, (argv, err)
    assert main(["minds", "revoke", "calendar", *db]) == 0
    assert "revoked" in capsys.readouterr().out
    assert main(["minds", *db]) == 0
    assert "\trevoked " in capsys.readouterr().out


def test_hearth_mcp_over_stdio_needs_a_live_token_and_says_so_in_one_line(
    household_db: Path,
) -> None:
    for env in ({}, {"HEARTH_MIND_TOKEN": "hearth_mind_" + "A" * 43},
                {"HEARTH_MIND_TOKEN": "garbage"}):
        done = _hearth("mcp", "--db", str(household_db), env=env)
        assert done.returncode == 1 and done.stdout == ""
        assert done.stderr.count("\n") == 1, done.stderr
        assert ("HEARTH_MIND_TOKEN" if not env else "unknown, revoked or malformed") in (
            done.stderr)


async def test_hearth_mcp_over_stdio_serves_a_desktop_client_its_members_view(
    household_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await asyncio.to_thread(
        main, ["minds", "add", "desktop", "--for", "Bob", "--db", str(household_db)]) == 0
    token = _token(capsys.readouterr().out)
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "bot.cli", "mcp", "--db", str(household_db)],
        # The whole environment: under the CI's clock-ahead pass it carries libfaketime, so
        # the server reads the clock the household was written with.
        env={**os.environ, "HEARTH_MIND_TOKEN": token, "HEARTH_EMBEDDER": "none",
             "PYTHONPATH": str(ROOT)}, cwd=str(ROOT))
    with open(os.devnull, "w") as errlog:  # noqa: ASYNC230 -- the child's stderr, once
        async with stdio_client(server, errlog=errlog) as (read, write), ClientSession(
                read, write) as opened:
            await opened.initialize()
            _, tea = await call(opened, "recall", query="lapsang souchong tea")
            _, postcards = await call(opened, "recall", query="Alice postcards lighthouses")
            _, wrote = await call(opened, "remember", text="Bob cycles to work on Mondays")
            # revoked from another process while the server runs: refused within the window
            assert await asyncio.to_thread(
                main, ["minds", "revoke", "desktop", "--db", str(household_db)]) == 0
            await asyncio.sleep(5.2)
            failed, refused = await call(opened, "beliefs")
    assert "souchong" in tea and json.loads(postcards)["memories"] == []
    assert json.loads(wrote)["belief"]["status"] == "quarantined"
    assert failed and refused.endswith(REFUSED) and "\n" not in refused


async def test_hearth_mcp_over_http_serves_at_the_address_it_announces(
    household_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await asyncio.to_thread(
        main, ["minds", "add", "desktop", "--for", "Bob", "--db", str(household_db)]) == 0
    token = _token(capsys.readouterr().out)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "mcp", "--http", f"127.0.0.1:{port}",
        "--db", str(household_db), cwd=ROOT, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "HEARTH_EMBEDDER": "none"})
    try:
        assert process.stderr is not None
        announced = (await asyncio.wait_for(process.stderr.readline(), 60)).decode()
        assert f"http://127.0.0.1:{port}/mcp" in announced
        async with session(f"http://127.0.0.1:{port}/mcp", token) as opened:
            _, tea = await call(opened, "recall", query="lapsang souchong tea")
            _, postcards = await call(opened, "recall", query="postcards lighthouses")
        assert "souchong" in tea and "lighthouses" not in postcards
    finally:
        process.terminate()
        assert await asyncio.wait_for(process.wait(), 20) == 0
