"""The loaded rules, ready to run: indexed by key, with what the environment left unset and
the values it supplied (masked wherever a rule's work is shown or stored)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.config.env_refs import EnvRef
from rules.config import AutomationConfig, RulesConfig
from rules.dsl import Rule
from rules.index import RuleIndex

__all__ = ["RuleBook"]

_MIN_MASKED = 4  # shorter values would mask ordinary text (an env value of "1")


@dataclass
class RuleBook:
    rules: list[Rule]
    automation: AutomationConfig = field(default_factory=AutomationConfig)
    env_refs: Sequence[EnvRef] = ()

    def __post_init__(self) -> None:
        self.index = RuleIndex(self.rules)
        self.by_id = {rule.id: rule for rule in self.rules}
        self._position = {rule.id: i for i, rule in enumerate(self.rules)}
        secrets = {
            r.value: r.name for r in self.env_refs if r.is_set and len(r.value) >= _MIN_MASKED
        }
        self._secrets = secrets
        self._mask = (
            re.compile("|".join(re.escape(v) for v in sorted(secrets, key=len, reverse=True)))
            if secrets
            else None
        )

    @classmethod
    def from_config(cls, config: RulesConfig) -> RuleBook:
        return cls(config.rules, config.automation, config.env_refs)

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

    def mask_json(self, value: Any) -> Any:
        """``value`` (JSON data) with every value that came from the environment masked in
        its strings (keys included)."""
        if self._mask is None or isinstance(value, bool | int | float) or value is None:
            return value
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, dict):
            return {self.mask(str(k)): self.mask_json(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.mask_json(v) for v in value]
        return self.mask(str(value))

    def mask(self, text: str) -> str:
        """``text`` with every value that came from the environment shown as ``${NAME}``."""
        if self._mask is None:
            return text
        return self._mask.sub(lambda m: f"${{{self._secrets[m.group(0)]}}}", text)
