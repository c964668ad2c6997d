"""The shapes a secret value takes in text, and what separates its parts there.

A value stands in text as itself, JSON-escaped (ASCII or not), as Python quotes it,
HTML-escaped and URL-encoded (and with any of its characters written as an escape of
another kind: ``core.redaction.decoded``). Its blanks may be run together, doubled, turned
into other blanks or line breaks, or written as escapes (``\\n``, ``\\u00a0``) by whatever
carried it. A value long enough to be worth it (``LONG`` characters, blanks aside) is also
found case-folded, in base64 (standard or URL-safe, of the value or of it JSON-escaped,
alone or inside a longer base64 string at any of the three byte alignments), its bytes in
hexadecimal, and split anywhere by blanks or characters that show nothing (a line wrapped
in the middle of a token)."""

from __future__ import annotations

import base64
import html
import json
import urllib.parse
from collections.abc import Iterator
from enum import Enum
from typing import Any

from core.redaction.skeleton import skeleton

__all__ = ["LONG", "MIN_INSIDE", "Kind", "base64_cores", "forms"]

LONG = 8  # characters (blanks aside): also case-folded, base64 and split anywhere
MIN_INSIDE = 4  # a shorter value is struck out only where it stands as a word of its own


class Kind(Enum):
    """How a form is matched: ``SHORT`` as written, save that any run of separators stands for
    its blanks; ``LONG`` with separators anywhere and letters in either case; ``BASE64`` with
    separators anywhere (wrapped lines), letters as written."""

    SHORT = "short"
    LONG = "long"
    BASE64 = "base64"


def _dumps(value: Any, *, compact: bool = True, ascii_only: bool = False) -> str:
    separators = (",", ":") if compact else None
    return json.dumps(value, separators=separators, ensure_ascii=ascii_only)


def _quoted(text: str) -> set[str]:
    """``text`` and how it stands inside a JSON string (escaped, with or without ``\\u``
    escapes), inside a Python one, in HTML (an error page quoting it) and in a URL (a query
    string echoed back)."""
    html_escaped = html.escape(text)
    return {
        text,
        _dumps(text)[1:-1],
        _dumps(text, ascii_only=True)[1:-1],
        repr(text)[1:-1],
        html_escaped,
        html.escape(text, quote=False),
        html_escaped.replace("&#x27;", "&#39;").replace("&quot;", "&#34;"),
        urllib.parse.quote(text, safe=""),
        urllib.parse.quote_plus(text, safe=""),
    }


def base64_cores(data: bytes) -> set[str]:
    """The base64 of ``data`` (standard and URL-safe) as it stands alone, and, for each of
    the three alignments it can have inside a longer base64 string, the characters that
    ``data`` alone decides (the first and last may mix in a neighbour's bits)."""
    found: set[str] = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        found.add(encode(data).decode("ascii").rstrip("="))
        for shift in range(3):
            encoded = encode(b"\0" * shift + data).decode("ascii")
            first = -(-shift * 8 // 6)  # the first character made of data's bits alone
            last = (shift + len(data)) * 8 // 6  # the last one made of them alone, +1
            found.add(encoded[first:last])
    return {f for f in found if len(f) >= LONG}


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _string_forms(text: str) -> Iterator[tuple[str, Kind]]:
    if len(skeleton(text)) < LONG:
        for form in _quoted(text):
            yield form, Kind.SHORT
        return
    for variant in {text, text.upper(), text.lower(), text.casefold()}:
        for form in _quoted(variant):
            yield form, Kind.LONG
    # base64 of the value, and of it as a JSON body quotes it (a token's payload); its
    # bytes in hexadecimal (a dump of the body), in either case
    for form in {text, _dumps(text)[1:-1], _dumps(text, ascii_only=True)[1:-1]}:
        data = form.encode("utf-8", "surrogatepass")
        for core in base64_cores(data):
            yield core, Kind.BASE64
        yield data.hex(), Kind.LONG


def forms(value: Any) -> set[tuple[str, Kind]]:
    """The ways ``value`` (JSON data) can stand in text: a string as itself (quoted as JSON
    and Python do), anything else as its JSON (compact, or with blanks after commas and
    colons); a list's or an object's leaves each on its own too."""
    found: set[tuple[str, Kind]] = set()
    if value is None:
        return found
    if isinstance(value, str):
        found.update(_string_forms(value))
        return found
    for text in {_dumps(value), _dumps(value, compact=False)}:
        found.update(_string_forms(text) if len(skeleton(text)) >= LONG else [(text, Kind.SHORT)])
    if isinstance(value, dict | list | tuple):
        for leaf in _leaves(value):
            found |= forms(leaf)
    return found
