"""Discard on Discord takes the right to apply, through discord.py and the local REST API with
the payloads Discord documents: the model's proposal of ``stream.state`` (protected; two
approvals), approved by a moderator, is not our member's to discard, nor anyone's of
another server (its owner, who holds every permission there; a member of a role they named
"Moderators"), whether the bot serves that server on its own or not. Each is told why, for
them alone, and the approval stands; a moderator by a permission the server binds discards
it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from bot.app import App, build_app
from bot.discord.buttons import ButtonRef
from bot.discord.turns import Listening
from core.gateway.outcome import Pending, Proposal, ProposalStatus
from core.state.actor import Actor, ActorKind
from tests.bot.discord import payloads
from tests.bot.discord.conftest import server_tenants
from tests.bot.discord.payloads import ALICE, CHANNEL, CREW, ELSEWHERE, EVE, FAR, MIA, SAM, STRANGER
from tests.bot.discord.rig import DiscordBot
from tests.bot.discord.test_clicks import model
from tests.conftest import delete_workspace
from tests.model_script import proposing
from tests.openai_server import OpenAIServer
from tests.reads import footprints, written
from tests.servers.discord_api import DiscordServer
from tests.team_config import team_config

KEY = "stream.state"
THEIRS = f"discord-{ELSEWHERE}"
REFUSED = (
    f"{KEY} is protected: only a moderator or an admin may discard a proposal to change it; "
    "nothing was changed"
)


def guarded_app(redis: Redis, workspace: str, tmp_path: Path, *, any_server: bool) -> App:
    """Our server served (Moderators by name, manage_guild, Stage crew by id make
    moderators), another server too with ``any_server``; ``stream.state`` takes two
    approvals."""
    more = f"    any_server: {str(any_server).lower()}\n"
    path = team_config(tmp_path, [], [f"discord:{CREW}"], server_tenants(workspace, more))
    rule = f"    - pattern: {KEY}\n"
    text = path.read_text()
    assert text.count(rule) == 1
    path.write_text(text.replace(rule, rule + "      approval: {quorum: 2}\n"))
    return build_app(workspace, path, client=redis)


@pytest.fixture(params=[False, True], ids=["only-ours", "any-server"])
def proposer(
    request: pytest.FixtureRequest,
    redis_client: Redis,
    workspace: str,
    tmp_path: Path,
    discord_api: DiscordServer,
    openai_server: OpenAIServer,
) -> Iterator[DiscordBot]:
    """The bot, listening in #deliberation of every server it knows (the other one too),
    its model proposing ``stream.state = off``."""
    delete_workspace(redis_client, THEIRS)
    app = guarded_app(redis_client, workspace, tmp_path, any_server=request.param)
    openai_server.answer_with = proposing(KEY, "off")
    listening = Listening.of(["deliberation"], "mentions")
    bot = DiscordBot(app, discord_api, listening=listening, model=model(openai_server))
    bot.dispatch("GUILD_CREATE", payloads.guild_create(ELSEWHERE))
    yield bot
    bot.close()
    delete_workspace(redis_client, THEIRS)


def approved_by_a_moderator(bot: DiscordBot) -> tuple[dict[str, Any], str]:
    """The model's proposal, approved by SAM (1 of 2): the reply offering it, its id."""
    bot.say("let's end the stream")
    reply = bot.api.public()[-1]
    pid = payloads.custom_id_of(reply, "DiscardProposal").split(":")[3]
    sam = Actor(kind=ActorKind.MODERATOR, id=SAM, platform="discord", roles=("moderator",))
    assert isinstance(bot.app.gateway.apply_proposal(pid, sam, revision=0), Pending)
    return reply, pid


def current(app: App, pid: str) -> Proposal:
    found = app.gateway.proposals.get(pid)
    assert found is not None
    return found


def untouched(app: App, pid: str) -> None:
    waiting = current(app, pid)
    assert waiting.status is ProposalStatus.PENDING and waiting.reason is None
    assert [a.by.id for a in waiting.approvals] == [SAM]
    assert app.store.get(KEY) is None and len(app.log) == 0


def test_our_member_cannot_discard_what_a_moderator_approved(proposer: DiscordBot) -> None:
    app, api = proposer.app, proposer.api
    reply, pid = approved_by_a_moderator(proposer)
    proposer.click(reply, "DiscardProposal", user=ALICE)
    proposer.submit(reply, "I'd rather not", user=ALICE)
    [told] = api.ephemerals()
    assert REFUSED in told["content"]
    untouched(app, pid)
    assert api.message(reply["id"]).get("edits") is None  # the message stays open
    proposer.click(reply, "DiscardProposal", user=MIA)  # manage_guild: a moderator here
    proposer.submit(reply, "we stay live", user=MIA)
    done = current(app, pid)
    assert done.status is ProposalStatus.DISCARDED and done.resolved_by is not None
    assert done.resolved_by.id == MIA and done.reason == "we stay live"


def forged_form(channel: str, pid: str) -> str:
    """The Discard form of ``pid``'s button, as if opened in ``channel``."""
    ref = ButtonRef(
        action="DiscardProposal", session=f"discord:{channel}", target_id=pid, version=0
    )
    return ref.model_copy(update={"asks": "reason"}).form_id()


@pytest.mark.parametrize("who", [STRANGER, EVE], ids=["their-owner", "their-Moderators"])
def test_another_servers_people_cannot_discard_ours(
    proposer: DiscordBot, redis_client: Redis, who: str
) -> None:
    """Our Discard clicked from their server, and forms naming our proposal sent from
    there (as if opened in their channel, or in ours): each refused, nothing written in
    our workspace."""
    app, api = proposer.app, proposer.api
    reply, pid = approved_by_a_moderator(proposer)
    ours = [app.store.workspace]
    before = footprints(redis_client, ours)
    our_button = payloads.custom_id_of(reply, "DiscardProposal")
    body = {"content": "x", "components": [payloads.action_row(our_button)]}
    carried = api.new_message(FAR, body)
    with api.lock:
        api.messages.append(carried)
    proposer.dispatch(proposer.interaction(payloads.component(carried, our_button, who)))
    assert api.interactions.modals == []  # refused before anyone types
    for channel in (FAR, CHANNEL):
        sent = payloads.modal_submit(carried, forged_form(channel, pid), {"reason": "end"}, who)
        proposer.dispatch(proposer.interaction(sent))
    assert len(api.ephemerals()) == 3  # each told, alone
    untouched(app, pid)
    assert written(before, footprints(redis_client, ours)) == set()
