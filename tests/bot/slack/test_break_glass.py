"""Breaking the glass in Slack: a proposal's Apply, where its key names a break-glass role, has
"Break glass" beside it; a click opens a modal (``views.open`` with the click's trigger id)
asking why, and its submission applies the proposal at once, flagged, listed for review and
announced by the shipped rule. Signed requests against the real Bolt app, the local Slack
API, real Redis, the model proposing through its tool (the local OpenAI-protocol server).

The attacks beside it: no reason, only blanks, too long a reason; a clicker without the role
(a member, a moderator, a Slack Connect guest); a proposal already applied, discarded,
expired or edited since; a click from a team not served, a button naming another workspace's
proposal, another action's button dressed as Break glass, a forged form; the same submission
twice. ``/deliberate breakglass`` is in ``test_break_glass_command``."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import openai
import pytest
from redis import Redis

from bot.app import App, build_app
from bot.chat.break_glass import NO_REASON, TOO_LONG
from core.gateway.break_glass import MAX_GLASS_REASON, BreakGlass
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import Pending, ProposalStatus
from core.llm.chat import ChatModel
from core.redis.client import RedisClient
from tests.bot.cli.process import run
from tests.bot.slack.conftest import team_tenants
from tests.bot.slack.rig import CHANNEL, SlackBot, block_actions, button, mention
from tests.bot.slack.test_lifecycle import box, closing_line, has_buttons
from tests.conftest import delete_workspace
from tests.factories import mutation
from tests.model_script import proposing
from tests.openai_server import OpenAIServer
from tests.servers.slack_api import SlackServer
from tests.team_config import team_config

KEY = "decision.db"
INA, BOB, SAM = "U0INA", "U0BOB", "U0SAM"  # INA holds oncall; SAM is a moderator; BOB neither
GLASS_CHANNEL = "C0GLASS"
REASON = "billing is down and customers wait"
POLICY = f"""\
  keys:
    - pattern: "{KEY}"
      type: string
      approval: {{quorum: 2, break_glass: {{role: oncall}}}}
"""


def glass_config(tmp_path: Path, workspace: str) -> Path:
    """The team's config: INA holds ``oncall`` (the team's binding), which may break the
    glass on ``decision.db``, whose proposals otherwise wait for two approvals."""
    oncall = f'          oncall: {{members: ["slack:{INA}"]}}\n'
    path = team_config(tmp_path, [f"slack:{SAM}"], [], team_tenants(workspace, oncall))
    path.write_text(path.read_text().replace("  keys:\n", POLICY, 1))
    return path


@contextmanager
def proposing_bot(app: App, slack: SlackServer, model: OpenAIServer) -> Iterator[SlackBot]:
    """The bot, its model proposing ``decision.db = postgres`` whenever it is asked."""
    model.answer_with = proposing(KEY, "postgres")
    client = openai.OpenAI(api_key="k", base_url=model.base_url, max_retries=0)
    bot = SlackBot(app, slack, ChatModel(client, "m", timeout_sec=5)).start()
    try:
        yield bot
    finally:
        bot.stop()


@pytest.fixture
def config(tmp_path: Path, workspace: str) -> Path:
    return glass_config(tmp_path, workspace)


@pytest.fixture
def glass_app(redis_client: Redis, workspace: str, config: Path) -> App:
    return build_app(workspace, config, client=redis_client)


@pytest.fixture
def slack() -> Iterator[SlackServer]:
    with SlackServer(channels={CHANNEL, GLASS_CHANNEL}) as server:
        yield server


@pytest.fixture
def bot(glass_app: App, slack: SlackServer, openai_server: OpenAIServer) -> Iterator[SlackBot]:
    with proposing_bot(glass_app, slack, openai_server) as running:
        yield running


@pytest.fixture
def elsewhere(redis_client: RedisClient, config: Path) -> Iterator[App]:
    """Another workspace, with the same config."""
    name = f"test-{uuid.uuid4().hex[:12]}"
    yield build_app(name, config, client=redis_client)
    delete_workspace(redis_client, name)


def proposed(bot: SlackBot) -> dict[str, Any]:
    """The reply offering the model's proposal: Apply, Break glass beside it, Edit, Discard."""
    bot.event(mention("which database for billing?"))
    reply = bot.replies()[-1]
    assert button(reply, "ApplyProposal")["text"]["text"] == f"Apply: set {KEY} = postgres"
    bot.listeners.idle()  # the message is posted before it is recorded as showing the proposal
    return reply


def proposal_id(reply: dict[str, Any]) -> str:
    return str(json.loads(button(reply, "ApplyProposal")["value"])["t"])


def glass_click(bot: SlackBot, reply: dict[str, Any], user: str, **fields: Any) -> None:
    bot.click(reply, "ApplyProposal:glass", user=user, **fields)
    bot.listeners.idle()


def opened_form(bot: SlackBot, reply: dict[str, Any], user: str = INA) -> dict[str, Any]:
    glass_click(bot, reply, user)
    return bot.opened(len(bot.slack.views))[-1]


def raw_click(bot: SlackBot, reply: dict[str, Any], action_id: str, value: str, user: str) -> None:
    """A ``block_actions`` naming any action id and value, as an attacker may post one."""
    payload = block_actions(reply, "ApplyProposal:glass", user, None, value, CHANNEL)
    payload["actions"][0]["action_id"] = action_id
    payload["response_url"] = bot.slack.response_url("actions")
    body = urlencode({"payload": json.dumps(payload)})
    assert bot.post(body, "application/x-www-form-urlencoded").status_code == 200
    bot.listeners.idle()


def unchanged(bot: SlackBot, app: App, reply: dict[str, Any]) -> None:
    """Nothing committed, the proposal still pending, nothing listed, the message as sent."""
    bot.listeners.idle()
    assert app.store.version(KEY) == 0 and len(app.log) == 0
    pending = app.gateway.proposals.get(proposal_id(reply))
    assert pending is not None and pending.status is ProposalStatus.PENDING
    assert pending.break_glass is None
    assert BreakGlass(app.gateway).listed(reviewed=True) == []
    assert bot.slack.updates == []


def told(bot: SlackBot, user: str, count: int = 1) -> str:
    notice = bot.ephemerals(count)[count - 1]
    assert notice["user"] == user
    return str(notice["text"])


def glass_applied(bot: SlackBot, reply: dict[str, Any]) -> None:
    """INA breaks the glass on ``reply``'s proposal through the modal."""
    bot.submit(opened_form(bot, reply), REASON, user=INA)
    bot.slack.wait_until(lambda: bot.slack.updates)
    bot.listeners.idle()


# --- the happy path ----------------------------------------------------------------------


def test_break_glass_opens_a_modal_whose_reason_applies_it_at_once(
    bot: SlackBot,
    glass_app: App,
    workspace: str,
    config: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in bot.slack.env().items():  # the worker's rule posts with them
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("DELIBERATE_BREAKGLASS_CHANNEL", GLASS_CHANNEL)
    assert run(capsys, workspace, "--config", str(config), "worker", "--burst")[0] == 0
    reply = proposed(bot)
    elements = [b["action_id"] for b in reply["blocks"][-1]["elements"]]
    apply, glass = button(reply, "ApplyProposal"), button(reply, "ApplyProposal:glass")
    assert elements[elements.index(apply["action_id"]) + 1] == glass["action_id"]  # beside it
    assert glass["action_id"] == apply["action_id"] + ":glass"
    assert (glass["text"]["text"], glass["value"]) == ("Break glass", apply["value"])

    bot.click(reply, "ApplyProposal:glass", user=INA, trigger_id="333.444.glass")
    [form] = bot.opened()
    assert bot.slack.views[0]["trigger_id"] == "333.444.glass"
    assert (form["title"]["text"], form["submit"]["text"]) == ("Break the glass", "Break glass")
    element = box(form)["element"]
    assert box(form)["optional"] is False and element["multiline"] is True
    assert element["max_length"] == MAX_GLASS_REASON and "initial_value" not in element
    assert f"set {KEY} = postgres" in json.dumps(form["blocks"])
    bot.listeners.idle()
    assert glass_app.store.version(KEY) == 0 and bot.slack.updates == []  # nothing sent yet

    acked = bot.submit(form, f"  {REASON}\n", user=INA)
    assert (acked.status_code, acked.text) == (200, "")  # the modal closes
    [update] = bot.slack.wait_until(lambda: bot.slack.updates)
    bot.listeners.idle()
    assert not has_buttons(update)
    assert closing_line(update) == (
        f'✅ Break-glass apply. Committed: set {KEY} "postgres" (v1); reason: {REASON} '
        f"— by <@{INA}>"
    )
    entry = glass_app.store.get(KEY)
    assert entry is not None and entry.value == "postgres"
    [record] = glass_app.log.latest(5)
    assert record.mutation.meta["breakGlass"] == {"by": f"user:{INA}", "reason": REASON}
    applied = glass_app.gateway.proposals.get(proposal_id(reply))
    assert applied is not None and applied.status is ProposalStatus.APPLIED
    assert applied.break_glass == REASON and applied.approvals == []

    code, out, _ = run(capsys, workspace, "--config", str(config), "proposals", "--break-glass")
    (line,) = out.splitlines()
    assert code == 0 and line.startswith(record.mutation.id)
    assert f"set {KEY} (v1) by user:{INA}: {REASON}" in line

    code, _, err = run(capsys, workspace, "--config", str(config), "worker", "--burst")
    assert code == 0, err
    [announced] = [m for m in bot.slack.messages if m["channel"] == GLASS_CHANNEL]
    assert announced["text"] == (
        f"Break-glass by user:{INA}: set {KEY} (v1), skipping approval. Reason: {REASON}. "
        f"Review it: deliberate proposals --break-glass, then --reviewed {record.mutation.id}"
    )


def test_a_key_that_names_no_role_offers_no_break_glass(
    team_app: App, slack: SlackServer, openai_server: OpenAIServer
) -> None:
    """The team's shipped config names no break-glass role: Apply stands alone."""
    with proposing_bot(team_app, slack, openai_server) as plain:
        plain.event(mention("which database for billing?"))
        reply = plain.replies()[-1]
    assert button(reply, "ApplyProposal")
    with pytest.raises(AssertionError, match="no ApplyProposal:glass button"):
        button(reply, "ApplyProposal:glass")


def test_a_reason_that_would_ping_or_link_stays_text_everywhere_it_is_shown(
    bot: SlackBot,
    glass_app: App,
    workspace: str,
    config: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A reason is people's words: ``<!channel>``, a mention and a disguised link typed in
    it ping nobody and link nowhere, in the clicked message nor in the announcement."""
    for name, value in bot.slack.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("DELIBERATE_BREAKGLASS_CHANNEL", GLASS_CHANNEL)
    assert run(capsys, workspace, "--config", str(config), "worker", "--burst")[0] == 0
    typed = f"<!channel> <@{BOB}> <https://evil.example|your bank> now"
    inert = f"&lt;!channel&gt; &lt;@{BOB}&gt; &lt;https://evil.example|your bank&gt; now"
    reply = proposed(bot)
    bot.submit(opened_form(bot, reply), typed, user=INA)
    [update] = bot.slack.wait_until(lambda: bot.slack.updates)
    bot.listeners.idle()
    assert f"reason: {inert} — by <@{INA}>" in closing_line(update)
    assert run(capsys, workspace, "--config", str(config), "worker", "--burst")[0] == 0
    [announced] = [m for m in bot.slack.messages if m["channel"] == GLASS_CHANNEL]
    assert f"Reason: {inert}." in announced["text"]
    for said in (json.dumps(update), announced["text"]):
        assert "<!channel>" not in said and f"<@{BOB}>" not in said and "<https://" not in said


# --- the reason --------------------------------------------------------------------------


@pytest.mark.parametrize("typed", [None, "   \n  ", "\u200b\u3164 \u2060"])  # (invisible)
def test_no_reason_or_only_blanks_is_said_under_the_box(
    bot: SlackBot, glass_app: App, typed: str | None
) -> None:
    reply = proposed(bot)
    form = opened_form(bot, reply)
    refused = bot.submit(form, typed, user=INA)
    assert refused.json() == {
        "response_action": "errors",
        "errors": {box(form)["block_id"]: NO_REASON},
    }
    assert NO_REASON.startswith("Breaking the glass needs a reason")
    unchanged(bot, glass_app, reply)
    assert bot.slack.ephemerals == []


def test_a_reason_over_the_limit_is_said_under_the_box(bot: SlackBot, glass_app: App) -> None:
    reply = proposed(bot)
    form = opened_form(bot, reply)
    refused = bot.submit(form, "x" * (MAX_GLASS_REASON + 1), user=INA)
    assert refused.json()["errors"] == {box(form)["block_id"]: TOO_LONG}
    assert f"at most {MAX_GLASS_REASON} characters" in TOO_LONG
    unchanged(bot, glass_app, reply)
    bot.submit(form, "x" * MAX_GLASS_REASON, user=INA)  # at the limit: applied
    bot.slack.wait_until(lambda: bot.slack.updates)
    bot.listeners.idle()
    assert glass_app.store.version(KEY) == 1


# --- who may -----------------------------------------------------------------------------


@pytest.mark.parametrize("who", [f"user:{BOB}", f"moderator:{SAM}"])
def test_a_clicker_without_the_role_is_told_which_role_may(
    bot: SlackBot, glass_app: App, who: str
) -> None:
    reply = proposed(bot)
    user = who.partition(":")[2]
    glass_click(bot, reply, user)
    assert told(bot, user) == (
        f"Not done: {who} does not hold the oncall role: only it may break the glass on "
        f"{KEY}; nothing was changed"
    )
    assert bot.slack.views == []  # no form to type a reason into
    unchanged(bot, glass_app, reply)


def test_a_slack_connect_guest_is_refused(bot: SlackBot, glass_app: App) -> None:
    """Even one whose id the team binds: a person of another organisation holds no role."""
    reply = proposed(bot)
    glass_click(bot, reply, INA, user_team="T0EXTERNAL")
    assert told(bot, INA) == (
        f"Not done: guest:{INA} cannot break the glass: a person holding the oncall role "
        "must; nothing was changed"
    )
    assert bot.slack.views == []
    unchanged(bot, glass_app, reply)


# --- the proposal moved on ---------------------------------------------------------------


def test_a_proposal_already_applied_is_refused(bot: SlackBot, glass_app: App) -> None:
    reply = proposed(bot)
    glass_applied(bot, reply)
    glass_click(bot, reply, INA)  # the message as it was first posted, clicked again
    assert told(bot, INA) == (
        f"Not done: this proposal was already applied by user:{INA}; nothing was changed"
    )
    assert len(bot.slack.views) == 1 and len(glass_app.log) == 1
    assert len(BreakGlass(glass_app.gateway).listed()) == 1


def test_a_discarded_proposal_is_refused(bot: SlackBot, glass_app: App) -> None:
    reply = proposed(bot)
    bot.click(reply, "DiscardProposal", user=SAM)
    bot.submit(bot.opened()[0], "keep mysql", user=SAM)
    bot.slack.wait_until(lambda: bot.slack.updates)
    bot.listeners.idle()
    glass_click(bot, reply, INA)
    assert told(bot, INA) == (
        f"Not done: this proposal was already discarded by moderator:{SAM}; nothing was changed"
    )
    assert len(bot.slack.views) == 1 and glass_app.store.version(KEY) == 0
    assert BreakGlass(glass_app.gateway).listed(reviewed=True) == []


def test_an_expired_proposal_is_refused_and_its_message_closed(
    glass_app: App, slack: SlackServer, openai_server: OpenAIServer
) -> None:
    gateway = MutationGateway(glass_app.store, glass_app.policy, proposal_expiry_ms=0)
    due = dataclasses.replace(glass_app, gateway=gateway)  # its proposals due at once
    with proposing_bot(due, slack, openai_server) as bot:
        reply = proposed(bot)
        bot.submit(opened_form(bot, reply), REASON, user=INA)
        [update] = slack.wait_until(lambda: slack.updates)
        bot.listeners.idle()
    line = closing_line(update)
    assert line.startswith("⌛ This proposal expired at ") and "nothing was changed" in line
    assert glass_app.store.version(KEY) == 0
    expired = glass_app.gateway.proposals.get(proposal_id(reply))
    assert expired is not None and expired.status is ProposalStatus.EXPIRED
    assert BreakGlass(glass_app.gateway).listed(reviewed=True) == []
    with proposing_bot(due, slack, openai_server) as bot:  # and clicked again: no form
        glass_click(bot, reply, INA)
        assert told(bot, INA).startswith("Not done: this proposal expired at ")
        assert len(slack.views) == 1


def test_an_edit_made_since_the_form_opened_refuses_it(bot: SlackBot, glass_app: App) -> None:
    """The form breaks the glass on the value it showed; an edit made meanwhile refuses it."""
    reply = proposed(bot)
    form = opened_form(bot, reply)
    bot.click(reply, "EditProposal", user=SAM)
    bot.submit(bot.opened(2)[-1], "sqlite", user=SAM)  # counts one approval of two
    bot.slack.wait_until(lambda: bot.slack.updates)
    bot.listeners.idle()
    bot.submit(form, REASON, user=INA)
    bot.listeners.idle()
    assert "Not done: this proposal was edited by moderator:U0SAM since you saw it" in told(
        bot, INA
    )
    assert glass_app.store.version(KEY) == 0
    waiting = glass_app.gateway.proposals.get(proposal_id(reply))
    assert waiting is not None and waiting.status is ProposalStatus.PENDING
    assert waiting.break_glass is None and waiting.current_value == "sqlite"
    [row] = [r for r in glass_app.gateway.decisions.recent() if "edited" in r.get("message", "")]
    assert row["outcome"] == "rejected"


# --- forged and replayed -----------------------------------------------------------------


def test_a_click_from_a_team_not_served_changes_nothing(bot: SlackBot, glass_app: App) -> None:
    reply = proposed(bot)
    glass_click(bot, reply, INA, team="T0OTHER")
    assert told(bot, INA) == "This workspace isn't set up for Deliberate; nothing was changed."
    assert bot.slack.views == []
    unchanged(bot, glass_app, reply)


def test_a_button_naming_another_workspaces_proposal_changes_nothing(
    bot: SlackBot, glass_app: App, elsewhere: App
) -> None:
    theirs = elsewhere.gateway.propose(mutation("set", KEY, "mysql", "agent:model"))
    assert isinstance(theirs, Pending)
    reply = proposed(bot)
    value = json.loads(button(reply, "ApplyProposal:glass")["value"]) | {"t": theirs.proposal.id}
    forged = json.dumps(value, separators=(",", ":"))
    raw_click(bot, reply, button(reply, "ApplyProposal:glass")["action_id"], forged, INA)
    assert told(bot, INA) == (
        f"Not done: no proposal {theirs.proposal.id} (it may have expired); nothing was changed"
    )
    assert bot.slack.views == []
    unchanged(bot, glass_app, reply)
    kept = elsewhere.gateway.proposals.get(theirs.proposal.id)
    assert kept is not None and kept.status is ProposalStatus.PENDING
    assert elsewhere.store.version(KEY) == 0


@pytest.mark.parametrize(
    ("action_id", "respell"),
    [
        ("deliberate:DiscardProposal:{n}:glass", False),  # another action, dressed as glass
        ("deliberate:ApplyProposal:{n}:glass", True),  # the value spelled another way
        ("deliberate:ApplyProposal:{n}:glas", False),  # what no button asks
    ],
)
def test_a_tampered_button_changes_nothing(
    bot: SlackBot, glass_app: App, action_id: str, respell: bool
) -> None:
    reply = proposed(bot)
    real = button(reply, "ApplyProposal:glass")
    n = real["action_id"].split(":")[2]
    value = json.dumps(json.loads(real["value"])) if respell else real["value"]
    raw_click(bot, reply, action_id.format(n=n), value, INA)
    assert "nothing was changed" in told(bot, INA)
    assert bot.slack.views == []
    unchanged(bot, glass_app, reply)


def test_a_forged_form_changes_nothing(bot: SlackBot, glass_app: App) -> None:
    reply = proposed(bot)
    form = opened_form(bot, reply)
    real = json.loads(form["private_metadata"])
    as_apply = {**real, "action_id": real["action_id"].removesuffix(":glass")}  # asks nothing
    as_edit = {**real, "action_id": real["action_id"].replace("Apply", "Edit")}  # not Apply
    moved = {**real, "value": real["value"].replace('"v":0', '"v":1')}  # not as opened
    forged = [
        (json.dumps(as_apply, separators=(",", ":")), "not valid"),
        (json.dumps(as_edit, separators=(",", ":")), "not valid"),
        (json.dumps(moved, separators=(",", ":")), "not one Deliberate opened"),
    ]
    for metadata, said in forged:
        refused = bot.submit(form, REASON, user=INA, metadata=metadata).json()
        assert refused["response_action"] == "update"
        assert said in json.dumps(refused["view"]) and "nothing was changed" in json.dumps(
            refused["view"]
        )
    someone_else = bot.submit(form, REASON, user=BOB).json()  # opened for INA
    assert "opened for someone else" in json.dumps(someone_else["view"])
    unchanged(bot, glass_app, reply)
    assert bot.slack.ephemerals == []


def test_the_same_submission_twice_applies_once(bot: SlackBot, glass_app: App) -> None:
    reply = proposed(bot)
    form = opened_form(bot, reply)
    assert bot.submit(form, REASON, user=INA).text == ""
    bot.slack.wait_until(lambda: bot.slack.updates)
    bot.listeners.idle()
    assert bot.submit(form, "a second reason", user=INA).text == ""  # delivered again
    bot.listeners.idle()
    assert told(bot, INA).startswith("This click was already handled")
    assert len(bot.slack.updates) == 1 and len(glass_app.log) == 1
    [listed] = BreakGlass(glass_app.gateway).listed()
    assert listed["reason"] == REASON


# --- /deliberate breakglass --------------------------------------------------------------


def test_the_command_applies_at_once_and_closes_the_proposals_message(
    bot: SlackBot, glass_app: App
) -> None:
    reply = proposed(bot)
    answer = bot.command(f"breakglass {proposal_id(reply)}@0 {REASON}", user=INA)
    assert answer["response_type"] == "ephemeral"
    assert answer["text"] == (
        f'Break-glass apply. Committed: set {KEY} "postgres" (v1); reason: {REASON}'
    )
    [update] = bot.slack.wait_until(lambda: bot.slack.updates)
    assert update["ts"] == reply["ts"] and not has_buttons(update)
    assert closing_line(update) == f"✅ {answer['text']} — by <@{INA}>"
    [record] = glass_app.log.latest(5)
    assert record.mutation.meta["breakGlass"] == {"by": f"user:{INA}", "reason": REASON}
    [listed] = BreakGlass(glass_app.gateway).listed()
    assert listed["proposal"] == proposal_id(reply)
    again = bot.command(f"breakglass {proposal_id(reply)}@0 {REASON}", user=INA)
    assert again["text"] == (
        f"Not done: this proposal was already applied by user:{INA}; nothing was changed"
    )
    assert len(glass_app.log) == 1 and len(bot.slack.updates) == 1


@pytest.mark.parametrize(
    ("typed", "user", "said"),
    [
        ("breakglass", INA, "Type /deliberate breakglass PROPOSAL_ID@REVISION REASON"),
        ("breakglass {id}@0", INA, "Breaking the glass needs a reason, said with it: type"),
        ("breakglass {id}@0    ", INA, "Breaking the glass needs a reason, said with it: type"),
        ("breakglass {id}@0 " + "x" * (MAX_GLASS_REASON + 1), INA, TOO_LONG),
        ("breakglass {id}@0 " + REASON, BOB, f"Not done: user:{BOB} does not hold the oncall"),
        ("breakglass p-nope@0 " + REASON, INA, "Not done: no proposal p-nope (it may have"),
        ("breakglass {id} " + REASON, INA, "Name the revision you saw: type /deliberate"),
        ("breakglass {id}@ " + REASON, INA, "Name the revision you saw: type /deliberate"),
        ("breakglass {id}@-1 " + REASON, INA, "Name the revision you saw: type /deliberate"),
        ("breakglass {id}@1 " + REASON, INA, "Not done: this proposal was edited since you saw"),
    ],
    ids=[
        "no-id",
        "no-reason",
        "blank-reason",
        "too-long",
        "no-role",
        "unknown-id",
        "no-revision",
        "empty-revision",
        "negative-revision",
        "another-revision",
    ],
)
def test_the_command_refuses_and_changes_nothing(
    bot: SlackBot, glass_app: App, typed: str, user: str, said: str
) -> None:
    reply = proposed(bot)
    answer = bot.command(typed.format(id=proposal_id(reply)), user=user)
    assert answer["response_type"] == "ephemeral"
    assert answer["text"].startswith(said) and "; nothing was changed" in answer["text"]
    unchanged(bot, glass_app, reply)
