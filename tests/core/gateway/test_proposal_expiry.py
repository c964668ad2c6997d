"""Pending proposals expire, fail-closed: a proposal records its deadline when it is made; a
click after it applies nothing (no commit, no log record), says when it expired, and leaves
the proposal ``expired``, which the decision log records. Every proposal key has an expiry.

Time is not waited for: a gateway made with ``proposal_expiry_ms=0`` makes proposals that
are due at once. Only a claim made before the deadline and touched after it needs a deadline
moved into the past by hand (as the race tests age a claim)."""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import openai
import pytest
from redis import Redis

from bot.app import App, build_app
from bot.chat.click_outcomes import closing_line, follow_ups
from bot.reports.trace import collect
from core.config.core_config import load_config
from core.deliberation import sentences as say
from core.deliberation.actions import ActionType
from core.deliberation.messages import ActionClicked, UserSaid
from core.deliberation.view import View, ViewKind
from core.errors import ConfigError
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import Pending, Proposal, ProposalStatus
from core.gateway.proposals import CLAIM_LEASE_MS, KEPT_MS
from core.llm.chat import ChatModel
from core.runtime.clicked import Clicked
from core.runtime.events import OutcomeEvent
from core.runtime.outcome_notes import discard_note
from core.state.commit_result import Committed, Rejected, RejectReason
from tests.conftest import write_config
from tests.factories import actor, mutation
from tests.model_script import proposing
from tests.openai_server import OpenAIServer

DAY_MS = 86_400_000
GUARDED = """
policy:
  keys:
    - pattern: "guarded.*"
      protected: true
"""
MO, AL = actor("moderator:mo"), actor("user:al")


@pytest.fixture
def guarded(tmp_path: Path, redis_client: Redis, workspace: str) -> App:
    return build_app(workspace, write_config(tmp_path, GUARDED), client=redis_client)


def due_at_once(app: App) -> App:
    """The same program, its proposals due as soon as they are made."""
    gateway = MutationGateway(app.store, app.policy, proposal_expiry_ms=0)
    return dataclasses.replace(app, gateway=gateway)


def propose(app: App, key: str, value: str = "off") -> Proposal:
    pending = app.gateway.propose(mutation("set", key, value, "agent:llm"))
    assert isinstance(pending, Pending)
    return pending.proposal


def stored(app: App, pid: str) -> Proposal:
    proposal = app.gateway.proposals.get(pid)
    assert proposal is not None
    return proposal


def server_ms(app: App) -> int:
    seconds, micros = app.redis.time()
    return int(seconds) * 1000 + int(micros) // 1000


def kept_for(app: App, pid: str) -> int:
    """How long the proposal's key has left (ms); never -1 (no expiry)."""
    left = int(app.redis.pttl(app.store.keys.proposal(pid)))
    assert left > 0, left
    return left


def assert_nothing_changed(app: App, key: str) -> None:
    assert app.store.version(key) == 0 and app.store.get(key) is None
    assert app.log.latest(10, key=key) == []


def utc(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def assert_expired(outcome: object, proposal: Proposal, ago: str | None = None) -> None:
    """Refused as expired, saying the deadline to the second and how long ago: ``ago``
    exactly, or (a deadline that passed as the proposal was made, a moment before the
    click) a few seconds or the very millisecond."""
    assert isinstance(outcome, Rejected) and outcome.reason is RejectReason.EXPIRED
    assert proposal.expires_at is not None and outcome.deadline == proposal.expires_at
    said = re.escape(f"this proposal expired at {utc(proposal.expires_at)} (")
    how_long = re.escape(ago) if ago is not None else r"now|\d s ago"
    assert re.fullmatch(rf"{said}({how_long})\); nothing was changed", outcome.message), (
        outcome.message
    )
    assert proposal.status is ProposalStatus.EXPIRED and proposal.resolved_by is None


def deadline_passed(app: App, pid: str) -> None:
    """The proposal as if its deadline were a minute ago (its key's expiry kept)."""
    proposal = stored(app, pid)
    past = proposal.model_copy(update={"expires_at": server_ms(app) - 60_000})
    app.redis.set(app.store.keys.proposal(pid), past.model_dump_json(by_alias=True), keepttl=True)


# --- the setting --------------------------------------------------------------------------


def test_the_expiry_is_a_day_unless_configured(tmp_path: Path) -> None:
    assert load_config().policy.proposals.expire_after_sec == 86_400
    text = "policy:\n  proposals:\n    expire_after_sec: 3600\n"
    assert load_config(write_config(tmp_path, text)).policy.proposals.expire_after_sec == 3600


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("59", "must be greater than or equal to 60"),
        ("2592001", "must be less than or equal to 2592000"),
        ("0", "must be greater than or equal to 60"),
        ("soon", "expected a whole number, got text"),
        ("90.5", "expected a whole number, got a number with a fraction"),
    ],
)
def test_a_bad_expiry_is_named_by_file_line_and_field(
    tmp_path: Path, value: str, problem: str
) -> None:
    path = write_config(
        tmp_path, f"version: 1\npolicy:\n  proposals:\n    expire_after_sec: {value}\n"
    )
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    [issue] = raised.value.issues
    assert (issue.file, issue.line, issue.field) == (
        str(path),
        4,
        "policy.proposals.expire_after_sec",
    )
    assert issue.message == problem


def test_a_misspelt_setting_is_refused(tmp_path: Path) -> None:
    path = write_config(tmp_path, "policy:\n  proposals: {expire_after: 600}\n")
    with pytest.raises(
        ConfigError,
        match=r"policy\.proposals\.expire_after: is not a field here \(did you mean "
        r"expire_after_sec:\?\)$",
    ):
        load_config(path)


# --- before the deadline ------------------------------------------------------------------


def test_a_proposal_records_its_deadline_and_its_key_expires_after_it(guarded: App) -> None:
    before = server_ms(guarded)
    asked = mutation("set", "guarded.one", "off", "agent:llm")
    pending = guarded.gateway.propose(asked)
    assert isinstance(pending, Pending)
    proposal = pending.proposal
    assert proposal.expires_at is not None
    assert before <= proposal.created_at <= server_ms(guarded)
    assert proposal.expires_at == proposal.created_at + DAY_MS
    assert stored(guarded, proposal.id).expires_at == proposal.expires_at
    assert DAY_MS + KEPT_MS - 60_000 < kept_for(guarded, proposal.id) <= DAY_MS + KEPT_MS
    again = guarded.gateway.propose(asked)  # a retried delivery: the proposal it made
    assert isinstance(again, Pending) and again.proposal == stored(guarded, proposal.id)


def test_applied_before_its_deadline_it_commits_and_is_kept_a_week(guarded: App) -> None:
    pid = propose(guarded, "guarded.one").id
    done = guarded.gateway.apply_proposal(pid, MO, revision=0)
    assert isinstance(done, Committed) and not done.duplicate
    assert guarded.store.version("guarded.one") == 1
    assert stored(guarded, pid).status is ProposalStatus.APPLIED
    assert KEPT_MS - 60_000 < kept_for(guarded, pid) <= KEPT_MS


def test_handed_back_before_its_deadline_it_keeps_its_expiry(guarded: App) -> None:
    """A refused apply writes the proposal back to pending: its key keeps an expiry (a SET
    without one would drop it)."""
    proposal = propose(guarded, "guarded.one")
    refused = guarded.gateway.apply_proposal(proposal.id, AL, revision=0)
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.PROTECTED
    back = stored(guarded, proposal.id)
    assert back.status is ProposalStatus.PENDING and back.expires_at == proposal.expires_at
    assert DAY_MS + KEPT_MS - 60_000 < kept_for(guarded, proposal.id) <= DAY_MS + KEPT_MS


def test_a_discarded_proposal_is_kept_a_week(guarded: App) -> None:
    pid = propose(guarded, "guarded.one").id
    assert guarded.gateway.discard_proposal(pid, MO).status is ProposalStatus.DISCARDED
    assert KEPT_MS - 60_000 < kept_for(guarded, pid) <= KEPT_MS


# --- after the deadline -------------------------------------------------------------------


def test_applied_after_its_deadline_it_is_refused_and_nothing_changes(guarded: App) -> None:
    app = due_at_once(guarded)
    proposal = propose(app, "guarded.late")
    outcome = app.gateway.apply_proposal(proposal.id, MO, revision=0)
    expired = stored(app, proposal.id)
    assert_expired(outcome, expired)
    assert expired.expires_at == proposal.expires_at
    assert_nothing_changed(app, "guarded.late")
    assert len(app.log) == 0
    assert KEPT_MS - 60_000 < kept_for(app, proposal.id) <= KEPT_MS
    # and so every time after: whoever clicks, nothing is committed
    for who in (MO, actor("admin:root"), AL):
        assert_expired(
            app.gateway.apply_proposal(proposal.id, who, revision=0), stored(app, proposal.id)
        )
    assert_nothing_changed(app, "guarded.late")


def test_the_same_proposal_again_after_it_expired_is_refused_not_pending(guarded: App) -> None:
    """A retried delivery proposes the same mutation id again: it is not told its change
    awaits a person when it never will."""
    app = due_at_once(guarded)
    change = mutation("set", "guarded.again", "off", "agent:llm")
    first = app.gateway.propose(change)
    assert isinstance(first, Pending)
    app.gateway.apply_proposal(first.proposal.id, MO, revision=0)  # finds it expired
    again = app.gateway.propose(change)
    assert_expired(again, stored(app, first.proposal.id))
    assert_nothing_changed(app, "guarded.again")


def test_the_decision_log_records_the_expiry(guarded: App) -> None:
    app = due_at_once(guarded)
    proposal = propose(app, "guarded.late")
    outcome = app.gateway.apply_proposal(proposal.id, MO, revision=0)
    assert isinstance(outcome, Rejected)
    last = app.gateway.decisions.recent(1)[-1]
    assert last["outcome"] == "rejected" and last["reason"] == "expired"
    assert last["proposal_id"] == proposal.id and last["expired_at"] == proposal.expires_at
    assert last["actor"] == "moderator:mo" and last["proposed_by"] == "agent:llm"
    assert last["message"] == outcome.message
    traced = collect(app, outcome.mutation.correlation_id)
    assert [s["data"]["reason"] for s in traced if s["event"] == "decision"][-1] == "expired"


def test_discarding_an_expired_proposal_is_harmless(guarded: App) -> None:
    app = due_at_once(guarded)
    proposal = propose(app, "guarded.late")
    after = app.gateway.discard_proposal(proposal.id, MO)
    assert after.status is ProposalStatus.EXPIRED and after.expires_at == proposal.expires_at
    assert after.expires_at is not None
    note = discard_note(after, MO, now_ms=after.expires_at + 3 * 60_000 + 400)
    assert (note.outcome, note.reason) == ("rejected", "expired")
    assert note.message == (
        f"this proposal expired at {utc(after.expires_at)} (3 min ago); nothing was changed"
    )
    assert note.expired_at == after.expires_at
    unknown = discard_note(after, MO)  # no clock read: the moment alone
    assert (
        unknown.message == f"this proposal expired at {utc(after.expires_at)}; nothing was changed"
    )
    assert app.gateway.decisions.recent(1)[-1]["reason"] == "expired"
    assert app.gateway.discard_proposal(proposal.id, MO).status is ProposalStatus.EXPIRED
    assert_expired(
        app.gateway.apply_proposal(proposal.id, MO, revision=0), stored(app, proposal.id)
    )
    assert_nothing_changed(app, "guarded.late")


def test_a_refused_claim_handed_back_after_the_deadline_expires(guarded: App) -> None:
    """Al claims in time; his commit is refused after the deadline: the proposal does not go
    back to pending, where nobody could apply it any more."""
    pid = propose(guarded, "guarded.one").id
    box = guarded.gateway.proposals
    assert box.approve(pid, AL, revision=0) is not None
    deadline_passed(guarded, pid)
    back = box.release(pid, AL, f"apply-{pid}")
    assert back is not None and back.status is ProposalStatus.EXPIRED
    assert stored(guarded, pid).status is ProposalStatus.EXPIRED
    assert KEPT_MS - 60_000 < kept_for(guarded, pid) <= KEPT_MS
    # a click now is told the deadline to the second, and that it passed a minute ago
    again = guarded.gateway.apply_proposal(pid, MO, revision=0)
    assert_expired(again, stored(guarded, pid), ago="1 min ago")


def test_an_abandoned_claim_is_not_taken_over_after_the_deadline(guarded: App) -> None:
    """Al claimed in time and stopped before his commit; past the lease and the deadline,
    Mo's click does not commit it: it expires."""
    pid = propose(guarded, "guarded.one").id
    box = guarded.gateway.proposals
    approved = box.approve(pid, AL, revision=0)
    assert approved is not None
    claimed = approved.proposal
    assert claimed.status is ProposalStatus.APPLIED and claimed.resolved_at is not None
    now = server_ms(guarded)
    aged = claimed.model_copy(
        update={"resolved_at": now - CLAIM_LEASE_MS - 1, "expires_at": now - 1}
    )
    guarded.redis.set(guarded.store.keys.proposal(pid), aged.model_dump_json(by_alias=True))
    assert_expired(guarded.gateway.apply_proposal(pid, MO, revision=0), stored(guarded, pid))
    assert_nothing_changed(guarded, "guarded.one")


def test_a_commit_made_in_time_still_counts_after_the_deadline(guarded: App) -> None:
    """Al claimed in time and his commit landed; whatever became of the proposal since (it
    expired while he stalled), the commit is what happened."""
    pid = propose(guarded, "guarded.one").id
    box = guarded.gateway.proposals
    assert box.approve(pid, MO, revision=0) is not None
    deadline_passed(guarded, pid)
    assert box.release(pid, MO, "never-committed") is not None  # (expired meanwhile)
    done = guarded.gateway.propose(
        stored(guarded, pid).mutation.with_changes(
            id=f"apply-{pid}", actor=MO, proposed_by=actor("agent:llm")
        )
    )
    assert isinstance(done, Committed)
    assert box.record_commit(pid, done) is not None
    assert stored(guarded, pid).status is ProposalStatus.APPLIED
    again = guarded.gateway.apply_proposal(pid, MO, revision=0)
    assert isinstance(again, Committed) and again.duplicate and again.log_id == done.log_id


def test_a_proposal_from_before_deadlines_expires_a_day_after_it_was_made(guarded: App) -> None:
    """Stored by an earlier version: no ``expiresAt``, and no expiry on its key."""
    old, fresh = propose(guarded, "guarded.old"), propose(guarded, "guarded.fresh")
    made = {}
    for proposal, age in ((old, DAY_MS + 1), (fresh, 0)):
        data = json.loads(proposal.model_dump_json(by_alias=True))
        data.pop("expiresAt")
        data["createdAt"] = made[proposal.id] = server_ms(guarded) - age
        guarded.redis.set(guarded.store.keys.proposal(proposal.id), json.dumps(data))
        assert guarded.redis.pttl(guarded.store.keys.proposal(proposal.id)) == -1
    assert_expired(guarded.gateway.apply_proposal(old.id, MO, revision=0), stored(guarded, old.id))
    assert_nothing_changed(guarded, "guarded.old")
    assert stored(guarded, old.id).expires_at == made[old.id] + DAY_MS  # written in, now
    assert KEPT_MS - 60_000 < kept_for(guarded, old.id) <= KEPT_MS
    assert isinstance(guarded.gateway.apply_proposal(fresh.id, MO, revision=0), Committed)


def test_the_sweep_gives_an_expiry_to_proposals_an_older_release_kept_for_ever(
    guarded: App,
) -> None:
    waiting, done, timed = (propose(guarded, f"guarded.s{i}") for i in range(3))
    guarded.gateway.discard_proposal(done.id, MO)
    made = server_ms(guarded) - 1000
    for proposal in (waiting, done):  # as an older release stored them: no expiry at all
        data = json.loads(stored(guarded, proposal.id).model_dump_json(by_alias=True))
        data.pop("expiresAt")
        data["createdAt"] = made
        guarded.redis.set(guarded.store.keys.proposal(proposal.id), json.dumps(data))
    left = kept_for(guarded, timed.id)
    assert guarded.gateway.proposals.sweep() == 2
    assert guarded.gateway.proposals.sweep() == 0  # nothing left without one
    # pending: kept a week past its deadline (made + a day); resolved: a week from now
    assert DAY_MS + KEPT_MS - 62_000 < kept_for(guarded, waiting.id) <= DAY_MS + KEPT_MS
    assert KEPT_MS - 60_000 < kept_for(guarded, done.id) <= KEPT_MS
    assert left - 60_000 < kept_for(guarded, timed.id) <= left  # untouched


# --- what the clicker sees ----------------------------------------------------------------


def test_a_click_on_an_expired_proposal_says_when_it_expired(
    app: App, openai_server: OpenAIServer
) -> None:
    expiring = due_at_once(app)
    openai_server.answer_with = proposing("scene.name", "BRB")
    client = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
    rt = expiring.runtime(ChatModel(client, "test-model", timeout_sec=5))
    [view] = [
        e for e in rt.send("s1", UserSaid(text="let's go brb", actor=AL)) if isinstance(e, View)
    ]
    button = next(b for b in view.buttons if b.action == ActionType.APPLY_PROPOSAL)

    def click(click_id: str) -> list[OutcomeEvent | View]:
        msg = ActionClicked(
            action=button.action,
            target_id=button.target_id,
            expected_version=button.target_version,
            click_id=click_id,
            actor=AL,
        )
        return rt.send("s1", msg)

    events = click("k1")
    [outcome] = [e for e in events if isinstance(e, OutcomeEvent)]
    assert (outcome.outcome, outcome.reason) == ("rejected", "expired")
    [notice] = [e for e in events if isinstance(e, View) and e.kind is ViewKind.NOTICE]
    assert notice.text == say.not_done(outcome.message)
    assert app.store.get("scene.name") is None and len(app.log) == 0

    shown = Clicked.of(events)
    assert shown.expired == outcome and shown.done is None and not shown.asked_again
    # the clicked message is closed with the line its platform says a deadline with (the
    # line the sweep closes the proposal's other messages with)
    proposal = expiring.gateway.proposals.get(button.target_id)
    assert proposal is not None and outcome.expired_at == proposal.expires_at
    line = closing_line(shown, "user:al", "Apply", str, str, lambda at: f"expired line {at}")
    assert line == f"expired line {proposal.expires_at}"
    # and an outcome that names no deadline, with the sentence the clicker was told
    unnamed = dataclasses.replace(shown, expired=outcome.model_copy(update={"expired_at": None}))
    sentence = outcome.message[:1].upper() + outcome.message[1:]
    assert closing_line(unnamed, "user:al", "Apply", str, str, str) == f"⌛ {sentence}."
    assert [v.kind for v in follow_ups(shown, closed=True)] == []
    assert [v.kind for v in follow_ups(shown, closed=False)] == [ViewKind.NOTICE]
    # no longer on the table: another click is told so, and nothing is tried again
    later = click("k2")
    assert [e.text for e in later if isinstance(e, View)] == [say.NO_LONGER_PENDING]
