"""The deadlines a view carries for the adapters to show, through the loop and the runtime
with a model (the local OpenAI-protocol server) that proposes through its tool: the view
that offers a proposal's buttons carries until when it may be applied (the proposal's own
deadline, by the Redis server's clock) and, for a change for a while, how long it lasts once
applied; the view of its commit carries when the change reverts. A view without either
carries none."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from core.deliberation.actions import ActionType
from core.deliberation.messages import UserSaid
from core.deliberation.view import ViewKind
from core.state.commit_result import Committed
from tests.conftest import write_config
from tests.core.runtime.test_lifecycle_loop import AL, BO, button, click, runtime, views
from tests.model_script import proposing
from tests.openai_server import OpenAIServer

SHIPPED = files("core.config").joinpath("default.yaml").read_text(encoding="utf-8")
CONFIG = SHIPPED.replace(
    "  keys:\n",
    """  keys:
    - pattern: "scene.name"
      type: string
      enum: [Starting, Live, BRB, Ending]
      revert_after_sec: 1800
      approval: {four_eyes: true}
""",
    1,
)


@pytest.fixture
def timed(tmp_path: Path, server_redis: Redis, workspace: str) -> App:
    return build_app(workspace, write_config(tmp_path, CONFIG), client=server_redis)


def test_a_proposal_for_a_while_shows_its_deadline_then_its_commit_when_it_reverts(
    timed: App, openai_server: OpenAIServer
) -> None:
    openai_server.answer_with = proposing("scene.name", "BRB")
    rt = runtime(timed, openai_server)
    shown = rt.send("s1", UserSaid(text="let's go brb", actor=AL))
    apply = button(shown, ActionType.APPLY_PROPOSAL)
    proposal = timed.gateway.proposals.get(apply.target_id)
    assert proposal is not None and proposal.expires_at is not None
    [offer] = [v for v in views(shown) if apply in v.buttons]
    assert (offer.expires_at, offer.lasts_sec, offer.reverts_at) == (
        proposal.expires_at,
        1800,
        None,
    )

    done = click(rt, apply, BO, "k1")
    [view] = [v for v in views(done) if v.kind is ViewKind.OUTCOME]
    [record] = timed.log.latest(1, key="scene.name")
    committed = timed.store.committed(record.mutation.id)
    assert isinstance(committed, Committed) and committed.reverts_at is not None
    assert view.reverts_at == committed.reverts_at == record.ts + 1_800_000
    assert view.expires_at is None  # no proposal's buttons under it any more

    later = rt.send("s1", UserSaid(text="and now?", actor=AL))
    assert all(v.reverts_at is None for v in views(later))  # said once, with the commit
