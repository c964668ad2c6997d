"""Discard on Slack takes the right to apply, with the payloads Slack documents: the model's
proposal of ``stream.state`` (protected; two approvals) that a moderator approved is not
our member's to discard, nor a Slack Connect guest's, nor a person's of a team the bot does
not serve; each is told why (no value), and the approval stands. A moderator by a tenant's
user-group binding discards it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import openai
import pytest
from redis import Redis

from bot.app import App, build_app
from core.gateway.outcome import Proposal, ProposalStatus
from core.llm.chat import ChatModel
from tests.bot.slack.conftest import config_with_roles, team_tenants
from tests.bot.slack.rig import CHANNEL, TEAM, SlackBot, button, mention, view_submission
from tests.conftest import delete_workspace
from tests.model_script import proposing
from tests.openai_server import OpenAIServer
from tests.reads import footprints, written
from tests.servers.slack_api import SlackServer
from tests.team_config import team_config

KEY = "stream.state"
EXTERNAL = "T0EXTERNAL"  # another organisation, in a channel shared with ours
UNSERVED = "T0UNSERVED"  # a team the bot was never set up for
OTHER = "T0OTHER"  # a second tenant, served in a workspace of its own
REFUSED = (
    f"{KEY} is protected: only a moderator or an admin may discard a proposal to change it; "
    "nothing was changed"
)


@pytest.fixture
def guarded(redis_client: Redis, workspace: str, tmp_path: Path) -> App:
    """Moderators: U0SAM by id, the ``mods`` group (U0MIA) by the tenant's binding;
    ``stream.state`` takes two approvals."""
    path = config_with_roles(tmp_path, workspace)
    rule = f"    - pattern: {KEY}\n"
    text = path.read_text()
    assert text.count(rule) == 1
    path.write_text(text.replace(rule, rule + "      approval: {quorum: 2}\n"))
    return build_app(workspace, path, client=redis_client)


@pytest.fixture
def bot(guarded: App, slack_api: SlackServer, openai_server: OpenAIServer) -> Iterator[SlackBot]:
    openai_server.answer_with = proposing(KEY, "off")
    client = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
    running = SlackBot(guarded, slack_api, ChatModel(client, "m", timeout_sec=5)).start()
    yield running
    running.stop()


def approved_by_a_moderator(bot: SlackBot, shared: bool = False) -> tuple[dict[str, Any], str]:
    """The model's proposal, approved by U0SAM (1 of 2): the message offering it, its id."""
    said = mention("let's end the stream", user_team=TEAM)
    bot.event(said, shared=shared)
    reply = bot.replies()[-1]
    assert button(reply, "ApplyProposal")["text"]["text"] == f"Apply: set {KEY} = off"
    bot.click(reply, "ApplyProposal", user="U0SAM")
    bot.slack.wait_until(lambda: bot.slack.updates)
    bot.listeners.idle()
    pid = str(json.loads(button(reply, "DiscardProposal")["value"])["t"])
    assert [str(a.by) for a in current(bot.app, pid).approvals] == ["moderator:U0SAM"]
    return reply, pid


def current(app: App, pid: str) -> Proposal:
    found = app.gateway.proposals.get(pid)
    assert found is not None
    return found


def untouched(app: App, pid: str) -> None:
    waiting = current(app, pid)
    assert waiting.status is ProposalStatus.PENDING and waiting.reason is None
    assert [str(a.by) for a in waiting.approvals] == ["moderator:U0SAM"]
    assert app.store.get(KEY) is None and len(app.log) == 0


def submit_as(bot: SlackBot, view: dict[str, Any], typed: str, user: str, user_team: str) -> None:
    """The ``view_submission`` of ``view`` by ``user`` of ``user_team``, through our
    installation (a shared channel's partner submits through the host's)."""
    payload = view_submission(view, typed, user, TEAM)
    payload["user"]["team_id"] = user_team
    acked = bot.post(
        urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded"
    )
    assert acked.status_code == 200


def test_our_member_cannot_discard_what_a_moderator_approved(bot: SlackBot, guarded: App) -> None:
    reply, pid = approved_by_a_moderator(bot)
    bot.click(reply, "DiscardProposal", user="U0ALICE")
    [form] = bot.opened()
    bot.submit(form, "I'd rather not", user="U0ALICE")
    [told] = bot.ephemerals()
    assert told["user"] == "U0ALICE" and REFUSED in told["text"]
    bot.listeners.idle()
    untouched(guarded, pid)
    refusals = [r for r in guarded.gateway.decisions.recent() if r["reason"] == "protected"]
    assert [r["actor"] for r in refusals] == ["user:U0ALICE"]
    bot.click(reply, "DiscardProposal", user="U0MIA")  # a moderator by the tenant's binding
    bot.submit(bot.opened(2)[-1], "we stay live", user="U0MIA")
    bot.slack.wait_until(lambda: len(bot.slack.updates) >= 2)
    bot.listeners.idle()
    done = current(guarded, pid)
    assert done.status is ProposalStatus.DISCARDED and str(done.resolved_by) == "moderator:U0MIA"


def test_a_slack_connect_guest_cannot_discard_it(bot: SlackBot, guarded: App) -> None:
    reply, pid = approved_by_a_moderator(bot, shared=True)
    bot.click(reply, "DiscardProposal", user="U0GUEST", user_team=EXTERNAL)
    [form] = bot.opened()
    submit_as(bot, form, "not your stream", "U0GUEST", EXTERNAL)
    [told] = bot.ephemerals()
    assert told["user"] == "U0GUEST"
    assert "guest:U0GUEST is a guest here: guests may talk, not discard proposals" in told["text"]
    bot.listeners.idle()
    untouched(guarded, pid)


def test_a_person_of_a_team_not_served_cannot_discard_it(bot: SlackBot, guarded: App) -> None:
    reply, pid = approved_by_a_moderator(bot)
    bot.click(reply, "DiscardProposal", user="U0EVE", team=UNSERVED)  # their installation
    [told] = bot.ephemerals()
    assert told["user"] == "U0EVE" and "isn't set up for Deliberate" in told["text"]
    bot.click(reply, "DiscardProposal", user="U0ALICE")  # a form our member opened …
    [form] = bot.opened()
    acked = bot.submit(form, "gone", user="U0EVE", team=UNSERVED)  # … sent from theirs
    assert "nothing was changed" in json.dumps(acked.json())
    bot.listeners.idle()
    untouched(guarded, pid)


@pytest.fixture
def two_teams(
    redis_client: Redis, workspace: str, tmp_path: Path, openai_server: OpenAIServer
) -> Iterator[tuple[App, SlackServer]]:
    """OTHER is served too, in a workspace of its own, where U0EVE is a moderator (by the
    tenant's binding); ``stream.state`` takes two approvals in ours."""
    theirs = f"{workspace}-theirs"
    more = (
        f"      - id: {OTHER}\n        workspace: {theirs}\n        roles:\n"
        '          moderator: {members: ["slack:U0EVE"]}\n'
    )
    path = team_config(tmp_path, ["slack:U0SAM"], [], team_tenants(workspace, more))
    rule = f"    - pattern: {KEY}\n"
    path.write_text(path.read_text().replace(rule, rule + "      approval: {quorum: 2}\n"))
    with SlackServer(channels={CHANNEL}) as slack:
        yield build_app(workspace, path, client=redis_client), slack
    delete_workspace(redis_client, theirs)


def test_a_moderator_of_another_team_served_cannot_discard_ours(
    two_teams: tuple[App, SlackServer], openai_server: OpenAIServer, redis_client: Redis
) -> None:
    """A second tenant: their moderator clicks our Discard through their installation (the
    form opens there, in their workspace) and sends it: refused, nothing written in ours."""
    ours, slack = two_teams
    openai_server.answer_with = proposing(KEY, "off")
    client = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
    bot = SlackBot(ours, slack, ChatModel(client, "m", timeout_sec=5)).start()
    try:
        reply, pid = approved_by_a_moderator(bot)
        before = footprints(redis_client, [ours.store.workspace])
        bot.click(reply, "DiscardProposal", user="U0EVE", team=OTHER)
        [form] = bot.opened()
        acked = bot.submit(form, "end it", user="U0EVE", team=OTHER)
        assert "nothing was changed" in json.dumps(acked.json())  # the modal says so
        bot.listeners.idle()
    finally:
        bot.stop()
    untouched(ours, pid)
    assert written(before, footprints(redis_client, [ours.store.workspace])) == set()
