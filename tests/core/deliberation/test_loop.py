"""The loop's ``update``, pure: messages in, the session and commands (as data) out. No Redis,
no model: what the runtime would do with each command is not needed to check what was asked."""

from __future__ import annotations

import pytest

from core.config.core_config import load_config
from core.deliberation.actions import ActionType, Task
from core.deliberation.commands import (
    Classify,
    Commit,
    Generate,
    LogEvaluation,
    Record,
    ResolveProposal,
    Show,
)
from core.deliberation.interpretation import ActType, Target, TurnInterpretation
from core.deliberation.memory import (
    Candidate,
    ClickStatus,
    Mode,
    ModelDelta,
    ProposalRef,
    ThreadStatus,
)
from core.deliberation.messages import (
    ActionClicked,
    ActionDone,
    AssistantReplied,
    Classified,
    OutcomeNote,
    ShowRequested,
    UserSaid,
)
from core.deliberation.session import Session
from core.deliberation.turn import ExecutorOutput
from core.deliberation.update.clicks import action_mutation_id
from core.deliberation.update.loop import Loop
from core.deliberation.view import View, ViewKind
from core.state.mutation import Op
from tests.factories import actor

LOOP = Loop(load_config().loop_settings())
ALICE, BOB = actor("user:alice"), actor("user:bob")


def said(act: ActType, confidence: float = 0.9) -> TurnInterpretation:
    return TurnInterpretation(act_type=act, target=Target.CURRENT_CANDIDATE, confidence=confidence)


def shown(cmds: list[object]) -> View:
    [view] = [c.view for c in cmds if isinstance(c, Show)]
    return view


def with_candidate(text: str = "Postgres", version: int = 1, **state: object) -> Session:
    interaction = {"candidate": Candidate(id="c1", text=text, version=version), **state}
    return Session.model_validate({"id": "s1", "interaction": interaction})


def click(action: str, target: str = "c1", version: int = 1, click_id: str = "k1", who=ALICE):
    return ActionClicked(
        action=action,
        target_id=target,
        expected_version=version,
        click_id=click_id,
        actor=who,
        correlation_id=f"corr-{click_id}",
    )


def test_a_message_is_recorded_and_classified_with_the_earlier_topic() -> None:
    session, cmds = LOOP.update(Session(id="s1"), UserSaid(text="db engine?", actor=ALICE))
    # the topic is what the first message asks about, without the asking
    assert session.interaction.turn_count == 1 and session.interaction.topic == "db engine"
    assert [type(c) for c in cmds] == [Record, Classify]
    assert cmds[1].topic is None  # the first turn has no topic to lean on yet
    _, cmds = LOOP.update(session, UserSaid(text="postgres?", actor=ALICE))
    assert cmds[1].topic == "db engine"


def test_an_unsure_commit_is_handled_as_a_question_and_surfaces_no_commit_beat() -> None:
    unsure = said(ActType.COMMIT, confidence=0.3)
    msg = Classified(text="ship?", interpretation=unsure, routed=ActType.QUESTION, classifier="x")
    session, cmds = LOOP.update(with_candidate(), msg)
    [generate] = cmds
    assert isinstance(generate, Generate) and generate.turn.task is Task.QUESTION
    assert session.interaction.last_interpretation.act_type is ActType.QUESTION
    replied = AssistantReplied(
        task=Task.QUESTION, output=ExecutorOutput(reply="noted"), responder="offline"
    )
    _, cmds = LOOP.update(session, replied)
    assert "ReadyToCommit" not in shown(cmds).fired


def test_a_reply_merges_working_memory_and_puts_a_candidate_up_with_buttons() -> None:
    output = ExecutorOutput(
        reply="How about Postgres?",
        candidate="Postgres",
        context_state_delta=ModelDelta(add_constraints=["EU only"]),
    )
    msg = AssistantReplied(task=Task.BRAINSTORM, output=output, responder="offline")
    session, cmds = LOOP.update(Session(id="s1"), msg)
    assert session.working.constraints == ["EU only"]
    candidate = session.interaction.candidate
    assert candidate is not None and candidate.version == 1
    assert [type(c) for c in cmds] == [Record, LogEvaluation, Show]
    view = shown(cmds)
    assert view.kind is ViewKind.REPLY and view.fired == ["CandidateReady"]
    assert {(b.target_id, b.target_version) for b in view.buttons} == {(candidate.id, 1)}


def test_a_refinement_versions_the_same_candidate_and_a_brainstorm_makes_a_new_one() -> None:
    refined = AssistantReplied(
        task=Task.REFINE,
        output=ExecutorOutput(reply="ok", candidate="Postgres 16"),
        responder="offline",
    )
    session, _ = LOOP.update(with_candidate(), refined)
    assert session.interaction.candidate == Candidate(id="c1", text="Postgres 16", version=2)
    fresh = refined.model_copy(update={"task": Task.BRAINSTORM, "correlation_id": "other"})
    session, _ = LOOP.update(session, fresh)
    assert session.interaction.candidate.id != "c1"


@pytest.mark.parametrize(
    ("action", "op", "key"),
    [
        (ActionType.CONFIRM_CURRENT, Op.SET, "decision.db-engine"),
        (ActionType.ADD_CURRENT_TO_ARTIFACT, Op.APPEND, "artifact.db-engine"),
        ("SwitchScene", Op.SET, "scene.name"),
    ],
)
def test_a_committing_click_asks_for_one_idempotent_mutation(action, op, key) -> None:
    session = with_candidate("BRB", topic="DB engine")
    after, cmds = LOOP.update(session, click(action))
    [commit] = cmds
    assert isinstance(commit, Commit)
    m = commit.mutation
    assert (m.op, m.key, m.value) == (op, key, "BRB")
    assert m.id == action_mutation_id("s1", click(action, click_id="another-click"))
    assert m.actor == ALICE and m.meta["candidateVersion"] == 1
    assert after.interaction.clicks[-1].status is ClickStatus.PENDING


def test_derive_entity_makes_a_task_keyed_by_the_click() -> None:
    _, [commit] = LOOP.update(with_candidate(topic="launch"), click("DeriveEntityFromCurrent"))
    assert commit.mutation.key.startswith("entity.task.c1-")
    assert commit.mutation.value == {"title": "Postgres", "topic": "launch"}


def test_alternative_sets_the_candidate_aside_and_asks_the_model_once() -> None:
    after, cmds = LOOP.update(with_candidate(), click(ActionType.ALTERNATIVE_CURRENT))
    [generate] = cmds
    assert isinstance(generate, Generate) and generate.turn.task is Task.ALTERNATIVE
    assert after.interaction.candidate is None
    assert after.working.rejected_ideas == ["Postgres"]


def test_a_stale_click_changes_nothing_and_shows_the_current_candidate() -> None:
    session = with_candidate("Postgres 16", version=2)
    after, cmds = LOOP.update(session, click(ActionType.CONFIRM_CURRENT, version=1))
    assert after == session
    view = shown(cmds)
    assert view.ephemeral and "changed" in view.text and "Postgres 16" in view.text
    assert {b.target_version for b in view.buttons} == {2}
    assert not any(isinstance(c, Commit) for c in cmds)


def test_a_second_person_on_the_same_version_is_told_it_is_done() -> None:
    session, _ = LOOP.update(with_candidate(), click(ActionType.CONFIRM_CURRENT))
    note = OutcomeNote(outcome="committed", message="Committed", key="decision.x", value="P")
    session, _ = LOOP.update(
        session, ActionDone(click=click(ActionType.CONFIRM_CURRENT), result=note)
    )
    after, cmds = LOOP.update(session, click(ActionType.CONFIRM_CURRENT, click_id="k2", who=BOB))
    assert after == session and shown(cmds).text == "Already done by user:alice."


def test_a_click_racing_one_still_on_its_way_sends_the_same_mutation() -> None:
    # the first click's process may have died before committing: nothing may be stuck
    session, [first] = LOOP.update(with_candidate(), click(ActionType.CONFIRM_CURRENT))
    _, [second] = LOOP.update(session, click(ActionType.CONFIRM_CURRENT, click_id="k2", who=BOB))
    assert isinstance(second, Commit) and second.mutation.id == first.mutation.id
    assert second.mutation.actor == BOB


def test_the_same_click_again_resends_its_command_while_it_is_on_its_way() -> None:
    session, first = LOOP.update(with_candidate(), click(ActionType.CONFIRM_CURRENT))
    again, cmds = LOOP.update(session, click(ActionType.CONFIRM_CURRENT))
    assert again == session and cmds == first  # same mutation id: the gateway commits once


def test_an_unknown_action_is_refused() -> None:
    after, cmds = LOOP.update(with_candidate(), click("LaunchMissiles"))
    assert after == with_candidate() and shown(cmds).ephemeral


def test_proposal_clicks_need_the_proposal_to_be_pending() -> None:
    pending = [ProposalRef(id="p1", summary="set scene.name = BRB")]
    session = with_candidate(pending_proposals=pending)
    _, cmds = LOOP.update(session, click(ActionType.APPLY_PROPOSAL, target="p1", version=0))
    assert cmds == [ResolveProposal(True, click(ActionType.APPLY_PROPOSAL, "p1", 0))]
    _, cmds = LOOP.update(session, click(ActionType.APPLY_PROPOSAL, target="p9", version=0))
    assert shown(cmds).text == "This proposal is no longer pending."


def test_a_committed_confirm_decides_the_thread_and_pins_the_decision() -> None:
    session, _ = LOOP.update(with_candidate(), click(ActionType.CONFIRM_CURRENT))
    note = OutcomeNote(outcome="committed", message="Committed", key="decision.x", value="Postgres")
    done = ActionDone(click=click(ActionType.CONFIRM_CURRENT), result=note)
    after, cmds = LOOP.update(session, done)
    assert after.interaction.thread_status is ThreadStatus.DECIDED
    assert after.working.pinned_decisions == ["Postgres"]
    assert after.interaction.clicks[-1].status is ClickStatus.DONE
    view = shown(cmds)
    assert view.kind is ViewKind.OUTCOME and "user:alice" in view.text
    assert not any(b.action == ActionType.CONFIRM_CURRENT for b in view.buttons)


def test_a_rejected_click_tells_only_the_clicker_and_lets_someone_else_try() -> None:
    session, _ = LOOP.update(with_candidate(), click("SwitchScene"))
    note = OutcomeNote(outcome="rejected", message="stream.state is protected", reason="protected")
    after, cmds = LOOP.update(session, ActionDone(click=click("SwitchScene"), result=note))
    view = shown(cmds)
    assert view.ephemeral and view.text == "Not done: stream.state is protected"
    assert after.interaction.candidate == session.interaction.candidate
    _, cmds = LOOP.update(after, click("SwitchScene", click_id="k2", who=BOB))
    assert isinstance(cmds[0], Commit)


def test_a_proposals_apply_says_which_role_may_break_the_glass() -> None:
    """The platforms offer "Break glass" beside the Apply of a proposal whose key names a
    role that may (``ProposalRef.break_glass``), and beside no other button."""
    for role in ("oncall", None):
        pending = [ProposalRef(id="p1", summary="set scene.name = BRB", break_glass=role)]
        session = with_candidate(pending_proposals=pending)
        _, cmds = LOOP.update(session, ShowRequested(actor=ALICE))
        glass = {b.action: b.break_glass for b in shown(cmds).buttons}
        assert glass[ActionType.APPLY_PROPOSAL] == role
        assert glass[ActionType.DISCARD_PROPOSAL] is None
        assert glass[ActionType.CONFIRM_CURRENT] is None


def test_a_discarded_proposal_leaves_the_session() -> None:
    pending = [ProposalRef(id="p1", summary="set scene.name = BRB")]
    msg = click(ActionType.DISCARD_PROPOSAL, target="p1", version=0)
    session, _ = LOOP.update(with_candidate(pending_proposals=pending), msg)
    note = OutcomeNote(outcome="discarded", message="Discarded")
    after, _ = LOOP.update(session, ActionDone(click=msg, result=note))
    assert after.interaction.pending_proposals == []


def test_modes_follow_the_act() -> None:
    for act, mode in [(ActType.BRAINSTORM, Mode.EXPLORING), (ActType.TANGENT, Mode.DRIFTING)]:
        msg = Classified(text="x", interpretation=said(act), routed=act, classifier="x")
        assert LOOP.update(with_candidate(), msg)[0].interaction.mode is mode


def test_a_done_action_is_not_offered_again_on_the_same_version() -> None:
    session, _ = LOOP.update(with_candidate("BRB"), click("SwitchScene"))
    note = OutcomeNote(outcome="committed", message="Committed", key="scene.name", value="BRB")
    _, cmds = LOOP.update(session, ActionDone(click=click("SwitchScene"), result=note))
    actions = [b.action for b in shown(cmds).buttons]
    assert "SwitchScene" not in actions and ActionType.CONFIRM_CURRENT in actions


def test_a_retried_click_after_the_candidate_moved_on_is_stale() -> None:
    session, _ = LOOP.update(with_candidate(), click(ActionType.CONFIRM_CURRENT))
    moved = session.interaction.model_copy(
        update={"candidate": Candidate(id="c1", text="MongoDB, actually", version=2)}
    )
    session = session.model_copy(update={"interaction": moved})
    _, cmds = LOOP.update(session, click(ActionType.CONFIRM_CURRENT))  # the same click id
    assert not any(isinstance(c, Commit) for c in cmds)
    assert shown(cmds).text.startswith("This suggestion changed")


def test_a_duplicate_commit_names_who_committed_first() -> None:
    session, _ = LOOP.update(with_candidate(), click(ActionType.CONFIRM_CURRENT, who=BOB))
    note = OutcomeNote(
        outcome="committed", message="Committed (already committed)", by="user:alice"
    )
    bobs = click(ActionType.CONFIRM_CURRENT, who=BOB)
    _, cmds = LOOP.update(session, ActionDone(click=bobs, result=note))
    assert shown(cmds).text.endswith("(by user:alice)")
