"""A message's content as Discord's client reads it, as far as the tests need: the text it
shows, the links in it (what each shows, where each goes) and the markup it would render.
After Discord's documented markdown:

- a backslash before a character that is not a letter, a digit or a blank shows that
  character (``\\*`` shows ``*``, ``\\\\`` shows ``\\``); anywhere else it shows itself;
- ``<scheme:/…>`` shows the address without its brackets, a link with no preview;
- a link written out (``https://…``, ``steam://…``) is a link as typed, to the last character
  that may end one; a backslash does not undo it, and one inside it shows;
- ``[text](url)`` and ``[text](<url>)`` show ``text`` and go to ``url`` (a masked link);
- ``<@id>``, ``<@!id>``, ``<@&id>``, ``<#id>``, ``<:name:id>``, ``<a:name:id>``, ``<t:…>``,
  ``</name:id>``, ``<id:…>``, ``@everyone`` and ``@here`` are mentions, channels, emoji,
  timestamps and commands;
- a code block, from three backticks to the next three wherever they stand (a line's middle
  too): what it holds shows as it is, with no markup nor link, and what follows its end is
  read as any text;
- at a line's start: ``#``, ``##``, ``###`` (headers), ``-#`` (subtext), ``>`` and ``>>>``
  (quotes), ``-``, ``*``, ``+`` and ``1.`` (lists); anywhere: ``*``, ``_``, ``~``, ``|``
  and a backtick (bold, italics, underline, strikethrough, spoilers, code).

Strict on purpose: an unescaped markup character outside a link counts as markup even where
Discord would leave it alone (a lone ``*``), so content with no markup shows as plain text.

    reading = read(message["content"])
    assert reading.markup == [] and reading.text == said
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Reading", "read", "unescaped_brackets"]

_AUTOLINK = re.compile(r"<([^: >]+:/[^ >]+)>")
_LINK = re.compile(r"(?:https?|steam)://[^\s<]+[^<.,:;\"'\]\s]")
_MASKED = re.compile(r"\[((?:[^\[\]\\]|\\.)*)\]\(\s*<?([^\s>)]+)>?\s*\)")
_ANGLE = re.compile(
    r"<(?:@[!&]?[0-9]+|#[0-9]+|a?:\w+:[0-9]+|t:-?[0-9]+(?::[tTdDfFR])?|/[\w -]+:[0-9]+|id:\w+)>"
)
_MENTION = re.compile(r"@(?:everyone|here)")
_BLOCK = re.compile(r"[ \t]*(?:#{1,3} |-# |>>> |> |[-*+] |[0-9]+\. )")
_INLINE = frozenset("*_~|`")
_PLAIN = re.compile(r"[0-9A-Za-z\s]")


@dataclass
class Reading:
    text: str = ""
    # (shows, goes to): a masked link's are its text and its address (and it is markup)
    links: list[tuple[str, str]] = field(default_factory=list)
    markup: list[str] = field(default_factory=list)
    code: list[str] = field(default_factory=list)  # what each code block holds


def read(content: str) -> Reading:
    reading, shown, at, line_start = Reading(), [], 0, True
    while at < len(content):
        char = content[at]
        if line_start and (block := _BLOCK.match(content, at)):
            reading.markup.append(block.group().strip())
        fence = content.find("```", at + 3) if content.startswith("```", at) else -1
        if fence >= 0:  # a code block (markup), to the next fence
            reading.markup.append("```")
            reading.code.append(content[at + 3 : fence])
            shown.append(content[at + 3 : fence])
            line_start, at = False, fence + 3
            continue
        line_start = char == "\n"
        if char == "\\" and at + 1 < len(content) and not _PLAIN.match(content[at + 1]):
            shown.append(content[at + 1])
            at += 2
            continue
        found = _one_of(content, at)
        if found is not None:
            kind, match = found
            if kind == "link":
                address = match.group(1) if match.group().startswith("<") else match.group()
                reading.links.append((address, address))
                shown.append(address)
            else:
                reading.markup.append(match.group())
                shown.append(match.group())
                if match.re is _MASKED:
                    reading.links.append((match.group(1), match.group(2)))
            at = match.end()
            continue
        if char in _INLINE or char == "[":
            reading.markup.append(char)
        shown.append(char)
        at += 1
    reading.text = "".join(shown)
    return reading


def _one_of(content: str, at: int) -> tuple[str, re.Match[str]] | None:
    """What starts at ``at``: a link (``<…>`` or written out), or markup that is more than
    one character (a masked link, a mention, a timestamp...)."""
    for kind, pattern in (
        ("link", _AUTOLINK),
        ("markup", _ANGLE),
        ("link", _LINK),
        ("markup", _MASKED),
        ("markup", _MENTION),
    ):
        match = pattern.match(content, at)
        if match is not None:
            return kind, match
    return None


def unescaped_brackets(content: str) -> list[int]:
    """Where a ``[`` stands with no escaping backslash before it (where a masked link
    could start)."""
    return [m.end() - 1 for m in re.finditer(r"(?<!\\)(?:\\\\)*\[", content)]
