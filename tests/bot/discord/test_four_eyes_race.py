"""Four eyes on Discord under a race: the model proposes ``decision.db`` for Alice (four eyes:
she may not approve it); Sam opens its Edit form, then submits it and clicks Apply at the
same moment (both interactions dispatched together, as the gateway would deliver them, in
either order; discord.py runs each in a task, the adapter each click in a thread), round
after round. Whichever lands first, Sam never approves a value he asked for. When the edit
wins, Ria applies the new value (revision 1). The real discord.py client against the local
REST API, real Redis, the model proposing through its tool.

A button carries the revision it was shown for, as the previous release's buttons already
did (``dlb:ACTION:CHANNEL:PROPOSAL:REVISION``): one clicked after an edit is refused, saying
so, and changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from bot.app import App, build_app
from core.gateway.outcome import ProposalStatus
from tests.bot.discord import payloads
from tests.bot.discord.conftest import server_tenants
from tests.bot.discord.payloads import ALICE, CHANNEL, CREW, RIA, SAM
from tests.bot.discord.rig import DiscordBot
from tests.bot.discord.test_clicks import model
from tests.model_script import proposing
from tests.openai_server import OpenAIServer
from tests.racing import four_eyes_broken
from tests.servers.discord_api import DiscordServer
from tests.servers.discord_interactions import EPHEMERAL
from tests.team_config import team_config

KEY = "decision.db"
EYES = f"""\
  keys:
    - pattern: "{KEY}"
      type: string
      approval: {{four_eyes: true}}
"""
ROUNDS = 200  # "hundreds of times on every path" (issue 41): ~0.1 s a round


@pytest.fixture
def eyes_app(redis_client: Redis, workspace: str, tmp_path: Path) -> App:
    path = team_config(tmp_path, [], [f"discord:{CREW}"], server_tenants(workspace))
    path.write_text(path.read_text().replace("  keys:\n", EYES, 1))
    return build_app(workspace, path, client=redis_client)


@pytest.fixture
def bot(
    eyes_app: App, discord_api: DiscordServer, openai_server: OpenAIServer
) -> Iterator[DiscordBot]:
    openai_server.answer_with = proposing(KEY, "postgres")
    running = DiscordBot(eyes_app, discord_api, model=model(openai_server))
    yield running
    running.close()


def asked(bot: DiscordBot) -> dict[str, Any]:
    """Alice asks; the reply offering the proposal (revision 0)."""
    bot.say("which database for billing?", author=ALICE)
    reply = bot.api.public()[-1]
    assert payloads.custom_id_of(reply, "ApplyProposal").endswith(":0")
    return reply


def proposal_of(reply: dict[str, Any]) -> str:
    return payloads.custom_id_of(reply, "ApplyProposal").split(":")[3]


def edit_and_apply(bot: DiscordBot, reply: dict[str, Any], edit_first: bool) -> None:
    """Sam's Edit form (opened now) submitted and his Apply clicked, dispatched together."""
    bot.click(reply, "EditProposal", user=SAM)
    form = bot.api.interactions.modals[-1]
    [box] = payloads.text_inputs(form)
    current = bot.api.message(reply["id"])
    submit = payloads.modal_submit(current, form["custom_id"], {box["custom_id"]: "mine"}, SAM)
    apply = payloads.component(current, payloads.custom_id_of(current, "ApplyProposal"), SAM)
    both = [bot.interaction(submit), bot.interaction(apply)]
    bot.dispatch(*(both if edit_first else both[::-1]))


def test_an_edit_and_an_apply_racing_on_discord_never_approve_their_own_edit(
    bot: DiscordBot, eyes_app: App
) -> None:
    wins = {"edit": 0, "apply": 0}
    for n in range(ROUNDS):
        reply = asked(bot)
        pid = proposal_of(reply)
        edit_and_apply(bot, reply, edit_first=n % 2 == 0)
        kept = eyes_app.gateway.proposals.get(pid)
        assert kept is not None
        if kept.status is ProposalStatus.PENDING:  # the edit came first: Ria approves it
            assert kept.edited is not None and kept.approvals == [], n
            wins["edit"] += 1
            shown = bot.api.public()[-1]  # the buttons shown next: the edited value's
            assert payloads.custom_id_of(shown, "ApplyProposal").endswith(f":{pid}:1"), n
            bot.click(shown, "ApplyProposal", user=RIA)
        else:
            assert kept.edited is None, n  # the Apply came first: the value Alice asked for
            wins["apply"] += 1
    records = eyes_app.log.latest(ROUNDS + 1, key=KEY)
    assert len(records) == ROUNDS, wins
    wrong = [four_eyes_broken(r.mutation.meta, r.mutation.actor) for r in records]
    assert [w for w in wrong if w] == [], wins


def test_a_button_of_the_revision_before_an_edit_is_refused_and_changes_nothing(
    bot: DiscordBot, discord_api: DiscordServer, eyes_app: App
) -> None:
    reply = asked(bot)
    pid = proposal_of(reply)
    bot.click(reply, "EditProposal", user=SAM)
    bot.submit(reply, "mine", user=SAM)
    old = f"dlb:ApplyProposal:{CHANNEL}:{pid}:0"  # as the message was first sent
    bot.click(reply, "ApplyProposal", user=RIA, custom_id=old)
    refused = discord_api.messages[-1]
    assert refused["flags"] == EPHEMERAL, refused
    assert f"edited by moderator:{SAM} since you saw it" in refused["content"]
    kept = eyes_app.gateway.proposals.get(pid)
    assert kept is not None and kept.status is ProposalStatus.PENDING and kept.approvals == []
    assert len(eyes_app.log) == 0
