"""Log lines: structured JSON, one object per line, fields passed as
``extra={"fields": {...}}`` so that ``correlation_id`` links message, decision, mutation,
rule and action; or plain, one line each (``level: message``).

Who gets which (``configure``): a command a person runs says only warnings and errors, one
plain line each; asked for a level (``--log-level``), it writes lines from that level; a
process that serves (a bot, the worker) writes them from ``info``, for its operator. The
format (``--log-format``) is JSON where a level is asked or the process serves, else plain
(``log_format``); with JSON, every line on stderr is JSON (``bot.screen.json_lines``). A log
file, when named, gets JSON lines whatever stderr shows. RQ's and waitress's loggers go the
same way as ours, so their chatter shows only when the level asks for it. RQ colours queue
names and job ids with ANSI escapes when stdout is a terminal: no line here carries them."""

from __future__ import annotations

import json
import logging
import re
import sys
from pathlib import Path
from typing import Any, cast

from bot.screen import json_safe

__all__ = [
    "FORMATS",
    "LIBRARY_LOGGERS",
    "JsonFormatter",
    "PlainFormatter",
    "configure",
    "log_format",
    "plain_text",
    "shown_from_info",
]

FORMATS = ("text", "json")
# libraries whose log lines are ours to route (left alone, RQ prints its own to stdout, and
# waitress's warnings reach stderr plain, whatever the format)
LIBRARY_LOGGERS = ("rq", "waitress")
STDERR = "stderr"  # the name of the handler that writes on stderr
_RAISED: set[str] = set()  # the loggers shown_from_info gave a handler of their own
# a terminal's control sequences: CSI (colours, cursor moves; ESC [ or the 8-bit 0x9b), OSC
# (a window title, a link: ESC ] or 0x9d, to BEL or ST), any other escape, and the other C1
# controls, which some terminals obey as well
_ANSI = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[@-_]?|[\x80-\x9f]"
)


def plain_text(text: str) -> str:
    """``text`` without terminal escapes."""
    return _ANSI.sub("", text)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": plain_text(record.getMessage()),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            data.update(fields)
        if record.exc_info:
            data["exc"] = plain_text(self.formatException(record.exc_info))
        # (DEL, C1 and bidi controls escaped: the line reaches a terminal, or a file, whole)
        return json_safe(json.dumps(data, ensure_ascii=False, default=str))


class PlainFormatter(logging.Formatter):
    """``warning: <message>``: one line, an exception named by its type and message rather
    than its traceback (``--log-level`` shows that, in the JSON line's ``exc``)."""

    def format(self, record: logging.LogRecord) -> str:
        text = " ".join(record.getMessage().split())
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            text += f": {type(error).__name__}: {' '.join(str(error).split())}"
        return plain_text(f"{record.levelname.lower()}: {text}")


def log_format(asked: str | None, level: str | None, serving: bool, terminal: bool = False) -> str:
    """``asked`` (``--log-format``); else ``text`` for a person at a ``terminal``; else
    ``json`` where a level is asked or the process serves (its operator's log reader, a
    journal or a collector, takes JSON); else ``text``."""
    if asked is not None:
        return asked
    if terminal:
        return "text"
    return "json" if level is not None or serving else "text"


def configure(
    level: str | None = None,
    *,
    serving: bool = False,
    file: Path | None = None,
    format: str | None = None,
) -> None:
    """Send the ``deliberate`` loggers (and the libraries') to stderr: from ``level`` when
    one is given, else from ``info`` when ``serving``, else from ``warning``; as JSON lines
    or plain ones (``log_format``). With ``file``, JSON lines from ``level`` (default
    ``info``) are appended there too."""
    plain = log_format(format, level, serving) == "text"
    formatter = PlainFormatter() if plain else JsonFormatter()
    shown = level or ("INFO" if serving else "WARNING")
    # (under ``bot.screen.json_lines``, its JSON lines go to the stream underneath: every
    # line written to ``sys.stderr`` itself is wrapped as a record, however it looks)
    stream = getattr(sys.stderr, "raw_lines", sys.stderr)
    stderr = _handler(logging.StreamHandler(stream), formatter, shown)
    stderr.set_name(STDERR)
    handlers: list[logging.Handler] = [stderr]
    if file is not None:
        written = logging.FileHandler(file, encoding="utf-8")  # OSError: it cannot
        handlers.append(_handler(written, JsonFormatter(), level or "INFO"))
    lowest = min(h.level for h in handlers)
    for name in ("deliberate", *LIBRARY_LOGGERS):
        logger = logging.getLogger(name)
        logger.handlers[:] = handlers
        logger.setLevel(lowest)
        logger.propagate = False
    for name, below in list(logging.root.manager.loggerDict.items()):
        # RQ gives ``rq.worker`` handlers and a level of its own when it finds none above;
        # ``shown_from_info`` gave one of ours its own (to a command run before in-process)
        ours = name.startswith(tuple(f"{n}." for n in LIBRARY_LOGGERS)) or name in _RAISED
        if ours and isinstance(below, logging.Logger):
            below.handlers.clear()
            below.setLevel(logging.NOTSET)
            below.propagate = True
    _RAISED.clear()


def shown_from_info(name: str) -> None:
    """The lines of the logger ``name`` on stderr from ``info``, whatever level stderr shows
    (``configure`` first): what a rule writes with ``log.write`` is meant for whoever runs
    ``worker --burst``."""
    top = logging.getLogger("deliberate")
    stderr = next((h for h in top.handlers if h.get_name() == STDERR), None)
    if stderr is None or stderr.level <= logging.INFO:
        return
    stream = cast(logging.StreamHandler[Any], stderr).stream
    louder = _handler(logging.StreamHandler(stream), stderr.formatter or PlainFormatter(), "INFO")
    logger = logging.getLogger(name)
    logger.handlers[:] = [louder, *(h for h in top.handlers if h is not stderr)]
    logger.setLevel(min(logging.INFO, top.level))
    logger.propagate = False
    _RAISED.add(name)


def _handler(handler: logging.Handler, formatter: logging.Formatter, level: str) -> logging.Handler:
    handler.setFormatter(formatter)
    handler.setLevel(level.upper())
    return handler
