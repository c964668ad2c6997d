"""People's words as Discord text: shown as they were typed, never as markup. Discord reads
markdown in every message a bot sends: masked links (``[text](url)``, ``[text](<url>)``),
headers (``#``), subtext (``-#``), lists (``-``, ``*``, ``+``, ``1.``), block quotes (``>``,
``>>>``), code, spoilers (``||``), bold, italics, underline, strikethrough, and, between
angle brackets, mentions, channels, custom emoji, timestamps (``<t:…>``), commands and links.

Discord's own escape is a backslash before the character, which then shows as itself. So every
character that opens or closes markup gets one (``#``, ``-`` and ``+`` where a header, subtext
or a list could start with them, a ``.`` after a number, which makes a list, and a ``:``
before ``//``, which makes a link, too); mentions get discord.py's zero-width space after the
``@`` (``escape_mentions``). A link written out (``https://…``) is not markdown, and
a backslash does not undo it: inside one, a backslash would only show, and spoil the address.
So it is left as typed and put between Discord's own ``<`` and ``>``, which show nothing,
end the link exactly where it ends here (so no escape after it is taken into it), and stop
Discord from previewing the page; it ends before a ``[`` or a ``>`` (the rest is text), so
no ``[`` that could open a masked link is left unescaped anywhere. A link longer than
``LONGEST_LINK`` is text, escaped as the rest (with its ``:`` before ``//``): it could not be
shown whole in a message of its own, and half a link would leave the other half's markup
live.

discord.py's ``escape_markdown`` is not used: it escapes a masked link by one backslash before
the first ``[`` of the line and leaves the rest of the line alone, so a second link on the
line stays live, and it leaves alone whatever it takes for a link (``<a:/[x](https://…)>``)."""

from __future__ import annotations

import re

__all__ = ["LONGEST_LINK", "code_block", "cut", "escape"]

LONGEST_LINK = 1000  # characters; a Discord message holds 2000

# a link written out, as Discord's client finds one (discord.py's _URL_REGEX copies it)
_LINK = re.compile(r"https?://[^\s<]+[^<.,:;\"'\]\s]")
_LINK_STOPS = re.compile(r"[\[>]")
# each character that opens or closes markup, wherever it stands (a line can start where
# a long one is cut); "#", "-" and "+" where they could start a header, subtext or a list
# (or where the text ends, since a line may follow it: "point-in-time" is left as it is); a
# list's "1."; the ":" of "://"
_MARKUP = re.compile(r"[\\*_~|`>\[\]<]|[#\-+](?=[#\s]|\Z)|:(?=//)|(?<=[0-9])\.(?=\s|\Z)")
_TICK_PAIR = re.compile(r"`(?=`)")  # a backtick with another after it
# a "." that starts the text, before a blank: after a number written before it (a template's
# "1" and a value's ". item") it would make a list
_LEADING_DOT = re.compile(r"\.(?=\s|\Z)")


def escape(text: str, longest_link: int = LONGEST_LINK) -> str:
    """``text`` as Discord shows it once sent: as typed, every link with its own address for
    text, mentioning nobody. discord.py is imported here, on first use: at the top it would
    cost every command that builds the action registry (``deliberate state set``...) the
    import of discord.py and aiohttp, for a step only a Discord rule runs."""
    from discord.utils import escape_mentions

    out, at, start = [], 0, 0
    while (found := _LINK.search(text, start)) is not None:
        link = found.group()
        stop = _LINK_STOPS.search(link)
        if stop is not None:
            link = link[: stop.start()]
        start = found.start() + len(link)
        if len(link) > longest_link:
            continue  # text, escaped with what comes before and after it
        out.append(escape_mentions(_markup(text[at : found.start()])))
        out.append(f"<{link}>")
        at = start
    out.append(escape_mentions(_markup(text[at:])))
    escaped = "".join(out)
    return "\\" + escaped if _LEADING_DOT.match(escaped) else escaped


def _markup(text: str) -> str:
    """Text with no link in it, a backslash before each character of markup."""
    return _MARKUP.sub(r"\\\g<0>", text)


def cut(text: str, limit: int) -> int:
    """Where ``escape``'s text can be cut into two messages at ``limit`` or before: not
    between a backslash and what it escapes, not inside a link's ``<…>`` when the link can
    go whole into the next, and not where the next would start with a ``>`` (a quote)."""
    if len(text) <= limit:
        return len(text)
    at = limit
    opened = text.rfind("<", 0, at)
    while opened > 0 and _escaped(text, opened):
        opened = text.rfind("<", 0, opened)
    if opened > 0 and ">" not in text[opened:at]:
        at = opened  # the link goes whole into the next message
    while at > 1 and (_escaped(text, at) or text[at : at + 1] == ">"):
        at -= 1
    return at


def _escaped(text: str, at: int) -> bool:
    """The character at ``at`` follows an escaping backslash (an odd run of them)."""
    run = len(text[:at]) - len(text[:at].rstrip("\\"))
    return run % 2 == 1


def code_block(text: str, limit: int) -> str:
    """``text`` in a code block of at most ``limit`` characters, shown as it is: a
    zero-width space between every two backticks, so that no run of them closes the block
    (it ends at the next three backticks, wherever they stand: four backticks whose first
    three were spelled apart left the fourth to make three with the next two, and what
    followed was read as markdown); cut, with a "…", where that makes it too long."""
    fence = "```"
    body = _TICK_PAIR.sub("`\u200b", text)
    room = limit - 2 * len(fence) - 2
    if len(body) > room:
        body = body[: room - 2] + "\n…"
    return f"{fence}\n{body}\n{fence}"
