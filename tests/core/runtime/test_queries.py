"""The narrow door (``core/runtime/queries.py``): what an adapter may ask of the core, on the
suite's Redis, each answer a read of one workspace's."""

from __future__ import annotations

from pathlib import Path

from bot.app import App, build_app
from core.deliberation.messages import UserSaid
from core.gateway.outcome import Pending, ProposalStatus
from core.redis.client import RedisClient
from tests.conftest import write_config
from tests.factories import actor, mutation

ALICE = actor("user:alice")


def test_a_session_is_there_once_someone_spoke_in_it(app: App) -> None:
    runtime = app.runtime(use_env=False)
    queries = runtime.queries
    assert not queries.has_session("slack:C1:1.1")
    assert queries.sessions_starting("slack:C1:") == []
    runtime.send("slack:C1:1.1", UserSaid(text="what if we used postgres", actor=ALICE))
    runtime.send("slack:C1:2.2", UserSaid(text="what about redis", actor=ALICE))
    runtime.send("slack:C2:3.3", UserSaid(text="and kafka", actor=ALICE))
    assert queries.has_session("slack:C1:1.1")
    assert sorted(queries.sessions_starting("slack:C1:")) == ["slack:C1:1.1", "slack:C1:2.2"]
    # a prefix with a pattern's characters is taken as it is written
    assert queries.sessions_starting("slack:C*") == []
    state = queries.interaction("slack:C1:1.1")
    assert state.candidate is not None and state.turn_count == 1
    assert queries.interaction("slack:C9:9.9").candidate is None  # none yet: a fresh one


def test_a_proposal_is_asked_of_the_core(app: App) -> None:
    queries = app.runtime(use_env=False).queries
    assert queries.proposal("nope") is None
    assert queries.workspace == app.store.workspace
    # the shipped policy: an agent's scene change waits for a person
    waits = app.gateway.propose(mutation("set", "scene.name", "BRB", "agent:llm"))
    assert isinstance(waits, Pending)
    proposal = queries.proposal(waits.proposal.id)
    assert proposal is not None and proposal.status is ProposalStatus.PENDING
    assert proposal.mutation.key == "scene.name"


SECRET = """
policy:
  keys:
    - pattern: "vault.*"
      secret: true
"""


def test_what_is_secret_is_the_policys_answer(
    redis_client: RedisClient, workspace: str, tmp_path: Path
) -> None:
    app = build_app(workspace, write_config(tmp_path, SECRET), client=redis_client)
    queries = app.runtime(use_env=False).queries
    assert queries.is_secret("vault.token") and not queries.is_secret("decision.db")
