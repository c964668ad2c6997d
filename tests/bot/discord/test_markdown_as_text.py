"""Text is text on Discord, as reproduced: a candidate ``[Sign in to Acme Bank](https://evil.
example/login)`` was posted as a live masked link, in the bot's reply and in the "What next?"
quote under the committed message (mentions were neutralised; markdown was not). Now people's
words and the model's reach Discord escaped as Discord documents it (``\\[``, ``\\>``,
``\\#``...), read here as Discord's client reads them (``tests.servers.discord_markdown``):
as typed, with no markup, and no link whose text is not its own address. Through discord.py,
the local Discord API and, for multi-line replies, a scripted model."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.app import App
from bot.discord.closing import DiscordCloser
from bot.discord.render import MAX_CONTENT, render
from bot.proposals.refs import Shown
from core.deliberation.view import View, ViewKind
from core.llm.chat import ChatModel
from core.state.actor import Actor, ActorKind
from tests.bot.discord import payloads
from tests.bot.discord.payloads import ALICE, CHANNEL, GUILD, SAM
from tests.bot.discord.rig import DiscordBot
from tests.bot.discord.test_parts import SESSION, button
from tests.connectors.test_discord_markdown import MARKDOWNISH
from tests.model_script import kind, label, output
from tests.openai_server import OpenAIServer, Reply
from tests.servers.discord_api import DiscordServer
from tests.servers.discord_markdown import read

PHISHING = "[Sign in to Acme Bank](https://evil.example/login)"
# the model's reply and candidate, as a prompt could make them: every shape at a line's start
REPLY = "# Approved\n>>> the board said yes\n-# mode: decided · beat: none\n" + PHISHING
CANDIDATE = (
    "use postgres\n"
    "[Acme](<https://evil.example/2>)\n"
    ">>> quoted\n"
    "# Big header\n"
    "-# subtext\n"
    "- a list\n"
    "1. numbered\n"
    "||spoiler|| **bold** __under__ ~~gone~~ `code` <t:1700000000:R> <:wave:123456789012345678>"
)


def honest_links(content: str) -> None:
    """No link in ``content`` shows anything but its own address."""
    for shows, goes_to in read(content).links:
        assert shows == goes_to, content


def own_lines(content: str) -> str:
    """The message without the lines the bot writes under it (mode, beats, deadlines)."""
    return content.split("\n-# ", 1)[0]


def unquoted(lines: list[str]) -> str:
    return "\n".join(line.removeprefix("> ") for line in lines)


def test_a_masked_link_candidate_is_text_in_the_reply_and_under_what_next(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    bot.say(PHISHING)
    reply = discord_api.public()[-1]
    shown = read(own_lines(reply["content"]))
    assert shown.markup == [] and shown.text == f"Candidate: {PHISHING}"
    honest_links(reply["content"])
    bot.click(reply, "ConfirmCurrent", user=SAM)
    [record] = team_app.log.latest(5)
    assert record.mutation.value == PHISHING  # committed as typed: only the display escapes
    closed = discord_api.message(reply["id"])
    honest_links(closed["content"])
    assert PHISHING in read(closed["content"]).text
    next_steps = discord_api.public()[-1]
    assert next_steps["content"].startswith("What next?\n> ")
    quote = own_lines(next_steps["content"]).splitlines()[1:]
    assert read(unquoted(quote)).markup == [] and unquoted(quote) != PHISHING
    assert read(unquoted(quote)).text == PHISHING
    honest_links(next_steps["content"])


@pytest.mark.parametrize(
    "said",
    [
        "what if we used [postgres](<https://evil.example/pg>) and [docs](https://x.example)",
        "what if we used ||postgres|| with **bold** claims <t:1700000000:R>",
        "what if we used @everyone <@123456789012345678> <#123456789012345678>",
    ],
)
def test_a_members_markdown_reaches_discord_as_they_typed_it(
    bot: DiscordBot, discord_api: DiscordServer, said: str
) -> None:
    bot.say(said)
    reply = discord_api.public()[-1]
    shown = read(own_lines(reply["content"]))
    assert shown.markup == [], reply["content"]
    assert shown.text.replace("@\u200b", "@") == f"Candidate: {said}"
    honest_links(reply["content"])
    assert reply["allowed_mentions"] == {"parse": []}


def scripted(request: dict[str, Any]) -> Reply:
    if kind(request) == "classify":
        return label("brainstorm")
    return output(REPLY, CANDIDATE)


def test_a_models_reply_and_candidate_start_no_header_quote_or_subtext(
    team_app: App, discord_api: DiscordServer, openai_server: OpenAIServer
) -> None:
    """Every shape that needs a line's start, at one: the reply's lines and the quoted
    candidate's read as typed, and the only subtext is the bot's own mode line."""
    openai_server.answer_with = scripted
    client = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
    bot = DiscordBot(team_app, discord_api, model=ChatModel(client, "m", timeout_sec=10))
    try:
        bot.say("ideas for the database?")
        reply = discord_api.public()[-1]
        lines = own_lines(reply["content"]).splitlines()
        quoted = [line for line in lines if line.startswith("> ")]
        said = [line for line in lines if not line.startswith("> ")]
        assert read("\n".join(said)).markup == [] and read("\n".join(said)).text == REPLY
        assert read(unquoted(quoted)).markup == [] and read(unquoted(quoted)).text == CANDIDATE
        assert [line for line in reply["content"].splitlines() if line.startswith("-# ")] == [
            line for line in reply["content"].splitlines() if line.startswith("-# mode: ")
        ]
        honest_links(reply["content"])
        assert payloads.custom_id_of(reply, "ConfirmCurrent")
    finally:
        bot.close()


def test_what_the_worker_tells_people_on_discord_is_text(discord_api: DiscordServer) -> None:
    """The requester told of a change (in the thread, by a direct message) and a post to a
    channel: their words quoted in it show as typed (discord.py's escape_markdown, used
    here before, left the second link of a line live)."""
    discord_api.people.add(GUILD, ALICE)
    closer = DiscordCloser(discord_api.token, discord_api.api_url, timeout=5)
    shown = Shown(platform="discord", channel=CHANNEL, message="1", team=GUILD)
    alice = Actor(kind=ActorKind.USER, id=ALICE, platform="discord")
    said = f"Applied: [decision.bank](https://x.example/d) = {PHISHING} ||>>> # really||"
    assert closer.tell(shown, alice, said)
    assert closer.post(CHANNEL, None, [ALICE], said)
    assert closer.dm(shown, alice, said)
    told, posted = [m for m in discord_api.public() if m["channel_id"] == CHANNEL]
    [direct] = discord_api.direct(ALICE)
    for message, prefix in ((told, f"<@{ALICE}> "), (posted, f"<@{ALICE}> "), (direct, "")):
        text = message["content"].removeprefix(prefix)
        if message is direct:
            text = text.rsplit(" (https://discord.com/channels/", 1)[0]
        assert read(text).markup == [] and read(text).text == said, message["content"]
        honest_links(message["content"])


# long lines of markdown, so that a message is cut inside a line as well as between lines
LONG = st.lists(MARKDOWNISH.map(lambda piece: piece * 40), max_size=6).map("\n".join)


@settings(max_examples=60, deadline=None)
@given(text=LONG, candidate=MARKDOWNISH, nudge=MARKDOWNISH)
def test_a_view_of_any_words_renders_no_markup_of_theirs(
    text: str, candidate: str, nudge: str
) -> None:
    """Each message read alone (Discord shows each on its own): the only markup is the
    bot's (the nudge's italics, the quote's "> ", the mode line), and no link shows anything
    but its own address."""
    shown = View(
        session_id=SESSION,
        correlation_id="c1",
        kind=ViewKind.REPLY,
        text=text,
        buttons=[button()],
        nudge=nudge or None,
        candidate={"id": "c1", "text": candidate or "x", "version": 1},  # type: ignore[arg-type]
    )
    for message in render(shown):
        assert len(message.content) <= MAX_CONTENT
        honest_links(message.content)
        for line in message.content.splitlines():
            if line.startswith("-# mode: "):
                continue
            if line.startswith("*") and line.endswith("*") and len(line) > 1:
                line = line[1:-1]  # the nudge, in italics
            markup = read(line.removeprefix("> ")).markup
            assert markup == [], (line, message.content[:200])
