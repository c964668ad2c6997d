"""The console's terminal front end: line editing and history through prompt_toolkit's
``PromptSession``, Ctrl-C as in a shell, and whether to colour at all.

Ctrl-C clears the line being typed; a second Ctrl-C on the empty line, or Ctrl-D, leaves.
History lives in ``console-history`` in the data directory (``DELIBERATE_HOME``), or in memory
when that cannot be written. Colours only on a terminal, never with ``NO_COLOR`` set
(https://no-color.org) or ``TERM=dumb``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from prompt_toolkit import PromptSession
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.output import ColorDepth, Output, create_output
from prompt_toolkit.styles import Style

from bot.console.rendering import COLOURS, PLAIN, Out
from bot.redis.embedded import home_dir
from bot.screen import underlying

__all__ = ["HISTORY_FILE", "LEAVE_HINT", "PROMPT", "Terminal", "colour_wanted", "open_history"]

PROMPT = "you> "
HISTORY_FILE = "console-history"
LEAVE_HINT = "(Ctrl-C again or Ctrl-D to leave)"
STYLE = Style.from_dict({"prompt": "bold"})


class _Stream(Protocol):
    def isatty(self) -> bool: ...


class _LineCleared(Exception):
    """Ctrl-C with something typed: the line is dropped, the console goes on."""


def colour_wanted(stream: _Stream, env: Mapping[str, str] = os.environ) -> bool:
    return stream.isatty() and not env.get("NO_COLOR") and env.get("TERM") != "dumb"


def open_history(home: Path | None = None) -> History:
    """The history file of the data directory, created if need be; in memory if it cannot
    be (a read-only directory): the console works the same, it forgets on leaving."""
    path = (home or home_dir()) / HISTORY_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600)  # what people typed is theirs alone
        path.chmod(0o600)
        _keep_tail(path)
    except OSError:
        return InMemoryHistory()
    return FileHistory(path)


HISTORY_BYTES = 256 * 1024  # the newest lines are kept; the file never grows past this much


def _keep_tail(path: Path) -> None:
    """Cut the history file to its newest entries once it is past ``HISTORY_BYTES``
    (prompt_toolkit's file starts each entry with a blank line and a "# time" line)."""
    data = path.read_bytes()
    if len(data) <= HISTORY_BYTES:
        return
    tail = data[-HISTORY_BYTES // 2 :]
    start = tail.find(b"\n\n# ")
    path.write_bytes(tail[start + 1 :] if start >= 0 else b"")


def _ctrl_c(event: KeyPressEvent) -> None:
    typed = bool(event.current_buffer.text)
    event.app.exit(
        exception=_LineCleared() if typed else KeyboardInterrupt(), style="class:aborting"
    )


class Terminal:
    """Reads lines from the person at the terminal: ``read()`` is the line, or None once
    they leave. It draws the line being edited on the terminal itself (by default, the
    stream under the cleaned ``sys.stdout``: the editor's own escapes are its to send)."""

    def __init__(
        self,
        history: History,
        say: Out,
        *,
        colour: bool,
        input: Input | None = None,
        output: Output | None = None,
    ) -> None:
        bindings = KeyBindings()
        bindings.add("c-c")(_ctrl_c)
        self.say = say
        self.colour = colour
        self.palette = COLOURS if colour else PLAIN
        self.armed = False  # a Ctrl-C came last: one more on the empty line leaves
        self.session: PromptSession[str] = PromptSession(
            history=history,
            key_bindings=bindings,
            style=STYLE,
            color_depth=None if colour else ColorDepth.MONOCHROME,
            input=input,
            output=output if output is not None else create_output(underlying(sys.stdout)),
        )

    def read(self) -> str | None:
        prompt = FormattedText([("class:prompt", PROMPT)]) if self.colour else PROMPT
        try:
            line = self.session.prompt(prompt)
        except _LineCleared:
            self.armed = True
            return ""
        except KeyboardInterrupt:
            if self.armed:
                return None
            self.armed = True
            self.say(self.palette.paint(self.palette.note, LEAVE_HINT))
            return ""
        except EOFError:
            return None
        self.armed = False
        return line
