"""What she takes in besides text: voice notes heard and photos seen, through the model gateway.

Hearing is the configured server's transcription endpoint with `HEARTH_AUDIO_MODEL`; sight, a
model on it that takes images, `HEARTH_VISION_MODEL`. Neither is assumed: a server that offers
them is named by its owner, and without one she says plainly that she cannot listen or see on
this setup (the bot keeps the file's id so it is taken in once she can). The embedded model
offers neither.

Owns: whether she can hear and see, and the words she makes of what she heard or saw. Must not:
keep a file's bytes past the call, or read memory.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

VOICE_MARK = "(voice note, transcribed)"
PHOTO_MARK = "(photo, as she saw it)"


@runtime_checkable
class Perceives(Protocol):
    """A model gateway able to transcribe and describe (`soul.model.Gateway` is one)."""

    async def transcribe(self, audio: bytes, filename: str, *, model: str) -> str: ...

    async def describe(self, image: bytes, mime: str, *, model: str, caption: str = "",
                       max_tokens: int = ...) -> str: ...


class Senses:
    """Her hearing and sight on this setup."""

    def __init__(self, model: object = None, *, audio_model: str | None = None,
                 vision_model: str | None = None) -> None:
        self._model = model if isinstance(model, Perceives) else None
        self._audio = audio_model if self._model is not None else None
        self._vision = vision_model if self._model is not None else None

    @property
    def can_hear(self) -> bool:
        return self._audio is not None

    @property
    def can_see(self) -> bool:
        return self._vision is not None

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds of media she can take in on this setup ("voice", "photo")."""
        return tuple(k for k, able in (("voice", self.can_hear), ("photo", self.can_see))
                     if able)

    async def take_in(self, kind: str, data: bytes, *, filename: str, mime: str,
                      caption: str = "") -> str:
        """A voice note (`hear`) or a photo (`see`) as the member's line."""
        if kind == "voice":
            return await self.hear(data, filename)
        return await self.see(data, mime, caption)

    async def hear(self, audio: bytes, filename: str) -> str:
        """A voice note as a member's line: its words, marked as transcribed."""
        if self._model is None or self._audio is None:
            raise RuntimeError("she cannot hear on this setup")
        words = await self._model.transcribe(audio, filename, model=self._audio)
        return f"{VOICE_MARK} {words}" if words else f"{VOICE_MARK} (nothing to make out)"

    async def see(self, image: bytes, mime: str, caption: str = "") -> str:
        """A photo as a member's line: a short description, and the caption they wrote."""
        if self._model is None or self._vision is None:
            raise RuntimeError("she cannot see on this setup")
        seen = await self._model.describe(image, mime, model=self._vision, caption=caption)
        line = f"{PHOTO_MARK} {seen}"
        return f'{line} Caption: "{caption}"' if caption else line
