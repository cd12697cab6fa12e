"""The small model: does the bundled 135M model loop, and does she invent facts about the member?
Run it as `python -m bench.small_model [--profile full|small|both] [--base-url URL]`.

One member, Maya, holds a fixed 20-turn conversation (`SCRIPT`) with her in a private chat
through hearth's real path: a fresh `Memory` (the MiniLM embedder unless `--embedder none`),
`respond()` with the bundled soul composed for the profile (`load_soul(profile=...)`), and the
real `Gateway` sampling as that profile says, against the bundled SmolLM2-135M served by
llama-cpp-python. With no `--base-url` the script starts the bundled model itself
(`EmbeddedModel`, which needs llama-cpp-python's `server` extra in this interpreter); with one,
it talks to a server already running the bundled GGUF, such as
`python -m llama_cpp.server --model SmolLM2-135M-Instruct.Q4_1.gguf --n_ctx 8192 --n_threads 2`.
The tick does not run: the conversation's facts reach her through recall of Maya's own lines.

The script tells eight facts (her name, work, daughter and her age, cat, the play, Spanish, her
mum), asks four questions about them, asks four about things never told (husband, favourite
colour, where she grew up, and "what do you know about me") and chats in between. Counted, per
reply (a fallback apology, when the model did not answer, is counted apart and in neither):

- **repeats**: replies holding a sentence of an earlier reply. Sentences are split at `.`, `!`
  or `?` followed by a space, and at line breaks; compared case-folded, with punctuation and
  runs of spaces dropped; a sentence counts only with at least four words ("Thank you." twice
  is manners, not a loop).
- **invented**: replies holding a sentence about the member she was never told. A sentence is
  about the member when it has a second-person word (you, your, yours, yourself, you're,
  you've, you'll, you'd), a first-person plural one (we, us, our, ours, we're, we've, we'd:
  "we talked on Tuesday" is a memory too) or the member's name. It states something untold
  when it holds a specific word that Maya has not said in any line up to this turn: a number
  (a run of digits, or a number word from two to twenty, or a ten, compared as digits, so
  "seven" and "7" are the same; not "one", as often a pronoun) or a capitalised word that does
  not open the sentence, a quotation, a bracket or what follows a colon. Her own name, "I"
  (and "I'm", "I'll", ...), "AI" and the words that mark a sentence as about the member are
  never specific. Words are compared case-folded. This misses inventions in plain lower-case
  words and a name that opens its sentence, and flags a true fact she got from elsewhere (the
  date, her mood's numbers): it is a yardstick for comparing profiles, not a judge.
- **recalled**: of the four questions about told facts, how many replies hold the answer's
  keyword; **offered**: how many of those prompts held it (her memory found it, or the recent
  turns still showed it), so a miss can be told apart as the model's or recall's.

Prints the replies (with what was flagged), a table, and one JSON line per profile:
`{"bench": "small_model", "profile": ..., "turns": 20, "repeats": ..., "invented": ...,
"recalled": ..., "offered": ..., "fallbacks": ..., "seconds_per_turn": ...}`. `--save FILE`
keeps every exchange with its prompt, and `--rescore FILE` scores saved runs again without
the model. The model samples at a temperature above zero, so two runs differ by a reply or
two: compare profiles, not digits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import re
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.report import print_report
from memory import Memory, make_embedder
from soul.embedded import EmbeddedModel
from soul.files import PROFILES, Soul, load_soul
from soul.model import Gateway, ModelConfig, with_model
from soul.turn import chat_id_for, respond

MEMBER = "Maya"
START = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)
# Her replies on two busy cores can take minutes with the full profile's long prompt.
TIMEOUT_S = 600.0


@dataclass(frozen=True)
class Line:
    text: str
    answer: str | None = None  # a question about a told fact: the keyword its reply should hold


SCRIPT: tuple[Line, ...] = (
    Line("Hi Wren, I'm Maya."),
    Line("I work as a nurse at the Royal Infirmary."),
    Line("My daughter Lily is seven."),
    Line("We have a cat called Pepper."),
    Line("Long night shift today, I'm shattered."),
    Line("What do you know about me so far?"),
    Line("Any ideas for a quick dinner tonight?"),
    Line("Lily has her school play on Friday, she's a tree."),
    Line("Where do I work?", answer="infirmary"),
    Line("What's my cat called?", answer="pepper"),
    Line("Do you know my husband's name?"),
    Line("I've started learning Spanish in the evenings."),
    Line("How old is Lily?", answer="7"),
    Line("What's my favourite colour?"),
    Line("How could I unwind after a shift?"),
    Line("My mum Ruth is visiting next weekend."),
    Line("What is Lily doing on Friday?", answer="tree"),
    Line("Where did I grow up?"),
    Line("Thanks, you're a good listener."),
    Line("Tell me one thing you remember about me."),
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_APOSTROPHE = "\u2019"  # a typographic apostrophe reads as a plain one
_WORD = re.compile(rf"[A-Za-z][A-Za-z'{_APOSTROPHE}-]*|\d+")
_ABOUT_MEMBER = frozenset({
    "you", "your", "yours", "yourself", "you're", "you've", "you'll", "you'd",
    "we", "us", "our", "ours", "we're", "we've", "we'd",
})
_NUMBER_WORDS = {
    word: str(value)
    for value, word in enumerate((
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
        "eighteen", "nineteen", "twenty",
    ))
    if word != "one"  # "the one you mean" is not a number
} | {"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70",
     "eighty": "80", "ninety": "90"}
# Pronouns are capitalised after a colon or a bracket as well as at a sentence's start.
_NEVER_SPECIFIC = frozenset({"i", "i'm", "i'll", "i've", "i'd", "ai"}) | _ABOUT_MEMBER
_REPEAT_WORDS = 4
# After these a capital opens something (a quotation, a bracket, a clause after a colon), as at
# a sentence's start: "Mine" in 'they say: "Mine is a hospital."' names nobody.
_OPENERS = frozenset(':;"(\'-\u2013\u2014\u201c\u2018')


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def normalised(sentence: str) -> str:
    return " ".join(re.sub(r"[^\w\s']", " ", sentence.casefold()).split())


def _folded(word: str) -> str:
    word = word.casefold().replace(_APOSTROPHE, "'")
    return _NUMBER_WORDS.get(word, word)


def said_words(lines: Sequence[str]) -> set[str]:
    """Every word the member said, case-folded, number words as digits."""
    return {_folded(w) for line in lines for w in _WORD.findall(line)}


def untold_words(sentence: str, said: set[str], her_name: str, member: str = MEMBER) -> list[str]:
    """The specific words of a sentence about the member that the member never said; [] when
    the sentence is not about the member."""
    found = list(_WORD.finditer(sentence))
    markers = _ABOUT_MEMBER | {member.casefold()}
    if not any(_folded(match.group()) in markers for match in found):
        return []
    untold: list[str] = []
    for match in found:
        word, folded = match.group(), _folded(match.group())
        if folded in _NEVER_SPECIFIC or folded == her_name.casefold():
            continue
        before = sentence[: match.start()].rstrip()
        opens = not before or before[-1] in _OPENERS
        number = folded.isdigit()
        named = word[0].isupper() and not opens
        if (number or named) and folded not in said:
            untold.append(word)
    return untold


@dataclass(frozen=True)
class Exchange:
    """One line of the script and what came back, as `--save` keeps it."""

    line: Line
    reply: str
    fallback: bool
    seconds: float
    prompt: str  # everything the model was shown, the member's message last


def _holds(text: str, answer: str | None) -> bool:
    return answer is not None and answer in {_folded(w) for w in _WORD.findall(text)}


@dataclass(frozen=True)
class Turn:
    exchange: Exchange
    repeated: tuple[str, ...] = ()
    invented: tuple[str, ...] = ()

    @property
    def recalled(self) -> bool:
        return not self.exchange.fallback and _holds(self.exchange.reply,
                                                     self.exchange.line.answer)

    @property
    def offered(self) -> bool:
        # The member's own question is left out: it never holds the answer it asks for.
        shown = self.exchange.prompt.removesuffix(self.exchange.line.text)
        return _holds(shown, self.exchange.line.answer)


def score(exchanges: Sequence[Exchange], her_name: str) -> list[Turn]:
    """Each reply with the sentences it repeats and the untold sentences about the member."""
    earlier: set[str] = set()
    member_lines: list[str] = []
    turns: list[Turn] = []
    for exchange in exchanges:
        member_lines.append(exchange.line.text)
        if exchange.fallback:
            turns.append(Turn(exchange))
            continue
        reply = exchange.reply
        said = said_words(member_lines)
        repeated: list[str] = []
        invented: list[str] = []
        own = [(s, normalised(s)) for s in sentences(reply)]
        for sentence, key in own:
            if len(key.split()) >= _REPEAT_WORDS and key in earlier:
                repeated.append(sentence)
            untold = untold_words(sentence, said, her_name)
            if untold:
                invented.append(f"{sentence} [{', '.join(untold)}]")
        earlier.update(key for _, key in own)
        turns.append(Turn(exchange, tuple(repeated), tuple(invented)))
    return turns


@contextlib.asynccontextmanager
async def bundled_model(base_url: str | None) -> AsyncIterator[ModelConfig]:
    """The bundled model's endpoint: the given server, or one started for the run."""
    if base_url is not None:
        config = ModelConfig(base_url=base_url, api_key="embedded", model="")
        yield await with_model(config)
        return
    embedded = EmbeddedModel()
    try:
        yield await embedded.start()
    finally:
        await embedded.stop()


async def converse(config: ModelConfig, soul: Soul, folder: Path, embedder: str,
                   *, show: bool) -> list[Exchange]:
    """The script, line by line, through respond() and the real gateway."""
    clock = START
    memory = await Memory.open(folder / "small.db", create=True,
                               embedder=make_embedder(embedder), clock=lambda: clock)
    gateway = Gateway(dataclasses.replace(config, timeout_s=TIMEOUT_S, attempts=1),
                      sampling=soul.manifest.sampling)
    out: list[Exchange] = []
    try:
        member = await memory.people.add(MEMBER, telegram_id=1001, owner=True)
        chat_id = chat_id_for(member, group=False)
        for number, line in enumerate(SCRIPT, start=1):
            clock += timedelta(minutes=2)
            began = time.perf_counter()
            reply = await respond(memory, soul, gateway, speaker=member, chat_id=chat_id,
                                  group=False, text=line.text, now=clock)
            seconds = time.perf_counter() - began
            out.append(Exchange(line, reply.text, reply.fallback, seconds, reply.prompt.text))
            if show:
                print(f"[{soul.profile} {number:>2}, {seconds:5.1f} s] {MEMBER}: {line.text}\n"
                      f"    {soul.manifest.name}: {' '.join(reply.text.split())}", flush=True)
    finally:
        await gateway.aclose()
        await memory.close()
    return out


def result_line(profile: str, turns: Sequence[Turn]) -> dict[str, object]:
    answered = [t.exchange for t in turns if not t.exchange.fallback]
    return {
        "bench": "small_model",
        "profile": profile,
        "turns": len(turns),
        "repeats": sum(bool(t.repeated) for t in turns),
        "invented": sum(bool(t.invented) for t in turns),
        "recalled": sum(t.recalled for t in turns),
        "offered": sum(t.offered for t in turns),
        "asked": sum(t.exchange.line.answer is not None for t in turns),
        "fallbacks": len(turns) - len(answered),
        "reply_words": round(sum(len(e.reply.split()) for e in answered)
                             / max(len(answered), 1), 1),
        "seconds_per_turn": round(sum(t.exchange.seconds for t in turns)
                                  / max(len(turns), 1), 1),
    }


def print_flags(profile: str, turns: Sequence[Turn]) -> None:
    print(f"\nprofile {profile}: what was flagged")
    for number, turn in enumerate(turns, start=1):
        for sentence in turn.repeated:
            print(f"  {number:>2} repeat:   {sentence}")
        for sentence in turn.invented:
            print(f"  {number:>2} invented: {sentence}")
        if turn.exchange.fallback:
            print(f"  {number:>2} fallback (the model did not answer)")


def save(path: Path, run: str, profile: str, model: str, exchanges: Sequence[Exchange]) -> None:
    with path.open("a", encoding="utf-8") as out:
        for e in exchanges:
            out.write(json.dumps({"run": run, "profile": profile, "model": model,
                                  "line": e.line.text,
                                  "reply": e.reply, "fallback": e.fallback,
                                  "seconds": round(e.seconds, 2), "prompt": e.prompt}) + "\n")


def saved(path: Path) -> dict[tuple[str, str, str], list[Exchange]]:
    """Saved runs by (run, profile, model), to score again without the model."""
    lines = {line.text: line for line in SCRIPT}
    runs: dict[tuple[str, str, str], list[Exchange]] = {}
    for row in map(json.loads, path.read_text(encoding="utf-8").splitlines()):
        key = (row.get("run", ""), row["profile"], row["model"])
        runs.setdefault(key, []).append(Exchange(
            lines[row["line"]], row["reply"], row["fallback"], row["seconds"], row["prompt"]))
    return runs


async def run(args: argparse.Namespace) -> None:
    runs: dict[tuple[str, str, str], list[Exchange]] = {}
    started = datetime.now(UTC).isoformat(timespec="seconds")
    if args.rescore:
        runs = saved(Path(args.rescore))
    else:
        profiles = PROFILES if args.profile == "both" else (args.profile,)
        async with bundled_model(args.base_url) as config:
            for profile in profiles:
                soul = load_soul(profile=profile)
                with tempfile.TemporaryDirectory() as folder:
                    exchanges = await converse(config, soul, Path(folder), args.embedder,
                                               show=not args.quiet)
                runs[(started, soul.profile, config.model)] = exchanges
                if args.save:
                    save(Path(args.save), started, soul.profile, config.model, exchanges)
    her_name = load_soul().manifest.name
    results: list[dict[str, object]] = []
    for (_, profile, model), exchanges in runs.items():
        turns = score(exchanges, her_name)
        print_flags(profile, turns)
        results.append({**result_line(profile, turns), "model": model})
    print()
    print_report(results, [
        ("profile", "profile"), ("turns", "turns"), ("repeats", "repeats"),
        ("invented", "invented"), ("recalled", "recalled"), ("offered", "offered"),
        ("fallbacks", "fallback"), ("reply_words", "words"), ("seconds_per_turn", "s/turn"),
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="both", choices=[*PROFILES, "both"])
    parser.add_argument("--base-url", default=None,
                        help="a running server of the bundled model (default: start one)")
    parser.add_argument("--embedder", default="e5", choices=["e5", "minilm", "none"])
    parser.add_argument("--quiet", action="store_true", help="the figures only, no replies")
    parser.add_argument("--save", metavar="FILE",
                        help="append every exchange (and its prompt) to FILE as JSON lines")
    parser.add_argument("--rescore", metavar="FILE",
                        help="score the exchanges saved in FILE again, without the model")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
