"""Configuration in layers: the shipped defaults, then each file given, merged on top, each
value keeping the file and the line it came from (so that an error, and ``deliberate config
show --origin``, can name them).

How a later layer merges into what came before, section by section:

- a mapping merges key by key (``store``, ``policy``, ``actions``, ``automation``, ``roles``,
  ``tenants``…); a value that is not a mapping replaces the one before;
- ``rules`` and ``beats`` extend by ``id``: an entry whose id is new is added, one whose id
  is already there replaces that entry where it stands;
- ``policy.keys`` extends by ``pattern``: the later file's patterns come *before* the
  earlier layers', in the later file's own order (the first pattern that matches decides, so
  the later file's win, and its patterns decide among themselves as the file reads), then the
  earlier layers' patterns it does not name; an entry for a pattern already there merges
  into it key by key (``- {pattern: "decision.*", approval: {quorum: 2}}`` adds an approval
  and keeps the shipped type and limits; a ``secret: true`` written before stays unless the
  later entry says ``secret: false``);
- within one file an id or a pattern written twice stays as the file wrote it: only its
  first entry takes the place of an earlier layer's (so a copy of the shipped file with a
  pattern put before the shipped one reads as it would alone, and a rule id given twice is
  reported as it would be alone);
- ``tenants.discord.servers`` and ``tenants.slack.teams`` extend by ``id``; an entry for an
  id already there merges into it key by key (its roles, its own sections), and an entry
  that is the id alone adds nothing to one written in full;
- the same holds inside a tenant's entry: its ``rules``, ``beats`` and ``policy.keys`` merge
  as the top-level ones do;
- the ``members`` and ``groups`` of a role binding extend: ids not yet there are added;
- any other list replaces the one before (``automation.backoff_sec``, an ``enum``…);
- ``!replace`` before a mapping or a list (``rules: !replace [...]``) replaces what came
  before instead of merging into it: the way to drop a shipped rule, beat or pattern, or to
  write a pattern's or a tenant's entry afresh (``- !replace {pattern: "scene.*", ...}``).

A file may list others to merge first: ``include: [base.yaml, team.yaml]`` (paths relative
to the file), each merged in order, then the file itself."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Layer", "Named", "Node", "Origin", "Where", "merge", "merge_rule"]

Where = tuple[str | int, ...]
Origin = tuple[str, int]  # (file, line)


@dataclass(frozen=True)
class Named:
    """How a list of named entries merges: ``field`` names an entry; ``new_first``: the later
    file's entries come before the earlier layers'; ``merges``: an entry for a known name
    merges into it rather than replacing it."""

    field: str
    new_first: bool = False
    merges: bool = False


# lists of named entries, by path pattern ("#" is a list index)
_TENANT = ("tenants", "*", "*", "#")
_BY_ID, _BY_PATTERN, _TENANTS = Named("id"), Named("pattern", True, True), Named("id", False, True)
_NAMED: tuple[tuple[tuple[str, ...], Named], ...] = (
    *(((*at, "rules"), _BY_ID) for at in ((), _TENANT)),
    *(((*at, "beats"), _BY_ID) for at in ((), _TENANT)),
    *(((*at, "policy", "keys"), _BY_PATTERN) for at in ((), _TENANT)),
    (("tenants", "discord", "servers"), _TENANTS),
    (("tenants", "slack", "teams"), _TENANTS),
)
# lists of ids that extend (a role binding's members and groups)
_SETS: tuple[tuple[str, ...], ...] = (("roles", "*", "members"), ("roles", "*", "groups"))


@dataclass
class Node:
    """A value of a layer, where it was written, and whether the file marked it
    ``!replace``; a mapping's or a list's items are nodes too."""

    value: Any  # dict[str, Node] | list[Node] | a scalar
    origin: Origin | None = None
    replace: bool = False
    source: Where = ()  # its path in the file that wrote it

    @classmethod
    def of(
        cls, data: Any, origins: dict[Where, Origin], replaced: set[Where], path: Where = ()
    ) -> Node:
        """The tree of plain ``data``, each node with the origin of its path."""
        if isinstance(data, dict):
            value: Any = {k: cls.of(v, origins, replaced, (*path, k)) for k, v in data.items()}
        elif isinstance(data, list):
            value = [cls.of(v, origins, replaced, (*path, i)) for i, v in enumerate(data)]
        else:
            value = data
        return cls(value, origins.get(path), path in replaced, path)

    def plain(self) -> Any:
        if isinstance(self.value, dict):
            return {key: node.plain() for key, node in self.value.items()}
        if isinstance(self.value, list):
            return [node.plain() for node in self.value]
        return self.value

    def walk(self, path: Where = ()) -> list[tuple[Where, Node]]:
        """Every node with its path, this one first."""
        found = [(path, self)]
        items = (
            self.value.items()
            if isinstance(self.value, dict)
            else (enumerate(self.value) if isinstance(self.value, list) else ())
        )
        for key, node in items:
            found += node.walk((*path, key))
        return found


@dataclass
class Layer:
    """Configuration data and the origin of each of its paths."""

    root: Node
    origins: dict[Where, Origin] = field(init=False)
    sources: dict[Where, Where] = field(init=False)  # each path's path in its own file

    def __post_init__(self) -> None:
        nodes = self.root.walk()
        self.origins = {p: n.origin for p, n in nodes if n.origin is not None}
        self.sources = {p: n.source for p, n in nodes if n.source != p}

    @property
    def data(self) -> dict[str, Any]:
        plain = self.root.plain()
        return plain if isinstance(plain, dict) else {}

    def origin_of(self, path: Where) -> Origin | None:
        """Where ``path`` was written, or its nearest ancestor that a file spells out."""
        for end in range(len(path), -1, -1):
            origin = self.origins.get(path[:end])
            if origin is not None:
                return origin
        return None


def _matches(path: Where, pattern: tuple[str, ...]) -> bool:
    return len(path) == len(pattern) and all(
        isinstance(part, int)
        if want == "#"
        else isinstance(part, str) and fnmatch.fnmatchcase(part, want)
        for part, want in zip(path, pattern, strict=True)
    )


def merge_rule(path: Where) -> Named | str:
    """How a list at ``path`` merges: by a field naming its entries (``Named``), ``"extend"``
    or ``"replace"`` (the module's documentation says what each does)."""
    for pattern, named in _NAMED:
        if _matches(path, pattern):
            return named
    return "extend" if any(_matches(path, pattern) for pattern in _SETS) else "replace"


def merge(base: Layer, over: Layer) -> Layer:
    """``over`` merged on top of ``base`` (neither is changed)."""
    return Layer(_merge((), base.root, over.root))


def _merge(path: Where, old: Node, new: Node) -> Node:
    if new.replace:
        return Node(new.value, new.origin, source=new.source)
    if isinstance(old.value, dict) and isinstance(new.value, dict):
        merged = dict(old.value)
        for key, node in new.value.items():
            merged[key] = _merge((*path, key), merged[key], node) if key in merged else node
        return Node(merged, new.origin or old.origin, source=path)
    if isinstance(old.value, list) and isinstance(new.value, list):
        rule = merge_rule(path)
        if rule != "replace":
            merged_list = _merge_list(path, rule, old.value, new.value)
            return Node(merged_list, new.origin or old.origin, source=path)
    return new


def _merge_list(path: Where, rule: Named | str, old: list[Node], new: list[Node]) -> list[Node]:
    if not isinstance(rule, Named):  # "extend"
        have = {str(node.value) for node in old}
        return old + [node for node in new if str(node.value) not in have]
    field_name = rule.field
    places: dict[str, int] = {}
    for n, node in enumerate(old):
        places.setdefault(_name(node, field_name) or "", n)
    places.pop("", None)
    taken: set[str] = set()

    def entry(node: Node) -> tuple[str | None, Node]:
        """``node`` as it stands for an earlier layer's entry of its name (merged into it,
        or replacing it), and that name; a name this file wrote before stays as written."""
        name = _name(node, field_name)
        if name is None or name not in places or name in taken:
            return None, node  # a new name, or one this file wrote twice (the check reports it)
        taken.add(name)
        before = old[places[name]]
        if not rule.merges:
            return name, node
        if not isinstance(node.value, dict) and isinstance(before.value, dict):
            return name, before  # a tenant given by its id alone adds nothing
        merged = _merge((*path, places[name]), before, node)
        merged.source = node.source  # an error in it names the entry as the later file wrote it
        return name, merged

    if rule.new_first:
        # the later file's list as it reads, then what it does not name: its first match
        # decides before the earlier layers' and among its own entries as in the file
        written = [entry(node)[1] for node in new]
        named = {_name(node, field_name) for node in new} - {None}
        return written + [node for node in old if _name(node, field_name) not in named]
    kept = list(old)
    fresh = []
    for node in new:
        name, stands = entry(node)
        if name is None:
            fresh.append(stands)
        else:
            kept[places[name]] = stands
    return kept + fresh


def _name(node: Node, field_name: str) -> str | None:
    if isinstance(node.value, dict):
        named = node.value.get(field_name)
        return None if named is None else str(named.value)
    if isinstance(node.value, str | int) and not isinstance(node.value, bool):
        return str(node.value)  # a tenant given by its id alone
    return None
