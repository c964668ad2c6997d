"""Text as a terminal shows it, with nobody's words able to steer the terminal.

What a terminal obeys rather than shows, all taken out by ``clean``:

- escape sequences: CSI (``ESC [`` or the 8-bit ``0x9b``: colours, cursor moves, clearing
  the screen), the strings OSC, DCS, SOS, PM and APC (``ESC ]``, ``ESC P``, ``ESC X``,
  ``ESC ^``, ``ESC _`` or their 8-bit forms, to BEL or ST: a window title, a link, a
  clipboard write), and every other escape (``ESC c`` resets the terminal), whole;
- the C0 controls but newline and tab (carriage return, backspace, vertical tab and form
  feed move the cursor: a line written over, or a fake one), DEL, and the C1 controls
  (U+0080 to U+009F, which some terminals obey as the escapes they stand for);
- the bidirectional overrides and isolates (U+202A to U+202E, U+2066 to U+2069), which
  reorder what follows them on the line.

A string that is opened and not closed on the same line loses its opener alone: what
follows it stays shown, so that a stray ``ESC ]`` cannot hide the rest of a line.

``one_line`` is for a line that carries people's words (a value, a reason, a name): it keeps
them on that line and shows what they hold rather than dropping it, each line break and
each character ``clean`` would take out written as a JSON string writes it (``\\n``,
``\\r``, ``\\u001b``, ``\\u009b``, ``\\u202e``, ``\\u2028``), so that whoever approves a
value sees what it holds; ``visible`` does the same in text of several lines, whose
newlines stay. ``json_safe`` escapes in JSON text what JSON leaves raw and
``clean`` would take out (DEL, the C1 controls, the bidi controls, the line separators), so
that a JSON line reaches the terminal whole and means the same."""

from __future__ import annotations

import re

__all__ = ["BIDI", "clean", "json_safe", "one_line", "visible"]

BIDI = "\u202a-\u202e\u2066-\u2069"  # (a character class's ranges)
_C0 = "\x00-\x08\x0b-\x1f"  # all but tab (09) and newline (0a)
_C1 = "\x80-\x9f"

_SEQUENCE = (
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: parameters, intermediates, a final byte
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)"  # strings
    r"|\x1b[ -/]*[0-~]"  # any other escape: intermediates, a final byte
)
_ANY = re.compile(rf"{_SEQUENCE}|[{_C0}\x7f{_C1}{BIDI}]")
# the same, but a colour (SGR: ``ESC [ 1;32 m``) stays: what a palette painted, on text
# cleaned first
_ANY_BUT_COLOUR = re.compile(rf"(?!\x1b\[[0-9;]*m)(?:{_SEQUENCE}|[{_C0}\x7f{_C1}{BIDI}])")
_UNSAFE = re.compile(rf"[{_C0}\x7f{_C1}{BIDI}]")  # a quick look: most text holds none

# what a line of people's words shows as an escape: all ``clean`` takes out, and the breaks
_IN_A_LINE = re.compile(f"[\n{_C0}\x7f{_C1}{BIDI}\u2028\u2029]")
_SHOWN = re.compile(f"[{_C0}\x7f{_C1}{BIDI}]")  # the same, the newlines kept
_SHORT = {"\n": "\\n", "\r": "\\r"}
_JSON_RAW = re.compile(f"[\x7f{_C1}{BIDI}\u2028\u2029]")


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    return _SHORT.get(char) or f"\\u{ord(char):04x}"


def _plain(text: str) -> bool:
    """``text`` holds nothing ``clean`` takes out: printable (no control, format or separator
    character but the space: the quick look) or, failing that, none of those."""
    return text.isprintable() or _UNSAFE.search(text) is None


def clean(text: str, *, colour: bool = False) -> str:
    """``text`` without anything a terminal would obey (see above); ``colour``: but for
    colours (SGR), which only ever come from a palette painting text cleaned already."""
    if _plain(text):
        return text
    return (_ANY_BUT_COLOUR if colour else _ANY).sub("", text)


def one_line(text: str) -> str:
    """``text`` on one line, each line break and control character in it shown as its
    escape (a tab stays)."""
    return text if text.isprintable() else _IN_A_LINE.sub(_escape, text)


def visible(text: str) -> str:
    """``text``, of one line or several, each control character in it shown as its escape (a
    newline and a tab stay)."""
    return text if _plain(text) else _SHOWN.sub(_escape, text)


def json_safe(json_text: str) -> str:
    """JSON text (``json.dumps``'s, which escapes the C0 controls alone when it keeps
    non-ASCII text) with DEL, the C1 and bidi controls and the line separators escaped as
    ``\\uXXXX`` too: outside its strings JSON holds none of them, so it means the same."""
    return json_text if json_text.isprintable() else _JSON_RAW.sub(_escape, json_text)
