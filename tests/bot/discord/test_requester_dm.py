"""On Discord the requester is told of each change by a direct message too, where the key's
``tell`` says ``dm``: the worker's sweep (``Requesters``, ``DISCORD_TOKEN`` from the
environment) checks that they are a member of the server the proposal was shown in
(``GET /guilds/{server}/members/{user}``), opens a DM (``POST /users/@me/channels``) and
posts there, with a link to the message that showed it, once per change. A bot, an id
Discord does not know, a member of another server get nothing; a DM Discord refuses (50007)
is one log line, and the channel's message and later changes are told all the same."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import httpx
import pytest
from redis import Redis

from bot.app import App, build_app
from bot.cli.closers import closers_from_env
from bot.proposals.expiry import ExpiredMessages
from bot.proposals.refs import Shown, ShownMessages
from bot.proposals.telling import Requesters
from core.gateway.edits import Edit
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import Pending
from core.state.actor import Actor, ActorKind
from tests.bot.discord.conftest import server_tenants
from tests.bot.discord.payloads import ALICE, CHANNEL, CREW, ELSEWHERE, EVE, GUILD, SAM
from tests.bot.discord.test_lifecycle import proposed, proposing_bot
from tests.conftest import write_config
from tests.factories import mutation
from tests.openai_server import OpenAIServer
from tests.rules.rig import config_text
from tests.servers.discord_api import DiscordServer
from tests.team_config import team_config

HELPER, NOBODY = "1400000000000000070", "1400000000000000071"
KEYS = """\
    - pattern: "test.dm"
      type: string
      writers: [user]
      agent: propose
      approval: {quorum: 2, tell: {dm: true}}
"""
SAM_ = Actor(kind=ActorKind.USER, id=SAM, platform="discord")
RIA_ = Actor(kind=ActorKind.USER, id="1400000000000000003", platform="discord")


@pytest.fixture
def people(discord_api: DiscordServer) -> DiscordServer:
    for person in (ALICE, SAM):
        discord_api.people.add(GUILD, person)
    discord_api.people.add(GUILD, HELPER, bot=True)
    discord_api.people.add(ELSEWHERE, EVE)  # of someone else's server
    return discord_api


@pytest.fixture
def dm_app(tmp_path: Path, redis_client: Redis, workspace: str) -> App:
    path = write_config(tmp_path, config_text("  []\n", keys=KEYS))
    return build_app(workspace, path, client=redis_client)


def asked(app: App, discord: DiscordServer, by: str = ALICE) -> tuple[str, str]:
    """A proposal the model made for ``by``, shown in CHANNEL of GUILD: its id, and the
    message's."""
    wanted = mutation("set", "test.dm", "a", "agent:model")
    wanted.meta["requestedBy"] = {"kind": "user", "id": by, "platform": "discord"}
    pending = app.gateway.propose(wanted)
    assert isinstance(pending, Pending)
    headers = {"Authorization": f"Bot {discord.token}"}
    url = f"{discord.api_url}/channels/{CHANNEL}/messages"
    posted = httpx.post(url, json={"content": "Apply?"}, headers=headers).json()
    shown = Shown(platform="discord", channel=CHANNEL, message=posted["id"], team=GUILD)
    ids = [pending.proposal.id]
    assert ShownMessages(app.redis, app.store.workspace).record(app.gateway.proposals, ids, shown)
    return pending.proposal.id, str(posted["id"])


def sweep(app: App, discord: DiscordServer) -> int:
    closers = closers_from_env(discord.env())
    app.gateway.expire_due()
    told = Requesters(app, closers).run()
    ExpiredMessages(app, closers).run()
    return told


def in_channel(discord: DiscordServer) -> list[str]:
    return [m["content"] for m in discord.public() if m["content"].startswith(f"<@{ALICE}>")]


def dms(discord: DiscordServer, user: str = ALICE) -> list[str]:
    return [str(m["content"]) for m in discord.direct(user)]


def test_each_change_is_told_by_dm_with_a_link_to_where_it_was_asked(
    dm_app: App, people: DiscordServer
) -> None:
    pid, message = asked(dm_app, people)
    dm_app.gateway.apply_proposal(pid, SAM_, edit=Edit("b"), revision=0)
    assert sweep(dm_app, people) == 1
    dm_app.gateway.apply_proposal(pid, RIA_, revision=1)
    assert sweep(dm_app, people) == 1
    link = f"https://discord.com/channels/{GUILD}/{CHANNEL}/{message}"
    assert dms(people) == [
        f"Your change was edited by user:{SAM}: now set test.dm = b; it waits for approval "
        f"again. ({link})",
        f"Your change was applied by user:1400000000000000003: set test.dm = b. ({link})",
    ]
    assert all(m["allowed_mentions"] == {"parse": []} for m in people.direct(ALICE))
    assert len(in_channel(people)) == 2
    assert sweep(dm_app, people) == 0 and len(dms(people)) == 2  # once each


def test_a_discard_with_its_reason_and_an_expiry_are_told_by_dm(
    dm_app: App, people: DiscordServer
) -> None:
    pid, _ = asked(dm_app, people)
    dm_app.gateway.discard_proposal(pid, SAM_, "we run mysql already")
    gateway = MutationGateway(dm_app.store, dm_app.policy, proposal_expiry_ms=0)
    due = dataclasses.replace(dm_app, gateway=gateway)
    _, message = asked(due, people)
    assert sweep(due, people) == 2
    [discarded] = [word for word in dms(people) if "discarded" in word]
    [expired] = [word for word in dms(people) if "expired" in word]
    assert discarded.startswith(f"Your change was discarded by user:{SAM}: set test.dm = a")
    assert "(we run mysql already); nothing was changed." in discarded
    assert expired.startswith("Your change (set test.dm = a): this proposal expired at ")
    assert people.message(message)["components"] == [] and people.message(message)["edits"] == 1


def test_a_refused_dm_is_one_log_line_and_later_changes_are_told(
    dm_app: App, people: DiscordServer, caplog: pytest.LogCaptureFixture
) -> None:
    pid, _ = asked(dm_app, people)
    people.people.close_dms(ALICE)
    dm_app.gateway.apply_proposal(pid, SAM_, edit=Edit("b"), revision=0)
    with caplog.at_level(logging.WARNING, logger="deliberate"):
        assert sweep(dm_app, people) == 1
    [line] = [r.getMessage() for r in caplog.records if "direct message" in r.getMessage()]
    assert ALICE in line and "50007" in line
    assert len(in_channel(people)) == 1 and dms(people) == []
    people.people.closed.clear()  # she opens her DMs again
    dm_app.gateway.apply_proposal(pid, RIA_, revision=1)
    assert sweep(dm_app, people) == 1
    assert len(in_channel(people)) == 2 and len(dms(people)) == 1


@pytest.mark.parametrize(
    ("requester", "why"),
    [
        (HELPER, "a bot"),
        (NOBODY, "not a member"),
        (EVE, "not a member"),  # a stored requester of another server: never written to
    ],
)
def test_no_dm_to_a_bot_an_unknown_id_or_a_member_of_another_server(
    dm_app: App,
    people: DiscordServer,
    caplog: pytest.LogCaptureFixture,
    requester: str,
    why: str,
) -> None:
    pid, _ = asked(dm_app, people, by=requester)
    dm_app.gateway.discard_proposal(pid, SAM_, "no")
    with caplog.at_level(logging.DEBUG, logger="deliberate"):
        assert sweep(dm_app, people) == 1  # in the channel
    assert [r for r in people.requests if r.path.endswith("/users/@me/channels")] == []
    assert dms(people, requester) == []
    said = [r.getMessage() for r in caplog.records if "no direct message" in r.getMessage()]
    assert any(why in line for line in said), said


def test_a_proposal_the_bot_showed_is_told_by_dm(
    tmp_path: Path,
    redis_client: Redis,
    workspace: str,
    people: DiscordServer,
    openai_server: OpenAIServer,
) -> None:
    """End to end: the bot keeps the server it showed the proposal in, and the sweep writes
    to Alice there, as the server's own ``policy.proposals.tell`` asks."""
    own = "        policy:\n          proposals:\n            tell: {dm: true}\n"
    path = team_config(tmp_path, [], [f"discord:{CREW}"], server_tenants(workspace, own))
    app = build_app(workspace, path, client=redis_client)
    bot = proposing_bot(app, people, openai_server)
    try:
        reply = proposed(bot)
        bot.click(reply, "DiscardProposal", user=SAM)
        bot.submit(reply, "we run mysql already", user=SAM)
    finally:
        bot.close()
    assert sweep(app, people) == 1
    [word] = dms(people)
    assert "discarded by" in word and "(we run mysql already)" in word
    assert word.endswith(f"(https://discord.com/channels/{GUILD}/{CHANNEL}/{reply['id']})")
