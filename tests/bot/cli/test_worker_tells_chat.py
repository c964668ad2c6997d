"""The worker's minute, as ``deliberate worker`` schedules it (``schedule``): due proposals
expire, their requester is told in the thread, and the message that showed their buttons
closes on Slack, with the bot token and API address from the environment."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from redis import Redis
from slack_sdk import WebClient

from bot.cli.closers import closers_from_env
from bot.cli.worker import schedule
from bot.proposals.refs import MAX_MESSAGES, Shown, ShownMessages
from bot.proposals.telling import Requesters
from core.gateway.edits import Edit
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import Pending, ProposalStatus
from core.state.actor import Actor, ActorKind
from tests.factories import mutation
from tests.rules.rig import make_rig
from tests.servers.slack_api import SlackServer

CHANNEL = "C0TEAM"


def test_the_minute_expires_tells_and_closes(
    tmp_path: Path, redis_client: Redis, workspace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SlackServer(channels={CHANNEL}) as slack:
        for name, value in slack.env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("DISCORD_TOKEN", raising=False)
        rig = make_rig(tmp_path, redis_client, workspace, "  []\n")
        due = MutationGateway(rig.app.store, rig.app.policy, proposal_expiry_ms=0)
        app = dataclasses.replace(rig.app, gateway=due)  # its proposals due at once
        asked = mutation("set", "decision.w", "a", "agent:model")
        asked.meta["requestedBy"] = {"kind": "user", "id": "U0ALICE", "platform": "slack"}
        pending = app.gateway.propose(asked)
        assert isinstance(pending, Pending)
        client = WebClient(token=slack.token, base_url=slack.api_url)
        posted = client.chat_postMessage(channel=CHANNEL, text="Apply?", blocks=[])
        shown = Shown(platform="slack", channel=CHANNEL, message=str(posted["ts"]), text="Apply?")
        ids = [pending.proposal.id]
        assert ShownMessages(app.redis, workspace).record(app.gateway.proposals, ids, shown) == 1
        schedule(rig.service, app)
        rig.service.step()
        proposal = app.gateway.proposals.get(pending.proposal.id)
        assert proposal is not None and proposal.status is ProposalStatus.EXPIRED
        [update] = slack.updates
        assert update["ts"] == posted["ts"] and "expired at" in str(update["blocks"])
        [word] = [m for m in slack.messages if "your change" in str(m.get("text"))]
        assert word["thread_ts"] == posted["ts"] and word["text"].startswith("<@U0ALICE> ")


QUORUM = """\
    - pattern: "test.q"
      type: string
      writers: [user]
      agent: propose
      approval: {quorum: 2}
"""


def test_each_change_is_told_once_and_not_to_whoever_made_it(
    tmp_path: Path, redis_client: Redis, workspace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bob edits Alice's change (it waits for a second approval), Carol applies it: Alice
    hears of both, once each; Bob's own edit is not told back to Bob."""
    with SlackServer(channels={CHANNEL}) as slack:
        for name, value in slack.env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("DISCORD_TOKEN", raising=False)
        rig = make_rig(tmp_path, redis_client, workspace, "  []\n", keys=QUORUM)
        app = rig.app
        asked = mutation("set", "test.q", "a", "agent:model")
        asked.meta["requestedBy"] = {"kind": "user", "id": "U0ALICE", "platform": "slack"}
        pending = app.gateway.propose(asked)
        assert isinstance(pending, Pending)
        pid = pending.proposal.id
        client = WebClient(token=slack.token, base_url=slack.api_url)
        posted = client.chat_postMessage(channel=CHANNEL, text="Apply?", blocks=[])
        shown = Shown(platform="slack", channel=CHANNEL, message=str(posted["ts"]))
        ShownMessages(app.redis, workspace).record(app.gateway.proposals, [pid], shown)
        telling = Requesters(app, closers_from_env(slack.env()))
        assert telling.run() == 0  # nothing changed yet
        bob = Actor(kind=ActorKind.USER, id="U0BOB", platform="slack")
        edited = app.gateway.apply_proposal(pid, bob, edit=Edit("b"), revision=0)
        assert isinstance(edited, Pending)
        assert telling.run() == 1 and telling.run() == 0
        carol = Actor(kind=ActorKind.USER, id="U0CAROL", platform="slack")
        app.gateway.apply_proposal(pid, carol, revision=1)
        assert telling.run() == 1 and telling.run() == 0
        words = [str(m["text"]) for m in slack.messages if "your change" in str(m.get("text"))]
        assert words == [
            "<@U0ALICE> your change was edited by user:U0BOB: now set test.q = b; "
            "it waits for approval again.",
            "<@U0ALICE> your change was applied by user:U0CAROL: set test.q = b.",
        ]


def test_a_proposal_keeps_a_bounded_number_of_messages(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    rig = make_rig(tmp_path, redis_client, workspace, "  []\n", keys=QUORUM)
    pending = rig.app.gateway.propose(mutation("set", "test.q", "a", "agent:model"))
    assert isinstance(pending, Pending)
    shown = ShownMessages(rig.app.redis, workspace)
    box, ids = rig.app.gateway.proposals, [pending.proposal.id]
    for n in range(MAX_MESSAGES + 3):
        shown.record(box, ids, Shown(platform="slack", channel=CHANNEL, message=f"{n}.0"))
    assert len(shown.of(pending.proposal.id)) == MAX_MESSAGES
    kept = rig.app.redis.pttl(shown.key(pending.proposal.id))
    proposal_kept = rig.app.redis.pttl(box.keys.proposal(pending.proposal.id))
    assert kept > 0 and abs(kept - proposal_kept) < 1000  # as long as the proposal
