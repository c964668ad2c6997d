"""``local:`` members in the console: ``/as local:NAME`` and ``deliberate console --as NAME``
make NAME the person the config's ``roles:`` binds (``members: ["local:ina"]``), with those
roles, as a Slack or Discord member gets theirs; ``/as user:ina`` holds its kind alone. Real
Redis, the offline loop, the config read from a file. The break-glass role is the one that
tells them apart: only a holder may break the glass."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from bot.console import Console
from bot.main import main
from core.gateway.outcome import ProposalStatus
from tests.bot.test_console_lifecycle import KEY, approval_config, only_proposal, propose
from tests.factories import actor

ROLES = "  moderator:\n    members: []\n"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """The shipped config: a person's "Use this" on a decision waits for approval, the
    oncall role may break the glass, and ina (a person of this machine) holds it."""
    path = approval_config(tmp_path, "{people: true, break_glass: {role: oncall}}")
    text = path.read_text(encoding="utf-8")
    assert text.count(ROLES) == 1
    bound = ROLES + '  oncall:\n    members: ["local:ina"]\n'
    path.write_text(text.replace(ROLES, bound), encoding="utf-8")
    return path


@pytest.fixture
def team(config: Path, redis_client: Redis, workspace: str) -> App:
    return build_app(workspace, config, client=redis_client)


def console_of(app: App) -> tuple[Console, list[str]]:
    """A console as ``user:console``, with the config's role bindings, and what it said."""
    said: list[str] = []
    runtime = app.runtime(use_env=False)
    person = Console(runtime, "s1", actor("user:console"), said.append, roles=app.config.roles)
    return person, said


def test_as_local_name_takes_the_roles_the_config_binds(team: App) -> None:
    propose(team)
    person, said = console_of(team)
    person.handle("/show")
    apply = next(person.numbers.of(b) for b in person.buttons if b.action == "ApplyProposal")
    person.handle("/as user:ina")  # the kind's roles alone
    person.handle(f"/breakglass {apply} the stream is down")
    assert "user:ina does not hold the oncall role" in said[-1]
    assert team.store.version(KEY) == 0
    person.handle("/as local:ina")
    assert said[-1] == "(you are now user:ina)"
    assert person.actor.roles == ("oncall",) and person.actor.identity == "local:ina"
    person.handle(f"/breakglass {apply} the stream is down")
    assert "Break-glass apply. Committed:" in said[-1] and "(by user:ina)" in said[-1]
    proposal = team.gateway.proposals.get(only_proposal(team))
    assert proposal is not None and proposal.status is ProposalStatus.APPLIED
    [record] = team.log.latest(5)
    assert record.mutation.meta["breakGlass"] == {"by": "user:ina", "reason": "the stream is down"}


@pytest.mark.parametrize("bad", ["local:", "local:in a", "local:\x1b[2J", "local:" + "x" * 65])
def test_a_local_name_that_is_no_name_changes_nobody(team: App, bad: str) -> None:
    person, said = console_of(team)
    person.handle(f"/as {bad}")
    assert said[-1].startswith("! ") and "is not a person's name here" in said[-1]
    assert "\x1b" not in said[-1] and str(person.actor) == "user:console"


def test_console_as_name_from_the_command_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    config: Path,
    team: App,
    workspace: str,
) -> None:
    _, _, shown = propose(team)  # (in session s1, where its Apply keeps its number)
    lines = ["/show", f"/breakglass {shown['ApplyProposal']} the stream is down", "/quit"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    argv = ["--workspace", workspace, "--config", str(config), "console", "--session", "s1"]
    code = main([*argv, "--as", "ina"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "Break-glass apply. Committed:" in out and "(by user:ina)" in out
    [record] = team.log.latest(5)
    assert record.mutation.actor.roles == ("oncall",)
    assert record.mutation.actor.identity == "local:ina"
