"""The interactive console as a person meets it: the real ``deliberate console`` in a tmux
pane of its own server, keys sent to it, the screen read back until what is awaited shows
(never a fixed sleep). tmux must be installed: CI installs it (``.ci/run``)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.app import App
from bot.console.terminal import HISTORY_FILE, LEAVE_HINT
from tests.polling import wait_for

ROOT = Path(__file__).resolve().parents[2]
MESSAGE = "what if we used postgres with read replicas"


class Pane:
    """The one pane of a tmux server on a socket of the test's own."""

    def __init__(self, socket: str) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return done.stdout

    def lines(self, escapes: bool = False) -> list[str]:
        screen = self.tmux("capture-pane", "-p", *(["-e"] if escapes else []))
        shown = [line.rstrip() for line in screen.splitlines()]
        while shown and not shown[-1]:
            shown.pop()
        return shown

    def wait(self, done: Callable[[list[str]], bool], what: str, timeout: float = 60) -> None:
        try:
            wait_for(lambda: done(self.lines()), what, timeout)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the screen:\n" + "\n".join(self.lines())) from None

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-l", text)

    def press(self, *keys: str) -> None:
        self.tmux("send-keys", *keys)


@pytest.fixture
def pane(tmp_path: Path, workspace: str) -> Iterator[Pane]:
    assert shutil.which("tmux"), "tmux is not installed (CI installs it: see .ci/run)"
    socket = f"deliberate-test-{uuid.uuid4().hex}"
    config = tmp_path / "tmux.conf"
    config.write_text("set -g remain-on-exit on\n", encoding="utf-8")  # to read how it ended
    env = {
        **os.environ,
        "DELIBERATE_WORKSPACE": workspace,
        "DELIBERATE_HOME": str(tmp_path / "home"),  # the console's history goes there
    }
    for name in ("OPENAI_API_KEY", "NO_COLOR", "TMUX"):
        env.pop(name, None)
    console = [sys.executable, "-m", "bot.main", "console", "--session", "s1"]
    shell = f'{shlex.join(console)}; echo "[exit $?]"'
    start = ["new-session", "-d", "-x", "120", "-y", "40", shell]
    subprocess.run(
        ["tmux", "-L", socket, "-f", str(config), *start],
        env=env,
        cwd=ROOT,
        timeout=10,
        check=True,
    )
    pane = Pane(socket)
    paths: list[Path] = []
    try:
        paths.append(Path(pane.tmux("display-message", "-p", "#{socket_path}").strip()))
        yield pane
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], timeout=10, check=False)
        for path in paths:  # tmux leaves its socket file behind
            path.unlink(missing_ok=True)


def prompt_after(line: str) -> Callable[[list[str]], bool]:
    """The screen ends with an empty prompt right below ``line``."""
    return lambda shown: shown[-2:] == [line, "you>"]


def test_typing_recalling_clicking_and_leaving_in_a_terminal(
    pane: Pane, app: App, tmp_path: Path
) -> None:
    pane.wait(lambda shown: shown[-1:] == ["you>"], "the prompt")
    assert pane.lines()[0] == "session s1, as user:console. /help for commands, /quit to leave."

    pane.type(MESSAGE)
    pane.press("Enter")
    pane.wait(lambda shown: "you>" in shown and "[1] Use this" in shown[-2], "the buttons")
    [buttons] = [line for line in pane.lines(escapes=True) if "Use this" in line]
    assert re.search(r"\x1b\[[0-9;]*m\[1\] Use this", buttons)  # coloured on a terminal

    pane.press("Up")  # the history brings the message back, ready to edit
    pane.wait(lambda shown: shown[-1] == f"you> {MESSAGE}", "the recalled message")
    pane.press("C-c")  # clears it: nothing is sent
    pane.wait(prompt_after(f"you> {MESSAGE}"), "a fresh prompt after Ctrl-C")

    pane.type(" 1 ")  # a bare number clicks button 1
    pane.press("Enter")
    pane.wait(lambda shown: any(s.startswith("assistant: Committed:") for s in shown), "commit")
    [entry] = app.store.entries("decision.")
    assert entry.value == MESSAGE and str(entry.updated_by) == "user:console"

    pane.wait(lambda shown: shown[-1] == "you>", "the prompt after the commit")
    pane.press("C-c")  # on an empty line: says how to leave
    pane.wait(prompt_after(LEAVE_HINT), "the hint")
    pane.press("C-c")
    pane.wait(lambda shown: "[exit 0]" in shown, "the console to leave")
    assert not any("Traceback" in line for line in pane.lines())
    history = (tmp_path / "home" / HISTORY_FILE).read_text(encoding="utf-8")
    assert f"+{MESSAGE}\n" in history and "\n+ 1 \n" in history
