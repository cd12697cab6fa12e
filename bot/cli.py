"""The `hearth` command: a thin shell over the memory facade (DESIGN §11).

Owns: parsing arguments, running the one-shot commands and printing their results; `hearth run`
opens memory, the soul and the model (`bot.shell`), hands them to the Telegram face (`bot.app`)
and closes them when it stops; `hearth chat` is the same turn in a terminal (`bot.terminal`),
`hearth doctor` checks a setup (`bot.doctor`), `hearth init` (`bot.init`) writes the `.env`. Must
not: hold SQL or policy; every read goes through `memory.Memory`. Bad input gets one clear line
on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import re
import sys
from collections.abc import Awaitable, Callable, Sequence
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from bot import actions
from bot.doctor import doctor
from bot.settings import ConfigError, Settings, load_settings
from bot.shell import (
    EXIT_FAIL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    Failure,
    model_gateway,
    open_memory,
    say,
)
from bot.terminal import chat

if TYPE_CHECKING:
    from bot.app import BotConfig
    from soul.files import Soul
    from soul.model import Gateway
from memory import (
    MAX_DOCUMENT_BYTES,
    RECALL_LIMIT,
    SHARED,
    AccessContext,
    Activity,
    Belief,
    HearthError,
    Memory,
    Person,
    Quoted,
    Recalled,
    Sensitivity,
    Unreadable,
    hold_database,
    private_scope,
    utc_now,
)

log = logging.getLogger("hearth.cli")
LOGGED_COMMANDS = frozenset({"run", "chat", "mcp"})  # the commands whose logs go to stderr

EMBED_PROGRESS_FROM = 64  # passages: a document this long shows its progress
_ACTIVITIES = [a.value for a in Activity]


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage mistake as one line."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"hearth: {message} (see `{self.prog} --help`)\n")


def _db_option(parser: argparse.ArgumentParser, *, top: bool) -> None:
    parser.add_argument(
        "--db",
        type=Path,
        default=None if top else argparse.SUPPRESS,
        help="the SQLite file (default: HEARTH_DB, else ./hearth.db)",
    )


def _day(text: str) -> date:
    """A day as `--as-of` takes it: YYYY-MM-DD, nothing else."""
    try:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            raise ValueError(text)
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a day like 2026-03-15") from None


_EXPLAIN_CLASS = "say how each belief's class was given (words, meaning, the model, a member)"


def build_parser() -> argparse.ArgumentParser:  # noqa: PLR0915 -- the whole CLI, in one place
    parser = _Parser(prog="hearth", description="hearth: a household's companion on Telegram")
    _db_option(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        _db_option(p, top=False)
        return p

    people = command("people", "list, add or remove household members")
    people_sub = people.add_subparsers(dest="people_command", metavar="ACTION",
                                       parser_class=_Parser)
    people_list = people_sub.add_parser("list", help="list members")
    _db_option(people_list, top=False)
    people_add = people_sub.add_parser("add", help="register a member")
    _db_option(people_add, top=False)
    people_add.add_argument("name")
    people_add.add_argument("--telegram-id", type=int, default=None)
    people_add.add_argument("--owner", action="store_true", help="the household's owner")
    people_remove = people_sub.add_parser("remove", help="remove a member and purge their data")
    _db_option(people_remove, top=False)
    people_remove.add_argument("name")

    remember = command("remember", "tell her a fact directly, as NAME")
    remember.add_argument("--as", dest="as_name", required=True, metavar="NAME")
    remember.add_argument("--shared", action="store_true", help="a household fact")
    remember.add_argument("text", nargs="+")

    recall = command("recall", "what a read in that context returns, through the gate")
    recall.add_argument("--as", dest="as_name", required=True, metavar="NAME")
    recall.add_argument("--group", action="store_true", help="read for the household group")
    recall.add_argument("--activity", choices=_ACTIVITIES, default=None)
    recall.add_argument("--limit", type=int, default=RECALL_LIMIT)
    recall.add_argument("--explain", action="store_true",
                        help="every candidate the judge weighed, with its signals and why")
    recall.add_argument("query", nargs="+")

    inspect = command("inspect", "what she knows about NAME, as NAME may see it")
    inspect.add_argument("--as", dest="as_name", required=True, metavar="NAME")
    inspect.add_argument("--explain", action="store_true",
                         help=_EXPLAIN_CLASS)

    beliefs = command("beliefs", "NAME's visible beliefs, as they stood on DATE (default: now)")
    beliefs.add_argument("--as", dest="as_name", required=True, metavar="NAME")
    beliefs.add_argument("--as-of", dest="as_of", type=_day, default=None, metavar="DATE",
                         help="a day like 2026-03-15: the beliefs that held at its end, in the "
                              "household's time zone")
    beliefs.add_argument("--explain", action="store_true", help=_EXPLAIN_CLASS)

    forget = command("forget", "forget NAME's beliefs matching TEXT")
    forget.add_argument("--as", dest="as_name", required=True, metavar="NAME")
    forget.add_argument("--shared", action="store_true", help="shared beliefs (owner only)")
    forget.add_argument("--yes", action="store_true",
                        help="forget without showing what will go and asking first")
    forget.add_argument("text", nargs="+")

    grant = command("grant", "a standing grant over NAME's own facts")
    grant.add_argument("--as", dest="as_name", required=True, metavar="NAME")
    grant.add_argument("activity", choices=[*_ACTIVITIES, "all"])
    grant.add_argument("sensitivity", metavar="CLASS", help="health, finance, or all (both)")
    grant.add_argument("--days", type=float, default=None)
    grant.add_argument("--shared", action="store_true", help="over shared facts (owner only)")
    grant.add_argument("--for", dest="beneficiary", default=None, metavar="NAME",
                       help="only for work done for this member")
    grant.add_argument("--note", default="")

    revoke = command("revoke", "revoke NAME's grant at once")
    revoke.add_argument("--as", dest="as_name", required=True, metavar="NAME")
    revoke.add_argument("activity", choices=[*_ACTIVITIES, "all"])
    revoke.add_argument("sensitivity", metavar="CLASS", help="health, finance, or all (both)")
    revoke.add_argument("--shared", action="store_true")

    grants = command("grants", "list standing grants")
    grants.add_argument("--as", dest="as_name", default=None, metavar="NAME")

    receipts = command("receipts", "show the read ledger, verify its chain, or anchor it anew")
    receipts.add_argument(
        "action", nargs="?", choices=["verify", "anchor"], default=None,
        help="verify: the chain and its anchor; anchor: write a lost anchor anew at the "
             "ledger's end (a cut before now can no longer be told)",
    )
    receipts.add_argument("--as", dest="as_name", default=None, metavar="NAME",
                          help="reads that used NAME's facts")
    receipts.add_argument("--limit", type=int, default=50)

    docs = command("docs", "the shelf NAME may see; `docs add FILE` puts a document on it")
    docs.add_argument("--as", dest="as_name", default=None, metavar="NAME")
    docs_sub = docs.add_subparsers(dest="docs_command", metavar="ACTION", parser_class=_Parser)
    for name, text, what in (("add", "put a document on the shelf", "FILE"),
                             ("search", "the passages that answer QUERY", "QUERY"),
                             ("forget", "drop a document and every passage of it", "TITLE")):
        action = docs_sub.add_parser(name, help=text, description=text)
        _db_option(action, top=False)
        action.add_argument("--as", dest="as_name", default=argparse.SUPPRESS, metavar="NAME")
        action.add_argument("words", nargs="+", metavar=what)
        if name == "add":
            action.add_argument("--shared", action="store_true", help="a household document")
        if name == "search":
            action.add_argument("--group", action="store_true",
                                help="search as the household group")
            action.add_argument("--explain", action="store_true",
                                help="the best passages, told or not, with why")

    export = command("export", "everything NAME may see about themselves, as JSON")
    export.add_argument("--as", dest="as_name", required=True, metavar="NAME")

    command("doctor", "check the configuration, the database and the embedder; one line each")

    command("run", "start the Telegram bot, with the tick and the dream scheduled")
    command("tick", "run one tick now (consolidate what is pending, refresh summaries)")
    command("dream", "run the dream pass now and print its report")
    init = command("init", "ask for the token, the owner's Telegram id and the model; write .env")
    init.add_argument("--force", action="store_true", help="replace an existing .env")
    init.add_argument("--no-check", action="store_true",
                      help="do not check the token with Telegram, nor the model server")

    chat = command("chat", "talk to her as NAME in a private chat (or in the household group)")
    chat.add_argument("--as", dest="as_name", required=True, metavar="NAME")
    chat.add_argument("--group", action="store_true", help="speak in the household group")

    persona = command("persona", "the gated persona-edit flow")
    persona_sub = persona.add_subparsers(dest="persona_command", metavar="ACTION",
                                         parser_class=_Parser)
    for name, text in (("proposals", "list proposed persona edits"),
                       ("approve", "approve a proposal (the owner)"),
                       ("reject", "reject a proposal (the owner)")):
        action = persona_sub.add_parser(name, help=text)
        _db_option(action, top=False)
        if name != "proposals":
            action.add_argument("proposal_id", type=int, metavar="ID")

    minds = command("minds", "list, add or revoke other agents' credentials (minds)")
    minds_sub = minds.add_subparsers(dest="minds_command", metavar="ACTION",
                                     parser_class=_Parser)
    minds_list = minds_sub.add_parser("list", help="list minds")
    _db_option(minds_list, top=False)
    minds_add = minds_sub.add_parser(
        "add", help="a credential for a mind acting for one member; its token is shown once")
    _db_option(minds_add, top=False)
    minds_add.add_argument("name")
    minds_add.add_argument("--for", dest="member", required=True, metavar="MEMBER")
    minds_add.add_argument("--grant", dest="grants", nargs="+", default=[], metavar="PURPOSE",
                           help="health and/or finance: the member's grant naming this mind")
    minds_add.add_argument("--days", type=float, default=None, help="how long the grants last")
    minds_revoke = minds_sub.add_parser("revoke", help="revoke a mind's credential at once")
    _db_option(minds_revoke, top=False)
    minds_revoke.add_argument("name")

    mcp = command("mcp", "the MCP door for minds with a credential (stdio by default)")
    mcp.add_argument("--http", default=None, metavar="HOST:PORT",
                     help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio")

    backup = command("backup", "an online, consistent copy of the database")
    backup.add_argument("path", type=Path)
    restore = command("restore", "replace the database with a backup")
    restore.add_argument("path", type=Path)
    return parser


# --- running -----------------------------------------------------------------------------------


def _context_for_recall(person: Person, group: bool, activity: Activity | None) -> AccessContext:
    purpose = "a read from the command line"
    if activity is None:
        activity = Activity.GROUP_CONVERSATION if group else Activity.DM_CONVERSATION
    if activity == Activity.OWNER_AUDIT:
        return AccessContext.for_audit(person.person_id, purpose)
    if activity == Activity.CONSOLIDATION:
        return AccessContext.for_batch("shared" if group else private_scope(person.person_id),
                                       purpose)
    try:
        if group:
            return AccessContext.for_group(activity, purpose, actor=person.person_id)
        return AccessContext.for_member(person.person_id, activity, purpose)
    except ValueError:
        where = "in the household group" if group else "for one member"
        raise Failure(f"{activity} is not a read {where}") from None


def _scope_label(scope: str) -> str:
    return "shared" if scope == SHARED else "private"


async def _run(args: argparse.Namespace, settings: Settings) -> int:
    db: Path = args.db or settings.db
    cmd = args.command

    if cmd == "restore":
        return await _restore(db, args.path)
    if cmd == "doctor":
        return await doctor(settings, db)

    if cmd == "people":
        action = args.people_command or "list"
        memory = await open_memory(settings, db, create=action == "add")
        try:
            if action == "add":
                person = await memory.people.add(
                    args.name, telegram_id=args.telegram_id, owner=args.owner
                )
                role = " as the owner" if person.is_owner else ""
                say(f"added {person.name} ({person.person_id}){role}")
            elif action == "remove":
                person = await memory.people.by_name(args.name)
                count = await memory.forgetting.remove_person(person.person_id)
                say(f"removed {person.name} and purged {count} belief(s)")
            else:
                people = await memory.people.list()
                if not people:
                    say("no members yet: add one with `hearth people add NAME --owner`")
                for p in people:
                    tg = f"telegram {p.telegram_id}" if p.telegram_id is not None else "-"
                    say(f"{p.name}\t{p.person_id}\t{tg}\t{'owner' if p.is_owner else 'member'}")
        finally:
            await memory.close()
        return EXIT_OK

    if cmd == "chat":
        return await chat(settings, db, args)
    if cmd == "mcp":
        return await _mcp(settings, db, args)
    if cmd == "run":
        return await _serve(settings, db)
    if cmd == "tick":
        return await _tick(settings, db)
    if cmd == "dream":
        return await _dream(settings, db)
    if cmd == "beliefs":
        return await _beliefs(settings, db, args)
    embed = cmd in ("remember", "recall", "docs")
    memory = await open_memory(settings, db, embed=embed)
    try:
        return await _COMMANDS[cmd](memory, args)
    finally:
        await memory.close()


async def _docs(memory: Memory, args: argparse.Namespace) -> int:
    if args.as_name is None:
        raise Failure("say whose shelf: --as NAME")
    person = await memory.people.by_name(args.as_name)
    action = args.docs_command
    if action is None:
        ctx = actions.inspecting(person, "the member listed the shelf")
        shelf = await memory.shelf.documents(ctx)
        if not shelf:
            say("the shelf is empty")
        for d in shelf:
            pages = f"{d.pages} page(s), " if d.pages else ""
            say(f"{d.ref}\t{d.title}\t{_scope_label(d.scope)}\t{d.sensitivity}\t"
                f"{pages}{d.passages} passage(s)\t{d.created_at[:10]}")
        return EXIT_OK
    words = " ".join(args.words)
    if not words.strip():
        raise Failure(f"say what to {action}: nothing was given")
    if action == "add":
        return await _docs_add(memory, person, Path(words), shared=args.shared)
    if action == "forget":
        ctx = actions.inspecting(person, "the member dropped a document")
        gone = await memory.shelf.forget(ctx, words)
        say(f"dropped {len(gone)} document(s)" + (f": {', '.join(gone)}" if gone else ""))
        return EXIT_OK
    ctx = _context_for_recall(person, args.group, None)
    found = await memory.shelf.search(ctx, words, told_only=not args.explain)
    if not found:
        say("nothing on the shelf answers that")
    for n, f in enumerate(found, start=1):
        mark = "" if f.told else " (not told)"
        say(f"{n}. [{f.citation}] {' '.join(f.text.split())[:300]}{mark}")
        if args.explain:
            say(f"   {f.why}")
    return EXIT_OK


async def _docs_add(memory: Memory, person: Person, path: Path, *, shared: bool) -> int:
    if shared and not person.is_owner:
        raise Failure("only the household's owner puts shared documents on the shelf from here")
    try:
        size = (await asyncio.to_thread(path.stat)).st_size
        if size > MAX_DOCUMENT_BYTES:
            raise Failure(f"{path.name} is larger than {MAX_DOCUMENT_BYTES // 2**20} MB")
        data = await asyncio.to_thread(path.read_bytes)
    except OSError:
        raise Failure(f"cannot read {path}") from None

    def progress(done: int, total: int) -> None:
        if total > EMBED_PROGRESS_FROM:
            sys.stderr.write(f"\rreading {path.name}: {done}/{total} passages")
            if done == total:
                sys.stderr.write("\n")

    try:
        shelved = await memory.shelf.put(person.person_id, path.name, data, shared=shared,
                                         progress=progress)
    except Unreadable as exc:
        raise Failure(f"{path.name}: {exc}") from None
    pages = f"{shelved.pages} page(s), " if shelved.pages else ""
    again = " (replacing the older copy)" if shelved.replaced else ""
    say(f"shelved {shelved.title}{again}: {pages}{shelved.passages} passage(s),"
        f" {shelved.sensitivity}, {_scope_label(SHARED if shared else 'private:')}"
        f" — document {shelved.ref}")
    return EXIT_OK


async def _minds(memory: Memory, args: argparse.Namespace) -> int:
    action = args.minds_command or "list"
    if action == "add":
        person = await memory.people.by_name(args.member)
        classes = [_grantable_class(word) for word in args.grants]
        issued = await memory.minds.add(args.name, person.person_id, grants=classes,
                                        days=args.days)
        grants = ", ".join(issued.granted) or "none (ordinary facts only)"
        say(f"added mind {issued.mind.name}, acting for {person.name}; grants: {grants}")
        say(f"token (shown once; give it to the mind, as HEARTH_MIND_TOKEN or a bearer "
            f"header): {issued.token}")
        return EXIT_OK
    if action == "revoke":
        mind = await memory.minds.revoke(args.name)
        say(f"revoked mind {mind.name}: its token no longer opens anything")
        return EXIT_OK
    found = await memory.minds.list()
    if not found:
        say("no minds yet: add one with `hearth minds add NAME --for MEMBER`")
    names = {p.person_id: p.name for p in await memory.people.list()}
    for m in found:
        state = f"revoked {m.revoked_at[:10]}" if m.revoked_at else "live"
        granted = ", ".join(await memory.minds.granted(m)) if not m.revoked_at else ""
        say(f"{m.name}	for {names.get(m.person_id, m.person_id)}	{state}	"
            f"added {m.created_at[:10]}	grants: {granted or 'none'}")
    return EXIT_OK


def _grantable_class(word: str) -> Sensitivity:
    try:
        return Sensitivity(word.strip().lower())
    except ValueError:
        raise Failure(f"a mind may be granted health or finance, not {word!r}") from None


async def _mcp(settings: Settings, db: Path, args: argparse.Namespace) -> int:
    """The MCP door (`bot.mcp`): stdio with the token in HEARTH_MIND_TOKEN, or HTTP with a
    bearer token per request. Shares the database as `hearth chat` does (no run lock)."""
    from bot.mcp import TOKEN_ENV, Door, serve_http, serve_stdio  # noqa: PLC0415 -- the SDK loads only here
    host, port = _host_port(args.http) if args.http else ("", 0)
    token = settings.mind_token.get_secret_value() if settings.mind_token else None
    if not args.http and not token:
        raise Failure(f"hearth mcp over stdio serves one mind: put its token in {TOKEN_ENV} "
                      "(`hearth minds add NAME --for MEMBER` prints one)")
    memory = await open_memory(settings, db, embed=True)
    try:
        if args.http:
            door = Door(memory, transport="http", household_zone=settings.household_zone)
            await serve_http(door, host, port, lambda url: log.warning(
                "the MCP door is open at %s (a bearer token per request)", url))
        else:
            door = Door(memory, transport="stdio", household_zone=settings.household_zone,
                        token=token)
            await serve_stdio(door)
    finally:
        await memory.close()
    return EXIT_OK


def _host_port(text: str) -> tuple[str, int]:
    host, _, port = text.strip().rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise Failure(f"--http takes HOST:PORT, such as 127.0.0.1:8765 (not {text!r})")
    return host, int(port)


async def _remember(memory: Memory, args: argparse.Namespace) -> int:
    person = await memory.people.by_name(args.as_name)
    outcome = await memory.beliefs.remember(person.person_id, " ".join(args.text),
            shared=args.shared)
    if outcome.status == "refused":
        raise Failure(f"not stored: {outcome.reason}")
    if outcome.status == "dropped":
        say(f"already counted: belief {outcome.ref}")
    elif outcome.status == "created":
        say(f"remembered: belief {outcome.ref}")
    else:
        say(f"reinforced: belief {outcome.ref}")
    return EXIT_OK


async def _recall(memory: Memory, args: argparse.Namespace) -> int:
    person = await memory.people.by_name(args.as_name)
    activity = Activity(args.activity) if args.activity else None
    ctx = _context_for_recall(person, args.group, activity)
    query = " ".join(args.query)
    if not query.strip():
        raise Failure("say what to recall: the query is empty")
    names = {p.person_id: p.name for p in await memory.people.list()}
    if args.explain:
        explained = await memory.recall.explain(ctx, query, limit=args.limit)
        if not explained:
            say("nothing recalled")
        for rank, e in enumerate(explained, start=1):
            say(f"{rank}. {_recalled_line(e.item, names)}")
            say(f"   {e.item.why}")
            say("   " + " ".join(f"{k}={v:.2f}" for k, v in e.signals.items()))
        return EXIT_OK
    found = await memory.recall.recollect(ctx, query, limit=args.limit)
    if not found:
        say("nothing recalled")
    for item in found:
        say(_recalled_line(item, names))
    return EXIT_OK


def _recalled_line(item: Recalled | Quoted, names: dict[str, str]) -> str:
    """One recalled row: its verdict, ref, confidence (a line has none), scope, class, words."""
    if isinstance(item, Quoted):  # a member's own words, as said
        t = item.turn
        return (f"{item.verdict}\t{t.ref}\t-\t{_scope_label(t.scope)}\t{t.sensitivity}\t"
                f'"{t.text}" ({names.get(t.speaker_id or "", "a member")}, {t.at[:10]})')
    b = item.belief
    return (f"{item.verdict}\t{b.ref}\t{b.confidence:.2f}\t{_scope_label(b.scope)}\t"
            f"{b.sensitivity}\t{b.proposition}")


async def _inspect(memory: Memory, args: argparse.Namespace) -> int:
    person = await memory.people.by_name(args.as_name)
    found = await actions.what_she_knows(memory, person)
    if not found:
        say(f"she knows nothing about {person.name} yet")
    for b in found:
        line = (f"{b.ref}\t{b.confidence:.2f}\t{b.status}\t{_scope_label(b.scope)}\t"
                f"{b.sensitivity}\t{b.proposition}\t({b.evidence_count} source(s))")
        say(line + (_class_given(b) if args.explain else ""))
    return EXIT_OK


def _class_given(b: Belief) -> str:
    """How a belief's class was given, for `--explain`."""
    return f"\t{b.sensitivity} by {b.sensitivity_by or 'its words'}"


async def _beliefs(settings: Settings, db: Path, args: argparse.Namespace) -> int:
    """NAME's visible beliefs as they stood at the end of DATE (now, without one), in the
    household's time zone, each with when it held."""
    from soul.when import zone_of  # noqa: PLC0415 -- only this command needs a time zone

    zone = zone_of(settings.household_zone)
    memory = await open_memory(settings, db)
    try:
        person = await memory.people.by_name(args.as_name)
        if args.as_of is None:
            when, label = utc_now(), "now"
        else:
            when = datetime.combine(args.as_of + timedelta(days=1), time(), zone)
            when -= timedelta(microseconds=1)
            label = f"on {args.as_of.isoformat()}"
        found = await actions.beliefs_as_of(memory, person, when)
    finally:
        await memory.close()
    if not found:
        say(f"no belief {person.name} may see held {label}")
    for h in found:
        b = h.belief
        since = datetime.fromisoformat(h.since).astimezone(zone).date().isoformat()
        until = ("" if h.until is None else " until "
                 + datetime.fromisoformat(h.until).astimezone(zone).date().isoformat())
        say(f"{b.ref}\t{b.confidence:.2f}\t{b.status}\t{_scope_label(b.scope)}\t"
            f"{b.sensitivity}\t{b.proposition}\t(from {since}{until})"
            + (_class_given(b) if args.explain else ""))
    return EXIT_OK


async def _forget(memory: Memory, args: argparse.Namespace) -> int:
    """As the bot does: show what will go and ask, unless `--yes`; then forget, for good."""
    person = await memory.people.by_name(args.as_name)
    text = " ".join(args.text)
    if not args.yes:
        preview = await actions.preview_forget(memory, person, text, shared=args.shared)
        found, mentions = preview.beliefs, preview.mentions
        if preview.empty:
            say("nothing like that to forget")
            return EXIT_OK
        if found:
            say("this is what would be forgotten, for good:")
            for belief in found:
                say(f"  {belief.proposition}")
            if mentions:
                say(f"  and the same words in {mentions} thing(s) said")
        else:
            say(f"no belief holds it yet, but {mentions} thing(s) said mention it")
        sys.stdout.write("forget it, for good? [y/N] ")
        sys.stdout.flush()
        answer = (await asyncio.to_thread(sys.stdin.readline)).strip().lower()
        if answer not in ("y", "yes"):
            say("kept: nothing was forgotten")
            return EXIT_OK
    count = await actions.forget(memory, person, text, shared=args.shared)
    say(f"forgot {count} belief(s)")
    return EXIT_OK


async def _grant(memory: Memory, args: argparse.Namespace) -> int:
    person = await memory.people.by_name(args.as_name)
    beneficiary = None
    if args.beneficiary:
        beneficiary = (await memory.people.by_name(args.beneficiary)).person_id
    whose = "shared facts" if args.shared else f"{person.name}'s facts"
    async for grant in actions.grant(memory, person, args.activity, args.sensitivity,
                                     days=args.days, shared=args.shared,
                                     beneficiary_id=beneficiary, note=args.note):
        until = f" until {grant.expires_at}" if grant.expires_at else ""
        say(f"granted {grant.activity} {grant.sensitivity} over {whose}{until} "
            f"(grant {grant.ref})")
    return EXIT_OK


async def _revoke(memory: Memory, args: argparse.Namespace) -> int:
    person = await memory.people.by_name(args.as_name)
    count = await actions.revoke(memory, person, args.activity, args.sensitivity,
                                 shared=args.shared)
    if count == 0:
        raise Failure(f"no active grant of {args.activity} {args.sensitivity} to revoke")
    say(f"revoked {count} grant(s)")
    return EXIT_OK


async def _grants(memory: Memory, args: argparse.Namespace) -> int:
    grantor = None
    if args.as_name:
        grantor = (await memory.people.by_name(args.as_name)).person_id
    names = {p.person_id: p.name for p in await memory.people.list()}
    # A note is its grantor's words: shown only in the listing of their own grants (--as).
    found = await memory.grants.list(grantor, viewer_id=grantor)
    if not found:
        say("no grants")
    now = utc_now().isoformat()
    for g in found:
        state = "revoked" if g.revoked_at else ("active" if g.is_active(now) else "expired")
        over = "shared" if g.scope == "shared" else names.get(g.grantor_id, g.grantor_id)
        who = names.get(g.beneficiary_id, "anyone") if g.beneficiary_id else "anyone"
        if g.mind:  # a grant to a mind opens that mind's reads alone
            who = f"mind {g.mind}"
        until = g.expires_at or "no expiry"
        say(f"{g.ref}\t{over}\t{g.activity}\t{g.sensitivity}\tfor {who}\t{until}\t"
            f"{state}\t{g.note}")
    return EXIT_OK


async def _receipts(memory: Memory, args: argparse.Namespace) -> int:
    if args.action == "verify":
        checked, broken = await memory.ledger.verify()
        if broken is not None:
            seq, reason = broken
            say(f"ledger broken at receipt #{seq}: {reason}")
            return EXIT_FAIL
        say(f"ledger intact: {checked} receipt(s) verified from genesis and against "
            "its anchor")
        return EXIT_OK
    if args.action == "anchor":
        seq = await memory.ledger.anchor()
        say(f"ledger anchored at receipt #{seq}")
        return EXIT_OK
    if args.as_name:
        person = await memory.people.by_name(args.as_name)
        found = await actions.who_read_mine(memory, person)
        found = found[-args.limit:] if args.limit > 0 else found
    else:
        owner = await memory.people.owner()
        if owner is None:
            raise Failure("the ledger is the owner's to audit, and no owner is registered")
        found = await actions.audit(memory, owner, limit=args.limit if args.limit > 0 else None)
    names = {p.person_id: p.name for p in await memory.people.list()}
    if not found:
        say("no receipts")
    for r in found:
        actor = names.get(r.actor) or r.actor.removeprefix("mind:")  # a mind by its name
        # The receipt's number is the ledger's global sequence: the owner's audit shows it, a
        # member's own listing does not (its gaps would tell how much others read).
        number = f"#{r.seq}\t" if not args.as_name else ""
        say(f"{number}{r.at}\t{actor}\t{r.activity}\t{r.method}\t{r.purpose}\t"
            f"returned {len(r.returned_ids)}\tsuppressed {r.suppressed}\t"
            f"query {r.query_digest[:12]}")
    return EXIT_OK


async def _export(memory: Memory, args: argparse.Namespace) -> int:
    person = await memory.people.by_name(args.as_name)
    document = await actions.export(memory, person)
    say(json.dumps(document, indent=2, ensure_ascii=False))
    return EXIT_OK


async def _backup(memory: Memory, args: argparse.Namespace) -> int:
    await memory.backup(args.path)
    say(f"backed up to {args.path}")
    return EXIT_OK


async def _restore(db: Path, source: Path) -> int:
    await Memory.restore(source, db)
    say(f"restored {db} from {source}")
    return EXIT_OK


async def _persona(memory: Memory, args: argparse.Namespace) -> int:
    action = args.persona_command or "proposals"
    if action == "proposals":
        found = await memory.state.persona_proposals()
        if not found:
            say("no persona proposals")
        for p in found:
            say(f"#{p.proposal_id}\t{p.state}\t{p.created_at}\t{p.text}\t(why: {p.reason})")
        return EXIT_OK
    owner = await memory.people.owner()
    if owner is None:
        raise Failure("persona edits are approved by the owner, and no owner is registered")
    if not await memory.state.decide_persona(args.proposal_id, approve=action == "approve",
                                             by=owner.person_id):
        raise Failure(f"no pending persona proposal #{args.proposal_id}")
    say(f"{'approved' if action == 'approve' else 'rejected'} proposal #{args.proposal_id}")
    return EXIT_OK


async def _tick(settings: Settings, db: Path) -> int:
    """`hearth tick`: consolidate everything pending now and refresh summaries; print what
    it did."""
    from soul.files import load_soul  # noqa: PLC0415
    from soul.tick import tick  # noqa: PLC0415

    soul = load_soul(settings.soul_dir, profile=settings.profile)
    memory = await open_memory(settings, db, embed=True)
    try:
        async with model_gateway(settings, soul) as gateway:
            report = await tick(memory, soul, gateway, now=utc_now(), drain=True)
    finally:
        await memory.close()
    for line in report.lines():
        say(line)
    return EXIT_FAIL if report.failed else EXIT_OK


async def _dream(settings: Settings, db: Path) -> int:
    """`hearth dream`: the dream pass now; print its report."""
    from soul.files import load_soul  # noqa: PLC0415
    from soul.tick import run_dream  # noqa: PLC0415

    soul = load_soul(settings.soul_dir)
    memory = await open_memory(settings, db, embed=True)
    try:
        report = await run_dream(memory, soul, now=utc_now())
    finally:
        await memory.close()
    for line in report.lines():
        say(line)
    return EXIT_OK


_REFUSED_BY_TELEGRAM = "Telegram refused TELEGRAM_BOT_TOKEN: check it with @BotFather"


async def _serve(settings: Settings, db: Path) -> int:
    """`hearth run`: open everything, serve Telegram until SIGINT/SIGTERM, close everything."""
    from bot import app as telegram_app  # noqa: PLC0415 -- the bot's stack loads only to run
    from soul.files import load_soul  # noqa: PLC0415

    config = telegram_app.BotConfig.from_settings(settings)  # before anything heavy
    logging.getLogger("hearth").setLevel(logging.INFO)
    soul = load_soul(settings.soul_dir, profile=settings.profile)
    with telegram_app.stop_on_signals() as stop:  # a signal during start-up stops cleanly too
        return await _serve_with(settings, db, config, soul, stop)


async def _serve_with(settings: Settings, db: Path, config: BotConfig, soul: Soul,
                      stop: asyncio.Event) -> int:
    """The database's lock, then memory, the model and Telegram; let go in reverse, whatever
    happens. The lock is held while the bot serves (the OS drops it if the process dies), so a
    second `hearth run` and `hearth restore` on the same database are refused."""
    with hold_database(db, create=True, then="one bot serves a database: stop the other one "
                       "first, or give this one its own --db"):
        memory = await open_memory(settings, db, create=True, embed=True)
        try:
            async with model_gateway(settings, soul) as gateway:
                return await _serve_app(config, memory, soul, gateway, stop=stop)
        finally:
            await memory.close()


async def _serve_app(config: BotConfig, memory: Memory, soul: Soul, gateway: Gateway, *,
                     stop: asyncio.Event) -> int:
    from telegram.error import InvalidToken, NetworkError, TelegramError  # noqa: PLC0415

    from bot import app as telegram_app  # noqa: PLC0415

    app = telegram_app.build_application(config, memory=memory, soul=soul, model=gateway)
    # What start-up loaded (the model, the matrices, the libraries) lives as long as the bot:
    # kept out of the collector, a full collection no longer walks it and stalls the event
    # loop (measured: one full pass took 300 ms, about once every 300 recalls).
    gc.freeze()

    def ready(username: str) -> None:
        sys.stderr.write(f"hearth: running as @{username}\n")
        sys.stderr.flush()

    try:
        await telegram_app.serve(app, config, stop=stop, on_ready=ready)
    except InvalidToken:
        raise Failure(_REFUSED_BY_TELEGRAM) from None
    except NetworkError as exc:  # its text may name the request; the class is enough
        raise Failure(f"cannot reach Telegram ({type(exc).__name__})") from None
    except TelegramError as exc:
        raise Failure(f"Telegram answered: {exc.message}") from None
    return EXIT_OK


# --- hearth init -------------------------------------------------------------------------------


def _init(args: argparse.Namespace) -> int:
    """Ask, check each answer once, ask again until it is usable, write .env (bot.init)."""
    from bot.init import run_init  # noqa: PLC0415 -- only init asks questions

    return run_init(force=args.force, check=not args.no_check, db=args.db)


_COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], Awaitable[int]]] = {
    "remember": _remember,
    "recall": _recall,
    "inspect": _inspect,
    "forget": _forget,
    "grant": _grant,
    "revoke": _revoke,
    "grants": _grants,
    "receipts": _receipts,
    "export": _export,
    "docs": _docs,
    "backup": _backup,
    "persona": _persona,
    "minds": _minds,
}


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, or a usage mistake already reported in one line
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    # The bot and the chat log as they run. A one-shot command's stderr is its one line saying
    # what went wrong: what memory logs on the way (a lock it waited on) stays out of it.
    quiet = args.command not in LOGGED_COMMANDS
    if quiet:
        logging.disable(logging.CRITICAL)
    try:
        if args.command == "init":
            return _init(args)
        settings = load_settings()
        return asyncio.run(_run(args, settings))
    except (HearthError, ConfigError) as exc:
        sys.stderr.write(f"hearth: {exc}\n")
        return EXIT_FAIL
    except KeyboardInterrupt:
        sys.stderr.write("hearth: interrupted\n")
        return EXIT_INTERRUPTED
    except Exception as exc:
        log.debug("unexpected failure", exc_info=True)
        sys.stderr.write(f"hearth: unexpected error ({type(exc).__name__}): {exc}\n")
        return EXIT_FAIL
    finally:
        if quiet:
            logging.disable(logging.NOTSET)


if __name__ == "__main__":
    raise SystemExit(main())
