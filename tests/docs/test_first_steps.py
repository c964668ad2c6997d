"""The ten-minute paths of docs/slack.md and docs/discord.md, held to the code where they
cannot be run offline: Discord's invite link asks for the scopes and the permissions the bot
uses (decoded by discord.py), and the privileged intent the page says to switch on is the
one the client asks for."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import discord

from bot.discord.client import intents
from tests.docs.console_blocks import ROOT

DISCORD = (ROOT / "docs" / "discord.md").read_text(encoding="utf-8")


def test_the_invite_link_asks_for_what_the_bot_uses() -> None:
    links = set(re.findall(r"https://discord\.com/oauth2/authorize\?\S+", DISCORD))
    assert len(links) == 1, links  # one link, the same wherever the page gives it
    query = parse_qs(urlsplit(links.pop()).query)
    assert query["scope"] == ["bot applications.commands"]
    granted = {name for name, on in discord.Permissions(int(query["permissions"][0])) if on}
    # View Channels, Send Messages, Send Messages in Threads, Read Message History
    assert granted == {
        "read_messages",
        "send_messages",
        "send_messages_in_threads",
        "read_message_history",
    }


def test_the_privileged_intent_the_page_names_is_the_one_the_client_asks_for() -> None:
    asked = intents()
    privileged = {"message_content", "members", "presences"}
    assert {name for name in privileged if getattr(asked, name)} == {"message_content"}
    assert "**Message Content Intent**" in DISCORD
