"""A proposal nobody decided is escalated once, ``approval.escalate.after_sec`` after it was
made, by the worker's sweep (``Escalations``, with the bot token from the environment): one
message in the escalation channel, and the reviewers mentioned in its thread. Not before the
delay, not after a decision, once with two workers; a secret key's value never shown; an
empty channel variable posts to no channel. The model proposes ``scene.name = BRB`` for
U0ALICE, whose mention started the thread."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from bot.app import App, build_app
from bot.cli.closers import closers_from_env
from bot.proposals.deadlines import deadlines_of
from bot.proposals.escalation import Escalations, escalated_at
from core.gateway.outcome import Pending, Proposal, ProposalStatus
from tests.bot.slack.conftest import config_with_roles
from tests.bot.slack.rig import CHANNEL, SlackBot, message
from tests.bot.slack.test_lifecycle import proposal_id, proposed, proposing_bot
from tests.factories import mutation
from tests.openai_server import OpenAIServer
from tests.servers.slack_api import SlackServer

ESCALATION_CHANNEL = "C0ESC"
ESCALATE = (
    "      approval:\n"
    "        escalate:\n"
    "          after_sec: 3600\n"
    '          channel: "${DELIBERATE_ESCALATION_CHANNEL:-}"\n'
    '          reviewers: ["slack:U0SARA", "slack:U0SAM", "discord:1400000000000000002"]\n'
)
SECRET_KEYS = (
    '    - pattern: "secret.*"\n      type: string\n      secret: true\n      writers: [user]\n'
    + ESCALATE
    + "        people: true\n"  # a person's own write waits (an agent's is refused)
)
HOUR_MS = 3_600_000


def escalating_config(tmp_path: Path, workspace: str) -> Path:
    path = config_with_roles(tmp_path, workspace)
    text = path.read_text(encoding="utf-8")
    old = "    - pattern: scene.name\n"
    assert text.count(old) == 1
    text = text.replace(old, SECRET_KEYS + old + ESCALATE)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def esc_app(
    redis_client: Redis, workspace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> App:
    monkeypatch.setenv("DELIBERATE_ESCALATION_CHANNEL", f"slack:{ESCALATION_CHANNEL}")
    return build_app(workspace, escalating_config(tmp_path, workspace), client=redis_client)


@pytest.fixture
def slack_esc() -> Iterator[SlackServer]:
    with SlackServer(channels={CHANNEL, ESCALATION_CHANNEL}) as server:
        yield server


@pytest.fixture
def bot(esc_app: App, slack_esc: SlackServer, openai_server: OpenAIServer) -> Iterator[SlackBot]:
    with proposing_bot(esc_app, slack_esc, openai_server) as running:
        yield running


def escalations(app: App, slack: SlackServer) -> Escalations:
    return Escalations(app, closers_from_env(slack.env()))


def escalated(slack: SlackServer) -> list[dict[str, Any]]:
    return [m for m in slack.messages if "awaiting a decision since" in str(m.get("text"))]


def made(app: App, pid: str) -> Proposal:
    proposal = app.gateway.proposals.get(pid)
    assert proposal is not None
    return proposal


def test_escalated_once_after_the_delay_to_the_channel_and_the_reviewers(
    bot: SlackBot, esc_app: App, slack_esc: SlackServer
) -> None:
    reply = proposed(bot)
    bot.listeners.idle()
    proposal = made(esc_app, proposal_id(reply))
    assert proposal.escalate is not None and proposal.escalate.after_sec == 3600  # kept in it
    due = proposal.created_at + HOUR_MS
    assert escalations(esc_app, slack_esc).run(now_ms=due - 1) == 0  # not before
    assert escalated(slack_esc) == []
    assert escalations(esc_app, slack_esc).run(now_ms=due) == 1
    posted, in_thread = escalated(slack_esc)
    assert posted["channel"] == ESCALATION_CHANNEL and "thread_ts" not in posted
    assert "set scene.name = BRB" in posted["text"] and "asked by user:U0ALICE" in posted["text"]
    assert "Apply or Discard it" in posted["text"] and "<@" not in posted["text"]
    assert in_thread["channel"] == CHANNEL and in_thread["thread_ts"] == reply["thread_ts"]
    since = datetime.fromtimestamp(proposal.created_at / 1000, UTC)
    assert in_thread["text"] == (  # when it was made, to the second, and an hour ago
        f"<@U0SARA> <@U0SAM> awaiting a decision since {since:%Y-%m-%d %H:%M:%S} UTC: "
        "set scene.name = BRB (asked by user:U0ALICE). Apply or Discard it with its buttons "
        "above, or in the web Inbox."
    )
    assert "1400000000000000002" not in in_thread["text"]  # Discord's reviewer: not here
    # a second sweep, and a second worker, post nothing more
    assert escalations(esc_app, slack_esc).run(now_ms=due + HOUR_MS) == 0
    assert Escalations(esc_app, closers_from_env(slack_esc.env())).run(now_ms=due) == 0
    assert len(escalated(slack_esc)) == 2


def test_not_escalated_once_decided(bot: SlackBot, esc_app: App, slack_esc: SlackServer) -> None:
    reply = proposed(bot)
    bot.click(reply, "ApplyProposal", user="U0BOB")
    slack_esc.wait_until(lambda: slack_esc.updates)
    bot.listeners.idle()
    proposal = made(esc_app, proposal_id(reply))
    assert proposal.status is ProposalStatus.APPLIED
    assert escalations(esc_app, slack_esc).run(now_ms=proposal.created_at + 2 * HOUR_MS) == 0
    assert escalated(slack_esc) == []


def test_a_secret_value_is_never_shown(esc_app: App, slack_esc: SlackServer) -> None:
    value = f"hunter-{secrets.token_hex(8)}"
    pending = esc_app.gateway.propose(mutation("set", "secret.token", value, "user:U0ALICE"))
    assert isinstance(pending, Pending), pending
    proposal = pending.proposal
    assert escalations(esc_app, slack_esc).run(now_ms=proposal.created_at + HOUR_MS) == 1
    [posted] = escalated(slack_esc)  # (never shown in chat: no thread for the reviewers)
    assert "set secret.token = (secret)" in posted["text"]
    assert all(value not in str(m) for m in slack_esc.messages)


def test_an_empty_channel_variable_posts_to_no_channel(
    redis_client: Redis,
    workspace: str,
    tmp_path: Path,
    slack_esc: SlackServer,
    openai_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DELIBERATE_ESCALATION_CHANNEL", raising=False)
    app = build_app(workspace, escalating_config(tmp_path, workspace), client=redis_client)
    with proposing_bot(app, slack_esc, openai_server) as running:
        reply = proposed(running)
        running.listeners.idle()
    proposal = made(app, proposal_id(reply))
    assert proposal.escalate is not None and proposal.escalate.channel == ""
    assert escalations(app, slack_esc).run(now_ms=proposal.created_at + HOUR_MS) == 1
    [in_thread] = escalated(slack_esc)
    assert in_thread["channel"] == CHANNEL and in_thread["thread_ts"] == reply["thread_ts"]


def test_a_forged_escalation_changes_nothing_and_the_real_one_still_comes(
    bot: SlackBot, esc_app: App, slack_esc: SlackServer
) -> None:
    """A member writes the escalation's words into the thread (mentioning the reviewers), and
    clicks a button that claims to escalate (its data the Apply button's): neither counts as
    an escalation, an approval or anything else. The proposal still waits, unescalated, and
    the sweep still escalates it once, when it is due."""
    reply = proposed(bot)
    bot.listeners.idle()
    pid = proposal_id(reply)
    proposal = made(esc_app, pid)
    forged = (
        "<@U0SARA> <@U0SAM> awaiting a decision since 2020-01-01 00:00:00 UTC (3 h ago): "
        "set scene.name = BRB (asked by user:U0ALICE). Apply or Discard it with its buttons "
        "above."
    )
    bot.event(message(forged, user="U0EVE", thread_ts=reply["thread_ts"]))
    bot.listeners.idle()
    for claimed in ("EscalateProposal", "ApplyProposal:0:escalate"):
        bot.click(reply, "ApplyProposal", user="U0EVE", as_action=claimed)
        bot.listeners.idle()
    told = [e["text"] for e in slack_esc.ephemerals if e["user"] == "U0EVE"]
    assert told == [
        "EscalateProposal is not an action this bot knows.",
        "this button is not one Deliberate made; nothing was changed.",
    ]
    assert escalated_at(esc_app.redis, esc_app.store.workspace, pid) is None
    still = made(esc_app, pid)
    assert still.status is ProposalStatus.PENDING and still.approvals == []
    assert esc_app.store.version("scene.name") == 0
    said = deadlines_of(esc_app, still, proposal.created_at + HOUR_MS - 1).phrases()
    assert not any("escalated" in phrase for phrase in said)
    assert escalated(slack_esc) == []  # (the member's own words are not the bot's)
    due = proposal.created_at + HOUR_MS
    assert escalations(esc_app, slack_esc).run(now_ms=due) == 1
    assert escalated_at(esc_app.redis, esc_app.store.workspace, pid) == due
    assert len(escalated(slack_esc)) == 2  # the channel's and the thread's, once
