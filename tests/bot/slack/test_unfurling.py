"""The bot's posts that carry people's words preview no page they link to, as reproduced: its
thread replies quoting a person's link left Slack's unfurling at its default (a preview card
of ``https://evil.example/login``, titled as the page likes, under the bot's name). Every
``chat.postMessage`` and every ``response_url`` message says ``unfurl_links`` and
``unfurl_media`` false, checked as Slack's API receives them from slack_sdk and Bolt.
(``chat.postEphemeral`` and ``chat.update`` take neither in Slack's reference.)"""

from __future__ import annotations

from typing import Any

from bot.proposals.refs import Shown
from bot.slack.closing import SlackCloser, bot_client
from bot.slack.direct import Owner
from core.state.actor import Actor, ActorKind
from tests.bot.slack.rig import CHANNEL, TEAM, SlackBot, mention, message
from tests.servers.slack_api import SlackServer

LINKED = "what if we used https://evil.example/login for the sign-in page"


def unfurls_nothing(fields: dict[str, Any]) -> bool:
    return fields.get("unfurl_links") is False and fields.get("unfurl_media") is False


def test_a_reply_and_what_comes_after_a_click_preview_no_link(
    bot: SlackBot, slack_api: SlackServer
) -> None:
    root = mention(LINKED)
    bot.event(root)
    [reply] = bot.replies()
    assert "https://evil.example/login" in reply["text"]
    bot.click(reply, "ConfirmCurrent")
    bot.listeners.idle()
    posts = slack_api.calls_to("chat.postMessage")
    assert len(posts) == 2 and posts[1].fields["text"].startswith("What next?")
    assert all(unfurls_nothing(post.fields) for post in posts), [p.fields for p in posts]


def test_a_click_on_an_ephemeral_message_replaces_it_without_a_preview(
    bot: SlackBot, slack_api: SlackServer
) -> None:
    root = mention(LINKED)
    bot.event(root)
    [first] = bot.replies()
    bot.event(message("make it https://evil.example/login?v=2", thread_ts=root["ts"]))
    bot.replies(2)
    bot.click(first, "ConfirmCurrent")  # stale: the notice, to the clicker, has the current
    [notice] = bot.ephemerals()
    notice_message = {"ts": "1700000099.000100", "thread_ts": root["ts"], **notice}
    bot.click(notice_message, "ConfirmCurrent", ephemeral=True)
    [replaced] = slack_api.wait_until(lambda: slack_api.responses)
    assert replaced["replace_original"] is True and "evil.example" in replaced["text"]
    assert unfurls_nothing(replaced)


def test_slash_command_answers_preview_no_link(bot: SlackBot, slack_api: SlackServer) -> None:
    bot.event(mention(LINKED))
    bot.replies()
    shown = bot.command("show")
    assert "evil.example" in shown["text"] and unfurls_nothing(shown)
    assert unfurls_nothing(bot.command("pending"))


def test_what_the_worker_tells_people_on_slack_previews_no_link(slack_api: SlackServer) -> None:
    """The requester told in the thread, a post to a channel, a direct message."""
    slack_api.people.add("U0ALICE")
    closer = SlackCloser(bot_client(slack_api.token, slack_api.api_url), Owner(TEAM, None))
    shown = Shown(platform="slack", channel=CHANNEL, message="1700000000.000100", team=TEAM)
    alice = Actor(kind=ActorKind.USER, id="U0ALICE", platform="slack")
    said = "Applied: decision.login = https://evil.example/login"
    assert closer.tell(shown, alice, said)
    assert closer.post(CHANNEL, None, ["U0ALICE"], said)
    assert closer.dm(shown, alice, said)
    posts = slack_api.calls_to("chat.postMessage")
    assert len(posts) == 3 and all("evil.example" in post.fields["text"] for post in posts)
    assert all(unfurls_nothing(post.fields) for post in posts), [p.fields for p in posts]
