"""Breaking the glass (``approval.break_glass``, or the policy's): a person holding the named
role applies at once, with a reason; the change is flagged in its meta, its log record and the
decision stream, and listed until someone else marks it reviewed. Real Redis; the attacks: a
break-glass without a reason (or only blanks), by someone without the role, by an agent, and
the one who broke the glass reviewing their own change."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

import pytest
from redis import ConnectionPool, Redis

from bot.app import App, build_app
from core.gateway.break_glass import BreakGlass, ReviewRefused
from core.gateway.outcome import Pending, Proposal, ProposalStatus
from core.gateway.proposals import CLAIM_LEASE_MS
from core.state.commit_result import Committed, Rejected, RejectReason
from core.state.mutation_log import MutationLog
from tests.conftest import write_config
from tests.core.gateway.test_proposal_race import StoppingRedis, claimed_ago
from tests.factories import actor, mutation

CONFIG = """
policy:
  break_glass: {role: oncall}
  keys:
    - pattern: "stream.*"
      approval:
        quorum: 2
        four_eyes: true
        when: 'approvals.exists(a, "moderator" in a.roles)'
        people: true
        break_glass: {role: incident}
    - pattern: "plain.*"
      approval: {people: true}
"""

AL, BO = actor("user:al"), actor("user:bo")
INA = actor("user:ina", "incident")  # the tenant binds the role
OLI = actor("user:oli", "oncall")
MO = actor("moderator:mo")


@pytest.fixture
def app(tmp_path: Path, server_redis: Redis, workspace: str) -> App:
    return build_app(workspace, write_config(tmp_path, CONFIG), client=server_redis)


def proposed(app: App, key: str = "stream.state", value: object = "off") -> Proposal:
    pending = app.gateway.propose(mutation("set", key, value, AL))
    assert isinstance(pending, Pending), pending
    return pending.proposal


def test_the_role_applies_a_pending_proposal_at_once_flagged(app: App) -> None:
    p = proposed(app)
    done = BreakGlass(app.gateway).apply(p.id, INA, "  outage:   stream   loops ", 0)
    assert isinstance(done, Committed), done
    glass = {"by": "user:ina", "reason": "outage: stream loops"}
    assert done.mutation.meta["breakGlass"] == glass
    assert done.mutation.meta["requestedBy"] == "user:al"
    assert app.store.get("stream.state").value == "off"  # type: ignore[union-attr]
    stored = app.gateway.proposals.get(p.id)
    assert stored is not None and stored.status is ProposalStatus.APPLIED
    assert stored.committed is not None
    # the mutation log and the decision stream keep the flag
    (record,) = list(MutationLog(app.redis, app.store.keys).records())
    assert record.mutation.meta["breakGlass"] == glass
    (row,) = [d for d in app.gateway.decisions.recent() if d["outcome"] == "committed"]
    assert row["break_glass"] == glass and row["proposal_id"] == p.id
    # a later Apply is answered with what it committed
    again = app.gateway.apply_proposal(p.id, actor("moderator:mo"), revision=0)
    assert isinstance(again, Committed) and again.version == done.version


def test_a_direct_write_commits_where_people_would_wait(app: App) -> None:
    done = BreakGlass(app.gateway).write(mutation("set", "plain.x", 1, OLI), "db on fire")
    assert isinstance(done, Committed), done
    assert done.mutation.meta["breakGlass"] == {"by": "user:oli", "reason": "db on fire"}
    # the key's own role wins over the policy's: oncall is not incident on stream.*
    refused = BreakGlass(app.gateway).write(mutation("set", "stream.state", "off", OLI), "x")
    assert isinstance(refused, Rejected)
    assert "user:oli does not hold the incident role" in refused.message
    assert app.store.get("stream.state") is None


# what shows as nothing: blanks, and characters that render as none (zero-width and joiners,
# a byte-order mark, bidi marks, a Hangul filler as Discord users type it, controls)
UNSAID = ["", "   \n\t ", "\u200b", "\u200b \u2060\ufeff\u200e", "\u3164\u3164", "\x00\x07 \x1b"]


@pytest.mark.parametrize("reason", UNSAID)
def test_without_a_reason_it_is_refused_and_nothing_changes(app: App, reason: str) -> None:
    p = proposed(app)
    refused = BreakGlass(app.gateway).apply(p.id, INA, reason, 0)
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.FORBIDDEN
    assert refused.message == (
        "breaking the glass needs a reason, said with it; nothing was changed"
    )
    still = app.gateway.proposals.get(p.id)
    assert still is not None and still.status is ProposalStatus.PENDING and not still.approvals
    assert app.store.get("stream.state") is None
    write = BreakGlass(app.gateway).write(mutation("set", "stream.state", "on", INA), reason)
    assert isinstance(write, Rejected) and "needs a reason" in write.message
    assert app.store.get("stream.state") is None
    assert BreakGlass(app.gateway).listed() == []
    refusals = [d for d in app.gateway.decisions.recent() if d["outcome"] == "rejected"]
    assert len(refusals) == 2 and all("needs a reason" in d["message"] for d in refusals)


def test_without_the_role_or_as_an_agent_it_is_refused(app: App) -> None:
    p = proposed(app)
    glass = BreakGlass(app.gateway)
    for who in (BO, actor("moderator:mo"), actor("agent:llm", "incident")):
        refused = glass.apply(p.id, who, "because", 0)
        assert isinstance(refused, Rejected), who
        assert refused.reason is RejectReason.FORBIDDEN
        assert "nothing was changed" in refused.message
    assert "agent:llm cannot break the glass" in refused.message
    still = app.gateway.proposals.get(p.id)
    assert still is not None and still.status is ProposalStatus.PENDING
    assert app.store.get("stream.state") is None


def test_no_role_configured_means_nobody(
    tmp_path: Path, server_redis: Redis, workspace: str
) -> None:
    text = 'policy:\n  keys:\n    - pattern: "k.*"\n      approval: {people: true}\n'
    app = build_app(workspace, write_config(tmp_path, text), client=server_redis)
    refused = BreakGlass(app.gateway).write(mutation("set", "k.a", 1, INA), "urgent")
    assert isinstance(refused, Rejected)
    assert refused.message == "no break-glass role is configured for k.a; nothing was changed"


def test_listed_for_review_and_reviewed_by_someone_else(app: App) -> None:
    glass = BreakGlass(app.gateway)
    p = proposed(app)
    applied = glass.apply(p.id, INA, "outage", 0)
    written = glass.write(mutation("set", "plain.y", 2, OLI), "hotfix")
    assert isinstance(applied, Committed) and isinstance(written, Committed)
    listed = glass.listed()
    assert [(r["mutationId"], r["by"]["id"], r["reason"]) for r in listed] == [
        (applied.mutation.id, "ina", "outage"),
        (written.mutation.id, "oli", "hotfix"),
    ]
    assert listed[0]["proposal"] == p.id
    with pytest.raises(ReviewRefused, match=r"user:ina broke the glass on stream\.state"):
        glass.review(applied.mutation.id, INA)
    with pytest.raises(ReviewRefused, match="no break-glass change nope"):
        glass.review("nope", BO)
    record = glass.review(applied.mutation.id, BO)
    assert record["reviewedBy"] == "user:bo"
    assert [r["mutationId"] for r in glass.listed()] == [written.mutation.id]
    assert len(glass.listed(reviewed=True)) == 2
    # a second review keeps the first
    assert glass.review(applied.mutation.id, actor("user:cy"))["reviewedBy"] == "user:bo"


def test_reviewers_at_once_agree_on_the_first(
    app: App, server_redis: Redis, tmp_path: Path
) -> None:
    """Eight people mark the same change reviewed at the same moment (each with a client of
    their own): one review is kept, and every one of them is told that one."""
    written = BreakGlass(app.gateway).write(mutation("set", "plain.z", 3, OLI), "hotfix")
    assert isinstance(written, Committed)
    start = threading.Barrier(8)
    told: list[str] = []

    def review(n: int) -> None:
        kwargs = server_redis.connection_pool.connection_kwargs
        own = Redis(connection_pool=ConnectionPool(**kwargs))
        config = write_config(tmp_path, CONFIG)
        glass = BreakGlass(build_app(app.store.workspace, config, client=own).gateway)
        start.wait()
        told.append(glass.review(written.mutation.id, actor(f"user:r{n}"))["reviewedBy"])

    threads = [threading.Thread(target=review, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (kept,) = BreakGlass(app.gateway).listed(reviewed=True)
    assert len(told) == 8 and set(told) == {kept["reviewedBy"]}


def test_barred_says_before_the_reason_who_may_not_and_what_moved_on(app: App) -> None:
    """What a chat form asks only of whom it may help: someone holding the role, on a
    proposal still pending in this workspace. It records nothing."""
    glass = BreakGlass(app.gateway)
    p = proposed(app)
    assert glass.barred(p.id, INA) is None
    assert glass.barred(p.id, OLI) == (
        "user:oli does not hold the incident role: only it may break the glass on "
        "stream.state; nothing was changed"
    )
    assert (
        glass.barred("nope", INA) == "no proposal nope (it may have expired); nothing was changed"
    )
    assert [d for d in app.gateway.decisions.recent() if d["outcome"] == "rejected"] == []
    assert isinstance(glass.apply(p.id, INA, "outage", 0), Committed)
    assert glass.barred(p.id, INA) == (
        "this proposal was already applied by user:ina; nothing was changed"
    )
    q = proposed(app, "plain.y", 2)
    app.gateway.discard_proposal(q.id, OLI, "no")
    assert glass.barred(q.id, OLI) == (
        "this proposal was already discarded by user:oli; nothing was changed"
    )


# --- a break-glass whose process stopped midway ------------------------------------------


def test_a_break_glass_stopped_before_its_commit_is_not_committed_by_one_approval(
    app: App,
) -> None:
    """Ina's process claimed the proposal to break the glass and stopped before committing.
    Once her claim lapses, a click must not take it over as a claim made at the quorum: the
    proposal waits again for its approvals (and its rule), the click counting as one."""
    p = proposed(app)
    claimed = app.gateway.proposals.claim(p.id, INA, "outage", revision=0)  # (then it stopped)
    assert claimed is not None and claimed.status is ProposalStatus.APPLIED
    claimed_ago(app, p.id, CLAIM_LEASE_MS + 1)
    first = app.gateway.apply_proposal(p.id, MO, revision=0)
    assert isinstance(first, Pending), first
    assert app.store.get("stream.state") is None and len(app.log) == 0
    waiting = app.gateway.proposals.get(p.id)
    assert waiting is not None and waiting.status is ProposalStatus.PENDING
    assert waiting.break_glass is None and [str(a.by) for a in waiting.approvals] == [str(MO)]
    done = app.gateway.apply_proposal(p.id, BO, revision=0)  # the second approval: the rule is met
    assert isinstance(done, Committed) and "breakGlass" not in done.mutation.meta
    assert done.mutation.meta["approvedBy"] == [str(MO), str(BO)]
    assert BreakGlass(app.gateway).listed(reviewed=True) == []


def test_a_break_glass_stopped_right_after_its_commit_is_found_and_listed(
    app: App, server_redis: Redis, tmp_path: Path, workspace: str
) -> None:
    """Ina's break-glass committed, and her process stopped before anything else (the
    proposal, the review list): a later click finds her commit, not a stale proposal, and
    the change is listed for review all the same."""
    stopping = StoppingRedis(connection_pool=server_redis.connection_pool)
    inas = build_app(workspace, write_config(tmp_path, CONFIG, "inas.yaml"), client=stopping)
    p = proposed(app)
    stopping.armed = True
    with contextlib.suppress(ConnectionError):
        BreakGlass(inas.gateway).apply(p.id, INA, "outage", 0)
    assert stopping.committed and app.store.version("stream.state") == 1
    claimed_ago(app, p.id, CLAIM_LEASE_MS + 1)
    found = app.gateway.apply_proposal(p.id, MO, revision=0)
    assert isinstance(found, Committed) and found.duplicate, found
    assert found.mutation.meta["breakGlass"] == {"by": str(INA), "reason": "outage"}
    stored = app.gateway.proposals.get(p.id)
    assert stored is not None and stored.status is ProposalStatus.APPLIED
    assert stored.committed is not None and app.store.version("stream.state") == 1
    [listed] = BreakGlass(app.gateway).listed()
    assert (listed["mutationId"], listed["reason"]) == (found.mutation.id, "outage")


def test_a_break_glass_refused_at_its_commit_leaves_no_mark_on_the_proposal(
    tmp_path: Path, server_redis: Redis, workspace: str
) -> None:
    """Ina's break-glass is claimed, then refused by the commit (her rate limit on the key):
    the proposal waits again as it was, and once people apply it, it was not broken."""
    text = CONFIG + (
        '    - pattern: "limited.*"\n'
        "      rate_limit: {max: 1, per_sec: 3600}\n"
        "      approval: {people: true, break_glass: {role: incident}}\n"
    )
    app = build_app(workspace, write_config(tmp_path, text), client=server_redis)
    glass = BreakGlass(app.gateway)
    assert isinstance(glass.write(mutation("set", "limited.x", 1, INA), "first"), Committed)
    p = proposed(app, "limited.x", 2)
    refused = glass.apply(p.id, INA, "second", 0)
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.RATE_LIMITED
    waiting = app.gateway.proposals.get(p.id)
    assert waiting is not None and waiting.status is ProposalStatus.PENDING
    assert waiting.break_glass is None
    done = app.gateway.apply_proposal(p.id, BO, revision=0)
    assert isinstance(done, Committed) and "breakGlass" not in done.mutation.meta
    applied = app.gateway.proposals.get(p.id)
    assert applied is not None and applied.break_glass is None
    assert [r["reason"] for r in glass.listed()] == ["first"]


def test_a_reason_quoting_a_secret_keys_value_keeps_it_masked(
    tmp_path: Path, server_redis: Redis, workspace: str
) -> None:
    """Breaking the glass on a secret key, Ina writes the new value into her reason (as a
    careless person does): it is struck out of the reason before the reason is kept, so
    that the log's meta, the review list, the decision stream and the announcement never
    carry it; the value itself is committed."""
    text = CONFIG + (
        '    - pattern: "vault.*"\n'
        "      secret: true\n"
        "      approval: {people: true, break_glass: {role: incident}}\n"
    )
    app = build_app(workspace, write_config(tmp_path, text), client=server_redis)
    glass = BreakGlass(app.gateway)
    value, old = "tok-4c1d9e2b77", "tok-0ld5ecret9"
    p = proposed(app, "vault.token", old)
    done = glass.apply(p.id, INA, f"the token leaked; rotating {old} now", 0)
    written = glass.write(mutation("set", "vault.other", value, INA), f"set to {value}")
    assert isinstance(done, Committed) and isinstance(written, Committed)
    assert app.store.get("vault.token").value == old  # type: ignore[union-attr]
    assert app.store.get("vault.other").value == value  # type: ignore[union-attr]
    reasons = [r["reason"] for r in glass.listed()]
    assert reasons == ["the token leaked; rotating (secret) now", "set to (secret)"]
    for meta in (done.mutation.meta, written.mutation.meta):
        assert value not in str(meta["breakGlass"]) and old not in str(meta["breakGlass"])
    decisions = str(app.gateway.decisions.recent())
    assert value not in decisions and old not in decisions
    stored = app.gateway.proposals.get(p.id)
    assert stored is not None and stored.break_glass == "the token leaked; rotating (secret) now"
