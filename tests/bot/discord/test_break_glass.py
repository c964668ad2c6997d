"""Breaking the glass on Discord: a proposal's Apply, where its key names a break-glass role,
has "Break glass" beside it; a click answers with a modal (interaction response type 9)
asking why, and its submission applies the proposal at once, flagged, listed for review and
announced by the shipped rule; ``/deliberate breakglass`` does the same. Gateway payloads
through discord.py's own parsers, the local REST API, real Redis, the model proposing
through its tool. The member's roles map to ours as every click's do: RIA holds the Stage
crew role, which the server binds to ``oncall``; SAM is a moderator, ALICE neither.

The attacks beside it: no reason, only blanks, too long a reason; a clicker without the role;
a proposal already applied, discarded or expired; a click from a server not served or a DM,
a button naming another workspace's proposal, forged forms; the same submission twice."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from bot.app import App, build_app
from bot.chat.break_glass import NO_REASON, TOO_LONG
from core.gateway.break_glass import MAX_GLASS_REASON, BreakGlass
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import Pending, ProposalStatus
from core.redis.client import RedisClient
from tests.bot.cli.process import run
from tests.bot.discord import payloads
from tests.bot.discord.conftest import server_tenants
from tests.bot.discord.payloads import ALICE, CHANNEL, CREW, DM, FAR, OTHER, RIA, SAM
from tests.bot.discord.rig import DiscordBot
from tests.bot.discord.test_clicks import closing_lines, model
from tests.conftest import delete_workspace
from tests.factories import mutation
from tests.model_script import proposing
from tests.openai_server import OpenAIServer
from tests.servers.discord_api import DiscordServer
from tests.servers.discord_interactions import EPHEMERAL, CallbackType
from tests.servers.slack_api import SlackServer
from tests.team_config import team_config

KEY = "decision.db"
REASON = "billing is down and customers wait"
GLASS_CHANNEL = "C0GLASS"
POLICY = f"""\
  keys:
    - pattern: "{KEY}"
      type: string
      approval: {{quorum: 2, break_glass: {{role: oncall}}}}
"""


@pytest.fixture
def config(tmp_path: Path, workspace: str) -> Path:
    """The server binds ``oncall`` to the Stage crew role (RIA), which may break the glass on
    ``decision.db``, whose proposals otherwise wait for two approvals."""
    oncall = f'          oncall: {{groups: ["discord:{CREW}"]}}\n'
    path = team_config(tmp_path, [], [], server_tenants(workspace, oncall))
    path.write_text(path.read_text().replace("  keys:\n", POLICY, 1))
    return path


@pytest.fixture
def glass_app(redis_client: Redis, workspace: str, config: Path) -> App:
    return build_app(workspace, config, client=redis_client)


def proposing_bot(app: App, api: DiscordServer, openai_server: OpenAIServer) -> DiscordBot:
    openai_server.answer_with = proposing(KEY, "postgres")
    return DiscordBot(app, api, model=model(openai_server))


@pytest.fixture
def bot(
    glass_app: App, discord_api: DiscordServer, openai_server: OpenAIServer
) -> Iterator[DiscordBot]:
    running = proposing_bot(glass_app, discord_api, openai_server)
    yield running
    running.close()


@pytest.fixture
def elsewhere(redis_client: RedisClient, config: Path) -> Iterator[App]:
    """Another workspace, with the same config."""
    name = f"test-{uuid.uuid4().hex[:12]}"
    yield build_app(name, config, client=redis_client)
    delete_workspace(redis_client, name)


def proposed(bot: DiscordBot) -> dict[str, Any]:
    bot.say("which database for billing?")
    reply = bot.api.public()[-1]
    assert payloads.custom_id_of(reply, "ApplyProposal")
    return reply


def glass_of(message: dict[str, Any]) -> str:
    [glass] = [c for c in payloads.custom_ids(message) if c.endswith(":glass")]
    return glass


def proposal_of(message: dict[str, Any]) -> str:
    return glass_of(message).split(":")[3]


def modal_shown(api: DiscordServer, count: int = 1) -> dict[str, Any]:
    assert len(api.interactions.modals) == count
    return api.interactions.modals[-1]


def submitted(bot: DiscordBot, reply: dict[str, Any], typed: str, user: str = RIA) -> None:
    """The break-glass form of ``reply`` submitted by ``user`` with ``typed``."""
    form = "dlf:" + glass_of(reply).removeprefix("dlb:")
    bot.dispatch(bot.interaction(payloads.modal_submit(reply, form, {"glass": typed}, user)))


def answered(api: DiscordServer) -> str:
    """The last answer for one person alone."""
    return str(api.ephemerals()[-1]["content"])


def closed(message: dict[str, Any]) -> bool:
    buttons = [b for row in message["components"] for b in row["components"]]
    return bool(buttons) and all(b["disabled"] for b in buttons)


def unchanged(api: DiscordServer, app: App, reply: dict[str, Any]) -> None:
    assert app.store.version(KEY) == 0 and len(app.log) == 0
    pending = app.gateway.proposals.get(proposal_of(reply))
    assert pending is not None and pending.status is ProposalStatus.PENDING
    assert pending.break_glass is None
    assert BreakGlass(app.gateway).listed(reviewed=True) == []
    assert api.message(reply["id"]).get("edits") is None


def glass_applied(bot: DiscordBot, reply: dict[str, Any]) -> None:
    bot.click(reply, "ApplyProposal", user=RIA, custom_id=glass_of(reply))
    submitted(bot, reply, REASON)
    assert bot.app.store.version(KEY) == 1


# --- the happy path ----------------------------------------------------------------------


def test_break_glass_answers_with_a_modal_whose_reason_applies_it_at_once(
    bot: DiscordBot,
    discord_api: DiscordServer,
    glass_app: App,
    workspace: str,
    config: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slack = SlackServer(channels={GLASS_CHANNEL}).__enter__()  # where the rule announces it
    try:
        for name, value in slack.env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("DELIBERATE_BREAKGLASS_CHANNEL", GLASS_CHANNEL)
        assert run(capsys, workspace, "--config", str(config), "worker", "--burst")[0] == 0
        reply = proposed(bot)
        ids = payloads.custom_ids(reply)
        apply = payloads.custom_id_of(reply, "ApplyProposal")
        assert ids[ids.index(apply) + 1] == glass_of(reply) == f"{apply}:glass"  # beside it
        buttons = {b["custom_id"]: b for row in reply["components"] for b in row["components"]}
        assert buttons[glass_of(reply)]["label"] == "Break glass"
        assert buttons[glass_of(reply)]["style"] == 2  # secondary: not the first thing to click

        bot.click(reply, "ApplyProposal", user=RIA, custom_id=glass_of(reply))
        [(_, callback, delay)] = discord_api.interactions.callbacks
        assert callback["type"] == CallbackType.MODAL and delay < 3
        form = modal_shown(discord_api)
        assert form["custom_id"] == "dlf:" + glass_of(reply).removeprefix("dlb:")
        assert form["title"] == "Break the glass"
        [box] = payloads.text_inputs(form)
        assert (box["style"], box["required"], box["min_length"]) == (2, True, 1)
        assert box["max_length"] == MAX_GLASS_REASON and "value" not in box
        assert len(glass_app.log) == 0 and discord_api.message(reply["id"]).get("edits") is None

        submitted(bot, reply, f"  {REASON}\n")
        (_, answer, _) = discord_api.interactions.callbacks[-1]
        assert answer == {"type": CallbackType.DEFERRED_UPDATE}
        message = discord_api.message(reply["id"])
        assert closed(message)
        assert closing_lines(message) == [
            f'✅ Break-glass apply. Committed: set {KEY} "postgres" (v1); reason: {REASON} '
            f"— by <@{RIA}>"
        ]
        [record] = glass_app.log.latest(5)
        assert record.mutation.meta["breakGlass"] == {
            "by": str(record.mutation.actor),
            "reason": REASON,
        }
        assert str(record.mutation.actor).endswith(RIA)
        applied = glass_app.gateway.proposals.get(proposal_of(reply))
        assert applied is not None and applied.status is ProposalStatus.APPLIED
        assert applied.break_glass == REASON and applied.approvals == []

        cli = ("--config", str(config))
        code, out, _ = run(capsys, workspace, *cli, "proposals", "--break-glass")
        (line,) = out.splitlines()
        assert code == 0 and line.startswith(record.mutation.id)
        assert f"set {KEY} (v1) by {record.mutation.actor}: {REASON}" in line
        code, _, err = run(capsys, workspace, *cli, "worker", "--burst")
        assert code == 0, err
        [announced] = [m for m in slack.messages if m["channel"] == GLASS_CHANNEL]
        assert announced["text"].startswith(
            f"Break-glass by {record.mutation.actor}: set {KEY} (v1), skipping approval. "
            f"Reason: {REASON}."
        )
    finally:
        slack.__exit__(None, None, None)


def test_a_key_that_names_no_role_offers_no_break_glass(
    team_app: App, discord_api: DiscordServer, openai_server: OpenAIServer
) -> None:
    plain = proposing_bot(team_app, discord_api, openai_server)
    try:
        reply = proposed(plain)
    finally:
        plain.close()
    assert not [c for c in payloads.custom_ids(reply) if c.endswith(":glass")]


# --- the reason --------------------------------------------------------------------------


@pytest.mark.parametrize("typed", ["", "   \n  ", "\u3164\u200b"])  # (invisible)
def test_no_reason_or_only_blanks_is_refused(
    bot: DiscordBot, discord_api: DiscordServer, glass_app: App, typed: str
) -> None:
    reply = proposed(bot)
    bot.click(reply, "ApplyProposal", user=RIA, custom_id=glass_of(reply))
    submitted(bot, reply, typed)
    (_, answer, _) = discord_api.interactions.callbacks[-1]
    assert answer["type"] == CallbackType.MESSAGE and answer["data"]["flags"] == EPHEMERAL
    assert answered(discord_api) == NO_REASON
    unchanged(discord_api, glass_app, reply)


def test_a_reason_over_the_limit_is_refused(
    bot: DiscordBot, discord_api: DiscordServer, glass_app: App
) -> None:
    reply = proposed(bot)
    bot.click(reply, "ApplyProposal", user=RIA, custom_id=glass_of(reply))
    submitted(bot, reply, "x" * (MAX_GLASS_REASON + 1))
    assert answered(discord_api) == TOO_LONG
    unchanged(discord_api, glass_app, reply)
    submitted(bot, reply, "x" * MAX_GLASS_REASON)  # at the limit: applied
    assert glass_app.store.version(KEY) == 1


# --- who may -----------------------------------------------------------------------------


@pytest.mark.parametrize(("user", "who"), [(ALICE, "user"), (SAM, "moderator")])
def test_a_clicker_without_the_role_is_told_which_role_may(
    bot: DiscordBot, discord_api: DiscordServer, glass_app: App, user: str, who: str
) -> None:
    reply = proposed(bot)
    bot.click(reply, "ApplyProposal", user=user, custom_id=glass_of(reply))
    [(_, answer, _)] = discord_api.interactions.callbacks
    assert answer["type"] == CallbackType.MESSAGE and answer["data"]["flags"] == EPHEMERAL
    assert answered(discord_api) == (
        f"Not done: {who}:{user} does not hold the oncall role: only it may break the glass "
        f"on {KEY}; nothing was changed"
    )
    assert discord_api.interactions.modals == []  # no form to type a reason into
    unchanged(discord_api, glass_app, reply)


def test_a_role_taken_away_while_the_form_was_open_refuses_it(
    bot: DiscordBot, discord_api: DiscordServer, glass_app: App
) -> None:
    """RIA opens the form holding the Stage crew role; a moderator takes the role away
    before she submits it: the submission carries her roles as they are now, and the
    gateway refuses it (recorded), whatever the form she was shown."""
    reply = proposed(bot)
    bot.click(reply, "ApplyProposal", user=RIA, custom_id=glass_of(reply))
    form = modal_shown(discord_api)["custom_id"]
    data = payloads.modal_submit(reply, form, {"glass": REASON}, RIA)
    data["member"] |= {"roles": [], "permissions": str(payloads.permissions_of(ALICE).value)}
    bot.dispatch(bot.interaction(data))
    assert answered(discord_api).startswith(
        f"Not done: user:{RIA} does not hold the oncall role: only it may break the glass "
        f"on {KEY}; nothing was changed"
    )
    unchanged(discord_api, glass_app, reply)
    [row] = [d for d in glass_app.gateway.decisions.recent() if d["outcome"] == "rejected"]
    assert "does not hold the oncall role" in row["message"]


# --- the proposal moved on ---------------------------------------------------------------


def test_a_proposal_already_applied_is_refused(
    bot: DiscordBot, discord_api: DiscordServer, glass_app: App
) -> None:
    reply = proposed(bot)
    glass_applied(bot, reply)
    actor = glass_app.log.latest(1)[0].mutation.actor
    bot.click(reply, "ApplyProposal", user=RIA, custom_id=glass_of(reply))  # greyed out: forged
    assert answered(discord_api) == (
        f"Not done: this proposal was already applied by {actor}; nothing was changed"
    )
    assert len(discord_api.interactions.modals) == 1 and len(glass_app.log) == 1


def test_a_discarded_proposal_is_refused(
    bot: DiscordBot, discord_api: DiscordServer, glass_app: App
) -> None:
    reply = proposed(bot)
    bot.click(reply, "DiscardProposal", user=SAM)
    bot.submit(reply, "keep mysql", user=SAM)
    bot.click(reply, "ApplyProposal", user=RIA, custom_id=glass_of(reply))
    assert answered(discord_api) == (
        f"Not done: this proposal was already discarded by moderator:{SAM}; nothing was changed"
    )
    assert len(discord_api.interactions.modals) == 1 and glass_app.store.version(KEY) == 0
    assert BreakGlass(glass_app.gateway).listed(reviewed=True) == []


def test_an_expired_proposal_is_refused_and_its_message_closed(
    glass_app: App, discord_api: DiscordServer, openai_server: OpenAIServer
) -> None:
    gateway = MutationGateway(glass_app.store, glass_app.policy, proposal_expiry_ms=0)
    due = dataclasses.replace(glass_app, gateway=gateway)  # its proposals due at once
    bot = proposing_bot(due, discord_api, openai_server)
    try:
        reply = proposed(bot)
        bot.click(reply, "ApplyProposal", user=RIA, custom_id=glass_of(reply))
        submitted(bot, reply, REASON)
        message = discord_api.message(reply["id"])
        [line] = closing_lines(message)
        assert line.startswith("⌛ This proposal expired at ") and "nothing was changed" in line
        assert closed(message)
        bot.click(reply, "ApplyProposal", user=RIA, custom_id=glass_of(reply))  # again
        assert answered(discord_api).startswith("Not done: this proposal expired at ")
        assert len(discord_api.interactions.modals) == 1
    finally:
        bot.close()
    assert glass_app.store.version(KEY) == 0
    expired = glass_app.gateway.proposals.get(proposal_of(reply))
    assert expired is not None and expired.status is ProposalStatus.EXPIRED


# --- forged and replayed -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("channel", "said"),
    [(FAR, "This server isn't set up for Deliberate"), (DM, "doesn't take direct messages")],
)
def test_a_click_from_a_server_not_served_or_a_dm_changes_nothing(
    bot: DiscordBot, discord_api: DiscordServer, glass_app: App, channel: str, said: str
) -> None:
    reply = proposed(bot)
    elsewhere = reply | {"channel_id": channel}
    data = payloads.component(elsewhere, glass_of(reply), RIA)
    bot.dispatch(bot.interaction(data))
    assert said in answered(discord_api) and "nothing was changed" in answered(discord_api)
    assert discord_api.interactions.modals == []
    unchanged(discord_api, glass_app, reply)


def test_a_button_naming_another_workspaces_proposal_changes_nothing(
    bot: DiscordBot, discord_api: DiscordServer, glass_app: App, elsewhere: App
) -> None:
    theirs = elsewhere.gateway.propose(mutation("set", KEY, "mysql", "agent:model"))
    assert isinstance(theirs, Pending)
    reply = proposed(bot)
    forged = glass_of(reply).replace(proposal_of(reply), theirs.proposal.id)
    # a message showing it: one the bot posted before the server moved to this workspace
    shown = reply | {"components": [payloads.action_row(forged)]}
    bot.dispatch(bot.interaction(payloads.component(shown, forged, RIA)))
    assert answered(discord_api) == (
        f"Not done: no proposal {theirs.proposal.id} (it may have expired); nothing was changed"
    )
    form = "dlf:" + forged.removeprefix("dlb:")  # and its form, never opened
    bot.dispatch(bot.interaction(payloads.modal_submit(reply, form, {"glass": REASON}, RIA)))
    assert answered(discord_api).startswith("This proposal is no longer pending.\n")
    assert discord_api.interactions.modals == []
    unchanged(discord_api, glass_app, reply)
    kept = elsewhere.gateway.proposals.get(theirs.proposal.id)
    assert kept is not None and kept.status is ProposalStatus.PENDING
    assert elsewhere.store.version(KEY) == 0


def test_a_forged_form_changes_nothing(
    bot: DiscordBot, discord_api: DiscordServer, glass_app: App
) -> None:
    reply = proposed(bot)
    form = "dlf:" + glass_of(reply).removeprefix("dlb:")
    forged = [
        (form.replace("ApplyProposal", "DiscardProposal"), {"glass": REASON}),  # not Apply
        (form.replace(":0:glass", ":00:glass"), {"glass": REASON}),  # spelled otherwise
        (form.replace(f":{CHANNEL}:", f":{OTHER}:"), {"glass": REASON}),  # elsewhere's
        (form, {"reason": REASON}),  # the wrong input
        (form.removesuffix(":glass") + ":value", {"value": REASON}),  # Apply asking a value
    ]
    bot.dispatch(
        *[
            bot.interaction(payloads.modal_submit(reply, custom_id, typed, RIA))
            for custom_id, typed in forged
        ]
    )
    notices = discord_api.ephemerals()
    assert len(notices) == len(forged)
    assert all("nothing was changed" in n["content"] for n in notices)
    said = " ".join(n["content"] for n in notices)
    for reason in ("not one Deliberate made", "not valid", "another conversation"):
        assert reason in said
    unchanged(discord_api, glass_app, reply)


def test_the_same_submission_twice_applies_once(
    bot: DiscordBot, discord_api: DiscordServer, glass_app: App
) -> None:
    reply = proposed(bot)
    bot.click(reply, "ApplyProposal", user=RIA, custom_id=glass_of(reply))
    form = modal_shown(discord_api)["custom_id"]
    data = payloads.modal_submit(reply, form, {"glass": REASON}, RIA)
    bot.dispatch(bot.interaction(data), bot.interaction(data))  # at once
    assert len(glass_app.log) == 1
    bot.dispatch(bot.interaction(data))  # later: the same click again
    assert len(glass_app.log) == 1 and glass_app.store.version(KEY) == 1
    assert "already handled" in answered(discord_api)
    [listed] = BreakGlass(glass_app.gateway).listed()
    assert listed["reason"] == REASON


# --- /deliberate breakglass --------------------------------------------------------------


def test_the_command_applies_at_once_for_the_role_alone(
    bot: DiscordBot, discord_api: DiscordServer, glass_app: App
) -> None:
    [command] = discord_api.commands[payloads.GUILD]
    options = {o["name"]: o for o in command["options"]}["breakglass"]["options"]
    assert [(o["name"], o["required"]) for o in options] == [
        ("proposal", True),
        ("reason", True),
    ]
    assert options[1]["max_length"] == MAX_GLASS_REASON
    reply = proposed(bot)
    bot.command("breakglass", user=ALICE, proposal=f"{proposal_of(reply)}@0", reason=REASON)
    refused = discord_api.messages[-1]
    assert (
        refused["flags"] == EPHEMERAL
        and f"user:{ALICE} does not hold the oncall role" in (refused["content"])
    )
    unchanged(discord_api, glass_app, reply)
    bot.command("breakglass", user=RIA, proposal=f"{proposal_of(reply)}@0", reason=REASON)
    answer = discord_api.messages[-1]
    assert answer["flags"] == EPHEMERAL and answer["edits"] == 1
    assert (
        f'Break-glass apply. Committed: set {KEY} "postgres" (v1); reason: {REASON}'
        in (answer["content"])
    )
    [listed] = BreakGlass(glass_app.gateway).listed()
    assert listed["proposal"] == proposal_of(reply) and listed["reason"] == REASON
    bot.command("breakglass", user=RIA, proposal=f"{proposal_of(reply)}@0", reason="   ")
    assert "needs a reason" in discord_api.messages[-1]["content"]
    bot.command("breakglass", user=RIA, proposal=proposal_of(reply), reason=REASON)
    assert "Name the revision you saw" in discord_api.messages[-1]["content"]
    assert len(glass_app.log) == 1
