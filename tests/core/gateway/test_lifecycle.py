"""The decision lifecycle at the gateway: quorum and four eyes, edit then apply, discard with a
reason, stale proposals, expiry per key pattern and the sweep, and the pending list. Real
Redis; concurrency with real threads."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import JsonValue
from redis import Redis

from bot.app import App, build_app
from core.gateway.edits import Edit, edited_value, value_text
from core.gateway.outcome import Outcome, Pending, Proposal, ProposalStatus
from core.state.actor import Actor
from core.state.commit_result import Committed, Rejected, RejectReason
from core.state.mutation import Mutation, Op
from tests.conftest import write_config
from tests.factories import actor, mutation

CONFIG = """
policy:
  proposals: {expire_after_sec: 86400}
  keys:
    - pattern: "pair.*"
      type: string
      enum: [a, b, c]
      approval: {quorum: 2, four_eyes: true, expire_after_sec: 600}
    - pattern: "mods.*"
      protected: true
      approval: {quorum: 2}
    - pattern: "asked.*"
      approval: {people: true, four_eyes: true}
    - pattern: "plain.*"
      type: string
      max_length: 20
"""

AL, BO, CY, DI = (actor(f"user:{n}") for n in ("al", "bo", "cy", "di"))
MO, MAX = actor("moderator:mo"), actor("moderator:max")


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_config(tmp_path, CONFIG)


@pytest.fixture
def life(config: Path, server_redis: Redis, workspace: str) -> App:
    return build_app(workspace, config, client=server_redis)


def agent_proposal(app: App, key: str, value: object = "a", asker: Actor | None = AL) -> Proposal:
    meta = {} if asker is None else {"requestedBy": asker.model_dump(mode="json")}
    pending = app.gateway.propose(mutation("set", key, value, "agent:llm", meta=meta))
    assert isinstance(pending, Pending), pending
    return pending.proposal


def stored(app: App, pid: str) -> Proposal:
    proposal = app.gateway.proposals.get(pid)
    assert proposal is not None
    return proposal


# --- quorum and four eyes ------------------------------------------------------------------


def test_two_of_n_commits_at_the_second_distinct_approver(life: App) -> None:
    p = agent_proposal(life, "pair.one")
    assert (p.quorum, p.four_eyes, p.requested_by) == (2, True, AL)
    first = life.gateway.apply_proposal(p.id, BO, revision=0)
    assert isinstance(first, Pending)
    assert [a.by for a in first.proposal.approvals] == [BO]
    assert "approved by user:bo (1 of 2); awaits 1 more approval" in first.to_dict()["message"]
    again = life.gateway.apply_proposal(p.id, BO, revision=0)  # the same person twice counts once
    assert isinstance(again, Pending) and len(again.proposal.approvals) == 1
    assert life.store.version("pair.one") == 0
    done = life.gateway.apply_proposal(p.id, CY, revision=0)
    assert isinstance(done, Committed) and done.version == 1
    record = life.log.latest(1, key="pair.one")[0]
    assert record.mutation.meta["approvedBy"] == ["user:bo", "user:cy"]
    assert record.mutation.meta["requestedBy"] == "user:al"
    assert record.mutation.actor == CY and record.mutation.proposed_by == actor("agent:llm")
    late = life.gateway.apply_proposal(p.id, DI, revision=0)  # after the commit: its result, once
    assert isinstance(late, Committed) and late.duplicate and late.log_id == done.log_id
    assert life.store.version("pair.one") == 1


def test_the_person_who_asked_may_not_approve_with_four_eyes(life: App) -> None:
    p = agent_proposal(life, "pair.own", asker=AL)
    refused = life.gateway.apply_proposal(p.id, AL, revision=0)
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.FORBIDDEN
    assert refused.message == "user:al asked for this change: someone else must approve it"
    assert stored(life, p.id).approvals == []
    # with another role, still the same person; on another platform, another person
    assert isinstance(
        life.gateway.apply_proposal(p.id, actor("moderator:al"), revision=0), Rejected
    )
    elsewhere = AL.model_copy(update={"platform": "discord"})
    assert isinstance(life.gateway.apply_proposal(p.id, elsewhere, revision=0), Pending)


def test_a_persons_own_write_waits_and_another_person_applies_it(life: App) -> None:
    waiting = life.gateway.propose(mutation("set", "asked.scene", "BRB", AL))
    assert isinstance(waiting, Pending) and waiting.proposal.requested_by == AL
    assert life.store.version("asked.scene") == 0
    mine = life.gateway.apply_proposal(waiting.proposal.id, AL, revision=0)
    assert isinstance(mine, Rejected) and mine.reason is RejectReason.FORBIDDEN
    theirs = life.gateway.apply_proposal(waiting.proposal.id, BO, revision=0)
    assert isinstance(theirs, Committed)
    assert theirs.mutation.proposed_by == AL and theirs.mutation.actor == BO


def test_roles_apply_to_each_approver(life: App) -> None:
    p = agent_proposal(life, "mods.ban", value=True)
    refused = life.gateway.apply_proposal(p.id, AL, revision=0)
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.PROTECTED
    assert stored(life, p.id).approvals == []  # a refused approver is not counted
    assert isinstance(life.gateway.apply_proposal(p.id, MO, revision=0), Pending)
    assert isinstance(life.gateway.apply_proposal(p.id, MAX, revision=0), Committed)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(clickers=st.lists(st.sampled_from(["user:al", "user:bo", "user:cy", "user:di"]), max_size=8))
def test_a_quorum_commits_exactly_once_under_concurrent_clicks(
    life: App, clickers: list[str]
) -> None:
    """Any number of clicks at once, repeated and by the requester among them: the proposal
    commits once exactly when two distinct people other than the requester clicked."""
    p = agent_proposal(life, f"pair.q{abs(hash(tuple(clickers))) % 10**9}-{len(clickers)}")
    start = threading.Barrier(len(clickers) or 1)
    outcomes: list[Outcome] = []

    def click(who: str) -> None:
        start.wait()
        outcomes.append(life.gateway.apply_proposal(p.id, actor(who), revision=0))

    threads = [threading.Thread(target=click, args=(who,)) for who in clickers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert len(outcomes) == len(clickers)
    allowed = {c for c in clickers if c != "user:al"}
    key = p.mutation.key
    fresh = [o for o in outcomes if isinstance(o, Committed) and not o.duplicate]
    if len(allowed) >= 2:
        assert len(fresh) == 1 and life.store.version(key) == 1
        approvers = life.log.latest(1, key=key)[0].mutation.meta["approvedBy"]
        assert isinstance(approvers, list) and len(approvers) == len(set(approvers)) == 2
        assert set(approvers) <= allowed
        assert stored(life, p.id).status is ProposalStatus.APPLIED
    else:
        assert fresh == [] and life.store.version(key) == 0
        assert stored(life, p.id).status is ProposalStatus.PENDING
        assert {str(a.by) for a in stored(life, p.id).approvals} == allowed


# --- edit, then apply ----------------------------------------------------------------------


def test_an_edited_value_commits_with_both_values_logged(life: App) -> None:
    p = agent_proposal(life, "plain.title", value="first draft", asker=None)
    done = life.gateway.apply_proposal(p.id, BO, edit=Edit("final"), revision=0)
    assert isinstance(done, Committed) and life.store.get("plain.title").value == "final"  # type: ignore[union-attr]
    meta = life.log.latest(1, key="plain.title")[0].mutation.meta
    assert (meta["proposedValue"], meta["editedBy"]) == ("first draft", "user:bo")
    kept = stored(life, p.id)
    assert kept.edited is not None and kept.edited.by == BO and kept.current_value == "final"


def test_an_edit_the_schema_refuses_changes_nothing(life: App) -> None:
    p = agent_proposal(life, "plain.title", value="short", asker=None)
    refused = life.gateway.apply_proposal(p.id, BO, edit=Edit("x" * 21), revision=0)
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.SCHEMA
    assert "plain.title" in refused.message
    assert stored(life, p.id).status is ProposalStatus.PENDING
    assert stored(life, p.id).edited is None and life.store.version("plain.title") == 0


def test_an_edit_sets_earlier_approvals_aside_and_counts_its_editor(life: App) -> None:
    """Without four eyes an edit is its editor's approval; Mo's approval of the first value
    does not count for the second."""
    p = agent_proposal(life, "mods.edit", value="a", asker=None)
    assert isinstance(life.gateway.apply_proposal(p.id, MO, revision=0), Pending)
    edited = life.gateway.apply_proposal(p.id, MAX, edit=Edit("b"), revision=0)
    assert isinstance(edited, Pending) and edited.proposal.revision == 1
    assert [a.by for a in edited.proposal.approvals] == [MAX]
    done = life.gateway.apply_proposal(p.id, MO, revision=1)
    assert isinstance(done, Committed) and life.store.get("mods.edit").value == "b"  # type: ignore[union-attr]


def test_under_four_eyes_the_editor_asked_for_the_new_value(life: App) -> None:
    """Bo's edit is Bo's request: it counts no approval, Bo may not approve it, and an
    approval of the value shown before the edit is refused."""
    p = agent_proposal(life, "pair.edit", value="a")
    assert isinstance(life.gateway.apply_proposal(p.id, CY, revision=0), Pending)
    edited = life.gateway.apply_proposal(p.id, BO, edit=Edit("b"), revision=0)
    assert isinstance(edited, Pending) and edited.proposal.approvals == []
    own = life.gateway.apply_proposal(p.id, BO, revision=1)
    assert isinstance(own, Rejected) and own.reason is RejectReason.FORBIDDEN
    assert own.message == "user:bo edited this change: someone else must approve the new value"
    seen_before = life.gateway.apply_proposal(p.id, DI, revision=0)
    assert isinstance(seen_before, Rejected) and seen_before.reason is RejectReason.CONFLICT
    assert "edited by user:bo since you saw it: it now reads set pair.edit = b" in (
        seen_before.message
    )
    assert isinstance(life.gateway.apply_proposal(p.id, CY, revision=1), Pending)
    done = life.gateway.apply_proposal(p.id, DI, revision=1)
    assert isinstance(done, Committed) and life.store.get("pair.edit").value == "b"  # type: ignore[union-attr]
    assert done.mutation.meta["approvedBy"] == ["user:cy", "user:di"]


def test_an_edit_the_operation_cannot_take_is_refused() -> None:
    assert edited_value(1, "2", Op.INCR) == Edit(2)
    for op, text, why in [
        (Op.INCR, '"two"', "must be a number"),
        (Op.INCR, "[1]", "must be a number"),
        (Op.INCR, "true", "must be a number"),
        (Op.SET, "1e400", "too large"),
        (Op.DELETE, "x", "a delete has no value"),
    ]:
        with pytest.raises(ValueError, match=why):
            edited_value(1, text, op)


@pytest.mark.parametrize(
    ("proposed", "text", "why"),
    [
        ({"a": 1}, '{"a": 1e999}', "holds a number too large for JSON"),
        ([1], "[1, -1e999]", "holds a number too large for JSON"),
        ([1], "[NaN]", "not JSON"),
        ({"a": 1}, '{"a": [Infinity]}', "not JSON"),
        ({"a": 1}, '{"a": "\\ud800"}', "holds U+D800, a lone surrogate"),
        ({"a": 1}, '{"\\udc80": 1}', "holds U+DC80, a lone surrogate"),
        ("text", "bytes \udcff that are not UTF-8", "holds U+DCFF, a lone surrogate"),
        ("text", "half \ud83d a pair", "holds U+D83D, a lone surrogate"),
    ],
    ids=["inf-in", "-inf-in", "nan", "Infinity-in", "escaped", "escaped-name", "raw", "half"],
)
def test_an_edit_json_cannot_carry_is_refused_in_a_sentence_never_quoting_it(
    proposed: JsonValue, text: str, why: str
) -> None:
    """Issue 41: ``{"a": 1e999}`` or a lone surrogate passed the edit, then failed in the
    store's encoding (500 on the web, exit 2 in the console)."""
    with pytest.raises(ValueError, match=re.escape(why)) as refused:
        edited_value(proposed, text)
    assert "1e999" not in str(refused.value) and "\\u" not in str(refused.value)


def test_an_edit_with_a_whole_pair_is_kept() -> None:
    assert edited_value({"a": 1}, '{"a": "\\ud83d\\ude00"}') == Edit({"a": "\U0001f600"})
    assert edited_value("text", "\U0001f600 ok") == Edit("\U0001f600 ok")


def test_edit_text_is_plain_for_strings_and_json_otherwise() -> None:
    assert edited_value("old", "  new words ") == Edit("new words")
    assert edited_value(3, "4") == Edit(4)
    assert edited_value({"a": 1}, '{"a": 2}') == Edit({"a": 2})
    assert value_text({"a": 1}) == '{"a":1}' and value_text("x") == "x"
    for proposed, text, why in [
        (3, "four", "not JSON"),
        (3, "NaN", "not JSON"),
        (3, "[" * 1400 + "]" * 1400, "not JSON|nests more than"),
        (3, "[" * 70 + "]" * 70, "nests more than"),
        ("x", "   ", "empty"),
        ("x", "y" * 3001, "more than 3000"),
    ]:
        with pytest.raises(ValueError, match=why):
            edited_value(proposed, text)


# --- discard with a reason, stale, expiry ----------------------------------------------------


def test_a_discard_keeps_its_reason_in_the_proposal_and_the_decision_log(life: App) -> None:
    p = agent_proposal(life, "plain.name", value="Zed", asker=None)
    after = life.gateway.discard_proposal(p.id, BO, "  we  agreed on\nAnna ")
    assert after.status is ProposalStatus.DISCARDED and after.reason == "we agreed on Anna"
    row = life.gateway.decisions.recent()[-1]
    assert (row["outcome"], row["reason"], row["proposal_id"]) == (
        "discarded",
        "we agreed on Anna",
        p.id,
    )
    again = life.gateway.discard_proposal(p.id, CY, "other")  # once only
    assert again.reason == "we agreed on Anna" and again.resolved_by == BO


def test_a_proposal_goes_stale_when_its_key_moves_on(life: App) -> None:
    p = agent_proposal(life, "plain.topic", value="mine", asker=None)
    assert p.base_version == 0
    assert isinstance(life.gateway.propose(mutation("set", "plain.topic", "theirs", CY)), Committed)
    stale = life.gateway.apply_proposal(p.id, BO, revision=0)
    assert isinstance(stale, Rejected) and stale.reason is RejectReason.STALE
    assert stale.message.startswith("this proposal went stale: plain.topic changed")
    assert stored(life, p.id).status is ProposalStatus.STALE
    assert life.store.get("plain.topic").value == "theirs"  # type: ignore[union-attr]
    later = life.gateway.apply_proposal(p.id, MO, revision=0)
    assert isinstance(later, Rejected) and "went stale" in later.message


def test_expiry_follows_the_keys_pattern_and_the_sweep_records_it(life: App) -> None:
    short = agent_proposal(life, "pair.t")
    long = agent_proposal(life, "plain.t", value="v", asker=None)
    assert short.expires_at is not None and long.expires_at is not None
    assert short.expires_at - short.created_at == 600_000
    assert long.expires_at - long.created_at == 86_400_000
    assert life.gateway.expire_due() == 0
    past = stored(life, short.id).model_copy(update={"expires_at": short.created_at - 1})
    life.redis.set(life.store.keys.proposal(short.id), past.model_dump_json(by_alias=True))
    life.redis.zadd(life.store.keys.proposals, {short.id: short.created_at - 1})
    assert life.gateway.expire_due() == 1
    assert stored(life, short.id).status is ProposalStatus.EXPIRED
    row = life.gateway.decisions.recent()[-1]
    assert (row["outcome"], row["reason"], row["clicked"]) == ("rejected", "expired", False)
    assert life.gateway.expire_due() == 0  # once
    refused = life.gateway.apply_proposal(short.id, BO, revision=0)
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.EXPIRED


def test_the_pending_list_shows_what_waits_and_all_shows_the_rest(life: App) -> None:
    waiting = agent_proposal(life, "plain.a", value="1", asker=None)
    dropped = agent_proposal(life, "plain.b", value="2", asker=None)
    life.gateway.discard_proposal(dropped.id, BO, "no")
    assert [p.id for p in life.gateway.proposals.listed()] == [waiting.id]
    assert {p.id for p in life.gateway.proposals.listed(resolved=True)} == {
        waiting.id,
        dropped.id,
    }
    life.redis.set(life.store.keys.proposal(dropped.id), "{not json")  # planted
    assert [p.id for p in life.gateway.proposals.listed(resolved=True)] == [waiting.id]
    life.redis.delete(life.store.keys.proposal(waiting.id))  # gone (kept time over)
    assert life.gateway.proposals.listed() == []
    assert life.redis.zscore(life.store.keys.proposals, waiting.id) is None


def test_a_retried_proposal_keeps_its_first_record(life: App) -> None:
    m: Mutation = mutation("set", "pair.r", "a", "agent:llm")
    first = life.gateway.propose(m)
    assert isinstance(first, Pending)
    assert isinstance(life.gateway.apply_proposal(first.proposal.id, BO, revision=0), Pending)
    again = life.gateway.propose(m)
    assert isinstance(again, Pending) and [a.by for a in again.proposal.approvals] == [BO]
