"""The trust boundary on Discord, tried as an attacker would: someone else's server that added
the bot (its owner holds every permission there; a member holds a role they named
"Moderators"), a stranger's direct messages, another server's #deliberation. Each commits
nothing and reads nothing of our server's workspace; our own people still can."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from bot.app import App, build_app
from bot.cli.worker import served
from bot.discord.buttons import ButtonRef
from bot.discord.turns import Listening
from tests.bot.discord import payloads
from tests.bot.discord.conftest import server_tenants
from tests.bot.discord.payloads import (
    ALICE,
    CHANNEL,
    DM,
    ELSEWHERE,
    EVE,
    FAR,
    SAM,
    STRANGER,
)
from tests.bot.discord.rig import DiscordBot
from tests.bot.discord.test_clicks import given_button, model
from tests.conftest import delete_workspace
from tests.factories import mutation
from tests.model_script import kind, label, output, user_payload
from tests.openai_server import OpenAIServer, Reply, tool_call
from tests.reads import footprints, pending_proposals, written
from tests.servers.discord_api import DiscordServer
from tests.team_config import team_config

IDEA = "what if we used postgres"
THEIRS = f"discord-{ELSEWHERE}"


@pytest.fixture
def strangers(redis_client: Redis) -> Iterator[None]:
    """The other server's and the DMs' workspaces, gone before and after."""

    def clean() -> None:
        for name in (THEIRS, *(f"discord-dm-{who}" for who in (STRANGER, EVE, ALICE, SAM))):
            delete_workspace(redis_client, name)

    clean()
    yield
    clean()


def app_with(redis: Redis, workspace: str, tmp_path: Path, *, any_server: bool, dms: bool) -> App:
    more = f"    any_server: {str(any_server).lower()}\n    direct_messages: {str(dms).lower()}\n"
    tenants = server_tenants(workspace, more)
    path = team_config(tmp_path, [], [f"discord:{payloads.CREW}"], tenants)
    return build_app(workspace, path, client=redis)


@pytest.fixture
def make_bot(
    redis_client: Redis,
    workspace: str,
    tmp_path: Path,
    discord_api: DiscordServer,
    strangers: None,
) -> Iterator[Callable[..., DiscordBot]]:
    """Our server listed, listening in #deliberation, the other server known to discord.py;
    ``any_server`` and ``dms`` as asked."""
    made: list[DiscordBot] = []

    def make(*, any_server: bool, dms: bool) -> DiscordBot:
        app = app_with(redis_client, workspace, tmp_path, any_server=any_server, dms=dms)
        listening = Listening.of(["deliberation"], "mentions")
        made.append(DiscordBot(app, discord_api, listening=listening))
        made[-1].dispatch("GUILD_CREATE", payloads.guild_create(ELSEWHERE))
        return made[-1]

    yield make
    for bot in made:
        bot.close()


@pytest.fixture(params=[False, True], ids=["only-ours", "any-server"])
def open_bot(request: pytest.FixtureRequest, make_bot: Callable[..., DiscordBot]) -> DiscordBot:
    """Every other server served too, or not; DMs on."""
    return make_bot(any_server=request.param, dms=True)


@pytest.fixture
def any_bot(make_bot: Callable[..., DiscordBot]) -> DiscordBot:
    """Every server that adds the bot is served, each on its own; no DMs."""
    return make_bot(any_server=True, dms=False)


def forged(channel: str, action: str, target: str, version: int = 1) -> str:
    return ButtonRef(
        action=action, session=f"discord:{channel}", target_id=target, version=version
    ).custom_id()


def click_in(bot: DiscordBot, channel: str, custom_id: str, user: str) -> None:
    """A click on a message that carries ``custom_id``, as Discord has it."""
    body = {"content": "x", "components": [payloads.action_row(custom_id)]}
    message = bot.api.new_message(channel, body)
    with bot.api.lock:
        bot.api.messages.append(message)
    bot.dispatch(bot.interaction(payloads.component(message, custom_id, user)))


# --- someone else's server ---------------------------------------------------------------


@pytest.mark.parametrize("who", [STRANGER, EVE], ids=["their-owner", "their-Moderators"])
def test_another_servers_owner_or_moderators_cannot_end_our_stream(
    open_bot: DiscordBot, redis_client: Redis, who: str
) -> None:
    bot, ours = open_bot, open_bot.app
    bot.say(IDEA)
    reply = given_button(bot, bot.api.public()[-1], "EndStream")
    our_button = payloads.custom_id_of(reply, "EndStream")
    everyone = [ours.store.workspace, THEIRS]
    before = footprints(redis_client, everyone)
    # our own button, clicked from their server; and one forged for their channel
    click_in(bot, FAR, our_button, who)
    click_in(bot, FAR, forged(FAR, "EndStream", our_button.split(":")[3]), who)
    assert ours.store.get("stream.state") is None and len(ours.log) == 0
    theirs = written(before, footprints(redis_client, everyone))
    assert ours.store.workspace not in theirs
    assert len(bot.api.ephemerals()) == 2  # each clicker is told, alone


def test_in_their_own_server_their_names_make_no_moderator(any_bot: DiscordBot) -> None:
    """Served with any_server, their server is a workspace of its own, where a role they
    named "Moderators" and an owner's every permission are worth nothing: no binding of
    ours holds there but ids."""
    bot = any_bot
    bot.say(IDEA, channel=FAR, author=EVE)
    reply = given_button(bot, bot.api.public()[-1], "EndStream")
    for who in (STRANGER, EVE):
        bot.click(reply, "EndStream", user=who)
    theirs = bot.app.for_workspace(THEIRS, rules=False)
    assert theirs.store.get("stream.state") is None
    assert all("protected" in m["content"] for m in bot.api.ephemerals()[-2:])
    assert len(bot.app.log) == 0 and bot.app.store.get("stream.state") is None
    # and no rule runs for a server nobody configured
    assert THEIRS not in {a.store.workspace for a in served(bot.app)}


def test_another_servers_owner_cannot_apply_our_agents_proposal(
    open_bot: DiscordBot,
) -> None:
    ours = open_bot.app
    proposed = ours.gateway.propose(
        mutation("set", "stream.state", "off", "agent:assistant", reason="the model")
    )
    proposal_id = proposed.proposal.id  # type: ignore[union-attr]
    for channel in (FAR, CHANNEL):  # their channel; ours, as if they could click there
        click_in(open_bot, FAR, forged(channel, "ApplyProposal", proposal_id), STRANGER)
    assert ours.store.get("stream.state") is None
    assert ours.gateway.proposals.get(proposal_id).status == "pending"  # type: ignore[union-attr]


def test_another_servers_deliberation_channel_is_theirs(
    open_bot: DiscordBot, redis_client: Redis
) -> None:
    """--channel deliberation names a channel in every server; a server not served is not
    heard at all, one served on its own is heard in its own workspace."""
    bot = open_bot
    bot.say("a stranger's idea for our stream", channel=FAR, author=STRANGER)
    served_there = bot.workspaces.tenancy.discord_server(ELSEWHERE) is not None
    assert [m["channel_id"] for m in bot.api.public()] == ([FAR] if served_there else [])
    ours = bot.app.runtime(use_env=False).sessions
    assert not ours.exists(f"discord:{FAR}")
    theirs = bot.app.for_workspace(THEIRS, rules=False).runtime(use_env=False).sessions
    assert theirs.exists(f"discord:{FAR}") is served_there


def test_deliberate_state_answers_no_stranger(open_bot: DiscordBot, redis_client: Redis) -> None:
    ours = open_bot.app
    ours.gateway.propose(mutation("set", "decision.db", "postgres"))
    for channel in (FAR, DM):
        asked = len(open_bot.api.messages)
        data = payloads.command("state", STRANGER, channel)
        open_bot.dispatch(open_bot.interaction(data))
        [answer] = open_bot.api.messages[asked:]
        assert "postgres" not in answer["content"] and "decision.db" not in answer["content"]
    asked = len(open_bot.api.messages)
    open_bot.command("state", user=ALICE)  # our member still reads ours
    [answer] = open_bot.api.messages[asked:]
    assert "postgres" in answer["content"]


# --- direct messages ---------------------------------------------------------------------


def test_direct_messages_are_off_by_default(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App, redis_client: Redis
) -> None:
    everyone = [team_app.store.workspace, f"discord-dm-{STRANGER}"]
    before = footprints(redis_client, everyone)
    bot.say(IDEA, channel=DM, author=STRANGER, mention_bot=False)
    assert discord_api.public() == []  # not a word
    click_in(bot, DM, forged(DM, "SwitchScene", "c0b2057fb0607"), STRANGER)
    [refusal] = [m["content"] for m in discord_api.ephemerals()]
    assert "direct messages" in refusal and "nothing was changed" in refusal
    assert team_app.store.get("scene.name") is None
    assert written(before, footprints(redis_client, everyone)) == set()


def test_a_direct_message_is_a_private_workspace_without_roles_or_rules(
    open_bot: DiscordBot, redis_client: Redis
) -> None:
    """A moderator of ours, in a DM, is nobody: a DM's workspace is theirs alone."""
    bot = open_bot
    bot.say(IDEA, channel=DM, author=SAM, mention_bot=False)
    [reply] = bot.api.public()
    assert reply["channel_id"] == DM
    mine = bot.app.for_workspace(f"discord-dm-{SAM}", rules=False)
    assert mine.runtime(use_env=False).sessions.exists(f"discord:{DM}")
    reply = given_button(bot, reply, "EndStream")
    bot.click(reply, "EndStream", user=SAM)
    assert "protected" in bot.api.ephemerals()[-1]["content"]
    assert mine.store.get("stream.state") is None and len(bot.app.log) == 0
    assert f"discord-dm-{SAM}" not in {a.store.workspace for a in served(bot.app)}


# --- every entry point, every tenant -------------------------------------------------------

ENTRIES = ["message", "click", "command"]
SOURCES: dict[str, tuple[str, str]] = {  # who, where
    "our-moderator": (SAM, CHANNEL),
    "our-member": (ALICE, CHANNEL),
    "their-owner": (STRANGER, FAR),
    "their-Moderators": (EVE, FAR),
    "dm-stranger": (STRANGER, DM),
    "dm-our-moderator": (SAM, DM),
}


def expected_workspace(bot: DiscordBot, who: str, channel: str) -> str | None:
    tenancy = bot.workspaces.tenancy
    tenant = (
        tenancy.discord_dm(who)
        if channel == DM
        else tenancy.discord_server(payloads.GUILD_OF[channel])
    )
    return tenant.workspace if tenant is not None else None


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("source", list(SOURCES))
def test_no_entry_point_reaches_outside_its_tenants_workspace(
    open_bot: DiscordBot, redis_client: Redis, entry: str, source: str
) -> None:
    """Every workspace holds a value of its own first. Then a conversation in each place
    (so clicks have a session and a candidate) and the entry point: every key written lands
    in the tenant's own workspace or nowhere, and what is read back is the tenant's own."""
    bot = open_bot
    who, channel = SOURCES[source]
    everyone = [bot.app.store.workspace, THEIRS] + [
        f"discord-dm-{p}" for p in (SAM, STRANGER, EVE, ALICE)
    ]
    for name in everyone:
        bot.app.for_workspace(name, rules=False).gateway.propose(
            mutation("set", "decision.seed", f"seed of {name}")
        )
    before = footprints(redis_client, everyone)
    bot.say(IDEA, channel=channel, author=who, mention_bot=channel != DM)
    if entry == "click":
        replies = [m for m in bot.api.public() if m["channel_id"] == channel]
        if replies:
            bot.click(replies[-1], "ConfirmCurrent", user=who)
        else:  # not served: they click one of ours, carried over
            bot.say(IDEA, author=ALICE)
            cid = payloads.custom_id_of(bot.api.public()[-1], "ConfirmCurrent")
            before = footprints(redis_client, everyone)
            click_in(bot, channel, cid, who)
    elif entry == "command":
        asked = len(bot.api.messages)
        bot.dispatch(bot.interaction(payloads.command("state", who, channel)))
        [answer] = bot.api.messages[asked:]
        home = expected_workspace(bot, who, channel)
        seeds = {n for n in everyone if f"seed of {n}" in answer["content"]}
        assert seeds == ({home} if home else set())
    home = expected_workspace(bot, who, channel)
    landed = written(before, footprints(redis_client, everyone))
    assert landed <= ({home} if home else set())
    if entry == "message":
        assert (landed == {home}) is (home is not None)  # served: a turn is taken, there
    if entry == "click" and home is not None:
        committed = bot.app.for_workspace(home, rules=False).log.latest(1)[0].mutation
        assert committed.actor.id == who and committed.key != "decision.seed"


def test_a_click_that_fails_after_its_defer_is_told_to_the_clicker(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    bot.say(IDEA)
    reply = discord_api.public()[-1]
    team_app.redis.set(team_app.store.keys.session(f"discord:{CHANNEL}"), "{")
    bot.click(reply, "ConfirmCurrent", user=SAM)
    [told] = discord_api.ephemerals()
    assert "Something went wrong on our side; nothing was changed" in told["content"]
    assert len(team_app.log) == 0


def test_in_a_talk_only_server_members_without_a_bound_role_are_guests(
    redis_client: Redis, workspace: str, tmp_path: Path, discord_api: DiscordServer
) -> None:
    tenants = server_tenants(workspace).replace(
        "        roles:\n", "        members: talk\n        roles:\n"
    )
    app = build_app(workspace, team_config(tmp_path, [], [], tenants), client=redis_client)
    bot = DiscordBot(app, discord_api)
    try:
        bot.say(IDEA)
        reply = discord_api.public()[-1]
        bot.click(reply, "ConfirmCurrent", user=ALICE)  # no bound role: a guest
        assert "guest" in discord_api.ephemerals()[-1]["content"] and len(app.log) == 0
        bot.click(discord_api.public()[-1], "ConfirmCurrent", user=SAM)  # a moderator
        [record] = app.log.latest(5)
        assert record.mutation.actor.id == SAM
    finally:
        bot.close()


def reading_then_proposing(request: dict[str, Any]) -> Reply:
    """Read every decision, then propose one: what a model can reach through its tools."""
    if kind(request) == "classify":
        return label("brainstorm")
    results = user_payload(request)["context_state"].get("tool_results")
    if not results:
        return Reply(tool_calls=[tool_call("getStatePrefix", {"prefix": "decision."})])
    if len(results) == 1:
        args = {"op": "set", "key": "stream.state", "value": "off", "reason": "asked"}
        return Reply(tool_calls=[tool_call("proposeMutation", args)])
    return output("done")


def test_the_model_reads_and_proposes_in_the_speakers_workspace_alone(
    redis_client: Redis,
    workspace: str,
    tmp_path: Path,
    discord_api: DiscordServer,
    strangers: None,
    openai_server: OpenAIServer,
) -> None:
    """A stranger's server served on its own: the model, asked there, sees that server's
    state through its tools and proposes there; our state and our proposals are untouched."""
    app = app_with(redis_client, workspace, tmp_path, any_server=True, dms=False)
    theirs = app.for_workspace(THEIRS, rules=False)
    for each in (app, theirs):
        each.gateway.propose(mutation("set", "decision.seed", f"seed of {each.store.workspace}"))
    openai_server.answer_with = reading_then_proposing
    bot = DiscordBot(app, discord_api, model=model(openai_server))
    try:
        bot.dispatch("GUILD_CREATE", payloads.guild_create(ELSEWHERE))
        bot.say("end the stream", channel=FAR, author=STRANGER)
    finally:
        bot.close()
    sent = json.dumps(openai_server.requests)
    assert f"seed of {THEIRS}" in sent and f"seed of {workspace}" not in sent
    assert pending_proposals(redis_client, workspace) == []
    [proposal] = pending_proposals(redis_client, THEIRS)
    assert proposal.mutation.key == "stream.state"
