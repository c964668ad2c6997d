"""The trust boundary on Slack, with the payload shapes Slack documents: a user of another
organisation in a Slack Connect channel (``is_ext_shared_channel``, their own ``user_team``),
a click from another team's installation, events and commands from a team the bot does not
serve, an Enterprise Grid org as one tenant. Each commits nothing and reads nothing of our
team's workspace; our own people still can."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from bot.app import App, build_app
from bot.proposals.click_lines import ClickLines
from core.state.actor import ActorKind
from tests.bot.slack.conftest import team_tenants
from tests.bot.slack.rig import CHANNEL, TEAM, SlackBot, event_callback, mention, message
from tests.conftest import delete_workspace
from tests.factories import mutation
from tests.reads import footprints, transcript, written
from tests.servers.slack_api import BotIdentity, SlackServer
from tests.team_config import team_config

IDEA = "what if we used postgres for the event store"
EXTERNAL = "T0EXTERNAL"  # another organisation, in a channel shared with ours
UNSERVED = "T0UNSERVED"  # a team the bot was never set up for


@pytest.fixture
def strangers(redis_client: Redis) -> Iterator[list[str]]:
    """The workspaces other teams would have, empty before and after."""
    names = [f"slack-{UNSERVED}", f"slack-{EXTERNAL}"]
    for name in names:
        delete_workspace(redis_client, name)
    yield names
    for name in names:
        delete_workspace(redis_client, name)


def test_a_slack_connect_guest_may_talk_but_not_commit(bot: SlackBot, team_app: App) -> None:
    said = mention(IDEA, user="U0GUEST", team=EXTERNAL, user_team=EXTERNAL)
    bot.event(said, shared=True)
    reply = bot.replies()[-1]  # a guest may talk
    bot.click(reply, "ConfirmCurrent", user="U0GUEST", user_team=EXTERNAL)
    [refusal] = bot.ephemerals()
    assert "guest" in refusal["text"] and refusal["user"] == "U0GUEST"
    assert len(team_app.log) == 0
    bot.click(reply, "ConfirmCurrent", user="U0ALICE")  # our member, the same button
    bot.listeners.idle()
    [record] = team_app.log.latest(5)
    assert record.mutation.actor.id == "U0ALICE" and record.mutation.actor.kind is ActorKind.USER


def test_a_guests_turn_is_recorded_as_a_guests(bot: SlackBot, team_app: App) -> None:
    bot.event(mention(IDEA, user="U0GUEST", user_team=EXTERNAL), shared=True)
    root = bot.replies()[-1]["thread_ts"]
    lines = transcript(team_app.redis, team_app.store.workspace, f"slack:{CHANNEL}:{root}")
    assert lines[0] == ("guest:U0GUEST", IDEA)


def test_a_click_from_another_teams_installation_changes_nothing(
    bot: SlackBot, team_app: App
) -> None:
    bot.event(mention(IDEA))
    reply = bot.replies()[-1]
    bot.click(reply, "ConfirmCurrent", user="U0EVE", team=UNSERVED)
    [refusal] = bot.ephemerals()
    assert "isn't set up for Deliberate" in refusal["text"]
    assert len(team_app.log) == 0


def test_events_and_commands_from_a_team_not_served_are_ignored(
    bot: SlackBot, team_app: App, redis_client: Redis, strangers: list[str]
) -> None:
    team_app.gateway.propose(mutation("set", "decision.db", "postgres"))
    bot.event(mention(IDEA, team=UNSERVED), team=UNSERVED)
    bot.listeners.idle()
    assert bot.slack.messages == []  # not a word
    assert footprints(redis_client, [f"slack-{UNSERVED}"])[f"slack-{UNSERVED}"] == (frozenset(), 0)
    answer = bot.command("state", user="U0EVE", team=UNSERVED)
    assert "postgres" not in answer["text"] and "isn't set up" in answer["text"]
    assert "postgres" in bot.command("state")["text"]  # ours still reads ours
    assert len(team_app.log) == 1


def test_a_direct_message_belongs_to_its_team(bot: SlackBot, team_app: App) -> None:
    assert bot.slack.channels is not None
    bot.slack.channels.add("D0ALICE")  # the bot's DM with Alice
    said = message(IDEA, channel="D0ALICE", channel_type="im")
    bot.event(said)
    [reply] = bot.replies()
    assert reply["channel"] == "D0ALICE"
    bot.click(reply, "ConfirmCurrent", channel="D0ALICE")
    bot.listeners.idle()
    assert len(team_app.log) == 1


# --- guests may commit, where the policy says so ----------------------------------------


@pytest.fixture
def guests_commit(redis_client: Redis, workspace: str, tmp_path: Path) -> App:
    path = team_config(tmp_path, ["slack:U0SAM"], [], team_tenants(workspace))
    text = path.read_text().replace(
        "guests: {commit: false, apply: false, read: false}",
        "guests: {commit: true, apply: false, read: true}",
    )
    path.write_text(text)
    return build_app(workspace, path, client=redis_client)


def test_with_guests_commit_on_a_guest_commits_as_a_guest(
    guests_commit: App, slack_api: SlackServer
) -> None:
    bot = SlackBot(guests_commit, slack_api).start()
    try:
        bot.event(mention(IDEA, user="U0GUEST", user_team=EXTERNAL), shared=True)
        reply = bot.replies()[-1]
        bot.click(reply, "ConfirmCurrent", user="U0GUEST", user_team=EXTERNAL)
        bot.listeners.idle()
        [record] = guests_commit.log.latest(5)
        assert str(record.mutation.actor) == "guest:U0GUEST"
    finally:
        bot.stop()


# --- an Enterprise Grid org as one tenant ---------------------------------------------------

ORG, TEAM_A, TEAM_B = "E0ORG", "T0TEAMA", "T0TEAMB"


@pytest.fixture
def org_app(redis_client: Redis, workspace: str, tmp_path: Path) -> Iterator[App]:
    tenants = f"  slack:\n    teams:\n      - id: {ORG}\n        workspace: {workspace}\n"
    path = team_config(tmp_path, ["slack:U0SAM"], [], tenants)
    yield build_app(workspace, path, client=redis_client)
    delete_workspace(redis_client, f"slack-{TEAM_A}")


def in_org(event: dict[str, Any], team: str, event_id: str) -> dict[str, Any]:
    return event_callback(event, event_id, team, enterprise=ORG)


def test_an_org_listed_is_one_workspace_for_all_its_teams(
    org_app: App, slack_api: SlackServer
) -> None:
    bot = SlackBot(org_app, slack_api).start()
    try:
        for team, ident in ((TEAM_A, "Ev0ORGA"), (TEAM_B, "Ev0ORGB")):
            said = mention(IDEA, team=team, user_team=team)
            bot.post(json.dumps(in_org(said, team, ident)), "application/json")
        bot.listeners.idle()
        sessions = org_app.runtime(use_env=False).sessions
        threads = {m["thread_ts"] for m in bot.replies(2)}
        assert all(sessions.exists(f"slack:{CHANNEL}:{ts}") for ts in threads)
        assert len(threads) == 2
    finally:
        bot.stop()


@pytest.fixture
def org_bot(org_app: App, slack_api: SlackServer) -> Iterator[SlackBot]:
    """The bot token is TEAM_A's, in ORG; TEAM_B is ORG's too (Slack's team.info says)."""
    slack_api.add_bot(slack_api.token, BotIdentity(TEAM_A, "A", ORG, "Org"))
    slack_api.org_teams[TEAM_B] = ORG
    running = SlackBot(org_app, slack_api).start()
    yield running
    running.stop()


def shared_in_org(event: dict[str, Any], event_id: str) -> dict[str, Any]:
    return event_callback(event, event_id, TEAM_A, shared=True, enterprise=ORG)


def test_in_an_org_a_connect_partner_is_a_guest_and_a_member_team_is_home(
    org_bot: SlackBot, org_app: App
) -> None:
    partner = mention(IDEA, user="U0GUEST", team=EXTERNAL, user_team=EXTERNAL)
    org_bot.post(json.dumps(shared_in_org(partner, "Ev0PARTNER")), "application/json")
    reply = org_bot.replies()[-1]
    root = reply["thread_ts"]
    lines = transcript(org_app.redis, org_app.store.workspace, f"slack:{CHANNEL}:{root}")
    assert lines[0][0] == "guest:U0GUEST"  # Bolt cannot tell their org: not ours, then
    org_bot.click(
        reply, "ConfirmCurrent", user="U0GUEST", team=TEAM_A, user_team=EXTERNAL, enterprise=ORG
    )
    assert "guest" in org_bot.ephemerals()[-1]["text"] and len(org_app.log) == 0
    org_bot.click(
        reply, "ConfirmCurrent", user="U0BEA", team=TEAM_A, user_team=TEAM_B, enterprise=ORG
    )
    org_bot.listeners.idle()
    [record] = org_app.log.latest(5)
    assert str(record.mutation.actor) == "user:U0BEA"  # another team of the org: a member


def test_the_tenant_check_uses_the_installation_not_the_event(bot: SlackBot, team_app: App) -> None:
    """A payload's inner ``team`` is the speaker's; Bolt reads the installation from
    ``authorizations``: naming our team inside an unserved installation's event gains
    nothing."""
    said = mention(IDEA, team=TEAM, user_team=TEAM)
    bot.event(said, team=UNSERVED)
    bot.listeners.idle()
    assert bot.slack.messages == [] and len(team_app.log) == 0


# --- every entry point, every tenant -------------------------------------------------------

SOURCES = {  # installation team, person's team, channel
    "our-member": (TEAM, TEAM, CHANNEL),
    "connect-guest": (TEAM, EXTERNAL, CHANNEL),
    "their-installation": (UNSERVED, UNSERVED, CHANNEL),
    "our-dm": (TEAM, TEAM, "D0ALICE"),
}


@pytest.mark.parametrize("entry", ["event", "click", "command"])
@pytest.mark.parametrize("source", list(SOURCES))
def test_no_entry_point_reaches_outside_its_tenants_workspace(
    bot: SlackBot,
    team_app: App,
    redis_client: Redis,
    strangers: list[str],
    entry: str,
    source: str,
) -> None:
    """Every workspace holds a value of its own first; then the entry point: every key
    written lands in the tenant's own workspace or nowhere, a guest commits nothing, and
    what is read back is the tenant's own."""
    installation, person, channel = SOURCES[source]
    assert bot.slack.channels is not None
    bot.slack.channels.add("D0ALICE")
    ours = team_app.store.workspace
    everyone = [ours, *strangers]
    for name in everyone:
        team_app.for_workspace(name, rules=False).gateway.propose(
            mutation("set", "decision.seed", f"seed of {name}")
        )
    home = ours if installation == TEAM else None
    before = footprints(redis_client, everyone)
    extra = {"channel_type": "im"} if channel.startswith("D") else {}
    said = mention(IDEA, user="U0PERSON", channel=channel, team=person, user_team=person, **extra)
    bot.event(said, team=installation, shared=person != installation)
    bot.listeners.idle()
    if entry == "click":
        replies = [m for m in bot.slack.messages if m["channel"] == channel]
        if not replies:  # not served: they click one of our buttons, carried over
            bot.event(mention(IDEA))
            replies = bot.replies()
            before = footprints(redis_client, everyone)
        bot.click(
            replies[-1],
            "ConfirmCurrent",
            user="U0PERSON",
            channel=channel,
            team=installation,
            user_team=person,
        )
    elif entry == "command":
        answer = bot.command("state", user="U0PERSON", team=installation)["text"]
        seeds = {n for n in everyone if f"seed of {n}" in answer}
        assert seeds == ({home} if home else set())
    bot.listeners.idle()
    landed = written(before, footprints(redis_client, everyone))
    assert landed <= ({home} if home else set())
    if entry == "event":
        assert (landed == {home}) is (home is not None)  # served: a turn, there
    if entry == "click" and home is not None:
        latest = team_app.log.latest(1)[0].mutation
        member = person == installation
        assert (latest.key != "decision.seed") is member  # a guest commits nothing


def test_a_click_that_fails_after_its_ack_is_told_to_the_clicker(
    bot: SlackBot, team_app: App
) -> None:
    """A session another version left unreadable: the click was acknowledged already, so the
    clicker hears that nothing changed, rather than Slack timing out on them."""
    bot.event(mention(IDEA))
    reply = bot.replies()[-1]
    team_app.redis.set(team_app.store.keys.session(f"slack:{CHANNEL}:{reply['thread_ts']}"), "{")
    assert bot.click(reply, "ConfirmCurrent").status_code == 200
    [told] = bot.ephemerals()
    assert "Something went wrong on our side; nothing was changed" in told["text"]
    assert told["user"] == "U0ALICE" and len(team_app.log) == 0


def test_a_click_whose_outcome_cannot_be_shown_says_so(bot: SlackBot, team_app: App) -> None:
    """The commit landed; closing the message failed (its lines' key holds something else):
    the clicker is told it was handled, not that nothing changed."""
    bot.event(mention(IDEA))
    reply = bot.replies()[-1]
    lines = ClickLines(team_app.redis, team_app.store.workspace, 60)
    team_app.redis.set(lines.key("slack", f"{CHANNEL}:{reply['ts']}"), "not a list")
    assert bot.click(reply, "ConfirmCurrent").status_code == 200
    [told] = bot.ephemerals()
    assert "handled, but its outcome could not be shown" in told["text"]
    assert len(team_app.log) == 1


# --- talk-only teams, guests reading, group handles ----------------------------------------


@pytest.fixture
def talk_only(redis_client: Redis, workspace: str, tmp_path: Path) -> App:
    tenants = team_tenants(workspace).replace(
        "        roles:\n", "        members: talk\n        roles:\n"
    )
    path = team_config(tmp_path, ["slack:U0SAM"], [], tenants)
    return build_app(workspace, path, client=redis_client)


def test_in_a_talk_only_team_members_without_a_role_talk_and_nothing_else(
    talk_only: App, slack_api: SlackServer
) -> None:
    bot = SlackBot(talk_only, slack_api).start()
    try:
        talk_only.gateway.propose(mutation("set", "decision.db", "postgres"))
        bot.event(mention(IDEA, user="U0PLAIN"))
        reply = bot.replies()[-1]  # they may talk
        bot.click(reply, "ConfirmCurrent", user="U0PLAIN")
        assert "guest" in bot.ephemerals()[-1]["text"] and len(talk_only.log) == 1
        answer = bot.command("state", user="U0PLAIN")["text"]
        assert answer == "Guests may talk here, not read the workspace's state."  # said plainly
        assert "postgres" in bot.command("state", user="U0SAM")["text"]  # a moderator reads
        bot.click(reply, "ConfirmCurrent", user="U0SAM")
        bot.listeners.idle()
        assert str(talk_only.log.latest(1)[0].mutation.actor) == "moderator:U0SAM"
    finally:
        bot.stop()


def test_a_group_handle_shaped_like_a_bound_group_id_is_not_that_group(
    redis_client: Redis, workspace: str, tmp_path: Path
) -> None:
    groups = [{"id": "S0EVIL", "handle": "S0MODS", "users": ["U0EVE"]}]
    path = team_config(tmp_path, [], ["slack:S0MODS"], team_tenants(workspace))
    app = build_app(workspace, path, client=redis_client)
    with SlackServer(channels={CHANNEL}, usergroups=groups) as slack:
        bot = SlackBot(app, slack).start()
        try:
            bot.event(mention(IDEA, user="U0EVE"))
            bot.click(bot.replies()[-1], "ConfirmCurrent", user="U0EVE")
            bot.listeners.idle()
            assert str(app.log.latest(1)[0].mutation.actor) == "user:U0EVE"
        finally:
            bot.stop()


def test_an_org_wide_bot_token_serves_its_org(team_app: App, slack_api: SlackServer) -> None:
    """``auth.test`` of an org-wide install names the org and no team: the org is served,
    in ``--workspace``'s workspace, for every team in it."""
    slack_api.add_bot(slack_api.token, BotIdentity(None, None, "E0MINE", "Mine", org_install=True))
    bot = SlackBot(team_app, slack_api).start()
    try:
        assert bot.adapter.serve_token_team() == "E0MINE"
        said = mention(IDEA, team=TEAM_A, user_team=TEAM_A)
        body = event_callback(said, "Ev0ORGWIDE", TEAM_A, enterprise="E0MINE", org_install=True)
        bot.post(json.dumps(body), "application/json")
        root = bot.replies()[-1]["thread_ts"]
        sessions = team_app.runtime(use_env=False).sessions
        assert sessions.exists(f"slack:{CHANNEL}:{root}")
    finally:
        bot.stop()
