"""The decision lifecycle in Slack: an agent's proposal edited in a modal commits the value
typed there, a discard keeps the reason typed there, an expired proposal's message closes,
"Undo" restores what a click replaced, ``/deliberate pending`` lists what waits, and a
submitted form counts once and only as the bot opened it.

The model proposes through its tool (the local OpenAI-protocol server); the modals are
opened on the local Slack API (``views.open``) and submitted as Slack posts a
``view_submission``."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai
import pytest
from redis import Redis

from bot.app import App, build_app
from bot.slack.forms import prefill_for
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import ProposalStatus
from core.llm.chat import ChatModel
from tests.bot.slack.conftest import config_with_roles
from tests.bot.slack.rig import SlackBot, button, mention, message
from tests.factories import mutation
from tests.model_script import proposing
from tests.openai_server import OpenAIServer
from tests.servers.slack_api import SlackServer, slack_error

KEY = "scene.name"


@contextmanager
def proposing_bot(app: App, slack: SlackServer, model: OpenAIServer) -> Iterator[SlackBot]:
    """The bot, its model proposing ``scene.name = BRB`` whenever it is asked."""
    model.answer_with = proposing(KEY, "BRB")
    client = openai.OpenAI(api_key="k", base_url=model.base_url, max_retries=0)
    bot = SlackBot(app, slack, ChatModel(client, "m", timeout_sec=5)).start()
    try:
        yield bot
    finally:
        bot.stop()


@pytest.fixture
def bot(team_app: App, slack_api: SlackServer, openai_server: OpenAIServer) -> Iterator[SlackBot]:
    with proposing_bot(team_app, slack_api, openai_server) as running:
        yield running


def proposed(bot: SlackBot) -> dict[str, Any]:
    """The bot's reply offering the model's proposal (Apply, Edit, Discard)."""
    bot.event(mention("let's take a break"))
    reply = bot.replies()[-1]
    assert button(reply, "ApplyProposal")["text"]["text"] == f"Apply: set {KEY} = BRB"
    return reply


def proposal_id(reply: dict[str, Any]) -> str:
    return str(json.loads(button(reply, "EditProposal")["value"])["t"])


def box(view: dict[str, Any]) -> dict[str, Any]:
    """The modal's input block."""
    [found] = [b for b in view["blocks"] if b["type"] == "input"]
    return dict(found)


def closing_line(update: dict[str, Any]) -> str:
    return str(update["blocks"][-1]["elements"][0]["text"])


def has_buttons(message: dict[str, Any]) -> bool:
    return any(block["type"] == "actions" for block in message.get("blocks") or [])


def test_an_edit_in_the_modal_commits_the_value_typed_there(bot: SlackBot, team_app: App) -> None:
    reply = proposed(bot)
    edit = button(reply, "EditProposal")
    assert edit["action_id"].endswith(":value") and edit["text"]["text"] == "Edit"
    bot.click(reply, "EditProposal", user="U0BOB", trigger_id="111.222.edit")
    [form] = bot.opened()
    assert bot.slack.views[0]["trigger_id"] == "111.222.edit"
    element = box(form)["element"]
    assert (element["initial_value"], element["multiline"]) == ("BRB", True)
    assert box(form)["optional"] is False and f"set {KEY} = BRB" in json.dumps(form["blocks"])
    bot.listeners.idle()
    assert team_app.store.version(KEY) == 0 and bot.slack.updates == []  # nothing sent yet
    acked = bot.submit(form, "Ending", user="U0BOB")
    assert (acked.status_code, acked.text) == (200, "")  # the modal closes
    [update] = bot.slack.wait_until(lambda: bot.slack.updates)
    assert not has_buttons(update)
    assert "Ending" in closing_line(update) and closing_line(update).endswith("by <@U0BOB>")
    entry = team_app.store.get(KEY)
    assert entry is not None and entry.value == "Ending"
    [record] = team_app.log.latest(1, key=KEY)
    meta = record.mutation.meta
    assert meta["proposedValue"] == "BRB" and meta["editedBy"] == str(record.mutation.actor)
    assert str(record.mutation.actor).endswith("U0BOB")
    undo = button(bot.replies(2)[-1], "RevertMutation")  # under "What next?"
    assert undo["text"]["text"] == "Undo"


def test_a_discard_keeps_the_reason_typed_in_the_modal(bot: SlackBot, team_app: App) -> None:
    reply = proposed(bot)
    assert button(reply, "DiscardProposal")["action_id"].endswith(":reason")
    bot.click(reply, "DiscardProposal", user="U0BOB")
    [form] = bot.opened()
    assert box(form)["optional"] is True and "initial_value" not in box(form)["element"]
    assert box(form)["element"]["max_length"] == 300
    bot.submit(form, "we are live until 9", user="U0BOB")
    [update] = bot.slack.wait_until(lambda: bot.slack.updates)
    assert "(we are live until 9)" in closing_line(update) and not has_buttons(update)
    kept = team_app.gateway.proposals.get(proposal_id(reply))
    assert kept is not None and kept.status is ProposalStatus.DISCARDED
    assert kept.reason == "we are live until 9"
    assert team_app.store.version(KEY) == 0


def test_a_discard_without_a_reason_discards(bot: SlackBot, team_app: App) -> None:
    reply = proposed(bot)
    bot.click(reply, "DiscardProposal", user="U0BOB")
    bot.submit(bot.opened()[0], None, user="U0BOB")  # the optional box left empty
    bot.slack.wait_until(lambda: bot.slack.updates)
    kept = team_app.gateway.proposals.get(proposal_id(reply))
    assert kept is not None and kept.status is ProposalStatus.DISCARDED and kept.reason is None


def test_an_expired_proposal_is_refused_and_its_message_closed(
    team_app: App, slack_api: SlackServer, openai_server: OpenAIServer
) -> None:
    gateway = MutationGateway(team_app.store, team_app.policy, proposal_expiry_ms=0)
    due = dataclasses.replace(team_app, gateway=gateway)  # its proposals due at once
    with proposing_bot(due, slack_api, openai_server) as bot:
        reply = proposed(bot)
        bot.click(reply, "EditProposal", user="U0BOB")
        bot.submit(bot.opened()[0], "Live", user="U0BOB")
        [update] = slack_api.wait_until(lambda: slack_api.updates)
        bot.listeners.idle()
    line = closing_line(update)
    assert line.startswith("⌛ This proposal expired at ") and "nothing was changed" in line
    assert not has_buttons(slack_api.messages[0])  # the clicked message, as Slack shows it
    assert slack_api.ephemerals == []  # the closed message says it all
    assert team_app.store.version(KEY) == 0
    expired = team_app.gateway.proposals.get(proposal_id(reply))
    assert expired is not None and expired.status is ProposalStatus.EXPIRED


def test_undo_restores_what_the_click_replaced(bot: SlackBot, team_app: App) -> None:
    team_app.gateway.propose(mutation("set", KEY, "Live", "user:U0ALICE"))
    reply = proposed(bot)
    bot.click(reply, "ApplyProposal", user="U0BOB")  # asks for nothing: no modal
    bot.slack.wait_until(lambda: bot.slack.updates)
    assert team_app.store.get(KEY).value == "BRB"  # type: ignore[union-attr]
    after = bot.replies(2)[-1]
    assert after["text"] == "What next?" and button(after, "RevertMutation")
    bot.click(after, "RevertMutation", user="U0BOB")
    bot.slack.wait_until(lambda: len(bot.slack.updates) >= 2)
    bot.listeners.idle()
    entry = team_app.store.get(KEY)
    assert entry is not None and (entry.value, entry.version) == ("Live", 3)
    assert not has_buttons(bot.slack.messages[1]) and bot.slack.views == []


def test_a_form_from_a_message_only_its_clicker_saw(bot: SlackBot, team_app: App) -> None:
    """Said "show" in the thread, the proposal's buttons come to the asker alone; the outcome
    of a form opened there replaces that message (through its ``response_url``) and goes to
    the thread."""
    root = mention("let's take a break")
    bot.event(root)
    bot.replies()
    bot.event(message("show", thread_ts=root["ts"]))
    [shown] = bot.ephemerals()
    shown |= {"ts": root["ts"]}  # an ephemeral message is clicked by its container only
    bot.click(shown, "DiscardProposal", user="U0ALICE", ephemeral=True)
    bot.submit(bot.opened()[0], "not now", user="U0ALICE")
    [replaced] = bot.slack.wait_until(lambda: bot.slack.responses)
    assert replaced["replace_original"] is True and "(not now)" in replaced["text"]
    bot.listeners.idle()
    assert "(not now)" in bot.slack.messages[-1]["text"] and bot.slack.updates == []
    kept = team_app.gateway.proposals.get(proposal_id(shown))
    assert kept is not None and kept.reason == "not now"


def test_a_form_slack_would_not_open_is_said_and_changes_nothing(
    bot: SlackBot, team_app: App
) -> None:
    reply = proposed(bot)
    bot.slack.script("POST", "/api/views.open", slack_error("expired_trigger_id"))
    bot.click(reply, "EditProposal", user="U0BOB")
    [notice] = bot.ephemerals()
    assert notice["user"] == "U0BOB" and "did not open the form" in notice["text"]
    bot.listeners.idle()
    assert team_app.store.version(KEY) == 0 and bot.slack.updates == []


def test_an_approval_that_awaits_another_keeps_apply_offered(
    tmp_path: Path,
    redis_client: Redis,
    workspace: str,
    slack_api: SlackServer,
    openai_server: OpenAIServer,
) -> None:
    config = config_with_roles(tmp_path, workspace)
    quorum = f'  keys:\n    - pattern: "{KEY}"\n      type: string\n      approval: {{quorum: 2}}\n'
    config.write_text(config.read_text().replace("  keys:\n", quorum, 1))
    app = build_app(workspace, config, client=redis_client)
    with proposing_bot(app, slack_api, openai_server) as bot:
        reply = proposed(bot)
        bot.click(reply, "ApplyProposal", user="U0BOB")
        [update] = slack_api.wait_until(lambda: slack_api.updates)
        assert "(1 of 2); awaits 1 more approval" in closing_line(update)
        after = bot.replies(2)[-1]  # the buttons that come next: Apply still among them
        assert button(after, "ApplyProposal")["value"] == button(reply, "ApplyProposal")["value"]
        assert app.store.version(KEY) == 0
        bot.click(after, "ApplyProposal", user="U0CAROL")
        slack_api.wait_until(lambda: len(slack_api.updates) >= 2)
        bot.listeners.idle()
    entry = app.store.get(KEY)
    assert entry is not None and entry.value == "BRB"
    approvers = app.log.latest(1, key=KEY)[0].mutation.meta["approvedBy"]
    assert isinstance(approvers, list)
    assert [str(a).rsplit(":", 1)[-1] for a in approvers] == ["U0BOB", "U0CAROL"]


def test_pending_lists_a_waiting_proposal(bot: SlackBot) -> None:
    """``/deliberate pending`` is the shared answer (``bot.chat.answers``), for the asker alone."""
    proposed(bot)
    answer = bot.command("pending")
    assert answer["response_type"] == "ephemeral"
    assert f"{KEY} = BRB" in answer["text"]


def test_a_forged_form_changes_nothing(bot: SlackBot, team_app: App) -> None:
    reply = proposed(bot)
    bot.click(reply, "EditProposal", user="U0BOB")
    [form] = bot.opened()
    real = json.loads(form["private_metadata"])
    other = {**real, "form": "0" * 32}  # a record nobody opened
    moved = {**real, "value": real["value"].replace('"v":0', '"v":1')}  # another version
    forged = [
        ("not json", "not valid"),
        (json.dumps(real | {"extra": 1}), "not valid"),
        (json.dumps(other, separators=(",", ":")), "not one Deliberate opened"),
        (json.dumps(moved, separators=(",", ":")), "not one Deliberate opened"),
    ]
    for metadata, said in forged:
        refused = bot.submit(form, "Ending", user="U0BOB", metadata=metadata)
        assert refused.status_code == 200
        answer = refused.json()
        assert answer["response_action"] == "update"
        text = json.dumps(answer["view"])
        assert said in text and "nothing was changed" in text
    someone_else = bot.submit(form, "Ending", user="U0EVE").json()  # opened for U0BOB
    assert "opened for someone else" in json.dumps(someone_else["view"])
    bot.listeners.idle()
    assert team_app.store.version(KEY) == 0 and bot.slack.updates == []
    assert bot.slack.ephemerals == [] and len(team_app.log) == 0
    waiting = team_app.gateway.proposals.get(proposal_id(reply))
    assert waiting is not None and waiting.status is ProposalStatus.PENDING
    bot.submit(form, "Ending", user="U0BOB")  # the form as opened still works
    bot.slack.wait_until(lambda: bot.slack.updates)
    assert team_app.store.get(KEY).value == "Ending"  # type: ignore[union-attr]


def test_a_form_submitted_again_commits_once(bot: SlackBot, team_app: App) -> None:
    reply = proposed(bot)
    bot.click(reply, "EditProposal", user="U0BOB")
    [form] = bot.opened()
    assert bot.submit(form, "Ending", user="U0BOB").text == ""
    bot.slack.wait_until(lambda: bot.slack.updates)
    bot.listeners.idle()
    assert bot.submit(form, "Live", user="U0BOB").text == ""  # the same view, delivered again
    [notice] = bot.ephemerals(1)
    bot.listeners.idle()
    assert notice["user"] == "U0BOB"
    assert len(bot.slack.updates) == 1 and len(team_app.log) == 1
    entry = team_app.store.get(KEY)
    assert entry is not None and (entry.value, entry.version) == ("Ending", 1)


def test_a_value_too_long_for_the_box_starts_it_empty() -> None:
    assert prefill_for("value", "x" * 3000) == "x" * 3000
    assert prefill_for("value", "x" * 3001) == ""  # Slack's initial_value stops at 3000
    assert prefill_for("value", {"n": 1}) == '{"n":1}'  # any other value as JSON
    assert prefill_for("reason", "BRB") == ""
