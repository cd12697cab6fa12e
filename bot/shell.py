"""What every face of the `hearth` command shares: its exit codes, its one-line failure, its
printing, and memory and the model opened as the settings say (and closed whatever happens).
`bot.cli` parses and runs the commands; `bot.terminal` is the chat in a terminal; `bot.doctor`
checks a setup."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from bot.settings import Settings
from memory import HearthError, Memory, make_embedder

if TYPE_CHECKING:
    from soul.files import Soul
    from soul.model import Gateway, ModelConfig

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130  # the shell's code for a program ended by Ctrl-C (128 + SIGINT)


class Failure(HearthError):
    """A command that cannot do what was asked; its message is the one line shown."""


def say(line: str = "") -> None:
    sys.stdout.write(line + "\n")


async def open_memory(settings: Settings, db: Path, *, create: bool = False,
                      embed: bool = False) -> Memory:
    """The database at `db`, with the configured embedder when the command reads meaning."""
    embedder = make_embedder(settings.embedder) if embed else None
    return await Memory.open(db, embedder=embedder, create=create)


def model_config(settings: Settings) -> ModelConfig | None:
    """The configured endpoint, or None for the embedded model."""
    from soul.model import model_config_from  # noqa: PLC0415 -- soul loads only when needed

    key = settings.openai_api_key
    return model_config_from(
        settings.openai_base_url, key.get_secret_value() if key else None, settings.model
    )


@contextlib.asynccontextmanager
async def model_gateway(settings: Settings, soul: Soul) -> AsyncIterator[Gateway]:
    """The gateway to the configured endpoint, or to the embedded model started for it,
    sampling as the soul's profile says; closed (and the embedded server stopped) on the way
    out, whatever happens."""
    from soul.embedded import EmbeddedModel  # noqa: PLC0415
    from soul.model import Gateway, with_model  # noqa: PLC0415

    embedded: EmbeddedModel | None = None
    gateway: Gateway | None = None
    try:
        config = model_config(settings)
        if config is None:
            embedded = EmbeddedModel()
            config = await embedded.start()
        gateway = Gateway(await with_model(config), sampling=soul.manifest.sampling)
        yield gateway
    finally:
        if gateway is not None:
            await gateway.aclose()
        if embedded is not None:
            await embedded.stop()
