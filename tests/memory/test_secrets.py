"""The secret-token gate: what it finds, what it masks, and what it must leave alone."""

from __future__ import annotations

import itertools
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import SHARED, Role, private_scope
from memory.secrets import SecretSpan, find_secrets, has_secret, mask_secrets
from tests.helpers import make_household, raw_bytes

# Example tokens, assembled from pieces so no scanner mistakes this file for a leak.
OPENAI_KEY = "sk-" + "proj-" + "Ab3dEf6hIj9kLmN0pQrStUvWxYz12345_abcXYZ"
OPENAI_LEGACY_KEY = "sk-" + "4fT9qLm2ZxW7vB1nC8rD0eH5jK3yP6sA"
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123"
SLACK_BOT = "xoxb-" + "2048117395-4095823617-Zq7WbN3kLm9PxR2tYv5C"
SLACK_USER = "xoxp-" + "1938475610-2837465012-9f8e7d6c5b4a"
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
GOOGLE_KEY = "AIza" + "SyD4-x8Qw2Er6Ty0Ui3Op7As1Df5Gh9Jk2L"
GITLAB_TOKEN = "glpat-" + "x7Yq2Wm9Rt4Zk1Vb8Np3"
TELEGRAM_TOKEN = "7012345678:" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw9"
GENERIC_VALUE = "Zx81Lq0Vm4Tk7Rb2"
HIGH_ENTROPY = "Qm9uZXk+aXM/dGlnaHQ7YnV0IDJuaWdodA=="
URL_SECRET = "Rk3j9sLq0Zx7Vb2Nm5Tq8Wc1Yp4"
PEM_BLOCK = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACBp3u9zZk4tZ8r1mJ0cQ2sD7vW5xYbN6aE9fH1gK3lP4QAAAJhT7u2QU+7t\n"
    "-----END OPENSSH PRIVATE KEY-----"
)

# (readable id, text, the token inside it, expected kind)
FOUND: list[tuple[str, str, str, str]] = [
    ("openai-project-key", f"my key is {OPENAI_KEY} ok?", OPENAI_KEY, "api_key"),
    ("openai-legacy-key", f"use {OPENAI_LEGACY_KEY}", OPENAI_LEGACY_KEY, "api_key"),
    ("github-token", f"token {GITHUB_TOKEN} for the repo", GITHUB_TOKEN, "api_key"),
    ("github-fine-grained-pat", f"PAT: {GITHUB_PAT}", GITHUB_PAT, "api_key"),
    ("slack-bot-token", f"slack bot {SLACK_BOT} works", SLACK_BOT, "api_key"),
    ("slack-user-token", f"({SLACK_USER})", SLACK_USER, "api_key"),
    ("aws-access-key-id", f"aws id {AWS_KEY} in eu-west", AWS_KEY, "api_key"),
    ("google-api-key", f"maps {GOOGLE_KEY}.", GOOGLE_KEY, "api_key"),
    ("gitlab-token", f"gitlab {GITLAB_TOKEN}", GITLAB_TOKEN, "api_key"),
    ("telegram-bot-token", f"the bot token is {TELEGRAM_TOKEN} :)", TELEGRAM_TOKEN, "api_key"),
    ("generic-assignment", f"OPENAI_API_KEY={GENERIC_VALUE}", GENERIC_VALUE, "api_key"),
    ("generic-token-colon", f'token: "{GENERIC_VALUE}"', GENERIC_VALUE, "api_key"),
    ("pem-block", f"here you go\n{PEM_BLOCK}\nthanks", PEM_BLOCK, "private_key"),
    ("visa-spaced", "card 4111 1111 1111 1111 exp soon", "4111 1111 1111 1111", "card_number"),
    ("mastercard-dashed", "it's 5555-5555-5555-4444 ok", "5555-5555-5555-4444", "card_number"),
    ("mastercard-2-series", "new card 2223003122003222", "2223003122003222", "card_number"),
    ("amex-grouped", "amex 3782 822463 10005 thanks", "3782 822463 10005", "card_number"),
    ("discover", "discover 6011111111111117.", "6011111111111117", "card_number"),
    ("jcb", "jcb 3530 1113 3330 0000", "3530 1113 3330 0000", "card_number"),
    ("diners", "diners 30569309025904", "30569309025904", "card_number"),
    ("high-entropy-base64", f"blob {HIGH_ENTROPY} end", HIGH_ENTROPY, "high_entropy"),
]


FOUND_CASES = [case[1:] for case in FOUND]
FOUND_IDS = [case[0] for case in FOUND]


def _fragments(token: str, size: int = 4) -> set[str]:
    return {token[i : i + size] for i in range(len(token) - size + 1)}


@pytest.mark.parametrize(("text", "token", "kind"), FOUND_CASES, ids=FOUND_IDS)
def test_each_kind_of_token_is_found_with_its_kind(text: str, token: str, kind: str) -> None:
    start = text.index(token)
    assert find_secrets(text) == [SecretSpan(start, start + len(token), kind)]
    assert has_secret(text)


@pytest.mark.parametrize(("text", "token", "kind"), FOUND_CASES, ids=FOUND_IDS)
def test_each_kind_of_token_is_masked_with_its_kind(text: str, token: str, kind: str) -> None:
    assert mask_secrets(text) == text.replace(token, f"[masked {kind}]")


@pytest.mark.parametrize(("text", "token", "kind"), FOUND_CASES, ids=FOUND_IDS)
def test_masked_output_contains_no_four_character_fragment_of_the_token(
    text: str, token: str, kind: str
) -> None:
    masked = mask_secrets(text)
    digits_only = "".join(c for c in token if c.isdigit()) if kind == "card_number" else token
    leaked = {f for f in _fragments(token) | _fragments(digits_only) if f in masked}
    assert not leaked, f"{len(leaked)} fragments of the {kind} survived"


def test_a_luhn_failing_sixteen_digit_number_is_not_masked() -> None:
    text = "the tracking number is 4111 1111 1111 1112"
    assert not has_secret(text)
    assert mask_secrets(text) == text


def test_a_phone_number_is_not_masked() -> None:
    for text in ("call me on 07700 900123", "ring +44 20 7946 0958", "+1 (415) 555-2671"):
        assert not has_secret(text), text
        assert mask_secrets(text) == text


def test_an_order_number_that_passes_luhn_without_an_issuer_prefix_is_not_masked() -> None:
    assert not has_secret("order 1234567890123452 has shipped")


def test_her_pin_is_0042_has_no_secret_token() -> None:
    assert not has_secret("her PIN is 0042")
    assert find_secrets("her PIN is 0042") == []


def test_a_word_password_is_a_fact_not_a_token() -> None:
    for text in (
        "the wifi password is hunter2",
        "password=hunter2",
        "Alice's email password is tangerine-violin",
        "The wifi password is marmalade-sky",
    ):
        assert not has_secret(text), text


def test_a_password_assignment_is_a_fact_unless_the_password_is_high_entropy() -> None:
    assert not has_secret("wifi password: tangerine-violin")
    assert mask_secrets(f"password: {HIGH_ENTROPY}") == "password: [masked high_entropy]"


def test_a_telegram_token_inside_a_bot_api_url_is_masked() -> None:
    url = f"https://api.telegram.org/bot{TELEGRAM_TOKEN}/getMe"
    assert mask_secrets(url) == "https://api.telegram.org/bot[masked api_key]/getMe"


def test_a_lower_case_only_assignment_value_is_not_masked() -> None:
    assert not has_secret("key: the-surprise-party-plan")


def test_a_pem_block_is_masked_whole_and_the_text_around_it_is_kept() -> None:
    text = f"before\n{PEM_BLOCK}\nafter"
    assert mask_secrets(text) == "before\n[masked private_key]\nafter"


def test_a_pem_block_without_an_end_line_is_masked_to_the_end() -> None:
    truncated = PEM_BLOCK.rsplit("\n", 1)[0]
    assert mask_secrets(f"oops: {truncated}") == "oops: [masked private_key]"


def test_a_card_number_next_to_other_digits_is_still_masked() -> None:
    masked = mask_secrets("ref 7 4111 1111 1111 1111 9")
    assert "4111" not in masked
    assert "[masked card_number]" in masked


def test_only_the_value_of_a_key_assignment_is_masked() -> None:
    assert mask_secrets(f"api_key = '{GENERIC_VALUE}'") == "api_key = '[masked api_key]'"


def test_a_secret_segment_inside_a_url_is_masked_but_the_url_is_not() -> None:
    url = "https://hooks.example.com/services/T0000/B0000/"
    text = f"webhook {url}{URL_SECRET}"
    assert mask_secrets(text) == f"webhook {url}[masked high_entropy]"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Can you grab milk on the way home?",
        "her PIN is 0042",
        "the wifi password is hunter2",
        "see https://github.com/example/widgets/blob/main/src/a_rather_long_module_name.py",
        "fixed in 3f9a2b7c1d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a yesterday",
        "request 550e8400-e29b-41d4-a716-446655440000 failed",
        "getUserAccountBalanceForPeriod2024 is slow",
        "Screenshot_2024-05-12-18-34-55-123_com.whatsapp.jpg",
        "supercalifragilisticexpialidocious-and-antidisestablishmentarianism",
        "meet at 10:30 on 2024-05-12, room 4B",
        "the task-force-reorganisation-plan-for-2025 doc",
        "emoji 🎉🎉🎉 and ünïcödé text",
    ],
    ids=[
        "empty",
        "plain-sentence",
        "short-pin",
        "word-password",
        "url",
        "git-sha",
        "uuid",
        "camel-case-identifier",
        "file-name",
        "long-words",
        "times-and-dates",
        "slug",
        "unicode",
    ],
)
def test_text_without_secret_tokens_is_returned_unchanged(text: str) -> None:
    assert find_secrets(text) == []
    assert mask_secrets(text) == text


def test_a_span_names_its_place_and_kind_but_never_the_token() -> None:
    (span,) = find_secrets(f"key {GITHUB_TOKEN}")
    assert GITHUB_TOKEN[4:12] not in repr(span)
    assert span == SecretSpan(4, 4 + len(GITHUB_TOKEN), "api_key")


def test_spans_are_sorted_and_do_not_overlap() -> None:
    text = f"{GITHUB_TOKEN} 4111 1111 1111 1111 {PEM_BLOCK} {HIGH_ENTROPY} {AWS_KEY}"
    spans = find_secrets(text)
    assert [s.kind for s in spans] == [
        "api_key",
        "card_number",
        "private_key",
        "high_entropy",
        "api_key",
    ]
    assert all(a.end <= b.start for a, b in itertools.pairwise(spans))


# --- properties ------------------------------------------------------------------------------

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_URLSAFE = _ALNUM + "_-"

# (first digits, length) per issuer, for generated card numbers.
_ISSUERS = [
    ("4", 16),
    ("4", 13),
    ("4", 19),
    ("51", 16),
    ("55", 16),
    ("2221", 16),
    ("2720", 16),
    ("34", 15),
    ("37", 15),
    ("6011", 16),
    ("65", 19),
    ("644", 16),
    ("3528", 16),
    ("3589", 18),
    ("36", 14),
    ("38", 16),
    ("300", 14),
    ("305", 19),
]


def _luhn_check_digit(partial: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(partial)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return str((10 - total % 10) % 10)


@st.composite
def card_numbers(draw: st.DrawFn) -> str:
    prefix, length = draw(st.sampled_from(_ISSUERS))
    body = draw(
        st.text("0123456789", min_size=length - len(prefix) - 1, max_size=length - len(prefix) - 1)
    )
    digits = prefix + body + _luhn_check_digit(prefix + body)
    separator = draw(st.sampled_from(["", " ", "-"]))
    if not separator:
        return digits
    return separator.join(digits[i : i + 4] for i in range(0, len(digits), 4))


def _text(alphabet: str, size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=size, max_size=size)


api_keys: st.SearchStrategy[str] = st.one_of(
    st.builds(lambda s: "sk-proj-Ab1" + s, st.text(_URLSAFE, min_size=20, max_size=60)),
    st.builds(lambda s: "sk-9z" + s, st.text(_URLSAFE, min_size=20, max_size=48)),
    st.builds(lambda s: "ghp_" + s, _text(_ALNUM, 36)),
    st.builds(lambda s: "github_pat_" + s, st.text(_ALNUM + "_", min_size=22, max_size=82)),
    st.builds(
        lambda p, s: p + s,
        st.sampled_from(["xoxb-", "xoxp-"]),
        st.text(_ALNUM + "-", min_size=10, max_size=50),
    ),
    st.builds(lambda s: "AKIA" + s, _text("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)),
    st.builds(lambda s: "AIza" + s, _text(_URLSAFE, 35)),
    st.builds(lambda s: "glpat-" + s, st.text(_URLSAFE, min_size=20, max_size=40)),
    st.builds(
        lambda n, s: f"{n}:AA{s}", st.integers(100_000_000, 9_999_999_999), _text(_URLSAFE, 33)
    ),
)
tokens = st.one_of(card_numbers(), api_keys)
separators = st.sampled_from([" ", "\n", " : ", ", ", "\t"])


@st.composite
def texts_with_tokens(draw: st.DrawFn) -> tuple[str, list[str]]:
    embedded = draw(st.lists(tokens, min_size=0, max_size=3))
    pieces = [draw(st.text(max_size=30))]
    for token in embedded:
        pieces += [draw(separators), token, draw(separators), draw(st.text(max_size=30))]
    return "".join(pieces), embedded


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts_with_tokens())
def test_masking_is_idempotent_and_leaves_no_secret_behind(
    case: tuple[str, list[str]],
) -> None:
    text, embedded = case
    masked = mask_secrets(text)
    assert mask_secrets(masked) == masked
    assert not has_secret(masked)
    for token in embedded:
        assert token not in masked


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_masking_random_text_is_idempotent(text: str) -> None:
    masked = mask_secrets(text)
    assert mask_secrets(masked) == masked
    assert not has_secret(masked)
    if not find_secrets(text):
        assert masked == text


# --- card numbers however they are written -------------------------------------------------

CARD = "4111111111111111"
GROUPS = [CARD[i : i + 4] for i in range(0, 16, 4)]
# Every Unicode space (categories Zs, Zl and Zp), found rather than listed, so none is missed.
UNICODE_SPACES = [
    chr(cp)
    for cp in range(sys.maxunicode + 1)
    if unicodedata.category(chr(cp)) in {"Zs", "Zl", "Zp"}
]
SEPARATORS = {
    **{f"U+{ord(ch):04X}": ch for ch in UNICODE_SPACES},
    "tab": "\t",
    "line-feed": "\n",
    "crlf": "\r\n",
    "vertical-tab": "\v",
    "form-feed": "\f",
    "dot": ".",
    "hyphen": "-",
    "slash": "/",
    "backslash": "\\",
    "underscore": "_",
    "en-dash": "\u2013",
    "em-dash": "\u2014",
    "non-breaking-hyphen": "\u2011",
    "minus-sign": "\u2212",
    "middle-dot": "\u00b7",
    "spaced-hyphen": " - ",
    "spaced-slash": " / ",
    "dot-and-space": ". ",
    "zero-width-space": "\u200b",
    "word-joiner": "\u2060",
    "soft-hyphen": "\u00ad",
    "nbsp-and-line-break": "\u00a0\n",
}


def test_every_unicode_space_is_covered() -> None:
    assert len(UNICODE_SPACES) >= 19
    assert {"\u00a0", "\u202f", "\u2009", "\u2007", "\u3000", "\u2028"} <= set(UNICODE_SPACES)


@pytest.mark.parametrize("separator", list(SEPARATORS.values()), ids=list(SEPARATORS))
def test_a_card_number_with_any_space_or_separator_between_its_groups_is_masked(
    separator: str,
) -> None:
    text = f"card {separator.join(GROUPS)} exp 04/29"
    start = len("card ")
    end = start + len(separator.join(GROUPS))
    assert find_secrets(text) == [SecretSpan(start, end, "card_number")]
    assert mask_secrets(text) == "card [masked card_number] exp 04/29"


def test_a_card_number_with_narrow_spaces_is_masked_from_the_text_as_written() -> None:
    text = "Bob's Visa: 4111\u202f1111\u202f1111\u202f1111, keep it safe"
    assert has_secret(text)
    assert mask_secrets(text) == "Bob's Visa: [masked card_number], keep it safe"


def test_a_card_number_broken_over_two_lines_is_masked() -> None:
    text = "the number is 4111 1111\n1111 1111 and the cvv is on the back"
    assert mask_secrets(text) == "the number is [masked card_number] and the cvv is on the back"


def test_a_card_number_with_mixed_separators_is_masked() -> None:
    text = "5555.5555\u00a05555-4444"
    assert mask_secrets(text) == "[masked card_number]"
    amex = "amex 3782\u2009822463\u200910005"
    assert mask_secrets(amex) == "amex [masked card_number]"


def test_a_card_number_in_full_width_digits_is_masked() -> None:
    wide = "".join(chr(0xFF10 + int(d)) for d in CARD)
    text = f"card {wide[:4]} {wide[4:8]} {wide[8:12]} {wide[12:]}!"
    assert mask_secrets(text) == "card [masked card_number]!"


def test_a_card_number_with_a_zero_width_space_inside_a_group_is_masked_whole() -> None:
    text = "pay with 41\u200b11 1111 1111 1111 please"
    (span,) = find_secrets(text)
    assert text[span.start : span.end] == "41\u200b11 1111 1111 1111"
    assert mask_secrets(text) == "pay with [masked card_number] please"


@pytest.mark.parametrize(
    "text",
    [
        "call 06.12.34.56.78 after six",
        "ring +44\u00a020\u00a07946\u00a00958",
        "on 12.05.2024 at 14.30",
        "server 192.168.100.200 is down",
        "the tracking number is 4111.1111.1111.1112",
        "order 1234/5678/9012/3452 has shipped",
        "version 4.1.11 and 1.11.1",
        "scores: 41 - 11 - 11 - 11",
    ],
    ids=[
        "dotted-phone",
        "phone-with-nbsp",
        "date-and-time",
        "ip-address",
        "dotted-luhn-failure",
        "slashed-order-number",
        "versions",
        "scores",
    ],
)
def test_numbers_that_are_not_cards_stay_whatever_their_separators(text: str) -> None:
    assert find_secrets(text) == []
    assert mask_secrets(text) == text


def test_groups_too_far_apart_are_not_one_card() -> None:
    text = "4111 1111    1111 1111"  # four spaces: two numbers, neither a card
    assert not has_secret(text)


def test_a_token_split_by_an_invisible_character_is_masked_whole() -> None:
    split = GITHUB_TOKEN[:12] + "\u200b" + GITHUB_TOKEN[12:]
    text = f"token {split} for the repo"
    assert mask_secrets(text) == "token [masked api_key] for the repo"
    assert not _fragments(GITHUB_TOKEN) & _fragments(mask_secrets(text))


def test_a_private_key_header_with_a_no_break_space_is_masked() -> None:
    block = PEM_BLOCK.replace("OPENSSH PRIVATE KEY", "OPENSSH\u00a0PRIVATE\u00a0KEY")
    assert mask_secrets(f"here {block}") == "here [masked private_key]"


@st.composite
def spaced_card_numbers(draw: st.DrawFn) -> tuple[str, str]:
    """A card number written with any of the separators, and its digits."""
    digits = draw(card_numbers()).replace(" ", "").replace("-", "")
    groups = [digits[i : i + 4] for i in range(0, len(digits), 4)]
    written = groups[0]
    for group in groups[1:]:
        written += draw(st.sampled_from(list(SEPARATORS.values()))) + group
    return written, digits


@settings(max_examples=300, deadline=None)
@given(spaced_card_numbers(), st.text(max_size=20), st.text(max_size=20))
def test_a_card_number_is_masked_whatever_separates_its_groups(
    card: tuple[str, str], before: str, after: str
) -> None:
    written, digits = card
    masked = mask_secrets(f"{before} {written} {after}")
    assert "[masked card_number]" in masked
    assert written not in masked
    assert digits not in "".join(c for c in masked if c.isdigit())
    assert mask_secrets(masked) == masked


# --- the write gate, through the memory ------------------------------------------------------


async def test_a_card_number_with_narrow_spaces_is_never_stored_as_a_belief(
    tmp_path: Path,
) -> None:
    home = await make_household(tmp_path / "hearth.db")
    try:
        text = "Bob's card is 4111\u202f1111\u202f1111\u202f1111"
        outcome = await home.memory.beliefs.remember(home.bob.person_id, text)
        assert outcome.status == "refused" and outcome.belief_id is None
        shared = await home.memory.beliefs.remember(
            home.owner.person_id, "the family card: 5555.5555.5555.4444", shared=True
        )
        assert shared.status == "refused"
        # A positive control: an ordinary fact beside it is kept.
        kept = await home.memory.beliefs.remember(home.bob.person_id, "Bob's card is blue")
        assert kept.status == "created"
        await home.memory.checkpoint()
        raw = raw_bytes(home.memory.path)
        for needle in (text, "4111\u202f1111", CARD, "5555.5555", "5555555555554444"):
            assert needle.encode() not in raw, needle
        assert b"Bob's card is blue" in raw
    finally:
        await home.memory.close()


async def test_a_card_number_with_no_break_spaces_in_a_message_is_stored_masked(
    tmp_path: Path,
) -> None:
    home = await make_household(tmp_path / "hearth.db")
    try:
        text = "my card is 4111\u00a01111\u00a01111\u00a01111, exp 04/29"
        await home.memory.transcript.append(
            chat_id=f"dm:{home.bob.telegram_id}",
            speaker_id=home.bob.person_id,
            role=Role.USER,
            scope=private_scope(home.bob.person_id),
            text=text,
        )
        await home.memory.transcript.append(
            chat_id="group:-100",
            speaker_id=home.alice.person_id,
            role=Role.USER,
            scope=SHARED,
            text="mine is 5555.5555.5555.4444",
        )
        await home.memory.checkpoint()
        raw = raw_bytes(home.memory.path)
        assert b"my card is [masked card_number], exp 04/29" in raw
        for needle in ("4111\u00a01111", CARD, "5555.5555", "5555555555554444"):
            assert needle.encode() not in raw, needle
    finally:
        await home.memory.close()
