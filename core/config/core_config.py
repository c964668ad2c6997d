"""The configuration file: one YAML document validated with pydantic at start-up.

Errors name the file, the line and the field, and every problem in the file is reported at
once. Sections owned by other packages (beats, actions, rules) extend ``CoreConfig`` in their
own models and load through ``load_config(path, model=...)``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from importlib.resources import as_file, files
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from core.config.env_refs import EnvRef, resolve_env_refs
from core.config.escalations import escalation_issues
from core.config.files import file_layer
from core.config.layers import Layer, merge
from core.config.paths import config_paths
from core.config.roles import PLATFORMS, RoleBinding, name_entries
from core.config.tenant_layers import tenant_layers
from core.config.tenants import TenantsConfig, default_workspace
from core.config.yaml_source import Located
from core.deliberation.actions import ACTION_NAME, AppAction, KeyTemplates, is_builtin
from core.deliberation.beats import Beat
from core.deliberation.update.settings import LoopSettings
from core.errors import ConfigError, ConfigIssue
from core.gateway.policy import PolicyConfig
from core.runtime.sessions import DEFAULT_SESSION_TTL_SEC
from core.state.actor import ActorKind
from core.state.compaction import Retention
from core.state.limits import DEFAULT_IDEMPOTENCY_TTL_SEC, DEFAULT_PREV_MAX_BYTES, Durability
from core.state.store import StateStore

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = [
    "CoreConfig",
    "DeliberationConfig",
    "Paths",
    "PerceptionConfig",
    "ReplicasConfig",
    "RetentionConfig",
    "SessionsConfig",
    "StoreConfig",
    "config_path",
    "config_paths",
    "load_config",
]

C = TypeVar("C", bound="CoreConfig")


class RetentionConfig(BaseModel):
    """What the mutation log keeps (``null``: no limit of that kind); older records are
    compacted into the checkpoint by the worker every ``compact_every_sec`` and by
    ``deliberate compact``."""

    model_config = ConfigDict(extra="forbid")

    keep_days: float | None = Field(default=90, gt=0, le=36_500)
    keep_records: int | None = Field(default=None, ge=1)
    compact_every_sec: int = Field(default=3600, ge=60, le=7 * 86400)

    @property
    def retention(self) -> Retention:
        keep_ms = None if self.keep_days is None else round(self.keep_days * 86_400_000)
        return Retention(keep_ms, self.keep_records)


class ReplicasConfig(BaseModel):
    """``wait_for``: replicas that must hold a commit before it is acknowledged (Redis
    ``WAIT``; 0 for none), within ``timeout_ms``."""

    model_config = ConfigDict(extra="forbid")

    wait_for: int = Field(default=0, ge=0, le=16)
    timeout_ms: int = Field(default=1000, ge=10, le=60_000)


class StoreConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    idempotency_ttl_sec: int = Field(default=DEFAULT_IDEMPOTENCY_TTL_SEC, ge=60)
    # no longer read: only a compaction writes the checkpoint (its mark vouches for it, see
    # core/state/chain/start.py), never a replay; kept so that a file that sets it loads
    checkpoint_every: int = Field(default=1000, ge=0)
    log_prev_max_bytes: int = Field(default=DEFAULT_PREV_MAX_BYTES, ge=0)
    retention: RetentionConfig = RetentionConfig()
    replicas: ReplicasConfig = ReplicasConfig()
    # how long a commit cut off by Redis (a failover, a restart) is sent again, with the same
    # mutation id, before the person is told it is unconfirmed
    commit_retry_sec: float = Field(default=30, ge=0, le=600)

    @field_validator("commit_retry_sec")
    @classmethod
    def _within_the_idempotency_window(cls, value: float, info: ValidationInfo) -> float:
        # a resend is safe only while the first attempt's idempotency record lasts; a click
        # may spend the budget twice (its commit, then what it writes after)
        window = info.data.get("idempotency_ttl_sec", DEFAULT_IDEMPOTENCY_TTL_SEC)
        if value * 2 >= window:
            raise ValueError(
                f"must stay under half of store.idempotency_ttl_sec ({window} s): a change "
                "sent again after its mutation id is forgotten would be applied twice"
            )
        return value

    def open(self, client: RedisClient, workspace: str) -> StateStore:
        """The workspace's store, held to these settings."""
        return StateStore(
            client,
            workspace,
            idempotency_ttl_sec=self.idempotency_ttl_sec,
            prev_max_bytes=self.log_prev_max_bytes,
            durability=Durability(
                self.replicas.wait_for, self.replicas.timeout_ms, self.commit_retry_sec
            ),
        )


class SessionsConfig(BaseModel):
    """``ttl_sec``: a session untouched this long is forgotten (its transcript too)."""

    model_config = ConfigDict(extra="forbid")

    ttl_sec: int = Field(default=DEFAULT_SESSION_TTL_SEC, ge=60, le=366 * 86400)


class PerceptionConfig(BaseModel):
    """``min_confidence``: below it a turn is handled as a question, never as a commit. The
    default is calibrated on real people's turns (``core/perception/calibration.py``).
    ``adapt``: the team's clicks teach the workspace's own weights, added to the shipped
    model's (``core/perception/team.py``); false: the shipped model alone, and no lesson."""

    model_config = ConfigDict(extra="forbid")

    min_confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    adapt: bool = True


class DeliberationConfig(KeyTemplates):
    """Where the built-in actions write, and how much working memory a model call carries."""

    context_budget_chars: int = Field(default=600, ge=100, le=20_000)


class CoreConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    store: StoreConfig = StoreConfig()
    sessions: SessionsConfig = SessionsConfig()
    deliberation: DeliberationConfig = DeliberationConfig()
    beats: list[Beat] = []
    actions: dict[str, AppAction] = {}
    perception: PerceptionConfig = PerceptionConfig()
    policy: PolicyConfig = PolicyConfig()
    roles: dict[str, RoleBinding] = {}
    tenants: TenantsConfig = TenantsConfig()
    # owned by the rule engine, which validates them (rules.config.RulesConfig): the core
    # only keeps them from being rejected as unknown sections
    automation: dict[str, JsonValue] = {}
    rules: list[JsonValue] = []

    # where the file referred to the environment (values resolved in memory, never stored)
    _env_refs: list[EnvRef] = PrivateAttr(default_factory=list)
    # the merged data and where each value came from (``deliberate config show --origin``)
    _located: Located | None = PrivateAttr(default=None)
    # each listed tenant's own config, where it writes sections of its own (tenant_layers.py)
    _workspaces: dict[str, CoreConfig] = PrivateAttr(default_factory=dict)
    _base: CoreConfig | None = PrivateAttr(default=None)  # a tenant's: the whole config's

    @property
    def env_refs(self) -> list[EnvRef]:
        return self._env_refs

    @property
    def located(self) -> Located | None:
        """The data this config was validated from, with the file and line of each value."""
        return self._located

    def for_workspace(self, workspace: str) -> Self:
        """The config that holds in ``workspace``: its tenant's own sections merged on top of
        this one, or this one where the tenant writes none."""
        own = self._workspaces.get(workspace, self._base or self)
        return own if isinstance(own, type(self)) else self

    def tenant_configs(self) -> dict[str, Self]:
        """The configs of the listed tenants that write sections of their own, by workspace:
        what ``for_workspace`` answers for each (the whole config with their sections merged
        on top)."""
        return {ws: own for ws, own in self._workspaces.items() if isinstance(own, type(self))}

    def loop_settings(self) -> LoopSettings:
        """What the deliberation loop takes from this file."""
        d = self.deliberation
        return LoopSettings(
            beats=tuple(self.beats),
            actions=dict(self.actions),
            keys=KeyTemplates(
                decision_key=d.decision_key,
                artifact_key=d.artifact_key,
                entity_prefix=d.entity_prefix,
            ),
            min_confidence=self.perception.min_confidence,
            adapt=self.perception.adapt,
            context_budget=d.context_budget_chars,
            undo=self.policy.undo.window_sec > 0,
        )

    def extra_issues(self, located: Located) -> list[ConfigIssue]:
        """Checks across sections, located in the file; sections of other packages add theirs."""
        return (
            _role_issues(self, located)
            + _scoping_issues(self, located)
            + _tenant_issues(self, located)
            + _action_issues(self, located)
            + escalation_issues(self.policy, located)
        )


def config_path(explicit: str | os.PathLike[str] | None = None) -> Path | None:
    """The file to load: ``--config``, else ``DELIBERATE_CONFIG``, else None (the shipped one)."""
    chosen = explicit or os.environ.get("DELIBERATE_CONFIG")
    return Path(chosen) if chosen else None


Paths = Path | Sequence[Path] | None


def load_config(
    path: Paths = None,
    model: type[C] = CoreConfig,  # type: ignore[assignment]
    *,
    env: Mapping[str, str] | None = None,
    context: dict[str, Any] | None = None,
) -> C:
    """The shipped default config with each file of ``path`` (one, several, or none) merged
    on top, validated (``core/config/layers.py`` says how files merge). ``${NAME}`` values
    come from ``env`` (the process environment by default); ``context`` reaches validators
    (what a section can only check against the running program, such as action names)."""
    env = os.environ if env is None else env
    paths = [] if path is None else [path] if isinstance(path, Path) else list(path)
    with as_file(files("core.config").joinpath("default.yaml")) as shipped:
        layer = file_layer(shipped)
    for each in paths:
        layer = merge(layer, file_layer(each))
    label = str(paths[-1]) if paths else str(shipped)
    config = _validated(_located_of(layer, label), model, env, context)
    for (platform, listing, index), own in tenant_layers(layer):
        tenant = getattr(getattr(config.tenants, platform), listing)[index]
        workspace = tenant.workspace or default_workspace(tenant)
        tenant_config = _validated(_located_of(own, label), model, env, context)
        tenant_config._workspaces, tenant_config._base = config._workspaces, config
        config._workspaces[workspace] = tenant_config
    return config


def _located_of(layer: Layer, label: str) -> Located:
    data = layer.data
    data.pop("include", None)
    return Located(label, data, {}, origins=layer.origins, sources=layer.sources)


def _validated(
    located: Located, model: type[C], env: Mapping[str, str], context: dict[str, Any] | None
) -> C:
    data, refs, issues = resolve_env_refs(located.data, env, located.issue)
    if issues:
        raise ConfigError(issues)
    try:
        config = model.model_validate(data, context=context)
    except ValidationError as exc:
        raise ConfigError(located.issues_from(exc, model=model)) from None
    config._env_refs = refs
    config._located = located
    issues = config.extra_issues(located)
    if issues:
        raise ConfigError(issues)
    return config


def _role_issues(config: CoreConfig, located: Located) -> list[ConfigIssue]:
    """Every role named in ``writers`` must be an actor kind or a role defined in ``roles``."""
    tenants = [*config.tenants.discord.servers, *config.tenants.slack.teams]
    known = {k.value for k in ActorKind} | set(config.roles)
    known |= {role for tenant in tenants for role in tenant.roles}
    issues = []
    for index, rule in enumerate(config.policy.keys):
        for slot, role in enumerate(rule.writers):
            if role not in known:
                path = ("policy", "keys", index, "writers", slot)
                issues.append(
                    located.issue(path, f"unknown role {role!r}; known: {', '.join(sorted(known))}")
                )
    return issues


def _scoping_issues(config: CoreConfig, located: Located) -> list[ConfigIssue]:
    """A group bound by name or permission at the top level would count in every server
    and team, where anyone can make a role of that name: names belong to one tenant. Every
    entry names a platform the bot knows (a misspelt one would silently match nobody), and a
    tenant's entries its own platform."""
    issues = _platform_issues(("roles",), config.roles, PLATFORMS, located)
    lists = (
        ("discord", "servers", config.tenants.discord.servers),
        ("slack", "teams", config.tenants.slack.teams),
    )
    for platform, field, tenants in lists:
        for index, tenant in enumerate(tenants):
            path = ("tenants", platform, field, index, "roles")
            issues += _platform_issues(path, tenant.roles, (platform,), located)
    for role, binding in config.roles.items():
        for index, entry in name_entries(binding):
            message = (
                f"{entry!r} is a name, not an id: anyone can create it in a server or team of "
                f"their own. Bind it inside the tenant it belongs to (tenants.discord.servers"
                f"[].roles or tenants.slack.teams[].roles), or bind the group's id here"
            )
            issues.append(located.issue(("roles", role, "groups", index), message))
    return issues


def _platform_issues(
    path: tuple[str | int, ...],
    bindings: dict[str, RoleBinding],
    platforms: tuple[str, ...],
    located: Located,
) -> list[ConfigIssue]:
    issues = []
    for role, binding in bindings.items():
        for field in ("members", "groups"):
            for index, entry in enumerate(getattr(binding, field)):
                platform, sep, rest = entry.partition(":")
                if not sep or not rest or platform not in platforms:
                    message = f"{entry!r} must start with {' or '.join(f'{p}:' for p in platforms)}"
                    issues.append(located.issue((*path, role, field, index), message))
    return issues


def _tenant_issues(config: CoreConfig, located: Located) -> list[ConfigIssue]:
    """A tenant is listed once, and two tenants never share a workspace (one's members
    would act in the other's)."""
    issues = []
    seen: dict[str, str] = {}
    ids: set[str] = set()
    lists = (
        ("discord", "servers", config.tenants.discord.servers),
        ("slack", "teams", config.tenants.slack.teams),
    )
    for platform, field, tenants in lists:
        for index, tenant in enumerate(tenants):
            if tenant.id in ids:
                message = f"{tenant.id} is listed twice: keep one entry"
                issues.append(located.issue(("tenants", platform, field, index, "id"), message))
            ids.add(tenant.id)
            name = tenant.workspace or default_workspace(tenant)
            if name in seen:
                message = f"{tenant.id} and {seen[name]} share workspace {name!r}"
                issues.append(located.issue(("tenants", platform, field, index), message))
            seen[name] = f"{platform} {tenant.id}"
    return issues


def _action_issues(config: CoreConfig, located: Located) -> list[ConfigIssue]:
    """App actions have names of their own; every action a beat surfaces is defined."""
    issues = []
    for name in config.actions:
        if not re.match(ACTION_NAME, name) or is_builtin(name):
            message = f"action name {name!r} must be CamelCase and not a built-in action"
            issues.append(located.issue(("actions", name), message))
    for index, beat in enumerate(config.beats):
        for slot, spec in enumerate(beat.actions):
            if not is_builtin(spec.type) and spec.type not in config.actions:
                path = ("beats", index, "actions", slot, "type")
                known = sorted(config.actions) or ["none"]
                message = (
                    f"unknown action {spec.type!r}: not built in, and not under actions: "
                    f"(defined there: {', '.join(known)})"
                )
                issues.append(located.issue(path, message))
    return issues
