"""The household's privacy promises, checked from outside.

Everything here is seen the way a person can see it: members write to her on Telegram (the
emulator) and read her replies, the owner types `hearth` commands (each its own process), and
whoever holds the files reads their bytes. No memory API is called. Her model is candid
(`tests.support.outside.candid_responder`): every reply says all that its prompt let her
remember, so a chat's replies show what that chat's context could recall.

The bot's own tick never runs here; `hearth tick` runs when a test says so, so what a test sees
after it is exactly what that tick did. Each promise is checked beside a positive control: the
same observation, made where the thing must show, does show it.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.household import (
    ANA,
    BEN,
    GROUP,
    OLGA,
    Json,
    Launcher,
    Member,
    Telegram,
    eventually,
    is_background,
    make_household,
    text_of,
)
from tests.support.outside import (
    NO_BACKGROUND,
    Ran,
    candid_responder,
    files_of,
    hearth_env,
    holds,
    raw_bytes_of,
    recalled_now,
    rechain_with_plain_sha256,
    tamper,
)
from tests.support.outside import hearth as run_hearth

PERSON_ID = re.compile(r"\bp[0-9a-f]{12}\b")


# --- the owner at the terminal -------------------------------------------------------------------


async def cli(launcher: Launcher, *argv: str, stdin: str | None = None,
              check: bool = True) -> Ran:
    """`hearth ARGV` against this test's database and model, as the owner types it; unless
    `check` is False, the test fails (showing its stderr) when it does not exit 0."""
    env = hearth_env(launcher.db, model_url=launcher.model.base_url, home=launcher.tmp / "home")
    ran = await run_hearth(*argv, env=env, cwd=launcher.tmp, stdin=stdin)
    return ran.ok() if check else ran


async def tick(launcher: Launcher) -> str:
    """`hearth tick`: everything pending is consolidated and summarised now."""
    return (await cli(launcher, "tick")).out


async def people(launcher: Launcher) -> dict[str, str]:
    """Name -> person id, from `hearth people list`."""
    out = (await cli(launcher, "people", "list")).out
    return {line.split("\t")[0]: line.split("\t")[1] for line in out.splitlines()}


async def export_of(launcher: Launcher, name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((await cli(launcher, "export", "--as", name)).out)
    return document


def lines_with(text: str, word: str) -> list[str]:
    return [line for line in text.splitlines() if word.lower() in line.lower()]


async def start_candid(launcher: Launcher) -> None:
    launcher.model.switch.inner = candid_responder
    await launcher.start(extra=NO_BACKGROUND)


async def say(tg: Telegram, member: Member, text: str, *, group: bool = False) -> str:
    return text_of(await tg.say(member.user, GROUP if group else member.dm, text))


async def forget_by_button(tg: Telegram, member: Member, command: str) -> tuple[str, str]:
    """`member` sends `/forget ...` in their DM and presses "Forget these"; returns what the
    question said and what the message says once the button was pressed."""
    preview = await tg.say(member.user, member.dm, command)
    buttons = [b for row in preview["reply_markup"]["inline_keyboard"] for b in row]
    forget = next(b for b in buttons if "forget" in b["text"].lower())
    await tg.client.send_callback(member.user, member.dm, preview["message_id"],
                                  forget["callback_data"])
    outcome = ""

    async def answered() -> bool:
        nonlocal outcome
        for message in await tg.messages(member.dm):
            if message["message_id"] == preview["message_id"] and "Done" in text_of(message):
                outcome = text_of(message)
                return True
        return False

    await eventually(answered, timeout=10, what=f"{member.name}'s /forget to be confirmed")
    return text_of(preview), outcome


# --- 1. evidence never crosses scopes ------------------------------------------------------------

GAZEBO = "Ben is the one who fixes the gazebo"  # what the group consolidates Ben's line into
BINS = "The bins go out on Tuesday"  # told to her directly by the owner, as shared


async def _what_others_see(launcher: Launcher, tg: Telegram, n: int) -> dict[str, object]:
    """What everyone but Ana can observe of the two shared beliefs: Ben's own view of what
    she knows about him (`hearth inspect`, his export's evidence, his /me), what the group's
    reads return (`hearth recall --group`), and what she says in the group."""
    inspected, recalled_, ben = await asyncio.gather(
        cli(launcher, "inspect", "--as", "Ben"),
        cli(launcher, "recall", "--as", "Olga", "--group", "gazebo bins"),
        export_of(launcher, "Ben"),
    )
    inspect, recalled = inspected.out, recalled_.out
    evidence = sorted(
        (b["proposition"], b["confidence"], b["evidence_count"],
         tuple(e["source"] for e in b["evidence"]))
        for b in ben["beliefs"]
    )
    me = await say(tg, BEN, "/me")
    group = await say(tg, BEN, f"what do you know about the gazebo and the bins ({n})?",
                      group=True)
    return {
        "inspect": lines_with(inspect, "gazebo"),
        "recall --group": lines_with(recalled, "gazebo") + lines_with(recalled, "bins"),
        "Ben's export": evidence,
        "Ben's /me": lines_with(me, "gazebo"),
        "the group's reply": [line for line in recalled_now(group) if line.startswith("- ")
                              and ("gazebo" in line or "bins" in line.lower())],
    }


async def test_a_member_saying_a_shared_beliefs_words_in_private_changes_nothing_others_can_see(
    hearth: Launcher, tg: Telegram
) -> None:
    await start_candid(hearth)
    await make_household(tg)
    await say(tg, BEN, "I am the one who fixes the gazebo", group=True)
    await cli(hearth, "remember", "--as", "Olga", "--shared", BINS)
    await tick(hearth)
    before = await _what_others_see(hearth, tg, 1)
    assert before["inspect"] and before["recall --group"] and before["the group's reply"], before
    assert any(GAZEBO in p for p, *_ in before["Ben's export"])  # type: ignore[attr-defined]

    # Ana says both shared beliefs' exact words in her private chat; the tick consolidates them.
    await say(tg, ANA, GAZEBO)
    await say(tg, ANA, BINS)
    await tick(hearth)
    mine = (await cli(hearth, "inspect", "--as", "Ana")).out
    assert len(lines_with(mine, "gazebo")) == 1 and "private" in lines_with(mine, "gazebo")[0]
    assert len(lines_with(mine, "bins")) == 1 and "private" in lines_with(mine, "bins")[0]
    after = await _what_others_see(hearth, tg, 2)
    assert after == before, "Ana's private words moved what others can see"

    # Her export names only her own scope (and the shared one) as the source of anything.
    ids = await people(hearth)
    exported = await export_of(hearth, "Ana")
    assert {b["scope"] for b in exported["beliefs"]} <= {f"private:{ids['Ana']}", "shared"}
    named = {m for b in exported["beliefs"] for e in b["evidence"]
             for m in PERSON_ID.findall(e["source"])}
    assert named == {ids["Ana"]}, exported["beliefs"]

    # Positive control: the owner saying the same words in the group does move what they see.
    await say(tg, OLGA, GAZEBO, group=True)
    await say(tg, OLGA, BINS, group=True)
    await tick(hearth)
    moved = await _what_others_see(hearth, tg, 3)
    for view, seen in before.items():
        assert moved[view] != seen, f"the control did not move {view}: {seen}"

    # The owner forgets both shared beliefs: gone for everyone else, still Ana's in private.
    question, done = await forget_by_button(tg, OLGA, "/forget shared gazebo")
    assert "gazebo" in question and "forgotten" in done
    assert (await cli(hearth, "forget", "--as", "Olga", "--shared", "--yes", "bins")).out \
        .strip() == "forgot 1 belief(s)"
    gone = await _what_others_see(hearth, tg, 4)
    assert gone["inspect"] == gone["recall --group"] == gone["the group's reply"] == [], gone
    kept = (await cli(hearth, "inspect", "--as", "Ana")).out
    assert lines_with(kept, "gazebo") == lines_with(mine, "gazebo")
    assert lines_with(kept, "bins") == lines_with(mine, "bins")
    ana_me = await say(tg, ANA, "/me")
    assert lines_with(ana_me, "gazebo") and lines_with(ana_me, "bins"), ana_me


# --- 2. forgetting is complete -------------------------------------------------------------------


async def test_what_a_member_forgets_before_a_tick_is_in_no_byte_on_disk_and_no_tick_revives_it(
    hearth: Launcher, tg: Telegram
) -> None:
    await hearth.start(extra=NO_BACKGROUND)  # her replies quote what they answer
    await make_household(tg)
    told = {
        "Quillaberry": "I hide the spare key inside the Quillaberry teapot",  # /forget in her DM
        "Wolfsbanez": "I keep my old diaries in the Wolfsbanez trunk",  # `hearth forget --yes`
        "Tamarisk": "I keep the bicycle pump behind the Tamarisk shed",  # kept: the control
    }
    for word, line in told.items():
        assert word in await say(tg, ANA, line)  # her reply quotes it
    on_disk = raw_bytes_of(files_of(hearth.db))
    assert all(holds(on_disk, word) for word in told)  # the byte check sees what is kept

    question, done = await forget_by_button(tg, ANA, "/forget Quillaberry")
    assert "haven't made a note of that yet" in question and "2 things said" in question
    assert "Quillaberry" not in question and "gone, for good" in done
    forgot = await cli(hearth, "forget", "--as", "Ana", "--yes", "Wolfsbanez")
    assert forgot.out.strip() == "forgot 0 belief(s)"
    gone = ("Quillaberry", "Wolfsbanez")

    def leaves_only_the_control(paths: list[Path], when: str) -> None:
        data = raw_bytes_of(paths)
        assert holds(data, "Tamarisk"), f"{when}: the control is missing, the check proves nothing"
        for word in gone:
            assert not holds(data, word), f"{when}: {word!r} is still in {[p.name for p in paths]}"

    leaves_only_the_control(files_of(hearth.db), "right after the forget")
    copy = hearth.tmp / "backup" / "copy.db"
    copy.parent.mkdir()
    await cli(hearth, "backup", str(copy))
    leaves_only_the_control(files_of(copy), "in a backup made afterwards")

    # Her replies that quoted the words are scrubbed with what she was told.
    transcript = (await export_of(hearth, "Ana"))["transcript"]
    assert [t["role"] for t in transcript].count("assistant") >= len(told)
    assert not any(holds(t["text"].encode(), word) for t in transcript for word in gone)
    assert any("Tamarisk" in t["text"] for t in transcript if t["role"] == "assistant")

    # The tick consolidates what is left, and nothing of what was forgotten comes back.
    await tick(hearth)
    me = await say(tg, ANA, "/me")
    assert "Tamarisk" in me, me  # the tick did run over her chat
    assert not any(word in me for word in gone), me
    inspected = (await cli(hearth, "inspect", "--as", "Ana")).out
    assert "Tamarisk" in inspected and not any(word in inspected for word in gone)
    leaves_only_the_control(files_of(hearth.db), "after the tick")
    assert await hearth.processes[-1].stop() == 0
    leaves_only_the_control(files_of(hearth.db), "once the bot has stopped")


# --- 3. sensitivity beyond English ---------------------------------------------------------------


def is_group_turn(request: Json) -> bool:
    messages = request.get("messages", [])
    return bool(messages) and "This is the household group." in str(messages[0].get("content"))


async def test_a_german_wifi_password_or_french_alarm_code_never_reaches_the_group_german_bins_do(
    hearth: Launcher, tg: Telegram
) -> None:
    await start_candid(hearth)
    await make_household(tg)
    secrets = {"Kastanienbaum", "8093", "Pflaumenkuchen"}
    for fact in ("Unser WLAN-Passwort ist Kastanienbaum", "Le code de l'alarme est 8093",
                 "Der Müll wird am Dienstag abgeholt"):
        await cli(hearth, "remember", "--as", "Olga", "--shared", fact)
    await say(tg, ANA, "Unser WLAN-Passwort im Gartenhaus ist Pflaumenkuchen")  # in her DM
    await tick(hearth)
    # The owner opens every class that can be opened to the group; credentials cannot be.
    granted = await say(tg, OLGA, "/grant shared group_conversation all")
    assert granted.count("Done") == 2 and "credentials" not in granted, granted

    # The same three questions in the group and in the owner's DM: the group is told the
    # ordinary fact and neither secret; her private chat (the control) is told all three.
    questions = ("Wie lautet unser WLAN-Passwort?", "Wie ist le code de l'alarme?",
                 "Wann wird der Müll abgeholt?")
    group = [await say(tg, BEN, q, group=True) for q in questions]
    olga = [await say(tg, OLGA, q) for q in questions]
    assert "Kastanienbaum" in olga[0] and "8093" in olga[1], olga
    bins = "Der Müll wird am Dienstag abgeholt"
    assert bins in olga[2] and bins in group[2], (olga[2], group[2])
    assert not [s for s in secrets for said in group if s in said], group
    ana = await say(tg, ANA, "Wie lautet unser WLAN-Passwort im Gartenhaus?")
    assert "Pflaumenkuchen" in ana, ana

    # What the group context can recall, read by the command line the same way.
    for q in questions:
        in_group = (await cli(hearth, "recall", "--as", "Ben", "--group", q)).out
        in_dm = (await cli(hearth, "recall", "--as", "Olga", q)).out
        assert in_dm.strip() != "nothing recalled", q
        assert not [s for s in secrets if s in in_group], (q, in_group)
        assert ("Müll" in in_group) is ("Müll" in q), (q, in_group)

    # Nothing the model was ever asked for the group held one of them.
    group_prompts = [r for r in hearth.model.requests if is_group_turn(r)]
    assert group_prompts
    for request in group_prompts:
        prompt = json.dumps(request, ensure_ascii=False)
        assert not [s for s in secrets if s in prompt], prompt[:2000]


CARD = "4539\u202f1488\u202f0343\u202f6467"  # a Visa number (Luhn-valid), narrow no-break spaces
CARD_PIECES = [re.compile(rb"4539\D{0,8}1488"), re.compile(rb"1488\D{0,8}0343"),
               re.compile(rb"0343\D{0,8}6467"), re.compile(rb"45391488|14880343|03436467")]


def card_in(data: bytes) -> list[str]:
    """The pieces of CARD found in `data`, whatever separates its groups."""
    return [p.pattern.decode() for p in CARD_PIECES if p.search(data)]


async def test_a_card_number_written_with_narrow_no_break_spaces_is_masked_in_all_she_keeps(
    hearth: Launcher, tg: Telegram
) -> None:
    await start_candid(hearth)
    await make_household(tg)
    reply = await say(tg, ANA, f"my new bank card is {CARD}, the Saffronwood one")
    assert card_in(reply.encode()) == [], reply
    await tick(hearth)
    me = await say(tg, ANA, "/me")
    assert "Saffronwood" in me and card_in(me.encode()) == [], me  # a note, masked
    exported = await export_of(hearth, "Ana")
    told = [t["text"] for t in exported["transcript"]
            if "Saffronwood" in t["text"] and t["role"] == "user"]
    assert told == ["my new bank card is [masked card_number], the Saffronwood one"], told
    assert card_in(json.dumps(exported, ensure_ascii=False).encode()) == []
    # Nor is it in anything the model was given from memory since: the recent lines, the
    # summary, the consolidation batch. (Only the turn answering the message itself carries the
    # message as written.)
    recalled = [m for r in hearth.model.requests for m in r["messages"][:-1]]
    recalled += [r["messages"][-1] for r in hearth.model.requests if is_background(r)]
    assert any("Saffronwood" in str(m["content"]) for m in recalled)  # the control
    assert [m for m in recalled if card_in(str(m["content"]).encode())] == []
    assert await hearth.processes[-1].stop() == 0
    closed = raw_bytes_of(files_of(hearth.db))
    assert holds(closed, "Saffronwood")  # the control: the byte check sees what is stored
    assert card_in(closed) == [], "the card number is in the database's bytes"


async def test_a_card_number_told_on_telegram_is_in_no_byte_of_the_database_or_its_wal(
    hearth: Launcher, tg: Telegram
) -> None:
    await start_candid(hearth)
    await make_household(tg)
    await say(tg, ANA, f"my new bank card is {CARD}, the Saffronwood one")
    live = raw_bytes_of(files_of(hearth.db))
    assert holds(live, "Saffronwood")  # the control: the line is stored, and seen
    leaked = [f.name for f in files_of(hearth.db) if f.is_file() and card_in(f.read_bytes())]
    assert leaked == [], f"the unmasked card number lies in {leaked}"


# --- 4. side channels ----------------------------------------------------------------------------

ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+(?:[+-]\d\d:\d\d|Z)?")


def handles_seen(document: dict[str, Any], inspected: str) -> dict[str, list[object]]:
    """Every id or handle a member is shown, by kind: in their export (beliefs, the numbers in
    each evidence source, transcript lines, the receipts of reads of their facts and the ids
    those returned) and in `hearth inspect` (the name before each note)."""
    sources: list[object] = []
    for belief in document["beliefs"]:
        for evidence in belief["evidence"]:
            bare = ISO_TIME.sub("", PERSON_ID.sub("", evidence["source"]))
            sources += [int(n) for n in re.findall(r"\d+", bare)]
    reads = document["reads_of_my_facts"]
    return {
        "belief ids": [b.get("belief_id", b.get("ref")) for b in document["beliefs"]],
        "evidence sources": sources,
        "line ids": [t.get("turn_id", t.get("ref")) for t in document["transcript"]],
        "receipt numbers": [r["seq"] for r in reads if "seq" in r],
        "ids a receipt returned": [i for r in reads for i in r.get("returned_ids", ())],
        "names in hearth inspect": [
            int(n) if n.isdigit() else n
            for n in re.findall(r"^#?([0-9a-z]+)\t", inspected, re.M)
        ],
    }


async def ana_tells_two_things(launcher: Launcher, tg: Telegram,
                               n: int) -> dict[str, list[object]]:
    """Ana says two things in her DM, the tick runs, and she exports (on Telegram) and looks
    (`hearth inspect`): the handles she is shown."""
    await say(tg, ANA, f"I planted {n} rows of Kohlrabi today")
    await say(tg, ANA, f"I walked {n} miles along the Wendle canal")
    await tick(launcher)
    before = len(await tg.client.documents(ANA.dm.id))
    await tg.client.send_command(ANA.user, ANA.dm, "/export")

    async def sent() -> bool:
        return len(await tg.client.documents(ANA.dm.id)) > before

    await eventually(sent, timeout=10, what="Ana's export")
    document = json.loads((await tg.client.documents(ANA.dm.id))[-1].content)
    return handles_seen(document, (await cli(launcher, "inspect", "--as", "Ana")).out)


async def test_the_ids_a_member_is_shown_reveal_nothing_of_how_much_another_talked_to_her(
    hearth: Launcher, tg: Telegram
) -> None:
    await start_candid(hearth)
    await make_household(tg)
    first = await ana_tells_two_things(hearth, tg, 1)
    quiet = await ana_tells_two_things(hearth, tg, 2)  # Ben said nothing in between
    for n in range(12):  # Ben's many private exchanges
        await say(tg, BEN, f"I fixed the {n}th loose hinge in the Marbury attic")
    await say(tg, BEN, "/me")
    await tick(hearth)
    busy = await ana_tells_two_things(hearth, tg, 3)  # the same two things of hers again

    # She is shown her notes and lines by name: those names could leak, so they are checked.
    assert all(quiet[k] for k in ("belief ids", "line ids", "names in hearth inspect")), quiet
    for view in (first, quiet, busy):
        numbers = {kind: [h for h in shown if isinstance(h, int)] for kind, shown in view.items()}
        assert {kind: n for kind, n in numbers.items() if n} == {}, "a number is shown to her"
    # Her notes keep their names whatever Ben said meanwhile, and no name follows another.
    assert set(first["belief ids"]) <= set(busy["belief ids"])
    assert len(set(busy["belief ids"])) == len(busy["belief ids"])


# --- 5. files ------------------------------------------------------------------------------------


def modes_under(folder: Path, *, leave_out: tuple[Path, ...] = ()) -> dict[str, int]:
    """The permission bits of every regular file under `folder`, by path relative to it."""
    return {str(p.relative_to(folder)): p.stat().st_mode & 0o777
            for p in sorted(folder.rglob("*")) if p.is_file() and p not in leave_out}


@pytest.mark.usefixtures("default_umask")
async def test_under_umask_022_every_file_she_and_the_cli_keep_is_0600_while_she_runs_and_after(
    hearth: Launcher, tg: Telegram
) -> None:
    await hearth.start(extra=NO_BACKGROUND)
    await make_household(tg)
    await say(tg, ANA, "I keep the spare fuses in the Hollyhock drawer")
    await forget_by_button(tg, ANA, "/forget Hollyhock")  # tombstones are kept beside the file
    await say(tg, ANA, "I keep the candles in the Larkspur tin")
    await tg.client.send_command(ANA.user, ANA.dm, "/export")

    async def exported() -> bool:
        return bool(await tg.client.documents(ANA.dm.id))

    await eventually(exported, timeout=10, what="Ana's export")
    copy = hearth.tmp / "backups" / "copy.db"
    copy.parent.mkdir()
    await cli(hearth, "backup", str(copy))
    await cli(hearth, "export", "--as", "Ana")  # to its standard output, no file of its own
    # The control: a file anyone makes here now is world-readable, so 0600 is hearth's doing.
    control = hearth.db.parent / "made-by-the-test.txt"
    control.write_text("under this umask, a new file is 0644\n")
    assert control.stat().st_mode & 0o777 == 0o644
    log = hearth.log_path
    kept = (control, log)

    running = modes_under(hearth.tmp, leave_out=kept)
    data = {name for name in running if name.startswith("data/")}
    assert {"data/hearth.db", "data/hearth.db-wal", "data/hearth.db-shm",
            "data/hearth.db.secret", "data/hearth.db.ledger-head"} <= data, sorted(running)
    assert {"backups/copy.db", "backups/copy.db.secret", "backups/copy.db.ledger-head"} <= set(
        running), sorted(running)
    assert all(name.startswith(("data/hearth.db", "backups/copy.db")) for name in running), (
        f"a file she keeps is not beside the database or its backup: {sorted(running)}")
    assert running == dict.fromkeys(running, 0o600), running

    assert await hearth.processes[-1].stop() == 0
    await cli(hearth, "restore", str(copy))
    after = modes_under(hearth.tmp, leave_out=kept)
    assert "data/hearth.db" in after and after == dict.fromkeys(after, 0o600), after


# --- 6. the ledger -------------------------------------------------------------------------------


async def test_the_owner_is_told_which_receipt_was_rewritten_and_where_the_ledger_was_cut(
    hearth: Launcher, tg: Telegram
) -> None:
    bot = await hearth.start(extra=NO_BACKGROUND)
    await make_household(tg)
    for n in range(3):
        await say(tg, ANA, f"I water the Begonia pots on day {n}")
        await say(tg, BEN, f"I oil the Dovecote hinges on day {n}")
    audit = await say(tg, OLGA, "/audit")
    assert "Ledger: intact" in audit, audit  # the control: untouched, it holds
    assert await bot.stop() == 0
    intact = (await cli(hearth, "receipts", "verify")).out
    count = int(re.search(r"ledger intact: (\d+) receipt", intact).group(1))  # type: ignore[union-attr]
    assert count >= 12, intact

    # A copy where one read's receipt is rewritten to hide what it returned, then the chain is
    # recomputed with plain SHA-256 from there on.
    copy = hearth.tmp / "rewritten.db"
    await cli(hearth, "backup", str(copy))
    middle = count // 2
    tamper(copy, f"UPDATE receipts SET returned_ids = '[]', scopes = '[]' WHERE seq = {middle}")
    rechain_with_plain_sha256(copy, middle)
    rewritten = await cli(hearth, "receipts", "verify", "--db", str(copy), check=False)
    assert rewritten.code == 1 and rewritten.out.strip() == (
        f"ledger broken at receipt #{middle}: receipt {middle} was altered "
        "(its HMAC does not match its contents)")

    # The household's own: its last three receipts deleted.
    tamper(hearth.db, f"DELETE FROM receipts WHERE seq > {count - 3}")
    cut = await cli(hearth, "receipts", "verify", check=False)
    assert cut.code == 1 and cut.out.strip() == (
        f"ledger broken at receipt #{count - 2}: the ledger was cut after receipt "
        f"{count - 3}; the anchor says {count}")
    await hearth.start(extra=NO_BACKGROUND)
    audit = await say(tg, OLGA, "/audit")
    assert f"Ledger: BROKEN at receipt #{count - 2}: the ledger was cut after receipt " \
        f"{count - 3}; the anchor says {count}" in audit, audit
