"""Exceptions raised by the core, and what went wrong in an expression a person wrote, in
plain words (``plainly``). Policy outcomes are values (see outcome.py), not exceptions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

__all__ = [
    "ConfigError",
    "ConfigIssue",
    "DeliberateError",
    "StoreError",
    "Unreadable",
    "plainly",
]


class DeliberateError(Exception):
    """Base class of every error the core raises on purpose."""


class StoreError(DeliberateError):
    """The state store answered something it should never answer (a broken invariant).
    ``said_in_full``: the message says in full what happened, for a person as it is (the
    command line needs no import of the subclass to tell)."""

    said_in_full: ClassVar[bool] = False


class Unreadable(StoreError):
    """Something stored that no reader can parse (written by an older version, or planted),
    named (``name``: a key, a log id), so that a reader that must go on can skip it and say
    so; ``why`` is the parser's first complaint."""

    said_in_full = True

    def __init__(self, what: str, name: str, why: str) -> None:
        super().__init__(f"{what} {name} cannot be read: {why}")
        self.why = why


@dataclass(frozen=True)
class ConfigIssue:
    """One problem in a configuration file, located as precisely as the source allows."""

    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        field = f" {self.field}:" if self.field else ""
        return f"{where}:{field} {self.message}"


class ConfigError(DeliberateError):
    """A configuration file failed to load; carries every issue found, not just the first."""

    def __init__(self, issues: list[ConfigIssue]) -> None:
        self.issues = issues
        super().__init__("\n".join(str(issue) for issue in issues))


def plainly(exc: BaseException) -> str:
    """What ``exc``, raised while a condition or a template written in the config was
    evaluated, says went wrong, without Python's class name: a missing field is named
    (``KeyError: 'topic'`` is "no 'topic' to read: it is not set"); anything else says
    its own message, or its kind in words when it has none."""
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        return f"no {exc.args[0]!r} to read: it is not set"
    said = str(exc).strip()
    if said:
        return said
    if isinstance(exc, ZeroDivisionError):
        return "a division by zero"
    if isinstance(exc, OverflowError):
        return "a number too large"
    if isinstance(exc, IndexError | KeyError):
        return "an index or key that is not there"
    return "a value of the wrong type" if isinstance(exc, TypeError) else "an invalid value"
