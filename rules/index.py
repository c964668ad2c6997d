"""Rules indexed by key pattern: matching a key costs a lookup per distinct literal prefix
length of the patterns, not a test per rule, so unrelated rules cost nothing."""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

from rules.dsl import Rule

__all__ = ["RuleIndex"]

_WILD = "*?["


def _literal_prefix(pattern: str) -> str:
    cut = min((i for i, ch in enumerate(pattern) if ch in _WILD), default=len(pattern))
    return pattern[:cut]


class RuleIndex:
    """Exact keys in one dict; glob patterns in another, by the literal text before their
    first wildcard (``decision.*`` under ``decision.``)."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        self._order: dict[str, int] = {}
        self._exact: dict[str, list[Rule]] = {}
        self._globs: dict[str, list[Rule]] = {}
        for position, rule in enumerate(rules):
            self._order[rule.id] = position
            pattern = rule.when.key
            prefix = _literal_prefix(pattern)
            table = self._exact if prefix == pattern else self._globs
            table.setdefault(prefix, []).append(rule)
        self._lengths = sorted({len(prefix) for prefix in self._globs})

    def __len__(self) -> int:
        return len(self._order)

    def match(self, key: str) -> list[Rule]:
        """The rules whose ``when.key`` matches ``key``, in file order."""
        found = list(self._exact.get(key, ()))
        for length in self._lengths:
            if length > len(key):
                break
            for rule in self._globs.get(key[:length], ()):
                if fnmatchcase(key, rule.when.key):
                    found.append(rule)
        if len(found) > 1:
            found.sort(key=lambda rule: self._order[rule.id])
        return found
