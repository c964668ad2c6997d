"""A configuration file as a layer (``core/config/layers.py``): read, parsed with the line
of each value, after the files its ``include:`` names (relative to it), each merged in order.
A file that cannot be read, or an include that loops, is an error naming the file and line."""

from __future__ import annotations

from pathlib import Path

from core.config.layers import Layer, Node, merge
from core.config.yaml_source import Located, load_located
from core.errors import ConfigError, ConfigIssue

__all__ = ["file_layer", "file_paths"]


def _read(path: Path) -> Located:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        issue = ConfigIssue(str(path), None, "", f"cannot read: {exc.strerror}")
        raise ConfigError([issue]) from None
    except UnicodeDecodeError as exc:
        issue = ConfigIssue(str(path), None, "", f"not UTF-8 text (byte {exc.start})")
        raise ConfigError([issue]) from None
    located = load_located(text, str(path))
    if located.data is None:
        located.data = {}
    if not isinstance(located.data, dict):
        raise ConfigError([located.issue((), "the file must be a mapping of sections")])
    return located


def file_layer(path: Path, chain: list[Path] | None = None) -> Layer:
    """``path`` as a layer: the files it includes merged in order, then its own values
    (``chain``: the files that included it, to find a loop)."""
    chain = chain or []
    located = _read(path)
    layer: Layer | None = None
    for index, included in enumerate(_includes(located)):
        seen = [p.resolve() for p in (*chain, path)]
        if included.resolve() in seen:
            shown = " -> ".join(str(p) for p in (*chain, path, included))
            raise ConfigError([located.issue(("include", index), f"includes itself: {shown}")])
        try:
            part = file_layer(included, [*chain, path])
        except ConfigError as exc:
            if exc.issues and exc.issues[0].file == str(included) and exc.issues[0].line is None:
                # it could not be read: say which include named it
                raise ConfigError([located.issue(("include", index), str(exc))]) from None
            raise
        layer = part if layer is None else merge(layer, part)
    origins = {p: (located.filename, line) for p, line in located.lines.items()}
    own = Layer(Node.of(located.data, origins, located.replaced))
    return own if layer is None else merge(layer, own)


def file_paths(path: Path) -> list[Path]:
    """``path`` and every file it includes, however deep: what its layer was read from."""
    found = [path]
    for included in _includes(_read(path)):
        if included.resolve() not in {p.resolve() for p in found}:
            found += file_paths(included)
    return found


def _includes(located: Located) -> list[Path]:
    """The files the ``include:`` of ``located`` names, relative to its directory."""
    listed = located.data.get("include")
    if listed is None:
        return []
    if isinstance(listed, str):
        listed = [listed]
    if not isinstance(listed, list) or not all(isinstance(item, str) for item in listed):
        raise ConfigError([located.issue(("include",), "a list of file paths to merge first")])
    return [Path(located.filename).parent / item for item in listed]
