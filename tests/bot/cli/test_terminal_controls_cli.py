"""People's words reach the terminal as text, never as orders to it. A proposal made of chat
text carrying escape sequences (clear the screen, set the window's title), carriage returns
and newlines that would draw lines of their own, a right-to-left override and an 8-bit CSI
(the issue's reproduction: ``deliberate proposals`` printed them raw) is listed, logged,
traced and explained with each of them shown as its escape; its JSON keeps the value exactly;
the console shows it the same way, coloured or not. Run in this process, on a real Redis."""

from __future__ import annotations

import io
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.app import App, build_app
from core.redis.client import RedisClient
from core.state.commit_result import Committed
from tests.bot.cli.process import run
from tests.bot.test_console_lifecycle import approval_config
from tests.factories import actor, mutation

# what the words carry: a clear screen, a window title (OSC to BEL), a line drawn over (CR)
# and one of its own (CR LF), a right-to-left override, the 8-bit CSI (U+009B), DEL
PAYLOAD = (
    "\x1b[2J\x1b]0;title\x07\rFAKE: committed by admin\r\nFAKE: approvals 2 of 2"
    "\u202e olleh \x9b31m red\x7f \x1b[8m hidden"
)
# said in chat, where a message is one line here (the console reads one a line)
IDEA = f"how about postgres {PAYLOAD.replace(chr(10), ' ')}"
# what no terminal may be sent: C0 controls but newline and tab, DEL, C1, bidi overrides
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u202a-\u202e\u2066-\u2069]")
COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def obeyed(text: str) -> list[str]:
    """The characters of ``text`` a terminal would obey rather than show."""
    return CONTROL.findall(text)


def strings(data: Any) -> list[str]:
    """Every string in JSON data."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        data = list(data.values())
    return [s for item in data for s in strings(item)] if isinstance(data, list) else []


def no_fake_lines(text: str) -> None:
    assert not [line for line in text.splitlines() if line.lstrip().startswith("FAKE")], text


@dataclass
class Team:
    app: App
    config: Path

    def cli(self, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
        return run(capsys, self.app.store.workspace, "--config", str(self.config), *argv)


@pytest.fixture
def team(tmp_path: Path, redis_client: RedisClient, workspace: str) -> Team:
    """A person's "Use this" on a decision waits for one approver."""
    config = approval_config(tmp_path, "{people: true}")
    return Team(build_app(workspace, config, client=redis_client), config)


def said_in_chat(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, team: Team, *lines: str
) -> tuple[str, str]:
    """``lines`` typed into ``deliberate console`` (piped): what it printed."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    code, out, err = team.cli(capsys, "console", "--session", "s1")
    assert code == 0, err
    return out, err


def test_chat_text_reaches_proposals_as_text(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, team: Team
) -> None:
    out, err = said_in_chat(capsys, monkeypatch, team, IDEA, "/click 1")
    assert not obeyed(out + err) and "\\u001b[2J" in out, out
    [proposal] = team.app.gateway.proposals.listed()
    words = str(proposal.mutation.value)  # kept as said (blanks run together: a candidate's)
    assert all(c in words for c in ("\x1b[2J", "\x1b]0;title\x07", "\u202e", "\x9b", "\x7f"))
    code, out, err = team.cli(capsys, "proposals")
    assert code == 0 and not obeyed(out + err), out
    no_fake_lines(out)
    [block] = [out.splitlines()]
    assert len(block) == 4 and all(line.startswith("  ") for line in block[1:]), out
    # each control shown as its escape, on the proposal's one line
    assert "= postgres \\u001b[2J\\u001b]0;title\\u0007 FAKE: committed by admin FAKE" in block[0]
    assert "\\u202e olleh \\u009b31m red\\u007f \\u001b[8m hidden" in block[0]
    code, out, err = team.cli(capsys, "proposals", "--json")
    assert code == 0 and not obeyed(out + err), out
    assert json.loads(out)["mutation"]["value"] == proposal.mutation.value  # exactly


def test_a_reason_and_a_discard_reason_stay_on_their_lines(
    capsys: pytest.CaptureFixture[str], team: Team
) -> None:
    gateway = team.app.gateway
    for n in (1, 2):
        gateway.propose(mutation("set", f"decision.d{n}", f"v{n}", "user:ann", reason=PAYLOAD))
    first, second = gateway.proposals.listed()
    gateway.discard_proposal(first.id, actor("user:bob"), reason=PAYLOAD)
    code, out, err = team.cli(capsys, "proposals", "--all")
    assert code == 0 and not obeyed(out + err), out
    no_fake_lines(out)
    blocks = out.strip().split("\n\n")
    assert [len(b.splitlines()) for b in blocks] == [4, 4], out
    assert second.id in out


def test_the_log_state_trace_and_why_show_the_words_as_text(
    capsys: pytest.CaptureFixture[str], team: Team
) -> None:
    key, value = "entity.task.words", {"text": PAYLOAD}
    ann = actor("admin:ann")
    done = team.app.gateway.propose(mutation("set", key, value, ann, reason=PAYLOAD))
    assert isinstance(done, Committed), done
    corr = done.mutation.correlation_id
    again = ["state", "set", key, json.dumps(value), "--actor", "admin:ann"]
    for argv in (
        ["log"],
        ["log", "--json"],
        ["state", "get", key],
        ["state", "get", key, "--json"],
        ["state", "list", "entity"],
        [*again, "--reason", PAYLOAD],
        [*again, "--expected-version", "1"],  # a conflict: the latest entry
        ["trace", corr],
        ["trace", corr, "--json"],
        ["why", key],
        ["why", key, "--json"],
    ):
        code, out, err = team.cli(capsys, *argv)
        assert code in (0, 1) and out, (argv, err)
        assert not obeyed(out + err), (argv, out)
        no_fake_lines(out)
        if "--json" in argv:  # the words exactly, in the value and the reason
            assert PAYLOAD in strings([json.loads(line) for line in out.splitlines()]), argv


def test_an_error_naming_what_was_typed_is_text_too(
    capsys: pytest.CaptureFixture[str], workspace: str
) -> None:
    """Whatever prints, it goes through the cleaned streams: a configuration error naming a
    file printed the name as it was typed."""
    path = "/nonexistent/\x1b[2J\x1b]0;title\x07x.yaml"
    code, out, err = run(capsys, workspace, "--config", path, "state", "list")
    assert code == 2 and "x.yaml: cannot read" in err and not obeyed(out + err), err


def test_an_id_that_names_nothing_stays_on_its_line(
    capsys: pytest.CaptureFixture[str], team: Team
) -> None:
    """An id pasted with a line break in it (from a chat message) drew a line of its own
    under "nothing has correlation id"."""
    code, out, err = team.cli(capsys, "trace", f"abc{PAYLOAD}")
    assert code == 1 and not obeyed(out + err), out
    no_fake_lines(out)
    assert out.startswith("nothing has correlation id abc\\u001b[2J") and len(out.splitlines()) == 1


def test_a_coloured_console_keeps_its_colours_and_no_one_elses(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, team: Team
) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    tty = Tty()
    monkeypatch.setattr(sys, "stdout", tty)
    said_in_chat(capsys, monkeypatch, team, IDEA, "/click 99")
    shown = tty.getvalue()
    painted = set(COLOUR.findall(shown))
    assert "\x1b[31m" in painted and "\x1b[1;33m" in painted, shown  # an error, the candidate
    assert "\x1b[8m" not in painted  # the words' own colour (conceal) is shown, not obeyed
    assert not obeyed(COLOUR.sub("", shown)), shown
    assert "\\u001b[8m hidden" in shown
