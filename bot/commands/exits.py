"""How a ``deliberate`` command ends: its exit codes, and Ctrl-C's one line."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import NoReturn

__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_REJECTED",
    "EXIT_USAGE",
    "exit_at_once",
    "say_interrupted",
]

# Ctrl-C, wherever it lands: one line, ``deliberate: interrupted``, and exit code 130 (128 +
# SIGINT, as a shell reports it); ``worker`` says it too when RQ stops warmly
EXIT_OK, EXIT_REJECTED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def say_interrupted() -> None:
    fresh = "\n" if sys.stderr.isatty() else ""  # the ^C a terminal echoed ends no line
    with contextlib.suppress(OSError, ValueError):
        print(f"{fresh}deliberate: interrupted", file=sys.stderr, flush=True)


def exit_at_once(*_: object) -> NoReturn:
    """Gone, without unwinding (usable as a signal handler): what was printed is flushed."""
    with contextlib.suppress(OSError, ValueError, RuntimeError):
        sys.stdout.flush()
    os._exit(EXIT_INTERRUPTED)
