"""The requester is told of each change by a direct message too, where the key's ``tell``
says ``dm`` (``approval.tell`` here; off by default): the worker's sweep (``Requesters``,
with the bot token from the environment) opens a DM with them (``conversations.open``) and
posts there, besides the thread's message, once per change, even with two workers. Only a
person of the token's own team is written to: a bot, an id Slack does not know, a person of
another platform or of another team (a stored requester naming one) get nothing. A DM that
fails is one log line; the thread's message, and later changes, are told all the same.

The model proposed for U0ALICE; the proposal's message is in C0TEAM of T0TEST."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from redis import Redis
from slack_sdk import WebClient

from bot.app import App, build_app
from bot.cli.closers import closers_from_env
from bot.proposals.expiry import ExpiredMessages
from bot.proposals.refs import Shown, ShownMessages
from bot.proposals.telling import Requesters
from core.gateway.edits import Edit
from core.gateway.outcome import Pending, Proposal
from core.state.actor import Actor, ActorKind
from core.state.commit_result import Committed, Rejected, RejectReason
from core.state.scripts import server_ms
from tests.conftest import write_config
from tests.factories import mutation
from tests.rules.rig import config_text
from tests.servers.slack_api import SlackServer, slack_error

CHANNEL, TEAM = "C0TEAM", "T0TEST"
KEYS = """\
    - pattern: "test.dm"
      type: string
      writers: [user]
      agent: propose
      approval: {quorum: 2, tell: {dm: true}}
    - pattern: "test.plain"
      type: string
      writers: [user]
      agent: propose
      approval: {quorum: 2}
"""
BOB = Actor(kind=ActorKind.USER, id="U0BOB", platform="slack")
CAROL = Actor(kind=ActorKind.USER, id="U0CAROL", platform="slack")


@pytest.fixture
def slack() -> Iterator[SlackServer]:
    with SlackServer(channels={CHANNEL}) as server:
        for person in ("U0ALICE", "U0BOB", "U0CAROL"):
            server.people.add(person, TEAM)
        server.people.add("U0EVE", "T0SECOND")  # another team's (a Slack Connect partner)
        server.people.add("U0HELPER", TEAM, is_bot=True)
        yield server


@pytest.fixture
def dm_app(tmp_path: Path, redis_client: Redis, workspace: str) -> App:
    path = write_config(tmp_path, config_text("  []\n", keys=KEYS))
    return build_app(workspace, path, client=redis_client)


def asked(
    app: App, slack: SlackServer, key: str = "test.dm", by: str = "U0ALICE", platform: str = "slack"
) -> str:
    """A proposal the model made for ``by``, shown in CHANNEL of TEAM: its id."""
    wanted = mutation("set", key, "a", "agent:model")
    wanted.meta["requestedBy"] = {"kind": "user", "id": by, "platform": platform}
    pending = app.gateway.propose(wanted)
    assert isinstance(pending, Pending)
    client = WebClient(token=slack.token, base_url=slack.api_url)
    posted = client.chat_postMessage(channel=CHANNEL, text="Apply?")
    shown = Shown(
        platform="slack", channel=CHANNEL, message=str(posted["ts"]), text="Apply?", team=TEAM
    )
    ids = [pending.proposal.id]
    assert ShownMessages(app.redis, app.store.workspace).record(app.gateway.proposals, ids, shown)
    return pending.proposal.id


def sweep(app: App, slack: SlackServer) -> int:
    """The worker's minute: expire, tell the requesters, close the messages."""
    closers = closers_from_env(slack.env())
    app.gateway.expire_due()
    told = Requesters(app, closers).run()
    ExpiredMessages(app, closers).run()
    return told


def in_thread(slack: SlackServer) -> list[str]:
    return [str(m["text"]) for m in slack.messages if str(m.get("text")).startswith("<@U0ALICE>")]


def dms(slack: SlackServer, user: str = "U0ALICE") -> list[str]:
    return [str(call.fields["text"]) for call in slack.direct(user)]


def test_an_applied_change_is_told_in_the_thread_and_by_dm(dm_app: App, slack: SlackServer) -> None:
    pid = asked(dm_app, slack)
    dm_app.gateway.apply_proposal(pid, BOB, revision=0)
    assert sweep(dm_app, slack) == 0  # one approval of two: nothing changed for Alice
    dm_app.gateway.apply_proposal(pid, CAROL, revision=0)
    assert sweep(dm_app, slack) == 1
    assert in_thread(slack) == [
        "<@U0ALICE> your change was applied by user:U0CAROL: set test.dm = a."
    ]
    assert dms(slack) == [
        f"Your change was applied by user:U0CAROL: set test.dm = a. (asked in <#{CHANNEL}>)"
    ]
    [opened] = slack.calls_to("conversations.open")
    assert opened.fields["users"] == "U0ALICE" and opened.token == slack.token
    assert sweep(dm_app, slack) == 0 and len(dms(slack)) == 1  # once


def test_an_edit_and_a_discard_with_its_reason_are_each_told_by_dm(
    dm_app: App, slack: SlackServer
) -> None:
    pid = asked(dm_app, slack)
    assert isinstance(dm_app.gateway.apply_proposal(pid, BOB, edit=Edit("b"), revision=0), Pending)
    sweep(dm_app, slack)
    dm_app.gateway.discard_proposal(pid, CAROL, "not during the stream")
    sweep(dm_app, slack)
    assert dms(slack) == [
        "Your change was edited by user:U0BOB: now set test.dm = b; it waits for approval "
        f"again. (asked in <#{CHANNEL}>)",
        "Your change was discarded by user:U0CAROL: set test.dm = b (not during the stream); "
        f"nothing was changed. (asked in <#{CHANNEL}>)",
    ]
    assert len(in_thread(slack)) == 2


def utc(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def rewritten(app: App, proposal_id: str, **fields: int) -> Proposal:
    """The stored proposal with ``fields`` (its key's expiry, and the index, kept)."""
    proposal = app.gateway.proposals.get(proposal_id)
    assert proposal is not None
    moved = proposal.model_copy(update=fields)
    key = app.store.keys.proposal(proposal_id)
    app.redis.set(key, moved.model_dump_json(by_alias=True), keepttl=True)
    if "expires_at" in fields:  # the indexes the sweeps read, by deadline
        shown = ShownMessages(app.redis, app.store.workspace).index
        for index in (app.store.keys.proposals, shown):
            app.redis.zadd(index, {proposal_id: fields["expires_at"]}, xx=True)
    return moved


def test_an_expiry_is_told_by_dm_and_its_message_closed(dm_app: App, slack: SlackServer) -> None:
    """Told with the deadline to the second, and no "ago", which would go stale in a message
    that stays (the deadline moved three minutes back: no test waits for a clock)."""
    pid = asked(dm_app, slack)
    deadline = server_ms(dm_app.redis, dm_app.store.keys.versions) - 3 * 60_000
    rewritten(dm_app, pid, expires_at=deadline)
    assert sweep(dm_app, slack) == 1
    assert dms(slack) == [
        f"Your change (set test.dm = a): this proposal expired at {utc(deadline)}; "
        f"nothing was changed. (asked in <#{CHANNEL}>)"
    ]
    assert len(slack.updates) == 1 and len(in_thread(slack)) == 1
    assert sweep(dm_app, slack) == 0 and len(dms(slack)) == 1


def test_a_change_gone_stale_is_told_when(dm_app: App, slack: SlackServer) -> None:
    """Its key moved before the last approval: the commit is refused and the proposal goes
    stale, told with when, to the second (no "ago": the message stays)."""
    pid = asked(dm_app, slack)
    moved = dm_app.gateway.propose(mutation("set", "test.dm", "z", "user:U0DAN"))
    assert isinstance(moved, Committed)
    dm_app.gateway.apply_proposal(pid, BOB, revision=0)
    refused = dm_app.gateway.apply_proposal(pid, CAROL, revision=0)
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.STALE
    assert dm_app.store.get("test.dm") == moved.entry  # nothing else was written
    at = server_ms(dm_app.redis, dm_app.store.keys.versions) - 5 * 60_000
    rewritten(dm_app, pid, resolved_at=at)
    assert sweep(dm_app, slack) == 1
    assert dms(slack) == [
        f"Your change (set test.dm = a) went stale at {utc(at)}: its key changed "
        f"since; nothing was changed. (asked in <#{CHANNEL}>)"
    ]


def test_no_dm_unless_the_key_says_so(dm_app: App, slack: SlackServer) -> None:
    pid = asked(dm_app, slack, key="test.plain")
    dm_app.gateway.discard_proposal(pid, BOB, "no")
    assert sweep(dm_app, slack) == 1
    assert len(in_thread(slack)) == 1  # the thread is told, as before
    assert dms(slack) == [] and slack.calls_to("conversations.open") == []


def test_the_policy_may_turn_dms_on_and_the_thread_off(
    tmp_path: Path, redis_client: Redis, workspace: str, slack: SlackServer
) -> None:
    text = config_text("  []\n", keys=KEYS).replace(
        "tell: {thread: true, dm: false}", "tell: {thread: false, dm: true}"
    )
    assert "tell: {thread: false, dm: true}" in text
    app = build_app(workspace, write_config(tmp_path, text), client=redis_client)
    pid = asked(app, slack, key="test.plain")  # its pattern names no tell: the policy's
    app.gateway.discard_proposal(pid, BOB, "no")
    assert sweep(app, slack) == 1
    assert in_thread(slack) == [] and len(dms(slack)) == 1


def test_a_dm_that_fails_leaves_the_thread_and_later_changes_told(
    dm_app: App, slack: SlackServer, caplog: pytest.LogCaptureFixture
) -> None:
    pid = asked(dm_app, slack)
    slack.script("POST", "/api/conversations.open", slack_error("cannot_dm_bot"))
    dm_app.gateway.apply_proposal(pid, BOB, edit=Edit("b"), revision=0)
    with caplog.at_level(logging.WARNING, logger="deliberate"):
        assert sweep(dm_app, slack) == 1  # the thread's message went
    assert len(in_thread(slack)) == 1 and dms(slack) == []
    [line] = [r.getMessage() for r in caplog.records if "direct message" in r.getMessage()]
    assert "U0ALICE" in line and "cannot_dm_bot" in line
    dm_app.gateway.apply_proposal(pid, CAROL, revision=1)
    assert sweep(dm_app, slack) == 1
    assert len(in_thread(slack)) == 2 and len(dms(slack)) == 1  # the next change reaches her


def test_two_workers_tell_each_change_once(dm_app: App, slack: SlackServer) -> None:
    pid = asked(dm_app, slack)
    dm_app.gateway.discard_proposal(pid, BOB, "no")
    workers = [Requesters(dm_app, closers_from_env(slack.env())) for _ in range(2)]
    start = threading.Barrier(len(workers))
    told: list[int] = []

    def run(worker: Requesters) -> None:
        start.wait()
        told.append(worker.run())

    threads = [threading.Thread(target=run, args=(w,)) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(told) == [0, 1]
    assert len(in_thread(slack)) == 1 and len(dms(slack)) == 1


@pytest.mark.parametrize(
    ("requester", "platform", "why"),
    [
        ("U0HELPER", "slack", "a bot"),
        ("U0NOBODY", "slack", "user_not_found"),
        ("U0EVE", "slack", "not of the token's team"),  # a requester of another team
        ("1400000000000000001", "discord", "not shown on their platform"),
    ],
)
def test_no_dm_to_a_bot_an_unknown_id_another_team_or_platform(
    dm_app: App,
    slack: SlackServer,
    caplog: pytest.LogCaptureFixture,
    requester: str,
    platform: str,
    why: str,
) -> None:
    pid = asked(dm_app, slack, by=requester, platform=platform)
    dm_app.gateway.discard_proposal(pid, BOB, "no")
    with caplog.at_level(logging.DEBUG, logger="deliberate"):
        sweep(dm_app, slack)
    assert slack.calls_to("conversations.open") == []
    assert [c for c in slack.calls_to("chat.postMessage") if c.fields["channel"] != CHANNEL] == []
    said = [r.getMessage() for r in caplog.records if "no direct message" in r.getMessage()]
    assert any(why in line for line in said), said
    told = [m for m in slack.messages if "your change was discarded" in str(m.get("text"))]
    assert len(told) == 1  # in the thread, as before
