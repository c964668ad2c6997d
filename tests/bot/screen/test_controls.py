"""``bot.screen``: what a terminal would obey is taken out of any text (or shown as its escape
in a line of people's words), whole sequences at a time, and nothing else is touched; a JSON
line escapes the rest and still means the same; the standard streams clean every write."""

from __future__ import annotations

import io
import json
import re
import sys
from typing import TextIO, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.screen import (
    CleanStream,
    clean,
    cleaned,
    colour_stream,
    json_safe,
    one_line,
    underlying,
    visible,
)

# what a terminal obeys rather than shows: C0 but newline and tab, DEL, C1, bidi overrides
OBEYED = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u202a-\u202e\u2066-\u2069]")
BREAKS = re.compile("[\n\r\u2028\u2029]")

# text with a good share of what a terminal obeys, and of the bytes around it
CONTROLS = st.sampled_from(
    [
        *("\x1b", "\x1b[", "\x1b]", "\x1bP", "\x07", "\x9b", "\x9c", "\x9d", "\r", "\n", "\t"),
        *("\x7f", "\u202e", "\u2066", "\u2028", "\x00", "\x08", "\x0b", "\x0c", "[", "]", ";"),
        *("2J", "m"),
    ]
)
TEXT = st.lists(st.one_of(st.text(max_size=8), CONTROLS), max_size=30).map("".join)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[2Jcleared", "cleared"),  # clear the screen
        ("\x1b[1;31mred\x1b[0m", "red"),  # a colour
        ("\x1b]0;a window title\x07after", "after"),  # OSC to BEL
        ("\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x1b\\", "link"),  # a link, OSC 8 to ST
        ("\x1bP1$qm\x1b\\x", "x"),  # DCS to ST
        ("\x9b31mx", "x"),  # the 8-bit CSI
        ("\x9d0;title\x9cy", "y"),  # the 8-bit OSC and ST
        ("a\x1bcb", "ab"),  # ESC c: reset the terminal
        ("a\x1b#8b", "ab"),  # DECALN: fill the screen with E
        ("a\x1b(0b", "ab"),  # line-drawing characters
        ("ok\rFAKE", "okFAKE"),  # a line written over
        ("a\x08\x08b\x0b\x0cc", "abc"),  # backspace, vertical tab, form feed
        ("a\x85b\x7fc", "abc"),  # NEL (a C1 newline), DEL
        ("x\u202eevil\u202c y\u2067z\u2069", "xevil yz"),  # bidi overrides and isolates
        ("open \x1b]0; and the rest", "open 0; and the rest"),  # not closed: the rest stays
        ("lone\x1b", "lone"),
        ("two\nlines\tand a tab", "two\nlines\tand a tab"),
        ("café ☕ ünïcode עברית", "café ☕ ünïcode עברית"),  # text stays text
    ],
)
def test_clean_takes_out_what_a_terminal_obeys(raw: str, shown: str) -> None:
    assert clean(raw) == shown


@given(TEXT)
def test_nothing_clean_leaves_is_obeyed_and_text_without_any_is_left_alone(text: str) -> None:
    done = clean(text)
    assert not OBEYED.search(done)
    assert clean(done) == done
    if not OBEYED.search(text):
        assert done == text


@given(TEXT)
def test_colours_alone_stay_when_asked(text: str) -> None:
    painted = f"\x1b[1;32m{clean(text)}\x1b[0m"
    assert clean(painted, colour=True) == painted
    kept = clean(text, colour=True)
    assert not OBEYED.search(re.sub(r"\x1b\[[0-9;]*m", "", kept))


@given(TEXT)
def test_a_line_of_peoples_words_stays_one_line_and_shows_what_it_holds(text: str) -> None:
    line = one_line(text)
    assert not BREAKS.search(line) and not OBEYED.search(line)
    if not OBEYED.search(text) and not BREAKS.search(text):
        assert line == text
    shown = visible(text)
    assert not OBEYED.search(shown)
    assert shown.count("\n") == text.count("\n")


def test_escapes_are_written_as_a_json_string_writes_them() -> None:
    assert one_line("a\nb\rc\x1b[2J\x9b\u202e\u2028\x7f\td") == (
        "a\\nb\\rc\\u001b[2J\\u009b\\u202e\\u2028\\u007f\td"
    )
    assert visible("a\nb\r\x1b") == "a\nb\\r\\u001b"


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | TEXT,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
        max_leaves=12,
    )
)
def test_json_made_safe_means_the_same_and_holds_nothing_obeyed(data: object) -> None:
    text = json_safe(json.dumps(data, ensure_ascii=False))
    assert json.loads(text) == data
    assert not OBEYED.search(text) and "\n" not in text


def test_the_streams_clean_every_write_and_are_put_back() -> None:
    out, err = io.StringIO(), io.StringIO()
    before = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        with cleaned():
            print("a\x1b[2Jb", "\x9b31mc")
            print("d\x1b]0;t\x07e", file=sys.stderr, flush=True)
            assert underlying(sys.stdout) is out
            print("\x1b[36mf\x1b[0m\x1b[2J", file=colour_stream(sys.stdout))
            sys.stdout.writelines(["g\r", "h\n"])
        assert sys.stdout is out and sys.stderr is err
    finally:
        sys.stdout, sys.stderr = before
    assert out.getvalue() == "ab c\n\x1b[36mf\x1b[0m\ngh\n"
    assert err.getvalue() == "de\n"


def test_a_clean_stream_is_its_streams_in_all_but_writing() -> None:
    inner = io.StringIO()
    stream = cast(TextIO, CleanStream(inner))
    assert stream.write("x\x07") == 2  # what it was given, as a stream counts it
    assert stream.isatty() is False and stream.getvalue() == "x"  # type: ignore[attr-defined]
