"""The loaded rules, ready to run: indexed by key, with what the environment left unset and
the values it supplied, and which state keys are secret (both masked wherever a rule's work
is shown or stored: a secret key's value as ``(secret)``, an environment value as
``${NAME}``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from core.config.env_refs import EnvRef
from core.gateway.policy import Policy
from core.redaction import Redactor
from core.state.mutation_log import LogRecord
from rules.config import AutomationConfig, RulesConfig
from rules.dsl import Rule
from rules.index import RuleIndex
from rules.variables import secrets_in_play

__all__ = ["RuleBook"]

_MIN_MASKED = 4  # shorter values would mask ordinary text (an env value of "1")


@dataclass
class RuleBook:
    """``is_secret``: the policy's (``Policy.is_secret``)."""

    rules: list[Rule]
    automation: AutomationConfig = field(default_factory=AutomationConfig)
    env_refs: Sequence[EnvRef] = ()
    is_secret: Callable[[str], bool] = field(kw_only=True)

    def __post_init__(self) -> None:
        self.index = RuleIndex(self.rules)
        self.by_id = {rule.id: rule for rule in self.rules}
        self._position = {rule.id: i for i, rule in enumerate(self.rules)}
        self._env = Redactor.labelled(
            (r.value, f"${{{r.name}}}")
            for r in self.env_refs
            if r.is_set and len(r.value) >= _MIN_MASKED
        )

    @classmethod
    def from_config(cls, config: RulesConfig) -> RuleBook:
        secret = Policy(config.policy).is_secret
        return cls(config.rules, config.automation, config.env_refs, is_secret=secret)

    def secrets(self, record: LogRecord, state: Mapping[str, JsonValue]) -> Redactor:
        """Strikes out the secret values a rule evaluating ``record`` may have quoted."""
        return Redactor(secrets_in_play(record, state, self.is_secret))

    def position(self, rule_id: str) -> int:
        """Where the rule stands in the config's ``rules`` (its file and line are found by
        it)."""
        return self._position[rule_id]

    def unset_env(self, rule: Rule, step: int) -> list[str]:
        """The optional ``${NAME:-}`` variables a step's arguments use that are not set: the
        step is skipped, with a log line naming them."""
        position = self._position[rule.id]
        return sorted(
            {
                ref.name
                for ref in self.env_refs
                if not ref.is_set and ref.path[:4] == ("rules", position, "then", step)
            }
        )

    def redactor(self, secrets: Redactor | None = None) -> Redactor:
        """Strikes out every value that came from the environment (as ``${NAME}``) and
        ``secrets``, in one pass."""
        return self._env if secrets is None else secrets | self._env

    def mask_json(self, value: Any, secrets: Redactor | None = None) -> Any:
        """``value`` (JSON data) with every value that came from the environment masked in
        its strings (keys included), and ``secrets`` struck out."""
        return self.redactor(secrets).json(value)

    def mask(self, text: str, secrets: Redactor | None = None) -> str:
        """``text`` with every value that came from the environment shown as ``${NAME}``,
        and ``secrets`` struck out."""
        return self.redactor(secrets).text(text)
