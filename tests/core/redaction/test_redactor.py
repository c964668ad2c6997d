"""``Redactor`` strikes a secret out of text in every shape text gives it: as written, its
blanks run together, doubled, turned into line breaks or escapes, JSON- or Python-quoted;
and a long one (``LONG`` characters, blanks aside) also upper- or lower-cased, cut by a line
break or an invisible character anywhere, and in base64 (standard or URL-safe) alone or inside
a longer base64 string at any alignment. Redacted before a cut, no part of it survives the
cut. Properties over drawn secrets and texts; the secrets' letters are kept apart from the
text's and the mask's, so that what is left of a secret can be seen letter by letter."""

from __future__ import annotations

import base64
import contextlib
import json
import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from core.redaction import LONG, MIN_INSIDE, SECRET, Redactor
from core.redaction.skeleton import Skeleton

# a secret's letters: none of the filler's, none of the mask's "(secret)"
SECRET_LETTERS = "ABDFGHJKLMNPQUVWXYZ0123456789-_é"
FILLER = st.text(st.sampled_from("io!.,;:"), max_size=20)
BLANK_RUNS = st.sampled_from([" ", "  ", "\n", "\r\n", "\t", " \n ", "\u00a0", "\u2028", "   "])
WORDS = st.lists(st.text(st.sampled_from(SECRET_LETTERS), min_size=1, max_size=9), min_size=1)


@st.composite
def secrets(draw: st.DrawFn, long: bool | None = None) -> str:
    """A secret of words apart by blanks (maybe none); ``long``: of ``LONG`` characters or
    more (blanks aside), or fewer."""
    words = draw(WORDS.filter(lambda w: long is None or (len("".join(w)) >= LONG) == long))
    gaps = draw(st.lists(BLANK_RUNS, min_size=len(words) - 1, max_size=len(words) - 1))
    return "".join(w + g for w, g in zip(words, [*gaps, ""], strict=True))


def respaced(secret: str, runs: list[str]) -> str:
    """``secret`` with each of its runs of blanks replaced by one of ``runs``."""
    parts = secret.split()
    return "".join(
        p + (runs[i % len(runs)] if i < len(parts) - 1 else "") for i, p in enumerate(parts)
    )


def letters_left(text: str) -> set[str]:
    return set(text) & set(SECRET_LETTERS)


@given(secret=secrets(), runs=st.lists(BLANK_RUNS, min_size=1, max_size=3), a=FILLER, b=FILLER)
def test_a_secret_is_struck_out_whatever_its_blanks_became(
    secret: str, runs: list[str], a: str, b: str
) -> None:
    redactor = Redactor([secret])
    for shape in (secret, " ".join(secret.split()), respaced(secret, runs)):
        for quoted in (shape, json.dumps(shape)[1:-1], json.dumps(shape, ensure_ascii=False)[1:-1]):
            out = redactor.text(f"{a} {quoted} {b}")
            assert not letters_left(out) and SECRET in out, (shape, out)


@given(secret=secrets(long=True), a=FILLER, b=FILLER, cut=st.integers(1, 1000))
def test_a_long_secret_is_struck_out_cased_or_split_anywhere(
    secret: str, a: str, b: str, cut: int
) -> None:
    redactor = Redactor([secret])
    at = cut % len(secret)
    for shape in (
        secret.upper(),
        secret.lower(),
        secret.casefold(),
        secret[:at] + "\n" + secret[at:],  # a line wrapped inside it
        secret[:at] + "\u200b" + secret[at:],  # a zero-width space put inside it
        "".join(secret.split()),  # its blanks taken out
        json.dumps(secret[:at] + "\r\n" + secret[at:])[1:-1],
    ):
        out = redactor.text(f"{a}{shape}{b}")
        assert not letters_left(out) and SECRET in out, (shape, out)


def base64_runs(text: str) -> list[bytes]:
    """Every run of base64 characters in ``text``, decoded from each of its first four
    characters, as standard and URL-safe base64."""
    found = []
    for run in re.findall(r"[A-Za-z0-9+/_-]{4,}", text):
        for start in range(4):
            part = run[start:][: (len(run) - start) // 4 * 4]
            for decode in (base64.b64decode, base64.urlsafe_b64decode):
                with contextlib.suppress(ValueError):
                    found.append(decode(part))
    return found


@given(
    secret=secrets(long=True),
    before=st.binary(max_size=5),
    after=st.binary(max_size=5),
    url_safe=st.booleans(),
    as_json=st.booleans(),
)
def test_a_long_secret_in_base64_is_struck_out_at_any_alignment(
    secret: str, before: bytes, after: bytes, url_safe: bool, as_json: bool
) -> None:
    """Inside a longer base64 string (a token, a header): nothing of it decodes from what is
    left but what the characters at its ends share with their neighbours (at most 2 bytes)."""
    data = (json.dumps(secret)[1:-1] if as_json else secret).encode()
    encode = base64.urlsafe_b64encode if url_safe else base64.b64encode
    encoded = encode(before + data + after).decode()
    out = Redactor([secret]).text(f"token {encoded} end")
    assert SECRET in out, out
    for decoded in base64_runs(out):
        assert data[2:-2] not in decoded, (encoded, out)


@given(secret=secrets(long=False), a=FILLER)
def test_a_short_secret_is_matched_as_written_not_cased_or_encoded(secret: str, a: str) -> None:
    """Below ``LONG`` characters, the case and base64 forms would strike out too much that
    is no secret (a secret "Id" and every "ID"): they are left, as documented."""
    assume(secret.upper() != secret or any(c.isalpha() for c in secret))
    redactor = Redactor([secret])
    assert redactor.text(f"{a} {secret} {a}") == f"{a} {SECRET} {a}"
    encoded = base64.b64encode(secret.encode()).decode()
    assert redactor.text(encoded) == encoded


@given(
    secret=secrets(),
    text=st.text(st.sampled_from("io!.,; \n" + SECRET_LETTERS), max_size=80),
)
def test_striking_out_twice_changes_nothing_the_first_time_did_not(secret: str, text: str) -> None:
    redactor = Redactor([secret])
    once = redactor.text(text)
    assert redactor.text(once) == once


@given(secret=secrets(), text=st.text(st.sampled_from("io!.,; \n\t()"), max_size=80))
def test_text_without_the_secret_is_left_as_it_is(secret: str, text: str) -> None:
    assert Redactor([secret]).text(text) == text


@given(secret=secrets(long=True), pad=st.integers(0, 60), limit=st.integers(10, 120))
def test_a_reason_cut_after_striking_out_keeps_no_part_of_the_secret(
    secret: str, pad: int, limit: int
) -> None:
    """The secret may straddle the cut: it is struck out first, so nothing of it is left."""
    said = "i" * pad + " " + secret + " said " + "o" * 40
    kept = Redactor([secret]).kept(said, limit)
    assert len(kept) <= limit and not letters_left(kept), kept


def test_the_reported_reason_cut_at_500_keeps_no_prefix() -> None:
    secret = "Zq-rotated-" + "k9" * 12
    said = "x" * 480 + secret + " " + "y" * 85
    kept = Redactor([secret]).kept(said, 500)
    assert kept.startswith("x" * 480 + SECRET + " yyy") and len(kept) == 500
    assert "Zq" not in kept and "k9" not in kept


@pytest.mark.parametrize(
    "said",
    ["\ufe0f\u034f\u17b4", "\u200b\u2060\ufeff", "\u0301\u0302", "\u3164 \u2800", "\U000e0041", ""],
)
def test_a_reason_of_what_shows_nothing_is_kept_as_nothing(said: str) -> None:
    assert Redactor(["hunter2-long"]).kept(said, 500) == ""


def test_a_reason_keeps_its_words_its_blanks_run_together() -> None:
    kept = Redactor(["hunter2-long"]).kept(" the\u200b db \n\n is  down\u3164now ", 500)
    assert kept == "the db is down now"


def test_a_secret_quoted_in_html_or_a_url_is_struck_out() -> None:
    secret = 'a<b>&c "d" e\'f'
    redactor = Redactor([secret])
    for shape in (
        "a&lt;b&gt;&amp;c &quot;d&quot; e&#x27;f",  # html.escape
        "a&lt;b&gt;&amp;c &#34;d&#34; e&#39;f",  # markupsafe, Jinja's escaping
        "a%3Cb%3E%26c%20%22d%22%20e%27f",  # urllib.parse.quote
        "a%3cb%3e%26c+%22d%22+e%27f",  # a query string, lower-case escapes
    ):
        assert redactor.text(f"page: {shape}.") == f"page: {SECRET}.", shape


def test_no_part_of_a_secret_is_looked_for() -> None:
    """A part would be an oracle: someone whose words come back masked would learn a secret
    a character at a time. Its first 11 characters at the end of a text are left."""
    secret = "xoxb-1234567890-abcdef"
    assert Redactor([secret]).text("the token is xoxb-123456") == "the token is xoxb-123456"


def test_a_word_sized_secret_stays_a_word() -> None:
    redactor = Redactor(["42", "a b"])
    assert redactor.text("it is 42. v42x 4 2") == f"it is {SECRET}. v42x 4 2"
    assert redactor.text("a  b, ab, a\nb") == f"{SECRET}, ab, {SECRET}"
    assert MIN_INSIDE == 4


def test_labels_name_what_was_struck_out() -> None:
    redactor = Redactor.labelled([("hook-secret-123", "${HOOK}"), ("tok-abcdefgh", "***")])
    both = redactor | Redactor(["the-secret-value"])
    assert both.text("HOOK-SECRET-123 tok-abc\ndefgh the-secret-value") == "${HOOK} *** (secret)"


def test_json_numbers_and_keys_are_struck_out_too() -> None:
    redactor = Redactor([4711, "hunter2-long"])
    assert redactor.json({"HUNTER2-LONG": [4711, 4712, "x hunter2-long"]}) == {
        SECRET: [SECRET, 4712, f"x {SECRET}"]
    }


def test_what_a_step_sent_names_the_secrets_found_in_it_in_any_shape() -> None:
    sent = json.dumps({"loud": "HUNTER2-LONG", "other": "x"})
    found = Redactor(["hunter2-long", "never-sent-zzz"]).within(sent)
    assert found.values == ["hunter2-long"]


@given(text=st.text(st.sampled_from("ab \n\t\u200b\u00a0\\nu0A"), max_size=60))
def test_each_character_of_the_skeleton_knows_where_it_stood(text: str) -> None:
    bare = Skeleton(text)
    for position, char in enumerate(bare.text):
        assert text[bare.source(position)] == char
