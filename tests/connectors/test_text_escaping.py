"""Chat text is text on every connector, as reproduced: a member typed ``<!channel>`` and
``<https://evil.example|the signed contract>``, clicked "Use this", and the shipped
``announce_decision`` rule posted it to Slack raw: a live @channel and a disguised link,
sent as the bot. Now the values a rule's template interpolates are escaped by the rules of
the platform it posts to (Slack: ``&amp; &lt; &gt;``; Discord: markdown and mentions),
Slack posts unfurl no link and Discord posts ping nobody, unless the rule's own text says
so. Through the real worker, the real client libraries and the local platform servers."""

from __future__ import annotations

import html
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from redis import Redis

from connectors import discord as discord_connector
from connectors import slack as slack_connector
from rules.templates import render
from tests.connectors.conftest import context, run
from tests.rules.rig import Rig, make_rig
from tests.servers.discord_api import DiscordServer
from tests.servers.discord_markdown import read
from tests.servers.slack_api import SlackServer

MEMBER = "user:U0MEMBER"
SAID = "<!channel> and <https://evil.example|the signed contract> & <@U0BOSS>"
CHANNEL, DISCORD_CHANNEL = "C0DECISIONS", "1234567890"


def shipped_rule(rule_id: str) -> str:
    """The rule as the shipped config has it, as YAML for ``make_rig``."""
    config = yaml.safe_load(files("core.config").joinpath("default.yaml").read_text())
    [rule] = [r for r in config["rules"] if r["id"] == rule_id]
    return yaml.safe_dump([rule], sort_keys=False)


@pytest.fixture
def slack() -> Iterator[SlackServer]:
    with SlackServer(channels={CHANNEL}) as server:
        yield server


@pytest.fixture
def discord() -> Iterator[DiscordServer]:
    with DiscordServer(channels={DISCORD_CHANNEL}) as server:
        yield server


def rig_with(tmp_path: Path, client: Redis, workspace: str, rules: str, env: dict[str, str]) -> Rig:
    return make_rig(tmp_path, client, workspace, rules, env=env)


def test_the_shipped_announcement_posts_a_members_words_as_text(
    tmp_path: Path, server_redis: Redis, workspace: str, slack: SlackServer
) -> None:
    env = {**slack.env(), "DELIBERATE_DECISIONS_CHANNEL": CHANNEL}
    rig = rig_with(tmp_path, server_redis, workspace, shipped_rule("announce_decision"), env)
    rig.commit("set", "decision.launch", SAID, who=MEMBER)  # what "Use this" commits
    rig.work()
    [posted] = slack.messages
    assert posted["text"] == (
        "Decided launch: &lt;!channel&gt; and &lt;https://evil.example|the signed "
        "contract&gt; &amp; &lt;@U0BOSS&gt; (by U0MEMBER)"
    )
    assert "<!channel>" not in posted["text"] and "<https://" not in posted["text"]
    assert html.unescape(posted["text"]) == f"Decided launch: {SAID} (by U0MEMBER)"
    [call] = [c for c in slack.calls if c.method == "chat.postMessage"]
    assert call.fields["unfurl_links"] is False and call.fields["unfurl_media"] is False
    assert call.fields["link_names"] is False


def test_a_mention_the_rules_own_text_writes_still_pings_and_unfurls_when_asked(
    tmp_path: Path, server_redis: Redis, workspace: str, slack: SlackServer
) -> None:
    rules = f"""\
  - id: announce_loudly
    when: {{key: "decision.*"}}
    then:
      - action: slack.postMessage
        args:
          channel: {CHANNEL}
          text: "<!here> decided: {{{{ mutation.value }}}} <https://wiki.example/d|the record>"
          unfurl: true
"""
    rig = rig_with(tmp_path, server_redis, workspace, rules, slack.env())
    rig.commit("set", "decision.launch", SAID, who=MEMBER)
    rig.work()
    [posted] = slack.messages
    assert posted["text"].startswith("<!here> decided: &lt;!channel&gt; and ")
    assert posted["text"].endswith(" <https://wiki.example/d|the record>")
    [call] = [c for c in slack.calls if c.method == "chat.postMessage"]
    assert call.fields["unfurl_links"] is True


def test_a_discord_post_pings_nobody_and_shows_a_members_markdown_as_typed(
    tmp_path: Path, server_redis: Redis, workspace: str, discord: DiscordServer
) -> None:
    rules = f"""\
  - id: tell_discord
    when: {{key: "decision.*"}}
    then:
      - action: discord.sendMessage
        args: {{channel_id: "{DISCORD_CHANNEL}", content: "Decided: {{{{ mutation.value }}}}"}}
  - id: tell_everyone
    when: {{key: "decision.*"}}
    then:
      - action: discord.sendMessage
        args:
          channel_id: "{DISCORD_CHANNEL}"
          content: "@everyone decided"
          mentions: [everyone]
"""
    said = "@everyone see [the signed contract](https://evil.example) <@123456789012345678>"
    rig = rig_with(tmp_path, server_redis, workspace, rules, discord.env())
    rig.commit("set", "decision.launch", said, who=MEMBER)
    rig.work()
    sent = {r.json["content"]: r.json for r in discord.requests if r.json}
    quiet = sent[
        "Decided: @\u200beveryone see \\[the signed contract\\](<https://evil.example)> "
        "\\<@\u200b123456789012345678\\>"
    ]
    assert quiet["allowed_mentions"] == {"parse": []}
    assert read(quiet["content"]).markup == []
    assert sent["@everyone decided"]["allowed_mentions"] == {"parse": ["everyone"]}


def test_a_masked_link_in_a_value_reaches_a_discord_rule_post_as_text(
    tmp_path: Path, server_redis: Redis, workspace: str, discord: DiscordServer
) -> None:
    """A second link on the line got past discord.py's escape_markdown (which escaped the
    first ``[`` of the line alone); the rule's own markdown (bold, its link) is its author's
    and stays."""
    rules = f"""\
  - id: tell_discord
    when: {{key: "decision.*"}}
    then:
      - action: discord.sendMessage
        args:
          channel_id: "{DISCORD_CHANNEL}"
          content: "**Decided**: {{{{ mutation.value }}}} ([record](https://wiki.example/d))"
"""
    said = (
        "[the contract](https://x.example/c) and **[Sign in to Acme Bank]"
        "(https://evil.example/login)** ||[again](<https://evil.example/2>)||"
    )
    rig = rig_with(tmp_path, server_redis, workspace, rules, discord.env())
    rig.commit("set", "decision.launch", said, who=MEMBER)
    rig.work()
    [request] = [r for r in discord.requests if r.json]
    content = request.json["content"]
    assert content.startswith("**Decided**: ") and content.endswith(
        " ([record](https://wiki.example/d))"
    )
    value = content.removeprefix("**Decided**: ").removesuffix(
        " ([record](https://wiki.example/d))"
    )
    shown = read(value)
    assert shown.markup == [] and shown.text == said
    assert all(text == address for text, address in shown.links)
    assert read(content).links[-1] == ("record", "https://wiki.example/d")  # the author's


def test_a_direct_post_pings_nobody_by_default(discord: DiscordServer) -> None:
    args = {"channel_id": DISCORD_CHANNEL, "content": "@everyone hi"}
    run("discord.sendMessage", args, context(discord.env()))
    assert discord.requests[-1].json["allowed_mentions"] == {"parse": []}


@given(st.text(max_size=200))
def test_whatever_a_person_writes_reaches_slack_as_the_text_they_wrote(said: str) -> None:
    """No ``<`` or ``>`` of theirs reaches Slack, where markup starts; unescaped (as Slack
    shows it), it is their words exactly."""
    text = render("Decided: {{ v }}!", {"v": said}, slack_connector.escape)
    assert text.count("<") == text.count(">") == 0
    assert text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") == (
        f"Decided: {said}!"
    )


@given(st.text(max_size=200))
def test_a_templates_own_markup_is_kept_and_only_the_value_is_escaped(said: str) -> None:
    text = render("<!here> {{ v }} <#C0X>", {"v": said}, discord_connector.escape)
    assert text.startswith("<!here> ") and text.endswith(" <#C0X>")
    assert text == f"<!here> {discord_connector.escape(said)} <#C0X>"


@pytest.mark.parametrize(
    "template",
    [
        "{{ v | safe }}",
        "a {{ v | e }}",
        "{% macro m(x) %}{{ x }}{% endmacro %}a {{ m(v) }}",
        "{% set y = v %}a {{ y }}",
        "a {{ '%s' | format(v) }}",
        "a {% for x in [v] %}{{ x }}{% endfor %}",
        "a {{ [v] | join(' ') }}",
        "a {{ {'k': v} }}",
    ],
)
def test_no_filter_macro_or_loop_lets_a_members_markup_through(template: str) -> None:
    """Whatever a template does with people's words, they reach Slack escaped, never raw
    (a macro's output, or an HTML-escaped value, is escaped once more)."""
    text = render(template, {"v": "<!channel>"}, slack_connector.escape)
    assert "<" not in text and ">" not in text and "!channel" in text, text
