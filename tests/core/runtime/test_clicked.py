"""What a click came to, as the runtime hands it back typed (``Runtime.click``): the click's
own outcome, whether it asked the assistant again, the views it led to, each read from a
real send against Redis, and the same as reading the events by hand."""

from __future__ import annotations

from bot.app import App
from bot.chat.click_outcomes import ICONS
from core.deliberation.actions import ActionType
from core.deliberation.messages import ActionClicked, UserSaid
from core.deliberation.view import View, ViewKind
from core.runtime.clicked import SHOWN_OUTCOMES, Clicked
from core.runtime.events import OutcomeEvent
from core.runtime.runner import Runtime
from tests.factories import actor

ALICE, BOB = actor("user:alice"), actor("user:bob")


def shown(runtime: Runtime, text: str) -> View:
    [view] = [
        e for e in runtime.send("s1", UserSaid(text=text, actor=ALICE)) if isinstance(e, View)
    ]
    return view


def click(runtime: Runtime, view: View, action: str, click_id: str, who=ALICE) -> Clicked:
    button = next(b for b in view.buttons if b.action == action)
    return runtime.click(
        "s1",
        ActionClicked(
            action=action,
            target_id=button.target_id,
            expected_version=button.target_version,
            click_id=click_id,
            actor=who,
        ),
    )


def test_a_commit_is_the_clicks_own_outcome_and_its_views_follow(app: App) -> None:
    runtime = app.runtime(use_env=False)
    view = shown(runtime, "what if we used postgres")
    clicked = click(runtime, view, ActionType.CONFIRM_CURRENT, "c-1")
    assert clicked.done is not None and clicked.done.outcome == "committed"
    assert clicked.done.actor == str(ALICE) and not clicked.repeated
    assert clicked.expired is None and not clicked.asked_again
    assert [v.kind for v in clicked.views] == [ViewKind.OUTCOME]
    # the typed outcome is what the events say, in their order
    assert list(clicked.views) == [e for e in clicked.events if isinstance(e, View)]
    assert [e for e in clicked.events if isinstance(e, OutcomeEvent)] == [clicked.done]


def test_another_angle_asks_again_and_commits_nothing(app: App) -> None:
    runtime = app.runtime(use_env=False)
    view = shown(runtime, "what if we used postgres")
    clicked = click(runtime, view, ActionType.ALTERNATIVE_CURRENT, "c-1")
    assert clicked.asked_again and clicked.done is None and clicked.expired is None
    assert any(v.kind is ViewKind.REPLY for v in clicked.views)
    assert len(app.log) == 0


def test_a_second_persons_commit_is_not_a_new_outcome(app: App) -> None:
    runtime = app.runtime(use_env=False)
    view = shown(runtime, "what if we used postgres")
    click(runtime, view, ActionType.CONFIRM_CURRENT, "c-1")
    again = click(runtime, view, ActionType.CONFIRM_CURRENT, "c-2", who=BOB)
    assert len(app.log) == 1
    assert again.done is None and not again.repeated  # no message says it was done again
    assert [(v.kind, v.ephemeral) for v in again.views] == [(ViewKind.NOTICE, True)]
    assert again.views[0].text == "Already done by user:alice."


def test_every_outcome_a_message_can_show_has_its_icon() -> None:
    assert set(ICONS) == set(SHOWN_OUTCOMES)
