"""Standard error when it carries JSON lines alone (``--log-format json``): a process that
writes JSON log lines writes nothing else there. The log handlers write their JSON lines to
the stream underneath (``raw_lines``); every line written to ``sys.stderr`` itself (a
command's own words, an error, Ctrl-C's line, a library's print) becomes a log line of the
``deliberate`` logger, in the shape ``JsonFormatter`` gives every log line, even one that
looks like JSON already, so that no text printed there can pass for a record. ``say`` is how
a command writes a line for the operator in either format."""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sys
import threading
from typing import Any, TextIO, cast

from bot.screen.json_logging import JsonFormatter

__all__ = ["JsonLines", "json_stderr", "say"]

LOGGER = "deliberate"
_FORMAT = JsonFormatter()
# one line at a time on stderr: reentrant, as a signal handler (Ctrl-C's line) may write while
# its thread is writing; made anew in a forked child (RQ's scheduler), where a lock another
# thread held at the fork would stay held for ever (``logging`` does the same for its own)
_lock = threading.RLock()


def _unlocked_in_child() -> None:
    global _lock
    _lock = threading.RLock()


os.register_at_fork(after_in_child=_unlocked_in_child)


class JsonLines:
    """``inner``, every line written to it a JSON object. Each thread's unfinished line is
    kept until it ends, so that threads writing at once never share a line."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner
        self._unfinished = threading.local()

    @property
    def raw_lines(self) -> TextIO:
        """Where the log handlers write their own JSON lines (``json_logging.configure``)."""
        return self.inner

    def write(self, text: str) -> int:
        *lines, rest = (getattr(self._unfinished, "text", "") + text).split("\n")
        self._unfinished.text = rest
        for line in lines:
            if line.strip():
                self._put(_log_line(line, "info"))
        return len(text)

    def flush(self) -> None:
        """The calling thread's unfinished line, if any, as a line of its own; then the
        stream underneath."""
        rest = getattr(self._unfinished, "text", "")
        if rest.strip():
            self._unfinished.text = ""
            self._put(_log_line(rest, "info"))
        self.inner.flush()

    def writelines(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def line(self, text: str, level: str) -> None:
        """``text`` (line breaks and all) as one log line of ``level``."""
        self._put(_log_line(text, level))

    def _put(self, line: str) -> None:
        with _lock:
            self.inner.write(line + "\n")
            self.inner.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def json_stderr() -> None:
    """``sys.stderr`` as ``JsonLines`` from now on (``bot.screen.cleaned`` puts the stream
    back when the command ends)."""
    if not isinstance(sys.stderr, JsonLines):
        lines = JsonLines(sys.stderr)
        sys.stderr = cast(TextIO, lines)
        atexit.register(_flushed, lines)  # a last line with no line break is not lost


def say(text: str, level: str = "info") -> None:
    """One line for whoever reads stderr: as it is, or as a JSON log line of ``level`` when
    stderr carries JSON lines alone."""
    stream = sys.stderr
    if isinstance(stream, JsonLines):
        stream.line(text, level)
    else:
        print(text, file=stream, flush=True)


def _flushed(lines: JsonLines) -> None:
    with contextlib.suppress(OSError, ValueError):  # (a stream closed already)
        lines.flush()


def _log_line(text: str, level: str) -> str:
    number = logging.getLevelName(level.upper())
    record = logging.LogRecord(LOGGER, number, __file__, 0, text, None, None)
    return _FORMAT.format(record)
