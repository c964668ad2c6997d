"""``${NAME}`` in a configuration value: resolved from the environment when the file loads,
held in memory only (never written to Redis, a log line or a job).

``${NAME}`` must be set, or the load fails naming the file, line and field; ``${NAME:-text}``
falls back to ``text`` (which may be empty) and is recorded as unset, so that a rule step can
be skipped with a log line instead of running with an empty URL. Only upper-case names are
references: ``$candidate`` and ``${topic}`` stay for the templates that own them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.errors import ConfigIssue

__all__ = ["EnvRef", "resolve_env_refs"]

_REF = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)(?::-([^}]*))?\}")

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class EnvRef:
    """One reference: where it is, what it names, and what it resolved to."""

    path: Path
    name: str
    value: str
    is_set: bool


def resolve_env_refs(
    data: Any, env: Mapping[str, str], issue: Any
) -> tuple[Any, list[EnvRef], list[ConfigIssue]]:
    """``data`` with every reference replaced; ``issue(path, message)`` builds a located
    ConfigIssue for a required variable that is not set."""
    refs: list[EnvRef] = []
    issues: list[ConfigIssue] = []

    def walk(node: Any, path: Path) -> Any:
        if isinstance(node, dict):
            return {k: walk(v, (*path, str(k))) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, (*path, i)) for i, v in enumerate(node)]
        if isinstance(node, str) and "${" in node:
            return _substitute(node, path, env, refs, issues, issue)
        return node

    return walk(data, ()), refs, issues


def _substitute(
    text: str,
    path: Path,
    env: Mapping[str, str],
    refs: list[EnvRef],
    issues: list[ConfigIssue],
    issue: Any,
) -> str:
    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value is None:
            if default is None:
                hint = f"write ${{{name}:-}} if it is optional"
                issues.append(issue(path, f"environment variable {name} is not set ({hint})"))
            refs.append(EnvRef(path, name, default or "", is_set=False))
            return default or ""
        refs.append(EnvRef(path, name, value, is_set=True))
        return value

    return _REF.sub(one, text)
