"""Sensitivity by meaning: health, money and keys recognised from what a line means, in any
language the embedder reads, not from a list of words.

The word rules (`memory.classifier`) know the words and shapes of four languages; a diagnosis
said without a listed word ("takes lithium every morning since his last episode") or a secret
in a language they do not know passes them as ordinary. This is the second reader: a linear
model (multinomial logistic regression) over the embedding the row gets anyway for recall,
fitted by `python -m bench.fit_sensing` on the project's own example lines in several
languages (`bench/sensitivity/`) and shipped as `sensing_weights/<embedder>.json`. A class is
given when its fitted probability reaches the file's `bar`, chosen when fitting for precision
on examples the model was not fitted on. It only ever raises a row's class, after the word rules
gave theirs: of the two readings, the more private one stands (`more_private`), and a member's
own override (`sensitivity_overrides`) is never second-guessed.

Owns: loading the weights and reading one vector. Must not: read or write a row (the vector
book does, in the transaction that stores the vector), or know a language.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memory.models import Sensitivity

WEIGHTS = Path(__file__).resolve().with_name("sensing_weights")
# Most private first: of two readings of one line, the one earlier here stands.
PRIVACY_ORDER: tuple[Sensitivity, ...] = (
    Sensitivity.CREDENTIALS, Sensitivity.HEALTH, Sensitivity.FINANCE, Sensitivity.ORDINARY,
)


def more_private(a: Sensitivity, b: Sensitivity) -> Sensitivity:
    return a if PRIVACY_ORDER.index(a) <= PRIVACY_ORDER.index(b) else b


def less_private_than(sensitivity: Sensitivity) -> tuple[Sensitivity, ...]:
    """The classes a row may be raised from to `sensitivity`."""
    return PRIVACY_ORDER[PRIVACY_ORDER.index(sensitivity) + 1 :]


@dataclass(frozen=True)
class Sensed:
    sensitivity: Sensitivity
    chance: float

    @property
    def why(self) -> str:
        """What `sensitivity_by` records: how the class was given, in numbers only."""
        return f"meaning {self.chance:.2f}"


@dataclass(frozen=True)
class Senser:
    """A fitted reader of one embedder's vectors."""

    embedder: str
    classes: tuple[Sensitivity, ...]
    coef: npt.NDArray[np.float32]  # (classes, dim)
    intercept: npt.NDArray[np.float32]  # (classes,)
    bar: float

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Senser:
        classes = tuple(Sensitivity(str(c)) for c in data["classes"])  # type: ignore[attr-defined]
        coef = np.asarray(data["coef"], dtype=np.float32)
        intercept = np.asarray(data["intercept"], dtype=np.float32)
        if coef.shape[0] != len(classes) or intercept.shape != (len(classes),):
            raise ValueError("sensing weights: one row of weights per class")
        return cls(str(data["embedder"]), classes, coef, intercept,
                   float(data["bar"]))  # type: ignore[arg-type]

    def read(self, vectors: npt.NDArray[np.float32]) -> list[Sensed | None]:
        """Each vector's class, when one other than ordinary reaches the bar; else None."""
        if not len(vectors) or vectors.shape[1] != self.coef.shape[1]:
            return [None] * len(vectors)
        z = vectors @ self.coef.T + self.intercept
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        out: list[Sensed | None] = []
        for row in p:
            best = int(row.argmax())
            sensitivity = self.classes[best]
            if sensitivity is Sensitivity.ORDINARY or row[best] < self.bar:
                out.append(None)
            else:
                out.append(Sensed(sensitivity, float(row[best])))
        return out


@functools.cache
def senser_for(embedder: str | None) -> Senser | None:
    """The reader fitted for this embedder (by its name); None for one never fitted on (a
    test's hashing embedder) or without an embedder: the word rules alone decide then."""
    if embedder is None:
        return None
    path = WEIGHTS / f"{embedder}.json"
    if not path.exists():
        return None
    return Senser.from_json(json.loads(path.read_text(encoding="utf-8")))
