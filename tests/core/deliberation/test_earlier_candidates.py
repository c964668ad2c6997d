"""What the loop does with a turn's stance (``core.perception.stances``): "no, not that" sets
the candidate aside and never commits; "go back to the previous one" brings back the newest
earlier candidate, at its next version. Pure: messages in, session and commands out."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.config.core_config import load_config
from core.deliberation.actions import ActionType, Task
from core.deliberation.commands import Generate, Record, Show
from core.deliberation.interpretation import ActType, Stance, Target, TurnInterpretation
from core.deliberation.memory import MAX_EARLIER, Candidate, InteractionState, Mode
from core.deliberation.messages import ActionClicked, AssistantReplied, Classified
from core.deliberation.session import Session
from core.deliberation.turn import ExecutorOutput
from core.deliberation.update.loop import Loop
from tests.factories import actor

LOOP = Loop(load_config().loop_settings())
ALICE = actor("user:alice")


def turn(text: str, stance: Stance | None, act: ActType = ActType.BRAINSTORM) -> Classified:
    reading = TurnInterpretation(
        act_type=act, target=Target.CURRENT_CANDIDATE, confidence=0.9, stance=stance
    )
    return Classified(
        text=text, interpretation=reading, routed=reading.routed(0.45), classifier="embedded"
    )


def clicked(action: str, target_id: str, version: int, click_id: str) -> ActionClicked:
    return ActionClicked(
        action=action,
        target_id=target_id,
        expected_version=version,
        click_id=click_id,
        actor=ALICE,
    )


def brainstormed(session: Session, idea: str, corr: str) -> Session:
    output = ExecutorOutput(reply=f"Candidate: {idea}", candidate=idea)
    msg = AssistantReplied(
        task=Task.BRAINSTORM, output=output, responder="offline", correlation_id=corr
    )
    return LOOP.update(session, msg)[0]


def two_ideas() -> Session:
    return brainstormed(brainstormed(Session(id="s1"), "mysql", "a"), "postgres", "b")


def test_a_new_idea_keeps_the_one_it_replaced() -> None:
    session = two_ideas()
    state = session.interaction
    assert state.candidate is not None and state.candidate.text == "postgres"
    assert [c.text for c in state.earlier] == ["mysql"]


def test_go_back_brings_the_previous_one_back_at_its_next_version_and_never_commits() -> None:
    session = two_ideas()
    [mysql] = session.interaction.earlier
    after, cmds = LOOP.update(session, turn("no, go back to the previous one", Stance.BACK))
    state = after.interaction
    assert state.candidate == mysql.model_copy(update={"version": mysql.version + 1})
    assert [c.text for c in state.earlier] == ["postgres"]  # and back again, said twice
    assert not any(isinstance(c, Generate) for c in cmds)  # nothing for a model to write
    [view] = [c.view for c in cmds if isinstance(c, Show)]
    assert view.text == "Back on the table: mysql" and "ReadyToCommit" not in view.fired
    assert {b.target_version for b in view.buttons} == {mysql.version + 1}  # old ones stale
    assert [c.text for c in cmds if isinstance(c, Record)] == [view.text]
    again, _ = LOOP.update(after, turn("go back to the previous one", Stance.BACK))
    assert again.interaction.candidate is not None
    assert again.interaction.candidate.text == "postgres"


def test_go_back_with_nothing_earlier_says_so_and_keeps_the_table() -> None:
    session = brainstormed(Session(id="s1"), "mysql", "a")
    after, cmds = LOOP.update(session, turn("go back to the previous one", Stance.BACK))
    assert after.interaction.candidate == session.interaction.candidate
    [view] = [c.view for c in cmds if isinstance(c, Show)]
    assert view.text.startswith("There is no earlier candidate")


def test_a_dissent_sets_the_candidate_aside_with_its_words_and_asks_for_another() -> None:
    session = two_ideas()
    # the model's act said commit ("don't ship it"): the stance wins
    after, cmds = LOOP.update(session, turn("don't ship it", Stance.DISSENT, ActType.COMMIT))
    [generate] = cmds
    assert isinstance(generate, Generate) and generate.turn.task is Task.ALTERNATIVE
    state = after.interaction
    assert state.candidate is None and state.mode is Mode.EXPLORING
    assert state.last_interpretation is not None
    assert state.last_interpretation.act_type is ActType.BRAINSTORM
    assert [c.text for c in state.earlier] == ["mysql", "postgres"]
    assert after.working.rejected_ideas == ["postgres (rejected: don't ship it)"]


def test_a_dissent_with_nothing_on_the_table_puts_nothing_there() -> None:
    after, cmds = LOOP.update(Session(id="s1"), turn("nah", Stance.DISSENT))
    [generate] = cmds
    assert isinstance(generate, Generate) and generate.turn.task is Task.TANGENT
    assert after.interaction.candidate is None


def test_try_another_angle_keeps_the_candidate_to_go_back_to() -> None:
    session = two_ideas()
    postgres = session.interaction.candidate
    assert postgres is not None
    aside = clicked(ActionType.ALTERNATIVE_CURRENT, postgres.id, postgres.version, "k1")
    after, _ = LOOP.update(session, aside)
    assert [c.text for c in after.interaction.earlier] == ["mysql", "postgres"]


@given(st.lists(st.sampled_from("abcdefgh"), max_size=30))
def test_earlier_keeps_each_candidate_once_newest_last_and_at_most_five(ids: list[str]) -> None:
    state = InteractionState()
    for i in ids:
        state = state.model_copy(
            update={"earlier": state.set_aside(Candidate(id=i, text=f"idea {i}"))}
        )
    kept = [c.id for c in state.earlier]
    assert len(kept) == len(set(kept)) <= MAX_EARLIER
    newest_first = list(dict.fromkeys(reversed(ids)))[:MAX_EARLIER]
    assert kept == newest_first[::-1]


def test_an_edit_refines_what_is_on_the_table_and_puts_up_nothing_alone() -> None:
    session = two_ideas()
    edit = turn("and announce it on the blog", Stance.EDIT, ActType.BRAINSTORM)
    after, cmds = LOOP.update(session, edit)
    [generate] = cmds
    assert isinstance(generate, Generate) and generate.turn.task is Task.REFINE
    assert after.interaction.candidate == session.interaction.candidate
    _, cmds = LOOP.update(Session(id="s1"), edit)  # nothing to edit: read as it reads
    [generate] = cmds
    assert isinstance(generate, Generate) and generate.turn.task is Task.BRAINSTORM
    ship = turn("and ship it", Stance.EDIT, ActType.COMMIT)
    _, cmds = LOOP.update(session, ship)
    [generate] = cmds
    assert isinstance(generate, Generate) and generate.turn.task is Task.COMMIT


def test_back_to_is_a_button_once_the_table_is_empty_and_its_click_restores() -> None:
    session = two_ideas()
    after, cmds = LOOP.update(session, turn("no, not that", Stance.DISSENT))
    replied = AssistantReplied(
        task=Task.ALTERNATIVE,
        output=ExecutorOutput(reply="Set that one aside."),
        responder="offline",
        correlation_id="c",
    )
    after, cmds = LOOP.update(after, replied)
    [view] = [c.view for c in cmds if isinstance(c, Show)]
    [back] = view.buttons
    postgres = after.interaction.earlier[-1]
    assert back.action == ActionType.RESTORE_CANDIDATE
    assert back.label == "Back to: postgres"
    assert (back.target_id, back.target_version) == (postgres.id, postgres.version)
    click = clicked(back.action, back.target_id, back.target_version, "k2")
    restored, cmds = LOOP.update(after, click)
    assert restored.interaction.candidate is not None
    assert restored.interaction.candidate.text == "postgres"
    [view] = [c.view for c in cmds if isinstance(c, Show)]
    assert view.text == "Back on the table: postgres"
    # the same button again: that version is on the table now, no longer an earlier one
    again, cmds = LOOP.update(restored, click.model_copy(update={"click_id": "k3"}))
    assert again.interaction.candidate == restored.interaction.candidate
    [view] = [c.view for c in cmds if isinstance(c, Show)]
    assert view.kind.value == "notice"


def test_a_forged_back_to_names_no_earlier_candidate_and_changes_nothing() -> None:
    session = two_ideas()
    forged = clicked(ActionType.RESTORE_CANDIDATE, "c-someone-elses", 1, "k9")
    after, cmds = LOOP.update(session, forged)
    assert after.interaction.candidate == session.interaction.candidate
    assert after.interaction.earlier == session.interaction.earlier
    [view] = [c.view for c in cmds if isinstance(c, Show)]
    assert view.kind.value == "notice"
