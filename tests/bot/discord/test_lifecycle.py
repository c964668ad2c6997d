"""The decision lifecycle as people meet it on Discord, through discord.py and the local REST
API: Edit and Discard answer their click with a modal (interaction response type 9) and send
it, with what was typed, when the modal is submitted; an expired proposal is refused and its
message closed; "Undo" under a commit restores what was there; ``/deliberate pending`` lists
what waits. A form read back from a forged custom_id changes nothing, and a submission
delivered twice commits once."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from bot.app import App
from bot.discord.buttons import TEMPLATE, ButtonRef
from bot.discord.forms import Submitted, read_form
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import ProposalStatus
from tests.bot.discord import payloads
from tests.bot.discord.payloads import ALICE, CHANNEL, OTHER, RIA, SAM
from tests.bot.discord.rig import DiscordBot
from tests.bot.discord.test_clicks import closing_lines, model
from tests.model_script import proposing
from tests.openai_server import OpenAIServer
from tests.servers.discord_api import DiscordServer
from tests.servers.discord_interactions import EPHEMERAL, CallbackType

KEY = "decision.db"


def proposing_bot(app: App, discord_api: DiscordServer, openai_server: OpenAIServer) -> DiscordBot:
    """The model proposes ``decision.db = postgres`` at the first turn (a proposal a person
    applies, edits or discards)."""
    openai_server.answer_with = proposing(KEY, "postgres")
    return DiscordBot(app, discord_api, model=model(openai_server))


@pytest.fixture
def proposer(
    team_app: App, discord_api: DiscordServer, openai_server: OpenAIServer
) -> Iterator[DiscordBot]:
    bot = proposing_bot(team_app, discord_api, openai_server)
    yield bot
    bot.close()


def proposed(bot: DiscordBot) -> dict[str, Any]:
    """The reply that offers the proposal's buttons."""
    bot.say("which database for billing?")
    reply = bot.api.public()[-1]
    assert payloads.custom_id_of(reply, "ApplyProposal")
    return reply


def proposal_of(message: dict[str, Any]) -> str:
    return payloads.custom_id_of(message, "ApplyProposal").split(":")[3]


def closed(message: dict[str, Any]) -> bool:
    buttons = [b for row in message["components"] for b in row["components"]]
    return bool(buttons) and all(b["disabled"] for b in buttons)


def test_edit_opens_a_form_and_commits_the_edited_value(
    proposer: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    reply = proposed(proposer)
    edit = payloads.custom_id_of(reply, "EditProposal")
    assert edit.endswith(":value")
    proposer.click(reply, "EditProposal")
    [(_, callback, delay)] = discord_api.interactions.callbacks
    assert callback["type"] == CallbackType.MODAL and delay < 3  # the form, not a defer
    [form] = discord_api.interactions.modals
    assert form["custom_id"] == "dlf:" + edit.removeprefix("dlb:")
    [typed_in] = payloads.text_inputs(form)
    assert (typed_in["value"], typed_in["style"], typed_in["required"]) == ("postgres", 2, True)
    assert len(team_app.log) == 0 and discord_api.message(reply["id"]).get("edits") is None

    proposer.submit(reply, "postgres 16 with read replicas")
    (_, answered, _) = discord_api.interactions.callbacks[-1]
    assert answered == {"type": CallbackType.DEFERRED_UPDATE}  # then as a click is answered
    entry = team_app.store.get(KEY)
    assert entry is not None and entry.value == "postgres 16 with read replicas"
    [record] = team_app.log.latest(5)
    meta = record.mutation.meta
    assert (meta["proposedValue"], meta["editedBy"]) == ("postgres", f"user:{ALICE}")
    message = discord_api.message(reply["id"])
    assert closed(message)
    assert closing_lines(message) == [
        f'✅ Committed: set {KEY} "postgres 16 with read replicas" (v1) — by <@{ALICE}>'
    ]


def test_a_form_opened_before_a_restart_is_submitted_all_the_same(
    team_app: App, discord_api: DiscordServer, openai_server: OpenAIServer
) -> None:
    first = proposing_bot(team_app, discord_api, openai_server)
    try:
        reply = proposed(first)
        first.click(reply, "EditProposal")
    finally:
        first.close()
    again = DiscordBot(team_app, discord_api)  # a new process: nothing in memory
    try:
        again.submit(reply, "postgres 17")
        assert team_app.store.get(KEY).value == "postgres 17"  # type: ignore[union-attr]
    finally:
        again.close()


@pytest.mark.parametrize(
    ("action", "asks"), [("EditProposal", "value"), ("DiscardProposal", "reason")]
)
def test_a_form_id_reads_back_as_its_button_and_in_one_spelling(action: str, asks: str) -> None:
    button = f"dlb:{action}:{CHANNEL}:p-1:0:{asks}"
    ref = ButtonRef.of(TEMPLATE.fullmatch(button))  # type: ignore[arg-type]
    assert ref.asks == asks and not ref.ask and ref.custom_id() == button
    form = ref.form_id()
    assert form == "dlf:" + button.removeprefix("dlb:")
    row = {"type": 1, "components": [{"type": 4, "custom_id": asks, "value": "typed"}]}
    submitted = read_form({"custom_id": form, "components": [row]})  # as Discord used to
    assert submitted == Submitted(ref, "typed")
    for otherwise in (form.replace(":0:", ":00:"), form + ":ask", form.replace(":p-1:", "::")):
        with pytest.raises(ValueError):
            read_form({"custom_id": otherwise, "components": []})


def test_discard_with_a_reason_keeps_it(
    proposer: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    reply = proposed(proposer)
    proposer.click(reply, "DiscardProposal", user=SAM)
    [form] = discord_api.interactions.modals
    [typed_in] = payloads.text_inputs(form)
    assert typed_in["style"] == 1 and not typed_in["required"] and typed_in["max_length"] == 300
    assert "value" not in typed_in
    proposer.submit(reply, "we run mysql already", user=SAM)
    proposal = team_app.gateway.proposals.get(proposal_of(reply))
    assert proposal is not None and proposal.status is ProposalStatus.DISCARDED
    assert proposal.reason == "we run mysql already"
    [line] = closing_lines(discord_api.message(reply["id"]))
    assert line.startswith("🗑️ Discarded proposal: set decision.db = postgres")
    assert "(we run mysql already)" in line and line.endswith(f"— by <@{SAM}>")
    assert team_app.store.get(KEY) is None and len(team_app.log) == 0


def test_discard_without_a_reason_is_a_discard(
    proposer: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    reply = proposed(proposer)
    proposer.click(reply, "DiscardProposal")
    proposer.submit(reply, "   ")
    proposal = team_app.gateway.proposals.get(proposal_of(reply))
    assert proposal is not None and proposal.status is ProposalStatus.DISCARDED
    assert proposal.reason is None


@pytest.mark.parametrize("action", ["ApplyProposal", "EditProposal"])
def test_an_expired_proposal_is_refused_and_its_message_closed(
    team_app: App, discord_api: DiscordServer, openai_server: OpenAIServer, action: str
) -> None:
    gateway = MutationGateway(team_app.store, team_app.policy, proposal_expiry_ms=0)
    due = dataclasses.replace(team_app, gateway=gateway)  # its proposals are due at once
    bot = proposing_bot(due, discord_api, openai_server)
    try:
        reply = proposed(bot)
        bot.click(reply, action, user=SAM)
        if action == "EditProposal":
            bot.submit(reply, "postgres 16", user=SAM)
        message = discord_api.message(reply["id"])
        [line] = closing_lines(message)
        assert line.startswith("⌛ This proposal expired at ") and "nothing was changed" in line
        assert closed(message)
        assert team_app.store.get(KEY) is None and len(team_app.log) == 0
        proposal = team_app.gateway.proposals.get(proposal_of(reply))
        assert proposal is not None and proposal.status is ProposalStatus.EXPIRED
    finally:
        bot.close()


def test_undo_under_a_commit_restores_the_previous_value(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    bot.say("what if we used postgres")
    bot.click(discord_api.public()[-1], "ConfirmCurrent", user=SAM)
    bot.say("make it postgres 16 with logical replication")
    bot.click(discord_api.public()[-1], "ConfirmCurrent", user=SAM)
    [first, second] = team_app.log.latest(5)  # oldest first
    key = first.mutation.key
    assert second.mutation.key == key and team_app.store.version(key) == 2
    next_steps = discord_api.public()[-1]
    undo = payloads.custom_id_of(next_steps, "RevertMutation")
    assert next_steps["content"].startswith("What next?")
    assert undo.split(":")[3:] == [second.mutation.id, "2"]  # what it undoes, the version made
    [button] = [b for row in next_steps["components"] for b in row["components"]]
    assert button["label"] == "Undo" and not button.get("disabled")
    bot.click(next_steps, "RevertMutation", user=RIA)
    entry = team_app.store.get(key)
    assert entry is not None and entry.value == first.mutation.value and entry.version == 3
    [line] = closing_lines(discord_api.message(next_steps["id"]))
    assert line.startswith("✅") and line.endswith(f"— by <@{RIA}>")
    bot.click(next_steps, "RevertMutation", user=SAM, custom_id=undo)  # again, later
    assert team_app.store.version(key) == 3


def test_pending_lists_what_waits_for_the_asker_alone(
    proposer: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    reply = proposed(proposer)
    before = len(discord_api.public())
    proposer.command("pending")
    answer = discord_api.messages[-1]
    assert answer["flags"] == EPHEMERAL and answer["edits"] == 1
    assert proposal_of(reply) in answer["content"] or "decision.db" in answer["content"]
    assert "postgres" in answer["content"]
    assert len(discord_api.public()) == before and len(team_app.log) == 0
    [command] = discord_api.commands[payloads.GUILD]
    assert "pending" in {o["name"] for o in command["options"]}


def _forged(reply: dict[str, Any], edit: str) -> list[tuple[str, dict[str, str]]]:
    """Forms no click opened: (custom_id, what is typed in, by text input)."""
    form = "dlf:" + edit.removeprefix("dlb:")
    typed = {"value": "sqlite"}
    confirm = form.replace("EditProposal", "ApplyProposal")
    return [
        ("dlf:EditProposal:x", typed),  # garbled
        (form.replace(":0:value", ":00:value"), typed),  # spelled otherwise
        (form.replace(f":{CHANNEL}:", f":{OTHER}:"), typed),  # another conversation's
        (confirm, typed),  # an action that asks for nothing
        (form, {"reason": "sqlite"}),  # the wrong input
        ("not-ours", typed),  # a modal Deliberate never shows
        (form.replace(":value", ":reason"), {"reason": "x"}),  # Edit asking for a reason
    ]


def test_a_forged_form_changes_nothing(
    proposer: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    reply = proposed(proposer)
    forged = _forged(reply, payloads.custom_id_of(reply, "EditProposal"))
    submissions = [
        proposer.interaction(payloads.modal_submit(reply, custom_id, typed, SAM))
        for custom_id, typed in forged
    ]
    proposer.dispatch(*submissions)
    notices = discord_api.ephemerals()
    assert len(notices) == len(forged)
    assert all("nothing was changed" in n["content"] for n in notices)
    said = " ".join(n["content"] for n in notices)
    for reason in ("not one Deliberate made", "not valid", "another conversation"):
        assert reason in said
    assert len(team_app.log) == 0 and team_app.store.get(KEY) is None
    proposal = team_app.gateway.proposals.get(proposal_of(reply))
    assert proposal is not None and proposal.status is ProposalStatus.PENDING
    assert discord_api.message(reply["id"]).get("edits") is None


def test_a_submission_delivered_again_commits_once(
    proposer: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    reply = proposed(proposer)
    proposer.click(reply, "EditProposal")
    form = discord_api.interactions.modals[-1]["custom_id"]
    submitted = payloads.modal_submit(reply, form, {"value": "postgres 16"}, ALICE)
    proposer.dispatch(proposer.interaction(submitted), proposer.interaction(submitted))  # at once
    assert len(team_app.log) == 1
    proposer.dispatch(proposer.interaction(submitted))  # later: the same click again
    assert len(team_app.log) == 1 and team_app.store.version(KEY) == 1
    assert team_app.store.get(KEY).value == "postgres 16"  # type: ignore[union-attr]
    [notice] = discord_api.ephemerals()
    assert "already handled" in notice["content"]
