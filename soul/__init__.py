"""hearth's soul: who she is and how a turn is composed (built on `memory`, never on `bot`)."""

__all__: list[str] = []
