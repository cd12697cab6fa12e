"""Refit sensitivity by meaning: `python -m bench.fit_sensing [--embedder e5|minilm]`.

`memory.sensing` reads a row's class (health, finance, credentials, or nothing to say) from its
embedding with a multinomial logistic regression. This script fits it on the project's own
example lines (`bench/sensitivity/<language>.json`: household chat, written for hearth, every
class in every language, near misses among the ordinary ones), and picks the `bar` a class's
probability must reach: the lowest at which, each language judged by a model fitted on the
others, at least `--precision` of the lines it raises are right. The bar then rises, if it
must, until the meaning raises at most `--talk-most` of the talk the word rules leave ordinary
in the project's "fit" households (bench/households/): most of a household's talk is everyday
talk, unlike the examples, and each line raised is kept from the group's recall. It fits on
every language and writes `memory/sensing_weights/<embedder>.json`.

It reports, per language and class, precision and recall on examples the model was not fitted
on: each training language left out in turn, then the classifier's test corpus (sentences
written for the word rules' tests, never fitted on here), then another writer's lines
(`bench/sensitivity/held_out/`, three languages never trained among them), for the word rules
alone, the meaning alone, and both together as memory applies them (the more private class of
the two); last, how much of the held-out households' talk it raises.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memory import make_embedder
from memory.classifier import classify
from memory.models import Sensitivity
from memory.sensing import WEIGHTS, Senser, more_private, senser_for

DATA = Path(__file__).resolve().with_name("sensitivity")
PROBES = DATA / "held_out"  # another writer's lines, languages beyond training among them
CLASSES = (Sensitivity.ORDINARY, Sensitivity.HEALTH, Sensitivity.FINANCE,
           Sensitivity.CREDENTIALS)
SENSITIVE = CLASSES[1:]
# The regression's inverse regularisation: leaving one language out, recall at the bar rises
# up to 16 and is flat beyond.
C = 16.0
# The most of a household's everyday talk (what the word rules leave ordinary) the meaning may
# raise: one line in five. Each line raised wrongly is a thing the group's conversation cannot
# recall without a grant; each one left that is sensitive, the word rules may still catch.
TALK_MOST = 0.2

Example = tuple[str, Sensitivity]


def load(folder: Path) -> dict[str, list[Example]]:
    out: dict[str, list[Example]] = {}
    for path in sorted(folder.glob("*.json")):
        rows = json.loads(path.read_text(encoding="utf-8"))
        out[path.stem] = [(str(r["text"]), Sensitivity(str(r["class"]))) for r in rows]
    return out


def held_out_corpus() -> dict[str, list[Example]]:
    """The word rules' test corpus, by language: never fitted on here."""
    from tests.memory.test_classifier import LANGUAGES  # noqa: PLC0415 -- a bench's extra

    return {language: list(rows) for language, rows in LANGUAGES.items()}


def fit(x: np.ndarray[Any, Any], y: Sequence[Sensitivity]) -> tuple[np.ndarray[Any, Any],
                                                                    np.ndarray[Any, Any]]:
    from sklearn.linear_model import LogisticRegression  # noqa: PLC0415 -- dev extra

    model = LogisticRegression(C=C, max_iter=5000)
    model.fit(x, [CLASSES.index(s) for s in y])
    return model.coef_.astype(np.float32), model.intercept_.astype(np.float32)


def senser(name: str, coef: np.ndarray[Any, Any], intercept: np.ndarray[Any, Any],
           bar: float) -> Senser:
    return Senser(name, CLASSES, coef, intercept, bar)


def scores(examples: Sequence[Example], read: Callable[[int, str], Sensitivity]) -> dict[
    Sensitivity, tuple[float, float, int]
]:
    """Precision, recall and count of each sensitive class."""
    got = [read(i, text) for i, (text, _) in enumerate(examples)]
    out = {}
    for c in SENSITIVE:
        claimed = sum(g is c for g in got)
        actual = sum(e is c for _, e in examples)
        right = sum(g is c and e is c for g, (_, e) in zip(got, examples, strict=True))
        out[c] = (right / claimed if claimed else 1.0, right / actual if actual else 1.0, actual)
    return out


def row(label: str, figures: dict[Sensitivity, tuple[float, float, int]]) -> str:
    return f"{label:<22}" + "".join(f"{p:>7.2f}{r:>6.2f}" for p, r, _ in figures.values())


def header() -> str:
    return f"{'':<22}" + "".join(f"{c.value[:11]:>13}" for c in SENSITIVE) + "\n" + \
        f"{'':<22}" + "".join(f"{'P':>7}{'R':>6}" for _ in SENSITIVE)


def report(corpus: dict[str, list[Example]], fitted: Senser,
           embed: Callable[[list[str]], np.ndarray[Any, Any]]) -> dict[str, Any]:
    """Print precision and recall per language of the words, the meaning and both on examples
    the model was not fitted on; return them for the JSON line."""
    print(header())
    summary: dict[str, Any] = {}
    for lang, rows in corpus.items():
        sensed = fitted.read(embed([t for t, _ in rows]))

        def meaning(i: int, _text: str, sensed: list[Any] = sensed) -> Sensitivity:
            s = sensed[i]
            return Sensitivity.ORDINARY if s is None else s.sensitivity

        words = scores(rows, lambda _i, t: classify(t))
        alone = scores(rows, meaning)
        both = scores(rows, lambda i, t, m=meaning: more_private(classify(t), m(i, t)))
        print(row(f"{lang} words", words))
        print(row(f"{lang} meaning", alone))
        print(row(f"{lang} both", both))
        summary[lang] = {reader: {c.value: {"precision": round(p, 3), "recall": round(r, 3)}
                                  for c, (p, r, _) in figures.items()}
                         for reader, figures in (("words", words), ("meaning", alone),
                                                 ("both", both))}
    return summary


def household_talk() -> dict[str, dict[str, list[str]]]:
    """The lines of the project's households (bench/households/) that the word rules leave
    ordinary, by split ("fit", "held_out") and language: most of a household's talk is
    everyday talk."""
    from bench.replay import discover  # noqa: PLC0415 -- the households load with the bench's code

    texts: dict[str, dict[str, list[str]]] = {}
    for household in discover():
        texts.setdefault(household.split, {}).setdefault(household.language, []).extend(
            line.text for line in household.lines
            if classify(line.text) is Sensitivity.ORDINARY)
    return texts


def precise_bar(probs: np.ndarray[Any, Any], labels: Sequence[Sensitivity],
                precision: float) -> float:
    """The lowest bar at which at least `precision` of the example lines raised are right."""
    truth = np.array([CLASSES.index(lab) for lab in labels])
    for candidate in np.arange(0.30, 0.96, 0.01):
        up = raised(probs, float(candidate))
        if up.any() and (probs.argmax(axis=1)[up] == truth[up]).mean() >= precision:
            return round(float(candidate), 2)
    return 1.0


def raised(p: np.ndarray[Any, Any], bar: float) -> np.ndarray[Any, Any]:
    """Which rows of class probabilities the meaning raises at `bar`."""
    return (p.argmax(axis=1) > 0) & (p.max(axis=1) >= bar)


def probabilities(x: np.ndarray[Any, Any], coef: np.ndarray[Any, Any],
                  intercept: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Each row's class probabilities under the regression (a softmax of its scores)."""
    z = x @ coef.T + intercept
    p = np.exp(z - z.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def run(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    embedder = make_embedder(args.embedder)
    if embedder is None:
        raise SystemExit("sensitivity by meaning needs an embedder")
    data = load(Path(args.data))
    vectors = {lang: embedder.embed([t for t, _ in rows]) for lang, rows in data.items()}
    # Leave one language out: out-of-fold probabilities, from which the bar is picked.
    folds: dict[str, np.ndarray[Any, Any]] = {}
    for held in data:
        others = [lang for lang in data if lang != held]
        coef, intercept = fit(np.vstack([vectors[lang] for lang in others]),
                              [s for lang in others for _, s in data[lang]])
        folds[held] = probabilities(vectors[held], coef, intercept)
    labels = [s for lang in data for _, s in data[lang]]
    probs = np.vstack([folds[lang] for lang in data])
    precise = precise_bar(probs, labels, args.precision)
    # The example lines hold as many sensitive lines as ordinary ones; a household's talk is
    # mostly ordinary, and what the meaning raises there is kept from the group's recall. From
    # the precision's bar up, the lowest at which it raises at most `--talk-most` of the fit
    # households' talk (the held-out households are only reported).
    coef, intercept = fit(np.vstack(list(vectors.values())), labels)
    households = household_talk()
    talk = [t for rows in households["fit"].values() for t in rows]
    talk_p = probabilities(embedder.embed(talk), coef, intercept)
    bar = next((round(float(b), 2) for b in np.arange(precise, 0.96, 0.01)
                if raised(talk_p, float(b)).mean() <= args.talk_most), 1.0)
    print(f"embedder {embedder.name}; {sum(len(r) for r in data.values())} example lines in "
          f"{', '.join(data)}; bar {bar:.2f} (precision >= {args.precision} left out at "
          f"{precise:.2f}; at most {args.talk_most:.0%} of the fit households' talk raised: "
          f"{raised(talk_p, bar).mean():.1%})\n")
    print("each language left out (fitted on the others)")
    print(header())
    for held, rows in data.items():
        def meaning_fold(i: int, _text: str, held: str = held) -> Sensitivity:
            p = folds[held][i]
            return CLASSES[int(p.argmax())] if p.max() >= bar else Sensitivity.ORDINARY

        print(row(f"{held} words", scores(rows, lambda _i, t: classify(t))))
        print(row(f"{held} meaning", scores(rows, meaning_fold)))
        print(row(f"{held} both", scores(
            rows, lambda i, t, m=meaning_fold: more_private(classify(t), m(i, t)))))
    path = WEIGHTS / f"{embedder.name}.json"
    WEIGHTS.mkdir(exist_ok=True)
    path.write_text(json.dumps({
        "embedder": embedder.name, "classes": [c.value for c in CLASSES],
        "coef": [[float(f"{v:.6g}") for v in r] for r in coef],
        "intercept": [float(f"{v:.6g}") for v in intercept], "bar": bar,
        "fitted_on": sorted(data), "examples": len(labels),
    }) + "\n", encoding="utf-8")
    senser_for.cache_clear()
    fitted = senser_for(embedder.name)
    if fitted is None:
        raise SystemExit(f"{path} was written but does not load")
    print("\nthe word rules' test corpus (never fitted on)")
    summary = report(held_out_corpus(), fitted, embedder.embed)
    probe_lines = load(PROBES)
    print(f"\nthe probes (bench/sensitivity/held_out/: another writer, never fitted on; "
          f"{', '.join(sorted(set(probe_lines) - set(data)))} never in training)")
    probes = report(probe_lines, fitted, embedder.embed)
    print("\nthe held-out households' talk the word rules leave ordinary, raised by the meaning")
    talk_raised = {}
    for lang, rows in sorted(households["held_out"].items()):
        share = float(raised(probabilities(embedder.embed(rows), coef, intercept), bar).mean())
        talk_raised[lang] = round(share, 3)
        print(f"{lang} {share:.1%} of {len(rows)} lines")
    print(f"\nwrote {path} in {time.perf_counter() - started:.0f} s")
    print(json.dumps({"bench": "sensing", "embedder": embedder.name, "bar": bar,
                      "held_out": summary, "probes": probes,
                      "household_talk_raised": talk_raised}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="e5", choices=["e5", "minilm"])
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--precision", type=float, default=0.93)
    parser.add_argument("--talk-most", type=float, default=TALK_MOST,
                        help="the most of the fit households' talk the meaning may raise")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
