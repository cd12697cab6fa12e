"""The write gate for secret *tokens*: find them, say whether there are any, mask them.

Owns: recognising strings that are themselves secrets and would be dangerous to store or
repeat: API keys and bot tokens, PEM private-key blocks, payment card numbers and long
high-entropy strings. Must not: judge facts *about* secrets ("her PIN is 0042", "the wifi
password is hunter2" carry no token; `memory.classifier` calls those credentials), do I/O,
keep state, or log, echo or return any part of a token. `SecretSpan` holds offsets and a kind,
never the matched text.

Kinds, tried in this order (overlapping finds merge into one span of the earliest kind):

- ``private_key``: a ``-----BEGIN ... PRIVATE KEY-----`` block through its matching END line;
  a block with no END line is masked to the end of the text.
- ``api_key``: well-known prefixes (``sk-``/``sk-proj-``, ``ghp_``/``github_pat_``,
  ``xoxb-``/``xoxp-``, ``AKIA``, ``AIza``, ``glpat-``, Stripe ``sk_live_``), Telegram bot
  tokens (``123456789:AA...``, also inside ``/bot<token>/`` URLs), and the value of a
  ``key=``/``token=``/``secret:`` style assignment when it is at least 16 characters mixing
  two of upper case, lower case and digits. ``password=`` is not on that list: a password is a
  credential fact, and only a high-entropy one is masked (as ``high_entropy``).
- ``card_number``: 13-19 digits, optionally in groups, that pass the Luhn check *and* start
  with a known issuer prefix at a length that issuer uses (Visa, Mastercard, Amex, Discover,
  JCB, Diners). Phone and order numbers do not qualify. Between two groups may stand up to three
  separators of any kind: every Unicode space (category Zs: the no-break, narrow no-break, thin
  and figure spaces among them), the line and paragraph separators, tabs and line breaks, dots,
  hyphens and dashes, slashes and underscores, so "4111\u202f1111\u202f1111\u202f1111",
  "4111.1111.1111.1111" and a number broken over two lines are all found. Digits from other
  scripts (full-width ones, say) count as digits.
- ``high_entropy``: a whitespace-free run of at least 24 characters from
  ``[A-Za-z0-9+/=_-]`` mixing at least three of upper/lower/digit/symbol with Shannon entropy
  of at least 3.5 bits per character. Not flagged: a URL as a whole (its path segments are
  judged one by one), words glued by case or separators ("getUserAccountBalance2024",
  "Screenshot_2024-05-12"), UUIDs, and hex digests such as git SHAs, which have only two
  character classes and are identifiers rather than secrets.

Before any finder runs, invisible format characters (zero-width spaces and joiners, the word
joiner, the soft hyphen, a BOM) are dropped and every other Unicode space reads as a plain one,
so a token cannot hide behind them; the spans found are mapped back to the text as written, and
masking replaces the whole original span, invisible characters and odd spaces included.

Short PINs and word passwords are not tokens and are never masked here.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Final, Literal

SecretKind = Literal["api_key", "private_key", "card_number", "high_entropy"]

# Earlier kinds win when finds overlap.
KIND_PRIORITY: Final[tuple[SecretKind, ...]] = (
    "private_key",
    "api_key",
    "card_number",
    "high_entropy",
)


@dataclass(frozen=True, slots=True)
class SecretSpan:
    """Where a secret token sits in a text (`text[start:end]`) and what kind it is."""

    start: int
    end: int
    kind: SecretKind


# --- private keys ---------------------------------------------------------------------------

PRIVATE_KEY_RE: Final = re.compile(
    r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
    re.DOTALL,
)

# --- API keys -------------------------------------------------------------------------------

_KEY_CHARS: Final = r"A-Za-z0-9_\-"
_LEFT: Final = rf"(?<![{_KEY_CHARS}])"
_RIGHT: Final = rf"(?![{_KEY_CHARS}])"

API_KEY_PATTERNS: Final[tuple[str, ...]] = (
    # OpenAI / Anthropic style: sk-, sk-proj-, sk-ant-...; the body must mix character classes.
    r"sk-(?=[A-Za-z0-9_\-]*[0-9])(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{20,}",
    r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
    r"gh[pousr]_[A-Za-z0-9]{36,}",
    r"github_pat_[A-Za-z0-9_]{22,}",
    r"xox[abeoprs]-[A-Za-z0-9\-]{10,}",
    r"(?:AKIA|ASIA)[A-Z0-9]{16}",
    r"AIza[A-Za-z0-9_\-]{35}",
    r"glpat-[A-Za-z0-9_\-]{20,}",
)

API_KEY_RE: Final = re.compile(_LEFT + "(?:" + "|".join(API_KEY_PATTERNS) + ")" + _RIGHT)
# Telegram bot token: bot id, colon, 35 characters; often glued to "bot" in an API URL.
TELEGRAM_TOKEN_RE: Final = re.compile(r"(?<![0-9])[0-9]{6,12}:[A-Za-z0-9_\-]{35}" + _RIGHT)

# `key=value`, `api_key: "value"`, `OPENAI_API_KEY=value`, `?access_token=value`.
ASSIGNMENT_RE: Final = re.compile(
    r"(?<![A-Za-z0-9])"
    r"(?:api[_\-]?key|apikey|secret(?:[_\-]?key)?|access[_\-]?key|private[_\-]?key"
    r"|(?:access|auth|refresh|bearer|id|session)?[_\-]?token|key|client[_\-]?secret)"
    r"\s*[:=]\s*[\"']?(?P<value>[A-Za-z0-9_\-+/=.~]{16,})",
    re.IGNORECASE,
)
# The value must mix at least this many of upper case, lower case and digits.
ASSIGNMENT_MIN_CLASSES: Final = 2

# --- card numbers ---------------------------------------------------------------------------

# Matched against `_card_view`, where every separator is already one plain space.
CARD_MAX_SEPARATORS: Final = 3
CARD_RUN_RE: Final = re.compile(
    rf"(?<![0-9])[0-9]+(?: {{1,{CARD_MAX_SEPARATORS}}}[0-9]+)*(?![0-9])"
)
_DIGITS_RE: Final = re.compile(r"[0-9]+")
CARD_MIN_DIGITS: Final = 13
CARD_MAX_DIGITS: Final = 19

# (first digits as a range, allowed lengths) per issuer.
CARD_ISSUERS: Final[tuple[tuple[str, int, int, frozenset[int]], ...]] = (
    ("visa", 4, 4, frozenset({13, 16, 19})),
    ("mastercard", 51, 55, frozenset({16})),
    ("mastercard", 2221, 2720, frozenset({16})),
    ("amex", 34, 34, frozenset({15})),
    ("amex", 37, 37, frozenset({15})),
    ("discover", 6011, 6011, frozenset(range(16, 20))),
    ("discover", 65, 65, frozenset(range(16, 20))),
    ("discover", 644, 649, frozenset(range(16, 20))),
    ("jcb", 3528, 3589, frozenset(range(16, 20))),
    ("diners", 36, 36, frozenset(range(14, 20))),
    ("diners", 38, 38, frozenset(range(14, 20))),
    ("diners", 300, 305, frozenset(range(14, 20))),
)

_ISSUER_FIRST_DIGITS: Final = frozenset(str(low)[0] for _, low, _, _ in CARD_ISSUERS)

# --- normalising ----------------------------------------------------------------------------

# Invisible format characters: soft hyphen, Mongolian vowel separator, zero-width space,
# non-joiner and joiner, the direction marks, word joiner and invisible operators, BOM.
_INVISIBLE_RE: Final = re.compile("[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]")
# Any Unicode whitespace that is not ASCII (`\s` matches every Zs, Zl and Zp character).
_WIDE_SPACE_RE: Final = re.compile(r"[^\S\x00-\x7f]")
# What may stand between the digit groups of a card number: any whitespace, and the common
# separators (full stop, hyphen-minus, slash, backslash, underscore, middle dot, the Unicode
# hyphens and dashes, minus sign, one-dot leader, hyphenation point, fraction and division
# slashes, and their small and full-width forms).
_GROUP_SEPARATOR_RE: Final = re.compile(
    "[\\s./\\\\_\\-\u00b7\u2010-\u2015\u2212\u2024\u2027\u2044\u2215\ufe58\ufe63\uff0d"
    "\uff0e\uff0f\uff3f]"
)
_NON_ASCII_DIGIT_RE: Final = re.compile(r"(?![0-9])\d")


def _base_view(text: str) -> tuple[str, list[int] | None]:
    """`text` with invisible characters dropped and wide spaces made plain, and where each of
    its characters came from (None when nothing was dropped: the offsets are the text's own)."""
    if text.isascii():
        return text, None
    positions: list[int] | None = None
    if _INVISIBLE_RE.search(text):
        positions = [i for i, ch in enumerate(text) if not _INVISIBLE_RE.match(ch)]
        text = "".join(text[i] for i in positions)
    return _WIDE_SPACE_RE.sub(" ", text), positions


def _card_view(view: str) -> str:
    """The base view with every group separator a plain space and every digit an ASCII one;
    character for character, so offsets carry over."""
    view = _GROUP_SEPARATOR_RE.sub(" ", view)
    if view.isascii():
        return view
    return _NON_ASCII_DIGIT_RE.sub(lambda m: str(unicodedata.digit(m.group())), view)


# --- high entropy ---------------------------------------------------------------------------

HIGH_ENTROPY_MIN_LENGTH: Final = 24
HIGH_ENTROPY_MIN_BITS: Final = 3.5
HIGH_ENTROPY_MIN_CLASSES: Final = 3
# Runs whose letter/digit pieces average at least this long read as glued words, not noise.
WORDY_MIN_MEAN_PIECE: Final = 3.0

_RUN_CHARS: Final = r"A-Za-z0-9+/=_\-"
RUN_RE: Final = re.compile(
    rf"(?<![{_RUN_CHARS}])[{_RUN_CHARS}]{{{HIGH_ENTROPY_MIN_LENGTH},}}"
    rf"(?![{_RUN_CHARS}])"
)
URL_RE: Final = re.compile(r"\b(?:[a-z][a-z0-9+.\-]{0,15}://|www\.)[^\s<>\"']+", re.IGNORECASE)
_URL_PIECE_RE: Final = re.compile(rf"[{_RUN_CHARS}]+")
UUID_RE: Final = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
_PIECE_RE: Final = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|[A-Z]|[0-9]+")


def _alnum_classes(text: str) -> int:
    """How many of upper case, lower case and digits `text` uses."""
    return (
        any(c.isascii() and c.isupper() for c in text)
        + any(c.isascii() and c.islower() for c in text)
        + any(c.isascii() and c.isdigit() for c in text)
    )


def _char_classes(text: str) -> int:
    """How many of upper case, lower case, digits and symbols `text` uses."""
    return _alnum_classes(text) + any(not c.isascii() or not c.isalnum() for c in text)


def _entropy(text: str) -> float:
    counts = Counter(text)
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _wordy(run: str) -> bool:
    pieces = _PIECE_RE.findall(run)
    if not pieces:
        return True
    return sum(len(p) for p in pieces) / len(pieces) >= WORDY_MIN_MEAN_PIECE


def _is_high_entropy(run: str) -> bool:
    return (
        len(run) >= HIGH_ENTROPY_MIN_LENGTH
        and _char_classes(run) >= HIGH_ENTROPY_MIN_CLASSES
        and UUID_RE.fullmatch(run) is None
        and not _wordy(run)
        and _entropy(run) >= HIGH_ENTROPY_MIN_BITS
    )


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _known_issuer(digits: str) -> bool:
    for _name, low, high, lengths in CARD_ISSUERS:
        width = len(str(low))
        if low <= int(digits[:width]) <= high and len(digits) in lengths:
            return True
    return False


def is_card_number(digits: str) -> bool:
    """True when `digits` (digits only) is a plausible payment card number."""
    return (
        CARD_MIN_DIGITS <= len(digits) <= CARD_MAX_DIGITS
        and digits.isascii()
        and digits.isdigit()
        and _known_issuer(digits)
        and _luhn(digits)
    )


# --- finders --------------------------------------------------------------------------------


def _private_keys(text: str) -> list[SecretSpan]:
    return [SecretSpan(m.start(), m.end(), "private_key") for m in PRIVATE_KEY_RE.finditer(text)]


def _api_keys(text: str) -> list[SecretSpan]:
    spans = [SecretSpan(m.start(), m.end(), "api_key") for m in API_KEY_RE.finditer(text)]
    spans += [SecretSpan(m.start(), m.end(), "api_key") for m in TELEGRAM_TOKEN_RE.finditer(text)]
    for m in ASSIGNMENT_RE.finditer(text):
        value = m.group("value")
        if _alnum_classes(value) >= ASSIGNMENT_MIN_CLASSES:
            spans.append(SecretSpan(m.start("value"), m.end("value"), "api_key"))
    return spans


def _card_numbers(text: str) -> list[SecretSpan]:
    """Every window of whole digit groups that is a card number; overlapping windows merge.

    Windows start and end on group boundaries, so "call 4 4111 1111 1111 1111" still finds the
    card, and a digit the writer glued on either side never hides one.
    """
    spans: list[SecretSpan] = []
    for run in CARD_RUN_RE.finditer(text):
        groups = [(g.start(), g.end()) for g in _DIGITS_RE.finditer(text, run.start(), run.end())]
        for i, (first, _) in enumerate(groups):
            if text[first] not in _ISSUER_FIRST_DIGITS:
                continue
            digits = ""
            for j in range(i, len(groups)):
                start, end = groups[j]
                digits += text[start:end]
                if len(digits) > CARD_MAX_DIGITS:
                    break
                if is_card_number(digits):
                    spans.append(SecretSpan(first, end, "card_number"))
    return spans


def _high_entropy(text: str) -> list[SecretSpan]:
    spans: list[SecretSpan] = []
    urls = [(m.start(), m.end()) for m in URL_RE.finditer(text)]
    for start, end in urls:
        url = text[start:end]
        for piece in _URL_PIECE_RE.finditer(url):
            for segment_start, segment in _split_pieces(piece.group(), start + piece.start()):
                for part_start, part in _split_assignment(segment, segment_start):
                    if _is_high_entropy(part):
                        spans.append(
                            SecretSpan(part_start, part_start + len(part), "high_entropy")
                        )
    for m in RUN_RE.finditer(text):
        if any(s <= m.start() < e for s, e in urls):
            continue
        for part_start, part in _split_assignment(m.group(), m.start()):
            if _is_high_entropy(part):
                spans.append(SecretSpan(part_start, part_start + len(part), "high_entropy"))
    return spans


def _split_assignment(run: str, offset: int) -> list[tuple[int, str]]:
    """A run with an "=" before its end is `name=value`: its sides are judged apart.

    Base64 padding ("...==") only ever trails, so it stays with the run.
    """
    body = run.rstrip("=")
    if "=" not in body:
        return [(offset, run)]
    parts: list[tuple[int, str]] = []
    position = 0
    for segment in re.split(r"(=+)", body):
        if segment and not segment.startswith("="):
            parts.append((offset + position, segment))
        position += len(segment)
    if parts and len(body) < len(run):
        start, last = parts[-1]
        if start - offset + len(last) == len(body):
            parts[-1] = (start, last + run[len(body) :])
    return parts


def _split_pieces(piece: str, offset: int) -> list[tuple[int, str]]:
    """A URL's path segments, judged one by one ("/" is a separator inside a URL)."""
    parts: list[tuple[int, str]] = []
    position = 0
    for segment in re.split(r"(/)", piece):
        if segment and segment != "/":
            parts.append((offset + position, segment))
        position += len(segment)
    return parts


_FINDERS: Final = (_private_keys, _api_keys, _card_numbers, _high_entropy)
_RANK: Final[dict[SecretKind, int]] = {kind: i for i, kind in enumerate(KIND_PRIORITY)}


def _merge(spans: list[SecretSpan]) -> list[SecretSpan]:
    """Overlapping spans become one covering span of the highest-priority kind."""
    merged: list[SecretSpan] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if merged and span.start < merged[-1].end:
            last = merged[-1]
            kind = last.kind if _RANK[last.kind] <= _RANK[span.kind] else span.kind
            merged[-1] = SecretSpan(last.start, max(last.end, span.end), kind)
        else:
            merged.append(span)
    return merged


def find_secrets(text: str) -> list[SecretSpan]:
    """Every secret token in `text`, in order, non-overlapping, as offsets into `text` itself."""
    view, positions = _base_view(text)
    spans: list[SecretSpan] = []
    for finder in _FINDERS:
        spans.extend(finder(_card_view(view) if finder is _card_numbers else view))
    merged = _merge(spans)
    if positions is None:
        return merged
    return [SecretSpan(positions[s.start], positions[s.end - 1] + 1, s.kind) for s in merged]


def has_secret(text: str) -> bool:
    """True when `text` holds at least one secret token."""
    return bool(find_secrets(text))


def placeholder(kind: SecretKind) -> str:
    """What a masked token of `kind` becomes."""
    return f"[masked {kind}]"


def _mask_once(text: str, spans: list[SecretSpan]) -> str:
    pieces: list[str] = []
    cursor = 0
    for span in spans:
        pieces.append(text[cursor : span.start])
        pieces.append(placeholder(span.kind))
        cursor = span.end
    pieces.append(text[cursor:])
    return "".join(pieces)


def mask_secrets(text: str) -> str:
    """`text` with every secret token replaced by ``[masked <kind>]``; unchanged if none.

    Masking repeats until nothing is found, so the result never holds a token and masking it
    again changes nothing. Each round replaces at least one character that is not part of a
    placeholder, so the loop ends.
    """
    spans = find_secrets(text)
    while spans:
        text = _mask_once(text, spans)
        spans = find_secrets(text)
    return text
