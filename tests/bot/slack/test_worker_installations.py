"""The worker of an app that teams install (``SLACK_CLIENT_ID``: no one bot token): each
proposal's messages are closed, and its requester told in the thread and by DM, with the bot
token of the team (or Enterprise Grid org) the proposal was shown in, found in the
installations the OAuth flow stored (``closers_from_env`` with Redis). End to end: teams
install through the install link and Slack's redirect, the bot's own adapter shows the
model's proposal there, and the local Slack server records which token each call carried.
A team that uninstalled, or whose token Slack refuses, is skipped with one log line, and
not asked again at every sweep."""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Iterator
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import openai
import pytest
from redis import Redis
from slack_bolt import App as BoltApp
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk import WebClient

from bot.app import App, build_app
from bot.chat.workspaces import Workspaces
from bot.cli.closers import closers_from_env
from bot.cli.worker import schedule
from bot.proposals.escalation import Escalations
from bot.proposals.expiry import ExpiredMessages
from bot.proposals.refs import Shown, ShownMessages
from bot.proposals.telling import Requesters
from bot.slack.adapter import SlackAdapter
from bot.slack.bolt import build_bolt_app
from bot.slack.oauth import OAuthConfig
from bot.slack.settings import SlackSettings
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import Pending
from core.llm.chat import ChatModel
from core.state.actor import Actor, ActorKind
from tests.bot.slack.oauth_rig import SIGNING_SECRET, OAuthRig, forget, mention
from tests.bot.slack.rig import button
from tests.conftest import delete_workspace
from tests.factories import mutation
from tests.model_script import proposing
from tests.openai_server import OpenAIServer
from tests.rules.rig import make_rig
from tests.servers.slack_api import ApiCall, BotIdentity, SlackServer
from tests.team_config import team_config

SECOND = BotIdentity("T0SECOND", "Second", user_id="U0BOT2", bot_id="B0BOT2")
THIRD = BotIdentity("T0THIRD", "Third", user_id="U0BOT3", bot_id="B0BOT3")
GRID = BotIdentity(
    None, None, "E0GRID", "Grid", user_id="U0BOTG", bot_id="B0BOTG", org_install=True
)
DM_ON = "        policy: {proposals: {tell: {dm: true}}}\n"
ESCALATING = (  # T0SECOND's own: scene.name's proposals escalate to its channel C0ESC
    "        policy:\n"
    "          proposals: {tell: {dm: true}}\n"
    "          keys: [{pattern: scene.name, approval: "
    '{escalate: {after_sec: 3600, channel: "slack:C0ESC"}}}]\n'
)
BOB = Actor(kind=ActorKind.USER, id="U0BOB", platform="slack")


@pytest.fixture
def names(redis_client: Redis) -> Iterator[dict[str, str]]:
    """Each listed team's (and the org's) workspace, unique to the test."""
    found = {unit: f"{unit.lower()}-{uuid.uuid4().hex[:8]}" for unit in ("T0SECOND", "E0GRID")}
    yield found
    for name in found.values():
        delete_workspace(redis_client, name)


@pytest.fixture
def home(redis_client: Redis, workspace: str, tmp_path: Path, names: dict[str, str]) -> App:
    """T0SECOND and the org E0GRID listed, each asking for DMs; T0THIRD installs too."""
    own = {"T0SECOND": ESCALATING, "E0GRID": DM_ON}
    teams = "".join(
        f"      - id: {unit}\n        workspace: {name}\n{own[unit]}"
        for unit, name in names.items()
    )
    tenants = f"  slack:\n    teams:\n{teams}      - T0THIRD\n"
    return build_app(workspace, team_config(tmp_path, [], [], tenants), client=redis_client)


@pytest.fixture
def rig(
    redis_client: Redis, slack: SlackServer, home: App, openai_server: OpenAIServer
) -> Iterator[OAuthRig]:
    """The bot's own Bolt app and adapter, its model proposing ``scene.name = BRB``."""
    env = slack.oauth_env() | {"SLACK_SIGNING_SECRET": SIGNING_SECRET}
    settings = SlackSettings.from_env(env)
    openai_server.answer_with = proposing("scene.name", "BRB")
    client = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
    model = ChatModel(client, "m", timeout_sec=5)

    def build(config: OAuthConfig, oauth: OAuthSettings, listeners: Executor) -> BoltApp:
        adapter = SlackAdapter(Workspaces(home, model=model), settings.web_client())
        return build_bolt_app(adapter, settings, executor=listeners, oauth=oauth)

    running = OAuthRig(redis_client, slack, build=build).start()
    for code, bot in (("c0de-2", SECOND), ("c0de-3", THIRD), ("c0de-g", GRID)):
        slack.add_install_code(code, bot)
        running.install(code)
    for person, team in (("U0ALICE", "T0SECOND"), ("U0BOB", "T0SECOND"), ("U0EVE", "T0THIRD")):
        slack.people.add(person, team)
    slack.people.add("W0GRACE", "T0GRIDA", enterprise="E0GRID", teams=("T0GRIDA",))
    yield running
    running.stop()
    forget(redis_client, slack.client_id)


def shown_by_the_bot(rig: OAuthRig, team: str, user: str, **org: Any) -> dict[str, Any]:
    """The bot's reply offering the model's proposal, to ``user``'s mention in ``team``."""
    said = mention("let's take a break", team=team, user=user)
    assert rig.event(said, team=team, **org).status_code == 200
    rig.idle()
    [reply] = [m for m in rig.slack.messages if m.get("thread_ts") == said["ts"]]
    assert button(reply, "ApplyProposal")
    return reply


def sweep(app: App, slack: SlackServer, redis: Redis) -> int:
    """The worker's minute, with the app's OAuth credentials (no bot token)."""
    closers = closers_from_env(slack.oauth_env(), redis)
    app.gateway.expire_due()
    told = Requesters(app, closers).run()
    ExpiredMessages(app, closers).run()
    return told


def posts_to(slack: SlackServer, channel: str) -> list[ApiCall]:
    return [c for c in slack.calls_to("chat.postMessage") if c.fields.get("channel") == channel]


def only_pending(app: App) -> str:
    [pid] = ShownMessages(app.redis, app.store.workspace).listed()
    return pid


def test_a_teams_requester_is_told_with_that_teams_token(
    rig: OAuthRig, home: App, names: dict[str, str], redis_client: Redis
) -> None:
    reply = shown_by_the_bot(rig, "T0SECOND", "U0ALICE")
    second = home.for_workspace(names["T0SECOND"], rules=False)
    pid = only_pending(second)
    [kept] = ShownMessages(second.redis, second.store.workspace).of(pid)
    assert (kept.team, kept.enterprise, kept.org_install) == ("T0SECOND", None, False)
    second.gateway.discard_proposal(pid, BOB, "not now")
    assert sweep(second, rig.slack, redis_client) == 1
    tokens = rig.slack.tokens_of("T0SECOND")
    [thread] = [c for c in posts_to(rig.slack, "C0TEAM") if "not now" in str(c.fields["text"])]
    assert thread.fields["thread_ts"] == reply["thread_ts"] and thread.token in tokens
    [dm] = rig.slack.direct("U0ALICE")
    [opened] = rig.slack.calls_to("conversations.open")
    assert dm.token in tokens and opened.token in tokens  # never another team's
    assert "discarded by user:U0BOB" in str(dm.fields["text"])


def test_a_teams_expired_proposal_is_closed_with_that_teams_token(
    rig: OAuthRig, home: App, names: dict[str, str], redis_client: Redis
) -> None:
    second = home.for_workspace(names["T0SECOND"], rules=False)
    gateway = MutationGateway(second.store, second.policy, proposal_expiry_ms=0)
    due = dataclasses.replace(second, gateway=gateway)  # its proposals due at once
    shown_as_the_adapter_keeps_it(due, rig.slack, "T0SECOND")
    before = len(rig.slack.calls)
    assert sweep(due, rig.slack, redis_client) == 1
    [update] = rig.slack.calls_to("chat.update")
    assert update.token in rig.slack.tokens_of("T0SECOND") and "expired at" in str(update.fields)
    assert [c.token for c in rig.slack.direct("U0ALICE")] == [update.token]
    assert {c.token for c in rig.slack.calls[before:]} == {update.token}  # every call
    assert ShownMessages(due.redis, due.store.workspace).listed() == []  # done with


def test_an_org_wide_installs_proposal_is_told_with_the_orgs_token(
    rig: OAuthRig, home: App, names: dict[str, str], redis_client: Redis
) -> None:
    org = {"enterprise": "E0GRID", "org_install": True}
    shown_by_the_bot(rig, "T0GRIDA", "W0GRACE", **org)
    grid = home.for_workspace(names["E0GRID"], rules=False)
    pid = only_pending(grid)
    [kept] = ShownMessages(grid.redis, grid.store.workspace).of(pid)
    assert (kept.team, kept.enterprise, kept.org_install) == (None, "E0GRID", True)
    grid.gateway.discard_proposal(pid, BOB, "no")
    assert sweep(grid, rig.slack, redis_client) == 1
    [dm] = rig.slack.direct("W0GRACE")
    assert dm.token in rig.slack.tokens_of(None, "E0GRID")


def test_a_proposal_shown_nowhere_escalates_with_its_listed_teams_token(
    rig: OAuthRig, home: App, names: dict[str, str], redis_client: Redis
) -> None:
    """Made from the CLI or the web, never shown: the workspace's listed team's token."""
    second = home.for_workspace(names["T0SECOND"], rules=False)
    pending = second.gateway.propose(mutation("set", "scene.name", "BRB", "agent:model"))
    assert isinstance(pending, Pending) and pending.proposal.escalate is not None
    closers = closers_from_env(rig.slack.oauth_env(), redis_client)
    due = pending.proposal.created_at + 3_600_000
    assert Escalations(second, closers).run(now_ms=due) == 1
    [posted] = posts_to(rig.slack, "C0ESC")
    assert posted.token in rig.slack.tokens_of("T0SECOND")


def test_a_requester_of_another_team_gets_no_dm_with_this_teams_token(
    rig: OAuthRig, home: App, names: dict[str, str], redis_client: Redis
) -> None:
    """A proposal in T0SECOND whose stored requester is U0EVE of T0THIRD: T0SECOND's token
    must not write to her (Slack would let it, across a Slack Connect channel)."""
    second = home.for_workspace(names["T0SECOND"], rules=False)
    pid = shown_as_the_adapter_keeps_it(second, rig.slack, "T0SECOND", requester="U0EVE")
    second.gateway.discard_proposal(pid, BOB, "no")
    assert sweep(second, rig.slack, redis_client) == 1  # in the thread
    assert rig.slack.direct("U0EVE") == [] and rig.slack.calls_to("conversations.open") == []


def test_a_team_that_uninstalled_is_skipped_with_one_log_line(
    rig: OAuthRig,
    home: App,
    names: dict[str, str],
    redis_client: Redis,
    caplog: pytest.LogCaptureFixture,
) -> None:
    second = home.for_workspace(names["T0SECOND"], rules=False)
    due = dataclasses.replace(
        second, gateway=MutationGateway(second.store, second.policy, proposal_expiry_ms=0)
    )
    shown_as_the_adapter_keeps_it(due, rig.slack, "T0SECOND")
    rig.event({"type": "app_uninstalled"}, team="T0SECOND")
    rig.idle()
    assert rig.store.find_bot(enterprise_id=None, team_id="T0SECOND") is None
    before = len(rig.slack.calls)
    closers = closers_from_env(rig.slack.oauth_env(), redis_client)
    with caplog.at_level(logging.INFO, logger="deliberate"):
        for _ in range(3):  # three sweeps of one worker
            due.gateway.expire_due()
            Requesters(due, closers).run()
            ExpiredMessages(due, closers).run()
    assert rig.slack.calls[before:] == []  # nothing sent, nothing asked
    said = [r.getMessage() for r in caplog.records if "T0SECOND" in r.getMessage()]
    assert len(said) == 1 and "no bot token for team T0SECOND" in said[0], said


def test_a_token_slack_refuses_is_skipped_and_not_tried_at_every_sweep(
    rig: OAuthRig,
    home: App,
    names: dict[str, str],
    redis_client: Redis,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The token was revoked without the bot hearing of it: ``auth.test`` says so once."""
    second = home.for_workspace(names["T0SECOND"], rules=False)
    due = dataclasses.replace(
        second, gateway=MutationGateway(second.store, second.policy, proposal_expiry_ms=0)
    )
    shown_as_the_adapter_keeps_it(due, rig.slack, "T0SECOND")
    for token in rig.slack.tokens_of("T0SECOND"):
        rig.slack.revoke(token)
    closers = closers_from_env(rig.slack.oauth_env(), redis_client)
    checked = len(rig.slack.calls_to("auth.test"))  # the installs' own
    with caplog.at_level(logging.INFO, logger="deliberate"):
        for _ in range(3):
            due.gateway.expire_due()
            Requesters(due, closers).run()
            ExpiredMessages(due, closers).run()
    assert rig.slack.calls_to("chat.update") == [] and rig.slack.direct("U0ALICE") == []
    assert len(rig.slack.calls_to("auth.test")) == checked + 1
    said = [r.getMessage() for r in caplog.records if "no bot token" in r.getMessage()]
    assert len(said) == 1, said


def test_a_rotating_token_is_refreshed_and_saved_as_bolt_does(
    rig: OAuthRig, home: App, redis_client: Redis
) -> None:
    """Token rotation on: the worker, like Bolt, swaps a token about to expire for a new one
    before it uses it, and saves it, so the bot finds the new pair too."""
    rotating = BotIdentity("T0ROT", "Rot", user_id="U0BOTR", bot_id="B0BOTR")
    rig.slack.add_install_code("c0de-r", rotating, expires_in=60)
    rig.install("c0de-r")
    [first] = rig.slack.tokens_of("T0ROT")
    due = dataclasses.replace(
        home, gateway=MutationGateway(home.store, home.policy, proposal_expiry_ms=0)
    )
    shown_as_the_adapter_keeps_it(due, rig.slack, "T0ROT")
    assert sweep(due, rig.slack, redis_client) == 1
    [update] = rig.slack.calls_to("chat.update")
    assert update.token in rig.slack.tokens_of("T0ROT") and update.token != first
    saved = rig.store.find_installation(enterprise_id=None, team_id="T0ROT")
    assert saved is not None and saved.bot_token == update.token


def test_the_workers_minute_finds_each_teams_token(
    rig: OAuthRig,
    redis_client: Redis,
    workspace: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``deliberate worker`` as it schedules its minute, with the OAuth variables alone."""
    for name, value in rig.slack.oauth_env().items():
        monkeypatch.setenv(name, value)
    for name in ("SLACK_BOT_TOKEN", "DISCORD_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    worker = make_rig(tmp_path, redis_client, workspace, "  []\n")
    gateway = MutationGateway(worker.app.store, worker.app.policy, proposal_expiry_ms=0)
    due = dataclasses.replace(worker.app, gateway=gateway)
    shown_as_the_adapter_keeps_it(due, rig.slack, "T0SECOND")
    schedule(worker.service, due)
    worker.service.step()
    [update] = rig.slack.calls_to("chat.update")
    assert update.token in rig.slack.tokens_of("T0SECOND")
    [thread] = [c for c in posts_to(rig.slack, "C0TEAM") if "your change" in str(c.fields)]
    assert thread.token == update.token


def shown_as_the_adapter_keeps_it(
    app: App, slack: SlackServer, team: str, requester: str = "U0ALICE"
) -> str:
    """A proposal the model made for ``requester``, posted in C0TEAM with ``team``'s token
    and kept as the adapter keeps what it posts: its id."""
    wanted = mutation("set", "scene.name", "BRB", "agent:model")
    wanted.meta["requestedBy"] = {"kind": "user", "id": requester, "platform": "slack"}
    pending = app.gateway.propose(wanted)
    assert isinstance(pending, Pending)
    token = slack.tokens_of(team)[-1]
    posted = WebClient(token=token, base_url=slack.api_url).chat_postMessage(
        channel="C0TEAM", text="Apply?", blocks=[]
    )
    ts = str(posted["ts"])
    shown = Shown(platform="slack", channel="C0TEAM", message=ts, text="Apply?", team=team)
    ids = [pending.proposal.id]
    assert ShownMessages(app.redis, app.store.workspace).record(app.gateway.proposals, ids, shown)
    return pending.proposal.id
