"""What loggers wrote, for tests that look at it (a secret must never be in it, a refusal must
be): a handler that keeps every record, and ``logged`` to install it on one logger; and
``said``, the words of a line of a command's stderr, whichever format it logs in."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["LogLines", "logged", "said"]


class LogLines(logging.Handler):
    """Every record it is given; ``text()`` has each formatted (with its traceback, if any)
    and followed by its structured ``fields`` (``bot.screen.json_logging``), if any."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def text(self) -> str:
        formatter = logging.Formatter()
        return "\n".join(
            f"{formatter.format(r)} {getattr(r, 'fields', '')}".rstrip() for r in self.records
        )


@contextmanager
def logged(name: str = "") -> Iterator[LogLines]:
    """What ``name`` (and the loggers below it; the root logger by default) logs at DEBUG,
    caught on the logger itself: ``bot.screen.json_logging.configure()`` turns propagation to the
    root logger off."""
    logger, handler = logging.getLogger(name), LogLines()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def said(line: str) -> str | None:
    """A line of stderr as a person reads it: the words a command said itself (a plain
    line, or with ``--log-format json`` the ``msg`` of a line of the ``deliberate`` logger);
    None for a log line of any other logger, in either format."""
    text = line.rstrip("\n")
    if not text.startswith("{"):
        return None if text.startswith(("debug: ", "info: ", "warning: ", "error: ")) else text
    record = json.loads(text)
    return str(record["msg"]) if record.get("logger") == "deliberate" else None
