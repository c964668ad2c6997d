"""People's words as Discord text (``connectors.discord_markdown``), read as Discord's client
reads them (``tests.servers.discord_markdown``): shown as typed, no markup rendered, no link
whose text differs from its address. And why discord.py's ``escape_markdown`` is not it."""

from __future__ import annotations

import discord.utils
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from connectors.discord_markdown import LONGEST_LINK, code_block, cut, escape
from tests.servers.discord_markdown import read, unescaped_brackets

PHISHING = "[Sign in to Acme Bank](https://evil.example/login)"

# the pieces of Discord's markdown, and what sits next to them, to be strung together
PIECES = [
    "[",
    "]",
    "(",
    ")",
    "](",
    "<",
    ">",
    "https://",
    "http://evil.example/",
    "steam://",
    "evil.example",
    "\\",
    "*",
    "**",
    "_",
    "__",
    "~~",
    "||",
    "`",
    "```",
    "#",
    "# ",
    "-# ",
    "- ",
    "+ ",
    "1. ",
    "> ",
    ">>> ",
    "@everyone",
    "@here",
    "<@123456789012345678>",
    "<#123456789012345678>",
    "<:wave:123456789012345678>",
    "<t:1700000000:R>",
    "</deliberate:123456789012345678>",
    ":",
    ".",
    "\n",
    " ",
    "\u200b",
    "a",
]
MARKDOWNISH = st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=30).map("".join)


def shows_as_typed(said: str, longest_link: int = LONGEST_LINK) -> None:
    """What Discord shows of ``escape(said)``: ``said`` (but for the zero-width space that
    escape_mentions puts after an ``@``), with no markup, and each link showing its own
    address, one that ``said`` holds."""
    escaped = escape(said, longest_link)
    reading = read(escaped)
    assert reading.markup == [], (said, escaped)
    assert reading.text.replace("@\u200b", "@") == said.replace("@\u200b", "@"), escaped
    assert unescaped_brackets(escaped) == [], escaped
    for shows, goes_to in reading.links:
        assert shows == goes_to and goes_to in said


@settings(max_examples=500)
@given(st.text(max_size=300) | MARKDOWNISH)
@example(PHISHING)
@example("[a](https://x.example) and [Sign in](https://evil.example/login)")
@example("https://a.example/[Sign](https://evil.example/login)")
@example("https://a.example/x<t:1700000000:R>")
@example("steam://x[Acme](https://evil.example/login)")
@example("<a:/[Acme](https://evil.example/login)>")
def test_whatever_a_person_writes_discord_shows_as_they_wrote_it(said: str) -> None:
    shows_as_typed(said)


@pytest.mark.parametrize(
    ("said", "sent"),
    [
        (PHISHING, "\\[Sign in to Acme Bank\\](<https://evil.example/login)>"),
        ("[Acme](<https://evil.example>)", "\\[Acme\\](\\<<https://evil.example>\\>)"),
        (">>> all of this quoted", "\\>\\>\\> all of this quoted"),
        ("# Approved by the board", "\\# Approved by the board"),
        ("-# mode: decided", "\\-\\# mode: decided"),
        ("||hidden||", "\\|\\|hidden\\|\\|"),
        ("1. first", "1\\. first"),
        ("- point-in-time\n+ C#", "\\- point-in-time\n\\+ C\\#"),
        ("ends in 1.", "ends in 1\\."),
        (". after a number", "\\. after a number"),
        ("**bold** _it_ ~~gone~~ `code`", "\\*\\*bold\\*\\* \\_it\\_ \\~\\~gone\\~\\~ \\`code\\`"),
        ("<t:1700000000:R> <:wave:1>", "\\<t:1700000000:R\\> \\<:wave:1\\>"),
        ("@everyone <@123456789012345678>", "@\u200beveryone \\<@\u200b123456789012345678\\>"),
        ("see https://example.com/a_b.", "see <https://example.com/a_b>."),
        ("C:\\temp", "C:\\\\temp"),
    ],
)
def test_each_shape_of_discords_markdown_is_escaped_as_discord_documents(
    said: str, sent: str
) -> None:
    assert escape(said) == sent
    shows_as_typed(said)


def test_discord_pys_escape_markdown_leaves_a_second_masked_link_live() -> None:
    """Why the library's escape is not used: one backslash before the first ``[`` of a line,
    and the rest of the line (a second link, its bold) left alone."""
    said = "[a](https://x.example) and **[Sign in](https://evil.example/login)**"
    theirs = read(discord.utils.escape_markdown(said))
    assert "[Sign in](https://evil.example/login)" in theirs.markup
    assert read(escape(said)).markup == []


@given(MARKDOWNISH, st.integers(min_value=2, max_value=60))
def test_a_long_text_is_cut_where_neither_part_changes_meaning(said: str, limit: int) -> None:
    """Cut where ``cut`` says, each part read alone shows its share of the text, and no
    markup: no escape parted from its character, no link cut (one too long for a part is
    text), no part that starts a quote."""
    escaped = escape(said, longest_link=limit - 2)
    parts, rest = [], escaped
    while len(rest) > limit:
        at = cut(rest, limit)
        assert 1 <= at <= limit
        parts.append(rest[:at])
        rest = rest[at:]
    parts.append(rest)
    readings = [read(part) for part in parts]
    assert all(reading.markup == [] for reading in readings), parts
    assert "".join(r.text for r in readings) == read(escaped).text, parts
    assert [link for r in readings for link in r.links] == read(escaped).links


@given(st.text(min_size=1, max_size=20), st.integers(min_value=0, max_value=40))
def test_a_link_too_long_for_a_message_is_text(word: str, size: int) -> None:
    said = f"https://example.com/{'x' * size}[a](https://evil.example/{word})"
    escaped = escape(said, longest_link=25)
    assert all(len(goes_to) <= 25 for _, goes_to in read(escaped).links)
    shows_as_typed(said, longest_link=25)


@given(
    st.lists(st.sampled_from(["`", "``", "```", "````", "\n", *PIECES]), max_size=40).map("".join)
)
@example("````[Sign in to Acme Bank](https://evil.example/login)")
def test_a_code_block_holds_whatever_it_is_given(said: str) -> None:
    """One block, all of ``said`` in it as it was (zero-width spaces aside): however its
    backticks run, none of them ends the block early and leaves the rest to be read."""
    shown = code_block(said, 2000)
    reading = read(shown)
    assert reading.markup == ["```"] and reading.links == [], (said, reading)
    assert reading.code == ["\n" + shown[4:-4] + "\n"]
    assert shown[4:-4].replace("\u200b", "") == said.replace("\u200b", "")


@given(st.text(alphabet="`a\n", max_size=300), st.integers(min_value=20, max_value=200))
def test_a_code_block_too_long_is_cut_to_its_limit(said: str, limit: int) -> None:
    shown = code_block(said, limit)
    assert len(shown) <= limit and read(shown).markup == ["```"], shown
