"""The composition root: config, Redis, store, policy and gateway wired together once, and
the deliberation runtime on top of them (with a model when ``OPENAI_API_KEY`` is set, else
the embedded classifier and the offline responder)."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.redis.connection import connect, connection_url
from core.config.core_config import Paths, load_config
from core.config.tenants import Tenancy
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.policy import Policy
from core.redis.client import RedisClient
from core.runtime.beat_history import BeatHistory
from core.runtime.trace_events import TraceEvents
from core.state.actor import Actor, ActorKind
from core.state.mutation_log import MutationLog
from core.state.store import StateStore
from rules.book import RuleBook
from rules.config import RulesConfig
from rules.engine.consumer import ensure_group
from rules.history import RuleHistory
from rules.keys import RuleKeys

if TYPE_CHECKING:
    from rq import Queue

    from core.deliberation.turn import Answering
    from core.llm.chat import ChatModel
    from core.llm.offline_responder import OfflineResponder
    from core.perception.classifier import Classifier
    from core.runtime.runner import Runtime

__all__ = ["App", "build_app"]


@dataclass
class App:
    config: RulesConfig
    redis: RedisClient
    store: StateStore
    policy: Policy
    gateway: MutationGateway

    @property
    def log(self) -> MutationLog:
        return MutationLog(self.redis, self.store.keys)

    @property
    def trace(self) -> TraceEvents:
        return TraceEvents(self.redis, self.store.workspace)

    @property
    def rules(self) -> RuleBook:
        return RuleBook.from_config(self.config)

    @property
    def evaluations(self) -> RuleHistory:
        keep = self.config.automation.evaluations_kept
        return RuleHistory(self.redis, RuleKeys(self.store.workspace), keep)

    @property
    def beat_history(self) -> BeatHistory:
        return BeatHistory(self.redis, self.store.workspace)

    def for_workspace(self, workspace: str, *, rules: bool = True) -> App:
        """The same program on another workspace (another tenant's): its own store, log and
        gateway on the shared Redis, and the config and policy that hold there (the tenant's
        own sections merged over the whole config). ``rules``: rules run there (a
        workspace nobody configured, such as a direct message's, gets no rule consumer)."""
        if workspace == self.store.workspace:
            return self
        config = self.config.for_workspace(workspace)  # with its tenant's own sections
        policy = self.policy if config is self.config else Policy(config.policy)
        store = config.store.open(self.redis, workspace)
        if rules:
            ensure_group(self.redis, RuleKeys(workspace))
        return App(config, self.redis, store, policy, MutationGateway(store, policy))

    def close(self) -> None:
        """Its Redis connections closed, a cluster client's to every node too: a command's
        end, in a process that goes on (one that runs several commands, a test). Never
        raises: what could not be closed is gone with the process."""
        with contextlib.suppress(Exception):
            if hasattr(self.redis, "get_nodes"):  # a RedisCluster: its nodes' connections
                self.redis.close()
            else:
                self.redis.connection_pool.disconnect()

    def rule_workspaces(self) -> list[str]:
        """The workspaces rules run in, from the config alone: this one (a single-team Slack
        token's team is served here) and every listed tenant's."""
        listed = Tenancy(self.config.tenants, self.config.roles).configured()
        return list(dict.fromkeys([self.store.workspace, *(t.workspace for t in listed)]))

    def queue(self) -> Queue:
        """The workspace's rule queue on ``DELIBERATE_QUEUE_URL``, else on the state's Redis
        (which must then be one server: RQ does not run on a Redis Cluster)."""
        from redis import Redis  # (RQ and a raw client: only for what queues work)
        from redis.cluster import RedisCluster
        from rq import Queue

        url = os.environ.get("DELIBERATE_QUEUE_URL")
        if not url and isinstance(self.redis, RedisCluster):
            raise ValueError(
                "the state is on a Redis Cluster (REDIS_URL), and RQ's queues need one Redis "
                "server: set DELIBERATE_QUEUE_URL to one (redis://host:port/db)"
            )
        url = url or connection_url(self.redis)
        name = f"{self.config.automation.queue}.{self.store.workspace}"
        # RQ stores pickled jobs: it needs raw bytes, not decoded text
        return Queue(name, connection=Redis.from_url(url))

    def runtime(self, model: ChatModel | None = None, *, use_env: bool = True) -> Runtime:
        """The loop's runtime. The model comes from ``model``, else (with ``use_env``) from
        ``OPENAI_API_KEY``; without one, everything runs offline."""
        # the loop's parts are imported here, not above: a command that never converses
        # (``deliberate state``, ``log``, the worker) starts without them (~0.2 s)
        from core.deliberation.update.loop import Loop
        from core.llm.offline_responder import OfflineResponder
        from core.perception.embedded import EmbeddedClassifier
        from core.runtime.runner import Runtime
        from core.runtime.sessions import SessionStore
        from core.runtime.transcripts import Transcripts

        if model is None and use_env:
            from core.llm.chat import chat_model_from_env  # loads openai: only when asked

            model = chat_model_from_env()
        trace = self.trace
        classifier: Classifier = EmbeddedClassifier()
        offline = OfflineResponder()
        responder: Answering = offline
        if model is not None:  # the embedded parts stay as the model's fallbacks
            classifier, responder = self._model_parts(model, trace, classifier, offline)
        ttl = self.config.sessions.ttl_sec
        return Runtime(
            Loop(self.config.loop_settings()),
            SessionStore(self.redis, self.store.workspace, ttl),
            self.gateway,
            classifier,
            responder,
            Transcripts(self.redis, self.store.workspace, ttl),
            self.beat_history,
            trace,
        )

    def _model_parts(
        self, model: ChatModel, trace: TraceEvents, embedded: Classifier, offline: OfflineResponder
    ) -> tuple[Classifier, Answering]:
        from core.llm.model_responder import ModelResponder
        from core.llm.tools import AgentTools
        from core.perception.llm import LLMClassifier

        model.sink = lambda audit: trace.append(
            audit.correlation_id or "-", "", "llm.call", audit.record()
        )
        agent = Actor(kind=ActorKind.AGENT, id="assistant")
        tools = AgentTools(self.gateway, agent)
        meter = self.gateway.meter  # the model may serve several workspaces: counted here
        return (
            LLMClassifier(model, embedded, meter),
            ModelResponder(model, offline, tools, meter),
        )


def action_names() -> list[str]:
    from connectors.registry import default_registry

    return default_registry().names()


def load_app_config(path: Paths) -> RulesConfig:
    """The whole config (the shipped defaults, ``path``'s files merged on top): core
    sections, and the rules checked against the actions this program's connectors provide."""
    return load_config(path, RulesConfig, context={"actions": action_names()})


def build_app(
    workspace: str = "local",
    config_path: Paths = None,
    redis_url: str | None = None,
    client: RedisClient | None = None,
) -> App:
    """Load the config first (a bad file should fail before any server starts)."""
    config = load_app_config(config_path).for_workspace(workspace)
    redis = client if client is not None else connect(redis_url)
    store = config.store.open(redis, workspace)
    policy = Policy(config.policy)
    # the rules' cursor starts with the workspace's first use, so mutations made before any
    # worker ran (in the console, say) are handled when one starts
    ensure_group(redis, RuleKeys(workspace))
    return App(config, redis, store, policy, MutationGateway(store, policy))
