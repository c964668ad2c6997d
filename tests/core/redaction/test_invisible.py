"""What shows nothing: Unicode's Default_Ignorable_Code_Point (written out as a table, for
Python has no such property), combining marks with nothing to sit on, format and control
characters, blank letters. A reason of nothing else is no reason; a reason with words keeps
its words."""

from __future__ import annotations

import itertools
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.redaction.invisible import (
    DEFAULT_IGNORABLE,
    ignorable,
    readable,
    shows_nothing,
    visible,
)

INVISIBLE = [
    "\u00ad",  # soft hyphen
    "\u034f",  # combining grapheme joiner
    "\u061c",  # Arabic letter mark
    "\u115f",  # Hangul choseong filler
    "\u17b4",  # Khmer vowel inherent AQ
    "\u17b5",  # Khmer vowel inherent AA
    "\u180e",  # Mongolian vowel separator
    "\u200b",  # zero width space
    "\u200d",  # zero width joiner
    "\u202e",  # right-to-left override
    "\u2060",  # word joiner
    "\u2066",  # left-to-right isolate
    "\u3164",  # Hangul filler
    "\ufe0f",  # variation selector 16
    "\ufeff",  # zero width no-break space
    "\uffa0",  # halfwidth Hangul filler
    "\U0001bca0",  # shorthand format letter overlap
    "\U0001d173",  # musical symbol begin beam
    "\U000e0001",  # language tag
    "\U000e0041",  # tag latin capital letter A
    "\U000e0100",  # variation selector 17
]


@pytest.mark.parametrize("char", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
def test_each_default_ignorable_one_named_in_the_property_is_known(char: str) -> None:
    assert ignorable(char) and shows_nothing(char) and not readable(char * 3)


def test_the_table_is_in_order_and_holds_what_its_comments_say() -> None:
    firsts = [first for first, _ in DEFAULT_IGNORABLE]
    assert firsts == sorted(firsts)
    assert all(first <= last for first, last in DEFAULT_IGNORABLE)
    assert all(
        last < following for (_, last), (following, _) in itertools.pairwise(DEFAULT_IGNORABLE)
    )
    kinds = {
        unicodedata.category(chr(code))
        for first, last in DEFAULT_IGNORABLE
        for code in range(first, last + 1)
    }
    assert kinds <= {"Cf", "Mn", "Lo", "Cn"}, kinds


@given(st.characters(categories=["Cf", "Cc", "Mn", "Me", "Zl", "Zp"]))
def test_format_control_combining_and_separator_characters_show_nothing(char: str) -> None:
    assert shows_nothing(char) and not readable(char)


@given(st.characters(categories=["L", "N", "P", "S"]).filter(lambda c: not ignorable(c)))
def test_letters_digits_punctuation_and_symbols_show(char: str) -> None:
    assert readable(char) or char in "\u2800\U0001d159"


@given(
    words=st.lists(st.text(st.characters(categories=["L", "N"]), min_size=1), min_size=1),
    hidden=st.lists(st.sampled_from(INVISIBLE), min_size=1),
)
def test_invisible_characters_between_words_are_dropped_and_the_words_kept(
    words: list[str], hidden: list[str]
) -> None:
    said = "".join(w + hidden[i % len(hidden)] for i, w in enumerate(words))
    kept = visible(said)
    assert readable(kept)
    assert not [c for c in kept if ignorable(c) or unicodedata.category(c) == "Cf"]


def test_an_accent_on_a_letter_is_kept_and_alone_it_is_nothing() -> None:
    assert visible("cafe\u0301 ") == "cafe\u0301"
    assert visible("\u0301\u0302\u0303") == ""
    assert visible("\u2800 \u3164") == ""  # blank braille, Hangul filler
    assert visible("\U0001d159\U0001d159") == ""  # the musical null notehead: no glyph
    assert visible(" a\u2800b ") == "a b"
