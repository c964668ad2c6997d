"""The decision lifecycle through the loop and the runtime, with a model (the local
OpenAI-protocol server) that proposes through its tool: the asker's proposal under four
eyes, edit then apply, a rejection's reason in the next model call's ``context_state``, the
"Undo" under a commit, and every new click idempotent."""

from __future__ import annotations

import dataclasses
from importlib.resources import files
from pathlib import Path
from typing import Any

import openai
import pytest
from redis import Redis

from bot.app import App, build_app
from core.deliberation import sentences as say
from core.deliberation.actions import ActionType
from core.deliberation.beats import ActionStyle
from core.deliberation.memory import ClickStatus
from core.deliberation.messages import ActionClicked, UserSaid
from core.deliberation.view import Button, View, ViewKind
from core.gateway.mutation_gateway import MutationGateway
from core.llm.chat import ChatModel
from core.runtime.events import Event, OutcomeEvent
from core.runtime.runner import Runtime
from core.state.actor import Actor
from core.state.commit_result import Committed
from tests.conftest import write_config
from tests.factories import actor, mutation
from tests.model_script import kind, label, output, proposing, user_payload
from tests.openai_server import OpenAIServer, Reply, tool_call

SHIPPED = files("core.config").joinpath("default.yaml").read_text(encoding="utf-8")
# the shipped config, its scene under four eyes (the first matching pattern decides)
CONFIG = SHIPPED.replace(
    "  keys:\n",
    """  keys:
    - pattern: "scene.name"
      type: string
      enum: [Starting, Live, BRB, Ending]
      approval: {quorum: 1, four_eyes: true}
""",
    1,
)
AL, BO = actor("user:al"), actor("user:bo")


@pytest.fixture
def life(tmp_path: Path, server_redis: Redis, workspace: str) -> App:
    return build_app(workspace, write_config(tmp_path, CONFIG), client=server_redis)


def runtime(app: App, server: OpenAIServer) -> Runtime:
    client = openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0)
    return app.runtime(ChatModel(client, "test-model", timeout_sec=5))


def asked_for_brb(app: App, server: OpenAIServer, said: str) -> tuple[Runtime, list[Event]]:
    """Al says ``said``; the model proposes ``scene.name = BRB``: the runtime, and what it
    showed."""
    server.answer_with = proposing("scene.name", "BRB")
    rt = runtime(app, server)
    return rt, rt.send("s1", UserSaid(text=said, actor=AL))


def views(events: list[Event]) -> list[View]:
    return [e for e in events if isinstance(e, View)]


def outcome(events: list[Event]) -> OutcomeEvent:
    [found] = [e for e in events if isinstance(e, OutcomeEvent)]
    return found


def button(events: list[Event], action: str) -> Button:
    return next(b for v in views(events) for b in v.buttons if b.action == action)


def click(
    rt: Runtime, b: Button, who: Actor, click_id: str, note: str | None = None
) -> list[Event]:
    msg = ActionClicked(
        action=b.action,
        target_id=b.target_id,
        expected_version=b.target_version,
        click_id=click_id,
        actor=who,
        note=note,
    )
    return rt.send("s1", msg)


def test_the_askers_own_proposal_needs_another_person(
    life: App, openai_server: OpenAIServer
) -> None:
    rt, shown = asked_for_brb(life, openai_server, "let's go brb")
    apply = button(shown, ActionType.APPLY_PROPOSAL)
    proposal = life.gateway.proposals.get(apply.target_id)
    assert proposal is not None and proposal.requested_by == AL
    mine = outcome(click(rt, apply, AL, "k1"))
    assert (mine.outcome, mine.reason) == ("rejected", "forbidden")
    assert "someone else must approve it" in mine.message
    theirs = outcome(click(rt, apply, BO, "k2"))
    assert theirs.outcome == "committed" and life.store.get("scene.name").value == "BRB"  # type: ignore[union-attr]
    # the asker never reaches the model: its frame names no person
    assert all("user:al" not in str(r["messages"]) for r in openai_server.requests)


def test_edit_then_apply_commits_the_edited_value_once(
    life: App, openai_server: OpenAIServer
) -> None:
    rt, shown = asked_for_brb(life, openai_server, "brb time")
    edit = button(shown, ActionType.EDIT_PROPOSAL)
    assert edit.asks == "value" and edit.prefill == "BRB"
    bad = outcome(click(rt, edit, BO, "e0", note="Lunch"))  # not in the key's enum
    assert bad.outcome == "rejected" and bad.reason == "schema"
    assert life.store.version("scene.name") == 0
    edited = click(rt, edit, BO, "e1", note="Ending")
    assert outcome(edited).outcome == "pending"  # four eyes: Bo asked for "Ending"
    again = click(rt, edit, BO, "e1", note="Live")  # the same click delivered again
    assert [e for e in again if isinstance(e, OutcomeEvent)] == []
    apply = button(edited, ActionType.APPLY_PROPOSAL)
    assert apply.target_version == 1  # the edit it shows
    stale_button = click(rt, edit, actor("user:cy"), "e2", note="Live")  # the old form
    assert outcome(stale_button).reason == "conflict" and "since you saw it" in (
        outcome(stale_button).message
    )
    done = outcome(click(rt, apply, actor("user:cy"), "a1"))
    assert done.outcome == "committed" and life.store.get("scene.name").value == "Ending"  # type: ignore[union-attr]
    assert life.store.version("scene.name") == 1
    meta = life.log.latest(1, key="scene.name")[0].mutation.meta
    assert (meta["proposedValue"], meta["editedBy"]) == ("BRB", "user:bo")


def test_a_rejection_reason_reaches_the_next_model_frame(
    life: App, openai_server: OpenAIServer
) -> None:
    rt, shown = asked_for_brb(life, openai_server, "brb?")
    discard = button(shown, ActionType.DISCARD_PROPOSAL)
    assert discard.asks == "reason"
    gone = outcome(click(rt, discard, BO, "d1", note="we are live until 9"))
    assert gone.outcome == "discarded" and "(we are live until 9)" in gone.message
    retry = click(rt, discard, BO, "d1", note="other")  # the same click again: told, no more
    assert [v.text for v in views(retry)] == [say.already_handled(ClickStatus.DONE)]
    assert life.gateway.proposals.get(discard.target_id).reason == "we are live until 9"  # type: ignore[union-attr]
    frames: list[dict[str, Any]] = []

    def answer(request: dict[str, Any]) -> Reply:
        if kind(request) == "classify":
            return label("brainstorm")
        frames.append(user_payload(request)["context_state"])
        return output("ok")

    openai_server.answer_with = answer
    rt.send("s1", UserSaid(text="what next then?", actor=AL))
    [frame] = frames
    assert frame["rejected_ideas"] == ["set scene.name = BRB (rejected: we are live until 9)"]


def offering(reply: str, candidate: str) -> Any:
    """A model that labels every turn a brainstorm and puts ``candidate`` on the table."""

    def answer(request: dict[str, Any]) -> Reply:
        if kind(request) == "classify":
            return label("brainstorm")
        return output(reply, candidate=candidate)

    return answer


def test_undo_under_a_commit_restores_and_runs_once(life: App, openai_server: OpenAIServer) -> None:
    openai_server.answer_with = offering("How about Postgres?", "Postgres")
    rt = runtime(life, openai_server)
    confirm = button(rt.send("s1", UserSaid(text="db?", actor=AL)), ActionType.CONFIRM_CURRENT)
    committed = click(rt, confirm, AL, "c1")
    assert outcome(committed).outcome == "committed"
    undo = button(committed, ActionType.REVERT_MUTATION)
    assert undo.label == "Undo" and undo.target_version == life.store.version("decision.db")
    assert [v.kind for v in views(committed) if undo in v.buttons] == [ViewKind.OUTCOME]
    undone = outcome(click(rt, undo, BO, "u1"))
    # the decision was the key's first value: undone, the key is absent again
    assert undone.outcome == "committed" and life.store.get("decision.db") is None
    retry = click(rt, undo, BO, "u1")  # the same click again
    assert [v.text for v in views(retry)] == [say.already_handled(ClickStatus.DONE)]
    assert life.store.version("decision.db") == 2  # once
    late = outcome(click(rt, undo, AL, "u2"))  # another click: its revert committed already
    assert late.outcome == "committed" and late.duplicate
    assert life.store.version("decision.db") == 2


def test_an_expired_proposal_is_refused_through_the_loop(
    life: App, openai_server: OpenAIServer
) -> None:
    due = dataclasses.replace(
        life, gateway=MutationGateway(life.store, life.policy, proposal_expiry_ms=0)
    )
    rt, shown = asked_for_brb(due, openai_server, "brb")
    edit = button(shown, ActionType.EDIT_PROPOSAL)
    refused = outcome(click(rt, edit, BO, "x1", note="Live"))
    assert (refused.outcome, refused.reason) == ("rejected", "expired")
    assert life.store.version("scene.name") == 0


QUORUM = SHIPPED.replace(
    "  keys:\n",
    """  keys:
    - pattern: "scene.name"
      type: string
      enum: [Starting, Live, BRB, Ending]
      approval: {quorum: 2, four_eyes: true, people: true}
""",
    1,
)


def test_a_switch_that_needs_two_others_waits_for_both(
    tmp_path: Path, server_redis: Redis, workspace: str, openai_server: OpenAIServer
) -> None:
    """Al clicks "Switch scene": his write waits; he may not approve it; Bo's approval is
    one of two (the buttons stay for the next person); Cy's commits it, once."""
    app = build_app(workspace, write_config(tmp_path, QUORUM), client=server_redis)
    openai_server.answer_with = offering("Go to BRB?", "BRB")
    rt = runtime(app, openai_server)
    switch = button(rt.send("s1", UserSaid(text="switch to brb", actor=AL)), "SwitchScene")
    asked = click(rt, switch, AL, "s1")
    assert outcome(asked).outcome == "pending" and app.store.version("scene.name") == 0
    apply = button(asked, ActionType.APPLY_PROPOSAL)
    mine = outcome(click(rt, apply, AL, "a0"))
    assert (mine.outcome, mine.reason) == ("rejected", "forbidden")
    first = click(rt, apply, BO, "a1")
    assert outcome(first).outcome == "pending"
    assert "approved by user:bo (1 of 2); awaits 1 more approval" in outcome(first).message
    assert button(first, ActionType.APPLY_PROPOSAL) == apply  # still offered
    done = outcome(click(rt, apply, actor("user:cy"), "a2"))
    assert done.outcome == "committed" and app.store.get("scene.name").value == "BRB"  # type: ignore[union-attr]
    late = click(rt, apply, actor("user:di"), "a3")
    assert [v.text for v in views(late)] == ["This proposal is no longer pending."]
    assert app.store.version("scene.name") == 1
    meta = app.log.latest(1, key="scene.name")[0].mutation.meta
    assert meta["approvedBy"] == ["user:bo", "user:cy"] and meta["requestedBy"] == "user:al"


def test_an_undo_names_only_what_a_click_here_committed(
    life: App, openai_server: OpenAIServer
) -> None:
    """A forged "Undo" for a mutation made elsewhere (another session, the CLI) is refused
    by the loop before the gateway is asked."""
    elsewhere = life.gateway.propose(mutation("set", "decision.other", "x", "user:cy"))
    assert isinstance(elsewhere, Committed)
    rt, _ = asked_for_brb(life, openai_server, "brb?")
    forged = Button(
        action=ActionType.REVERT_MUTATION,
        label="Undo",
        style=ActionStyle.DEFAULT,
        beat="undo",
        target_id=elsewhere.request.id,
        target_version=elsewhere.version,
    )
    events = click(rt, forged, BO, "f1")
    assert [v.text for v in views(events)] == [say.NOTHING_TO_UNDO]
    assert life.store.get("decision.other").value == "x"  # type: ignore[union-attr]


def test_after_an_edit_that_awaits_another_the_buttons_show_the_edited_value(
    tmp_path: Path, server_redis: Redis, workspace: str, openai_server: OpenAIServer
) -> None:
    app = build_app(workspace, write_config(tmp_path, QUORUM), client=server_redis)
    rt, shown = asked_for_brb(app, openai_server, "brb?")
    edit = button(shown, ActionType.EDIT_PROPOSAL)
    edited = click(rt, edit, BO, "e1", note="Ending")
    assert outcome(edited).outcome == "pending"
    apply = button(edited, ActionType.APPLY_PROPOSAL)
    assert apply.label == "Apply: set scene.name = Ending"
    assert button(edited, ActionType.EDIT_PROPOSAL).prefill == "Ending"
    assert outcome(click(rt, apply, actor("user:cy"), "a1")).outcome == "pending"
    done = outcome(click(rt, apply, actor("user:di"), "a2"))
    assert done.outcome == "committed" and app.store.get("scene.name").value == "Ending"  # type: ignore[union-attr]


def test_a_proposed_delete_offers_no_edit(life: App, openai_server: OpenAIServer) -> None:
    def answer(request: dict[str, Any]) -> Reply:
        if kind(request) == "classify":
            return label("brainstorm")
        if "tool_results" not in user_payload(request)["context_state"]:
            args = {"op": "delete", "key": "scene.name", "reason": "clear it"}
            return Reply(tool_calls=[tool_call("proposeMutation", args)])
        return output("Proposed.")

    openai_server.answer_with = answer
    shown = runtime(life, openai_server).send("s1", UserSaid(text="clear the scene", actor=AL))
    actions = [b.action for v in views(shown) for b in v.buttons]
    assert ActionType.APPLY_PROPOSAL in actions and ActionType.EDIT_PROPOSAL not in actions


SECRETS = SHIPPED.replace(
    "  keys:\n",
    """  keys:
    - pattern: "vault.*"
      type: string
      secret: true
      agent: propose
""",
    1,
)


def test_a_secret_keys_values_stay_out_of_chat_and_the_model(
    tmp_path: Path, server_redis: Redis, workspace: str, openai_server: OpenAIServer
) -> None:
    """Edited, discarded, committed and undone: no secret value in a view, an outcome, the
    session's working memory, or a later model call."""
    app = build_app(workspace, write_config(tmp_path, SECRETS), client=server_redis)
    openai_server.answer_with = proposing("vault.token", "hunter2")
    rt = runtime(app, openai_server)
    shown = rt.send("s1", UserSaid(text="rotate the token", actor=AL))
    edit = button(shown, ActionType.EDIT_PROPOSAL)
    assert edit.prefill == "" and "hunter2" not in str(views(shown))
    done = click(rt, edit, BO, "e1", note="NEW-SECRET")
    assert app.store.get("vault.token").value == "NEW-SECRET"  # type: ignore[union-attr]
    undone = click(rt, button(done, ActionType.REVERT_MUTATION), BO, "u1")
    assert outcome(undone).outcome == "committed"
    again = rt.send("s1", UserSaid(text="try once more", actor=AL))
    discarded = click(rt, button(again, ActionType.DISCARD_PROPOSAL), BO, "d1", note="no")
    assert outcome(discarded).outcome == "discarded"
    memory = rt.sessions.load("s1").working.rejected_ideas
    assert memory == ["set vault.token = (secret) (rejected: no)"]
    everything = str([shown, done, undone, again, discarded, memory])
    assert "NEW-SECRET" not in everything and "hunter2" not in everything
    rt.send("s1", UserSaid(text="and now?", actor=AL))
    assert "NEW-SECRET" not in str(openai_server.requests)


def test_a_long_reason_is_kept_cut_to_what_memory_holds(
    life: App, openai_server: OpenAIServer
) -> None:
    rt, shown = asked_for_brb(life, openai_server, "brb?")
    discard = button(shown, ActionType.DISCARD_PROPOSAL)
    reason = "because " * 50
    gone = outcome(click(rt, discard, BO, "d1", note=reason))
    assert gone.outcome == "discarded"
    [idea] = rt.sessions.load("s1").working.rejected_ideas
    assert idea.startswith("set scene.name = BRB (rejected: because") and len(idea) == 300
    assert life.gateway.proposals.get(discard.target_id).reason == reason.strip()[:300].strip()  # type: ignore[union-attr]
