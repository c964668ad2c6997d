"""What of a step's arguments was made from a secret without being one whole: a part of it
(``[4:]``, ``[:20]``), or it made over (``| reverse``, ``| replace('-', '')``). A service that
quotes what it got quotes that, and no redactor of the secret's own shapes would find it; so
each string of the arguments as sent is held against the same rendered with the secrets
masked, and what lies between their first and last difference counts as the step's secret,
unless the secrets themselves, struck out of it, make it what the masked one holds there."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["derived"]

Strike = Callable[[str], str]  # a text with the secrets in play struck out, as masked


def derived(sent: Any, masked: Any | None, strike: Strike) -> list[Any]:
    """The parts of ``sent`` (JSON data: a step's arguments rendered) that differ from
    ``masked`` (the same rendered with the secrets masked; None: it could not be, so all of
    ``sent`` depends on them) other than by holding the secrets whole (``strike``): in each
    string, from its first character that differs to its last; a number or a boolean that
    differs, whole."""
    return [part for part in _differing(sent, masked, strike) if part not in ("", None)]


def _differing(sent: Any, masked: Any, strike: Strike) -> Iterator[Any]:
    if isinstance(sent, dict) and isinstance(masked, dict) and sent.keys() == masked.keys():
        for key, value in sent.items():
            yield from _differing(value, masked[key], strike)
    elif isinstance(sent, list) and isinstance(masked, list) and len(sent) == len(masked):
        for one, other in zip(sent, masked, strict=True):
            yield from _differing(one, other, strike)
    elif isinstance(sent, str) and isinstance(masked, str):
        if sent != masked:
            run, instead = _between(sent, masked)
            if strike(run) != instead:
                yield run
    elif isinstance(sent, dict | list):
        yield from _leaves(sent)
    elif sent != masked:
        yield sent


def _between(sent: str, masked: str) -> tuple[str, str]:
    """Each without what both begin and end with."""
    start = 0
    most = min(len(sent), len(masked))
    while start < most and sent[start] == masked[start]:
        start += 1
    end = 0
    while end < most - start and sent[-1 - end] == masked[-1 - end]:
        end += 1
    return sent[start : len(sent) - end], masked[start : len(masked) - end]


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict | list):
        for item in value.values() if isinstance(value, dict) else value:
            yield from _leaves(item)
    else:
        yield value
