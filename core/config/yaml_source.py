"""YAML parsed with the line of every mapping key and list item, so that a validation error can
name the file, the line and the field."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from core.errors import ConfigError, ConfigIssue
from core.field_errors import plain_problems

__all__ = ["Located", "field_path", "load_located"]

Path = tuple[str | int, ...]


class Located:
    """Parsed YAML data plus the 1-based line of each path in it."""

    def __init__(
        self,
        filename: str,
        data: Any,
        lines: dict[Path, int],
        replaced: set[Path] | None = None,
        origins: dict[Path, tuple[str, int]] | None = None,
        sources: dict[Path, Path] | None = None,
    ) -> None:
        self.filename = filename
        self.data = data
        self.lines = lines
        self.replaced = replaced or set()  # the paths marked !replace
        # where each path was written, when the data merges several files (else: this one)
        self.origins = origins
        self.sources = sources or {}  # a merged path's path in the file that wrote it

    def origin_of(self, path: Path) -> tuple[str, int | None]:
        """The file and line of ``path``, or of its nearest ancestor a file spells out."""
        for end in range(len(path), -1, -1):
            if self.origins is not None:
                origin = self.origins.get(path[:end])
                if origin is not None:
                    return origin
            else:
                line = self.lines.get(path[:end])
                if line is not None:
                    return self.filename, line
        return self.filename, None

    def line_of(self, path: Path) -> int | None:
        return self.origin_of(path)[1]

    def issue(self, path: Path, message: str) -> ConfigIssue:
        filename, line = self.origin_of(path)
        return ConfigIssue(filename, line, field_path(self.as_written(path)), message)

    def as_written(self, path: Path) -> Path:
        """``path`` as the file that wrote it spells it (an entry a file added to a list is
        that file's ``rules[0]``, whatever its place in the merged list)."""
        for end in range(len(path), 0, -1):
            source = self.sources.get(path[:end])
            if source is not None:
                return source + path[end:]
        return path

    def issues_from(
        self, error: ValidationError, prefix: Path = (), model: type | None = None
    ) -> list[ConfigIssue]:
        """Each of pydantic's complaints in plain words (``model``: the one validated),
        at the file and line of its field."""
        return [self.issue(prefix + loc, said) for loc, said in plain_problems(error, model)]


def field_path(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


MAX_NESTING = 100  # lists or maps inside one another: the config's deepest is a few levels
_TOO_DEEP = (
    f"YAML: nests too deep (lists or maps more than {MAX_NESTING} levels inside one another)"
)


# libyaml's parser where PyYAML was built with it (its wheels are): the same nodes and marks
# for YAML as a config writes it (docs/reference.md says where the two parsers differ), in a
# tenth of the time (the shipped defaults took ~0.1 s of every command's start-up in Python)
if TYPE_CHECKING:
    _Base = yaml.SafeLoader
else:
    _Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):
    """YAML as ``yaml.safe_load`` reads it, and ``!replace`` before a mapping or a list (the
    value replaces what earlier layers had there instead of merging into it)."""


def _replace(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    raise yaml.constructor.ConstructorError(
        None, None, "!replace goes before a mapping or a list", node.start_mark
    )


_Loader.add_constructor("!replace", _replace)


def load_located(text: str, filename: str) -> Located:
    loader = None
    try:
        loader = _Loader(text)  # the pure-Python reader refuses a control character here
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or exc.context or "invalid YAML"
        if "maximum nesting depth" in problem:  # libyaml's own limit: 1,000 levels
            raise ConfigError([ConfigIssue(filename, line, "", _TOO_DEEP)]) from None
        raise ConfigError([ConfigIssue(filename, line, "", f"YAML syntax: {problem}")]) from None
    except yaml.YAMLError as exc:
        raise ConfigError([ConfigIssue(filename, None, "", f"YAML: {exc}")]) from None
    except RecursionError:
        raise ConfigError([ConfigIssue(filename, None, "", _TOO_DEEP)]) from None
    finally:
        if loader is not None:
            loader.dispose()
    walker = _Walker(filename)
    if node is not None:
        try:
            walker.walk(node, ())
        except RecursionError:
            raise ConfigError([ConfigIssue(filename, None, "", _TOO_DEEP)]) from None
    if walker.issues:
        raise ConfigError(walker.issues)
    return Located(filename, data, walker.lines, walker.replaced)


MAX_NODES = 100_000  # after aliases are expanded: a few lines of aliases can mean billions


class _Walker:
    """Records the line of every path; finds duplicate keys, aliases that contain themselves
    and alias expansions too large to validate."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.lines: dict[Path, int] = {}
        self.issues: list[ConfigIssue] = []
        self.visits = 0
        self.open: set[int] = set()  # nodes on the current path
        self.replaced: set[Path] = set()

    def issue(self, node: yaml.Node, path: Path, message: str) -> None:
        self.issues.append(
            ConfigIssue(self.filename, node.start_mark.line + 1, field_path(path), message)
        )

    def walk(self, node: yaml.Node, path: Path) -> None:
        if len(path) > MAX_NESTING:  # whichever parser read it: what follows recurses
            self.issues.append(ConfigIssue(self.filename, node.start_mark.line + 1, "", _TOO_DEEP))
            raise ConfigError(self.issues)
        self.visits += 1
        if self.visits > MAX_NODES:
            self.issue(node, path, f"more than {MAX_NODES} values once aliases are expanded")
            raise ConfigError(self.issues)
        if id(node) in self.open:
            self.issue(node, path, "an alias here refers to a value that contains it")
            return
        self.lines.setdefault(path, node.start_mark.line + 1)
        if node.tag == "!replace":
            self.replaced.add(path)
        self.open.add(id(node))
        if isinstance(node, yaml.MappingNode):
            self._mapping(node, path)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self.walk(item, (*path, index))
        self.open.discard(id(node))

    def _mapping(self, node: yaml.MappingNode, path: Path) -> None:
        seen: set[str] = set()
        span = range(node.start_mark.index, node.end_mark.index + 1)
        for key_node, value_node in node.value:
            key = str(key_node.value)
            child = (*path, key)
            # keys merged in with `<<:` sit elsewhere in the file and may be overridden here
            if key_node.start_mark.index in span:
                if key in seen:
                    self.issue(key_node, child, "duplicate key")
                seen.add(key)
            self.lines[child] = key_node.start_mark.line + 1
            self.walk(value_node, child)
