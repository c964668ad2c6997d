"""Standard output and standard error as the ``deliberate`` command writes them: every write
cleaned (``controls.clean``), whatever wrote it (a command's lines, argparse, a log line, a
library), so that no value, reason, name or message read from the store can steer the
terminal it is printed on. ``cleaned`` puts them in place for the length of a command."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO, cast

from bot.screen.controls import clean

__all__ = ["CleanStream", "cleaned", "colour_stream", "underlying"]


class CleanStream:
    """``inner`` (a text stream), written to through ``clean``; ``colour``: colours (SGR)
    kept, for a writer that paints text it cleaned first. Everything else (``flush``,
    ``isatty``, ``fileno``, ``encoding``, ...) is ``inner``'s."""

    def __init__(self, inner: TextIO, *, colour: bool = False) -> None:
        self.inner = inner
        self.colour = colour

    def write(self, text: str) -> int:
        self.inner.write(clean(text, colour=self.colour))
        return len(text)  # what was given: a caller counts its own characters

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def underlying(stream: TextIO) -> TextIO:
    """The stream ``stream`` cleans for (itself, when it cleans nothing): for a front end
    that draws on the terminal itself (the console's line editor)."""
    return stream.inner if isinstance(stream, CleanStream) else stream


def colour_stream(stream: TextIO) -> TextIO:
    """``stream``, cleaned but for colours."""
    return cast(TextIO, CleanStream(underlying(stream), colour=True))


@contextmanager
def cleaned() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` cleaned until the block ends (then as they were)."""
    out, err = sys.stdout, sys.stderr
    sys.stdout = cast(TextIO, CleanStream(underlying(out)))
    sys.stderr = cast(TextIO, CleanStream(underlying(err)))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
