"""hearth's Telegram face, the process and the `hearth` command line."""

__all__: list[str] = []
