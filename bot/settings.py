"""Settings: the only reader of the environment (and of a `.env` file beside it).

Names and meanings are a contract (DESIGN §10). `memory` and `soul` never read the environment:
they get plain arguments from here. A bad value becomes one clear line, never a traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from memory import HearthError


class ConfigError(HearthError):
    """The configuration cannot be used as it is."""


# Where `hearth init` looks for a local Ollama (its own API; its OpenAI-compatible one is
# under /v1). Only init's probe reads it: the model is configured by OPENAI_BASE_URL.
DEFAULT_OLLAMA_URL = "http://localhost:11434"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=False,
        populate_by_name=True,
    )

    telegram_bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("TELEGRAM_BOT_TOKEN")
    )
    telegram_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("TELEGRAM_BASE_URL")
    )
    webhook_url: str | None = Field(
        default=None, validation_alias=AliasChoices("HEARTH_WEBHOOK_URL")
    )
    webhook_port: int = Field(
        default=8443, ge=1, le=65535, validation_alias=AliasChoices("PORT")
    )
    owner_telegram_id: int | None = Field(
        default=None, validation_alias=AliasChoices("HEARTH_OWNER_TELEGRAM_ID")
    )
    db: Path = Field(default=Path("./hearth.db"), validation_alias=AliasChoices("HEARTH_DB"))
    openai_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_BASE_URL")
    )
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY")
    )
    model: str | None = Field(default=None, validation_alias=AliasChoices("HEARTH_MODEL"))
    model_profile: Literal["small", "full"] | None = Field(
        default=None, validation_alias=AliasChoices("HEARTH_MODEL_PROFILE")
    )
    tick_seconds: int = Field(
        default=300, ge=1, validation_alias=AliasChoices("HEARTH_TICK_SECONDS")
    )
    dream_cron: str = Field(
        default="0 3 * * *", validation_alias=AliasChoices("HEARTH_DREAM_CRON")
    )
    soul_dir: Path | None = Field(
        default=None, validation_alias=AliasChoices("HEARTH_SOUL_DIR")
    )
    embedder: Literal["e5", "minilm", "none"] = Field(
        default="e5", validation_alias=AliasChoices("HEARTH_EMBEDDER")
    )
    timezone: str | None = Field(default=None, validation_alias=AliasChoices("HEARTH_TIMEZONE"))
    # The credential `hearth mcp` serves over stdio with (`hearth minds add` prints it once).
    audio_model: str | None = Field(
        default=None, validation_alias=AliasChoices("HEARTH_AUDIO_MODEL")
    )
    vision_model: str | None = Field(
        default=None, validation_alias=AliasChoices("HEARTH_VISION_MODEL")
    )
    mind_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("HEARTH_MIND_TOKEN")
    )
    ollama_url: str = Field(
        default=DEFAULT_OLLAMA_URL, validation_alias=AliasChoices("HEARTH_OLLAMA_URL")
    )

    @field_validator("timezone", mode="before")
    @classmethod
    def _known_zone(cls, value: object) -> object:
        if not isinstance(value, str) or not value.strip():
            return None
        name = value.strip()
        if not _is_zone(name):
            raise ValueError(f"{name!r} is not a time zone name (like Europe/Berlin)")
        return name

    @property
    def household_zone(self) -> str:
        """The household's time zone: HEARTH_TIMEZONE, else the machine's, else UTC."""
        return self.timezone or machine_zone()

    @field_validator("model_profile", mode="before")
    @classmethod
    def _profile_word(cls, value: object) -> object:
        if isinstance(value, str):
            return value.strip().lower() or None
        return value

    @property
    def profile(self) -> Literal["small", "full"]:
        """The soul's profile for the model (budgets and sampling, in soul.yaml):
        HEARTH_MODEL_PROFILE, else small for the bundled model and full for an endpoint."""
        if self.model_profile is not None:
            return self.model_profile
        return "full" if self.openai_base_url else "small"

    @field_validator("embedder", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator(
        "telegram_base_url", "webhook_url", "openai_base_url", "model", "soul_dir",
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("dream_cron")
    @classmethod
    def _five_fields(cls, value: str) -> str:
        if len(value.split()) != 5:
            raise ValueError("a cron schedule has five fields, like '0 3 * * *'")
        return value

    @field_validator("ollama_url", mode="before")
    @classmethod
    def _ollama_address(cls, value: object) -> object:
        if not isinstance(value, str) or not value.strip():
            return DEFAULT_OLLAMA_URL
        return value.strip().rstrip("/")


_ENV_NAMES = {
    "telegram_bot_token": "TELEGRAM_BOT_TOKEN",
    "telegram_base_url": "TELEGRAM_BASE_URL",
    "webhook_url": "HEARTH_WEBHOOK_URL",
    "webhook_port": "PORT",
    "owner_telegram_id": "HEARTH_OWNER_TELEGRAM_ID",
    "db": "HEARTH_DB",
    "openai_base_url": "OPENAI_BASE_URL",
    "openai_api_key": "OPENAI_API_KEY",
    "model": "HEARTH_MODEL",
    "model_profile": "HEARTH_MODEL_PROFILE",
    "tick_seconds": "HEARTH_TICK_SECONDS",
    "dream_cron": "HEARTH_DREAM_CRON",
    "soul_dir": "HEARTH_SOUL_DIR",
    "embedder": "HEARTH_EMBEDDER",
    "timezone": "HEARTH_TIMEZONE",
    "ollama_url": "HEARTH_OLLAMA_URL",
}


def _is_zone(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def machine_zone() -> str:
    """The machine's own IANA zone: TZ, else what /etc/localtime links to, else
    /etc/timezone; UTC when none of them names one."""
    candidates = [os.environ.get("TZ", "").lstrip(":")]
    try:
        link = os.path.realpath("/etc/localtime")
    except OSError:
        link = ""
    if "/zoneinfo/" in link:
        candidates.append(link.split("/zoneinfo/", 1)[1])
    try:
        with open("/etc/timezone", encoding="utf-8") as zone_file:
            candidates.append(zone_file.read().strip())
    except OSError:
        pass
    return next((c for c in candidates if c and _is_zone(c)), "UTC")


def load_settings(**overrides: object) -> Settings:
    """Read the environment; a bad value raises ConfigError with one readable line."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]  # pydantic-settings kwargs
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "configuration"
        name = _ENV_NAMES.get(field, field)
        raise ConfigError(f"bad configuration: {name}: {first['msg']}") from None
