"""The bot's typed state: its services, the per-update context, and what it keeps in process.

Owns: `Hearth` (memory, soul, model, the owner's Telegram id, the reminder desk and the lane
she writes first in, bound once when the application is built), `HearthContext` (the
`CallbackContext` every handler gets, with the principal the gatekeeper resolved for this
update), `Strangers` (who was refused today) and `Buttons` (what an inline button will do).
Must not: write anything about a stranger or a button to the database: both books live in
process memory only and are gone on restart, on purpose.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from typing import Any, Literal, TypeAlias, cast

from telegram.ext import Application, CallbackContext, ContextTypes, ExtBot, JobQueue

from bot.inbox import Intake
from bot.ordering import ChatOrderedProcessor
from bot.outbox import Courier
from memory import Memory, Person, utc_now
from soul.files import Soul
from soul.proactive import Lane
from soul.reminders import Desk
from soul.senses import Senses
from soul.tick import TickModel

# A burst of strangers in one day beyond this gets silence instead of a refusal each, so the
# book stays small and the owner's chat is not flooded.
MAX_STRANGERS_PER_DAY = 1_000
BUTTON_LIFETIME = timedelta(minutes=10)
MAX_PENDING_BUTTONS = 1_000
_RECENT_UPDATES = 256


class Strangers:
    """Strangers already refused today (UTC). In process memory only, never in the database."""

    def __init__(self, limit: int = MAX_STRANGERS_PER_DAY) -> None:
        self._limit = limit
        self._day: date | None = None
        self._refused: set[int] = set()

    def first_today(self, telegram_id: int, now: datetime) -> bool:
        """True the first time a stranger writes on a day: refuse them and tell the owner."""
        today = now.date()
        if today != self._day:
            self._day, self._refused = today, set()
        if telegram_id in self._refused or len(self._refused) >= self._limit:
            return False
        self._refused.add(telegram_id)
        return True


ButtonAction = Literal["forget", "keep", "approve", "reject", "cancel_reminder",
                       "snooze_reminder", "drop_document"]


@dataclass(frozen=True)
class Pending:
    """What pressing one button does, for whom. The button's callback data is only a token."""

    action: ButtonAction
    telegram_id: int
    person_id: str
    text: str = field(default="", repr=False)  # the member's own words; never logged
    shared: bool = False
    proposal_id: int = 0
    reminder_id: int = 0
    expires: datetime = field(default_factory=utc_now)


class Buttons:
    """Opaque, single-use, expiring tokens for inline buttons, kept in process memory.

    Buttons issued together (Forget these / Keep them) are one choice: redeeming one spends all.
    A press by anyone but the member the buttons were made for changes nothing, and spends
    nothing, so nobody can cancel another's choice.
    """

    def __init__(self, lifetime: timedelta = BUTTON_LIFETIME) -> None:
        self._lifetime = lifetime
        self._pending: dict[str, tuple[Pending, str]] = {}
        self._choices: dict[str, list[str]] = {}

    def __len__(self) -> int:
        return len(self._pending)

    def issue(self, choices: Sequence[Pending], now: datetime) -> list[str]:
        """One token per choice, all spent when any one is used."""
        self._prune(now)
        while len(self._pending) + len(choices) > MAX_PENDING_BUTTONS and self._choices:
            self._spend(next(iter(self._choices)))
        choice = secrets.token_urlsafe(8)
        tokens = [secrets.token_urlsafe(16) for _ in choices]
        expires = now + self._lifetime
        for token, pending in zip(tokens, choices, strict=True):
            self._pending[token] = (replace(pending, expires=expires), choice)
        self._choices[choice] = tokens
        return tokens

    def redeem(self, token: str | None, telegram_id: int, now: datetime) -> Pending | None:
        """The action behind a token pressed by this user, once; None when it is not valid."""
        self._prune(now)
        entry = self._pending.get(token or "")
        if entry is None:
            return None
        pending, choice = entry
        if pending.telegram_id != telegram_id:
            return None
        self._spend(choice)
        return pending

    def _spend(self, choice: str) -> None:
        for token in self._choices.pop(choice, []):
            self._pending.pop(token, None)

    def _prune(self, now: datetime) -> None:
        expired = {c for p, c in self._pending.values() if p.expires <= now}
        for choice in expired:
            self._spend(choice)


@dataclass
class Hearth:
    """The services every handler and job uses, built once at start-up by the caller."""

    memory: Memory
    soul: Soul
    model: TickModel
    owner_telegram_id: int
    clock: Callable[[], datetime] = utc_now
    typing_interval: float = 4.0
    # A chat quiet for this long is consolidated at the next tick without waiting for a full
    # batch: one tick period.
    quiet_after: timedelta = timedelta(minutes=5)
    strangers: Strangers = field(default_factory=Strangers)
    buttons: Buttons = field(default_factory=Buttons)
    # update id -> person id, for the error handler's log line only (bounded; no content).
    recent: OrderedDict[int, str] = field(default_factory=OrderedDict)
    # The transport: the inbox's book of updates in flight, the outbox's courier, the update
    # processor (closed with a grace period at stop). Set by `build_application`.
    intake: Intake | None = None
    courier: Courier | None = None
    processor: ChatOrderedProcessor | None = None
    # The tick and the dream while they run, so a stop can cancel them at once.
    background: set[asyncio.Task[None]] = field(default_factory=set)
    # Reminders: the desk that takes them out of a conversation, and the lane she writes
    # first in (`bot.proactive` arms its one job). Set by `build_application`.
    desk: Desk | None = None
    lane: Lane | None = None
    # What she hears and sees with besides text (nothing, unless the owner configured it).
    senses: Senses = field(default_factory=Senses)

    def now(self) -> datetime:
        return self.clock()

    def note_update(self, update_id: int, person_id: str) -> None:
        self.recent[update_id] = person_id
        while len(self.recent) > _RECENT_UPDATES:
            self.recent.popitem(last=False)


class BotData:
    """The application's `bot_data`: the services, bound once by `build_application`."""

    __slots__ = ("_hearth",)

    def __init__(self) -> None:
        self._hearth: Hearth | None = None

    def bind(self, hearth: Hearth) -> None:
        self._hearth = hearth

    @property
    def hearth(self) -> Hearth:
        if self._hearth is None:
            raise RuntimeError("the application was built without its services")
        return self._hearth


class HearthContext(CallbackContext[ExtBot[None], dict[Any, Any], dict[Any, Any], BotData]):
    """The context every handler and job gets. The gatekeeper sets `person` (and `group`);
    python-telegram-bot builds one context per update and hands it to every handler group."""

    def __init__(
        self,
        application: HearthApp,
        chat_id: int | None = None,
        user_id: int | None = None,
    ) -> None:
        super().__init__(application, chat_id=chat_id, user_id=user_id)
        self.person: Person | None = None
        self.group = False

    @property
    def hearth(self) -> Hearth:
        return self.bot_data.hearth

    @property
    def app(self) -> HearthApp:
        """The application, typed as hearth builds it (python-telegram-bot's own property is
        generic over the context type)."""
        return cast("HearthApp", self.application)

    @property
    def member(self) -> Person:
        """The member this update is from; the gatekeeper let it through only with one."""
        if self.person is None:
            raise RuntimeError("a handler ran for an update the gatekeeper did not admit")
        return self.person


HearthApp: TypeAlias = Application[
    ExtBot[None], HearthContext, dict[Any, Any], dict[Any, Any], BotData, JobQueue[HearthContext]
]

CONTEXT_TYPES = ContextTypes(context=HearthContext, bot_data=BotData)
