"""The config sections the rule engine owns: ``rules`` and ``automation``."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from core.config.core_config import CoreConfig
from core.config.yaml_source import Located
from core.errors import ConfigIssue
from rules.dsl import Rule

__all__ = ["AutomationConfig", "RulesConfig"]


class AutomationConfig(BaseModel):
    """How rules run. ``queue``: the RQ queue (the workspace id is appended, so each
    workspace has its own); ``max_chain_depth``: derived mutations caused by derived
    mutations beyond this depth do not fire rules (no loops); ``retries`` and ``backoff_sec``:
    a failed action runs again after these waits; ``timeout_sec``: one run's limit;
    ``lease_sec``: a run whose worker stopped renewing its lease this long is taken as
    abandoned (its worker died) and run again by another worker."""

    model_config = ConfigDict(extra="forbid")

    queue: str = Field(default="deliberate", pattern=r"^[A-Za-z0-9_.\-]{1,64}$")
    max_chain_depth: int = Field(default=5, ge=1, le=100)
    retries: int = Field(default=3, ge=0, le=20)
    backoff_sec: list[int] = Field(default_factory=lambda: [1, 5, 30], max_length=20)
    timeout_sec: int = Field(default=30, ge=1, le=3600)
    lease_sec: int = Field(default=10, ge=2, le=3600)
    evaluations_kept: int = Field(default=10_000, ge=100, le=10_000_000)


class RulesConfig(CoreConfig):
    automation: AutomationConfig = AutomationConfig()  # type: ignore[assignment]
    rules: list[Rule] = Field(default_factory=list)  # type: ignore[assignment]

    def extra_issues(self, located: Located) -> list[ConfigIssue]:
        issues = super().extra_issues(located)
        seen: set[str] = set()
        for index, rule in enumerate(self.rules):
            if rule.id in seen:
                issues.append(located.issue(("rules", index, "id"), f"duplicate rule id {rule.id}"))
            seen.add(rule.id)
        return issues
