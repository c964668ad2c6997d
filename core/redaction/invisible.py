"""Characters that show nothing, and text as it is kept once they are gone.

Python's ``unicodedata`` has the general category of a character but not Unicode's
``Default_Ignorable_Code_Point`` property (characters a renderer draws as nothing when it
does not support them: zero-width and bidi controls, variation selectors, the combining
grapheme joiner, Hangul fillers, tag characters …), so its ranges are written out here, from
the Unicode Character Database's ``DerivedCoreProperties.txt`` (unchanged from Unicode 14.0,
the version of this Python's ``unicodedata``, to 16.0):
https://www.unicode.org/Public/UCD/latest/ucd/DerivedCoreProperties.txt"""

from __future__ import annotations

import bisect
import re
import unicodedata

__all__ = [
    "BLANK_LETTERS",
    "DEFAULT_IGNORABLE",
    "ignorable",
    "readable",
    "shows_nothing",
    "visible",
]

# (first, last) code points of Default_Ignorable_Code_Point, in order
DEFAULT_IGNORABLE: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),  # Cf  soft hyphen
    (0x034F, 0x034F),  # Mn  combining grapheme joiner
    (0x061C, 0x061C),  # Cf  Arabic letter mark
    (0x115F, 0x1160),  # Lo  Hangul choseong and jungseong fillers
    (0x17B4, 0x17B5),  # Mn  Khmer vowels inherent AQ and AA
    (0x180B, 0x180D),  # Mn  Mongolian free variation selectors one to three
    (0x180E, 0x180E),  # Cf  Mongolian vowel separator
    (0x180F, 0x180F),  # Mn  Mongolian free variation selector four
    (0x200B, 0x200F),  # Cf  zero width space, joiners, left-to-right and right-to-left marks
    (0x202A, 0x202E),  # Cf  bidi embeddings and overrides
    (0x2060, 0x2064),  # Cf  word joiner, invisible operators
    (0x2065, 0x2065),  # Cn  (reserved)
    (0x2066, 0x206F),  # Cf  bidi isolates, deprecated format characters
    (0x3164, 0x3164),  # Lo  Hangul filler
    (0xFE00, 0xFE0F),  # Mn  variation selectors 1 to 16
    (0xFEFF, 0xFEFF),  # Cf  zero width no-break space (byte order mark)
    (0xFFA0, 0xFFA0),  # Lo  halfwidth Hangul filler
    (0xFFF0, 0xFFF8),  # Cn  (reserved)
    (0x1BCA0, 0x1BCA3),  # Cf  shorthand format controls
    (0x1D173, 0x1D17A),  # Cf  musical symbol beam and phrase controls
    (0xE0000, 0xE0FFF),  # Cf, Mn, Cn  tags, variation selectors 17 to 256, reserved
)
_FIRSTS = [first for first, _ in DEFAULT_IGNORABLE]

# letters that render as a blank (how Discord users type an "empty" text): the Hangul fillers
# (ignorable too), the blank braille pattern and the musical null notehead (symbols, not
# ignorable, whose glyph is empty)
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\U0001d159")

# general categories that show nothing of their own: controls, format characters,
# surrogates, unassigned code points, line and paragraph separators, combining marks (they
# show only on a letter before them)
_SHOW_NOTHING = frozenset(("Cc", "Cf", "Cs", "Cn", "Zl", "Zp", "Mn", "Mc", "Me"))
_BLANKS = re.compile(r"\s+")


def ignorable(char: str) -> bool:
    """Whether ``char`` has Unicode's Default_Ignorable_Code_Point property."""
    code = ord(char)
    at = bisect.bisect_right(_FIRSTS, code) - 1
    return at >= 0 and code <= DEFAULT_IGNORABLE[at][1]


def shows_nothing(char: str) -> bool:
    """Whether ``char`` alone shows nothing a reader could read: a blank, an ignorable
    character, a control, format or combining character, a blank letter."""
    return (
        char.isspace()
        or char in BLANK_LETTERS
        or unicodedata.category(char) in _SHOW_NOTHING
        or ignorable(char)
    )


def readable(text: str | None) -> bool:
    """Whether ``text`` holds at least one character that shows (a reason made only of
    blanks, zero-width, combining or variation characters is no reason)."""
    return any(not shows_nothing(c) for c in text or "")


def visible(text: str | None) -> str:
    """``text`` as a person's words are kept: without the controls, format and ignorable
    characters (they show nothing, or reorder what does), blank letters as blanks, blanks run
    together; empty when nothing readable is left."""
    kept = "".join(
        " " if c in BLANK_LETTERS else c
        for c in text or ""
        if c.isspace()
        or c in BLANK_LETTERS
        or not (ignorable(c) or unicodedata.category(c) in ("Cc", "Cf", "Cs"))
    )
    kept = _BLANKS.sub(" ", kept).strip()
    return kept if readable(kept) else ""
