"""YAML parsed with the line of every mapping key and list item, so that a validation error can
name the file, the line and the field."""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import ValidationError

from core.errors import ConfigError, ConfigIssue

__all__ = ["Located", "field_path", "load_located"]

Path = tuple[str | int, ...]


class Located:
    """Parsed YAML data plus the 1-based line of each path in it."""

    def __init__(self, filename: str, data: Any, lines: dict[Path, int]) -> None:
        self.filename = filename
        self.data = data
        self.lines = lines

    def line_of(self, path: Path) -> int | None:
        """The line of ``path``, or of its nearest ancestor that the file spells out."""
        for end in range(len(path), -1, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return None

    def issue(self, path: Path, message: str) -> ConfigIssue:
        return ConfigIssue(self.filename, self.line_of(path), field_path(path), message)

    def issues_from(self, error: ValidationError, prefix: Path = ()) -> list[ConfigIssue]:
        return [
            self.issue(prefix + tuple(e["loc"]), e["msg"].removeprefix("Value error, "))
            for e in error.errors()
        ]


def field_path(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def load_located(text: str, filename: str) -> Located:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError([ConfigIssue(filename, line, "", f"YAML syntax: {problem}")]) from None
    except yaml.YAMLError as exc:
        raise ConfigError([ConfigIssue(filename, None, "", f"YAML: {exc}")]) from None
    finally:
        loader.dispose()
    lines: dict[Path, int] = {}
    issues: list[ConfigIssue] = []
    if node is not None:
        _walk(node, (), lines, issues, filename)
    if issues:
        raise ConfigError(issues)
    return Located(filename, data, lines)


def _walk(
    node: yaml.Node, path: Path, lines: dict[Path, int], issues: list[ConfigIssue], filename: str
) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = str(key_node.value)
            child = (*path, key)
            if key in seen:
                line = key_node.start_mark.line + 1
                issues.append(ConfigIssue(filename, line, field_path(child), "duplicate key"))
            seen.add(key)
            lines[child] = key_node.start_mark.line + 1
            _walk(value_node, child, lines, issues, filename)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*path, index), lines, issues, filename)
