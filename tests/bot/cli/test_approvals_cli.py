"""``deliberate proposals approve|reject|breakglass``, through the real CLI on a real Redis and
the real gateway: the person is ``local:NAME`` with the roles the config binds to it, and each
decision meets the checks a click meets (roles, quorum, four eyes, the revision read, the
break-glass role and reason). The attacks: the requester approving their own, someone without
the role, an unknown or hostile id, a stale revision, a name that is no name, a missing
reason; each changes nothing. Two processes approving at once commit once."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis import Redis

from bot.app import App, build_app
from bot.chat.people import local_name
from bot.cli.approvals import AS_ENV, ProposalRef, proposal_ref
from core.gateway.break_glass import BreakGlass
from core.gateway.edits import Edit
from core.gateway.outcome import Pending, Proposal, ProposalStatus
from tests.bot.cli.process import run
from tests.conftest import write_config
from tests.factories import actor, mutation

CONFIG = """
roles:
  moderator:
    members: ["local:lena", "local:omar"]
  oncall:
    members: ["local:ina"]
policy:
  break_glass: {role: oncall}
  keys:
    - pattern: "ops.*"
      type: string
      protected: true
      approval: {people: true, four_eyes: true}
    - pattern: "pair.*"
      type: string
      approval: {people: true, quorum: 2, four_eyes: true}
    - pattern: "open.*"
      type: string
      approval: {people: true}
"""


@pytest.fixture
def config(tmp_path: Path) -> str:
    return str(write_config(tmp_path, CONFIG))


@pytest.fixture
def team(config: str, redis_client: Redis, workspace: str) -> App:
    return build_app(workspace, Path(config), client=redis_client)


@pytest.fixture(autouse=True)
def _nobody_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """Who runs the tests is nobody here: each test names its person."""
    monkeypatch.delenv(AS_ENV, raising=False)


def cli(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, *argv: str
) -> tuple[int, str, str]:
    return run(capsys, workspace, "--config", config, *argv)


def asked(app: App, key: str, who: str = "user:al") -> Proposal:
    """``who``'s own write of ``key``, waiting for approval."""
    waiting = app.gateway.propose(mutation("set", key, "asked", who))
    assert isinstance(waiting, Pending), waiting
    return waiting.proposal


def status(app: App, proposal_id: str) -> ProposalStatus:
    found = app.gateway.proposals.get(proposal_id)
    assert found is not None
    return found.status


def test_a_member_bound_to_the_role_approves_and_it_commits(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, team: App
) -> None:
    p = asked(team, "ops.mode", "moderator:max")
    code, out, err = cli(capsys, workspace, config, "proposals", "approve", p.id, "--as", "zed")
    assert (code, out) == (2, "")  # zed is no person the config names: not counted at all
    assert err == (
        "deliberate: --as: local:zed is bound to no role (roles: ROLE: members: [local:zed] "
        "in the config): the command line decides as a person the config names; nothing was "
        "changed\n"
    )
    code, out, err = cli(capsys, workspace, config, "proposals", "approve", p.id, "--as", "ina")
    assert (code, err) == (1, "")  # ina is on call, no moderator: refused, and why
    assert out == "Not done: ops.mode is protected: only a moderator or an admin may change it\n"
    assert status(team, p.id) is ProposalStatus.PENDING and len(team.log) == 0
    code, out, err = cli(
        capsys, workspace, config, "proposals", "approve", p.id, "--as", "local:lena"
    )
    assert (code, err) == (0, "")
    assert out == 'Committed: set ops.mode "asked" (v1)\n'
    [record] = team.log.latest(5)
    assert record.mutation.actor.identity == "local:lena"
    assert str(record.mutation.actor) == "moderator:lena"  # the bound role names the kind
    assert record.mutation.meta["approvedBy"] == ["moderator:lena"]
    assert status(team, p.id) is ProposalStatus.APPLIED


def test_the_requester_approving_their_own_is_refused(
    capsys: pytest.CaptureFixture[str],
    workspace: str,
    config: str,
    team: App,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--actor user:lena`` asked for it; lena, the moderator, is the same person here."""
    p = asked(team, "pair.mode", "user:lena")
    monkeypatch.setenv(AS_ENV, "lena")  # no --as: who $DELIBERATE_AS names
    code, out, _ = cli(capsys, workspace, config, "proposals", "approve", p.id)
    assert code == 1
    assert out == ("Not done: moderator:lena asked for this change: someone else must approve it\n")
    kept = team.gateway.proposals.get(p.id)
    assert kept is not None and kept.status is ProposalStatus.PENDING and kept.approvals == []
    assert len(team.log) == 0


def test_without_as_or_the_variable_the_person_is_the_login_name(
    capsys: pytest.CaptureFixture[str],
    workspace: str,
    config: str,
    team: App,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    p = asked(team, "pair.mode")
    monkeypatch.setenv("LOGNAME", "omar")  # (what getpass reads first)
    code, out, _ = cli(capsys, workspace, config, "proposals", "approve", p.id)
    assert code == 0 and "approved by moderator:omar (1 of 2)" in out
    monkeypatch.setenv("LOGNAME", "not a name")
    code, out, err = cli(capsys, workspace, config, "proposals", "approve", p.id)
    assert code == 2 and out == ""
    assert err.startswith("deliberate: your user name on this machine: 'not a name' is not")
    kept = team.gateway.proposals.get(p.id)
    assert kept is not None and [str(a.by) for a in kept.approvals] == ["moderator:omar"]


def test_two_approvals_needed_the_first_waits_and_the_second_commits(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, team: App
) -> None:
    p = asked(team, "pair.db")
    argv = ("proposals", "approve", p.id, "--as", "lena", "--reason", "looks right")
    code, out, _ = cli(capsys, workspace, config, *argv)
    assert code == 0
    assert out == (
        "set pair.db = asked: approved by moderator:lena (1 of 2); awaits 1 more approval\n"
    )
    kept = team.gateway.proposals.get(p.id)
    assert kept is not None and [a.reason for a in kept.approvals] == ["looks right"]
    assert team.store.version("pair.db") == 0
    code, out, _ = cli(capsys, workspace, config, "proposals")
    assert 'approvals 1 of 2 (moderator:lena "looks right"); four eyes' in out
    code, out, _ = cli(capsys, workspace, config, *argv)  # again: one person counts once
    assert code == 0 and "(1 of 2); awaits 1 more approval" in out
    # a name nobody bound is not a second person: one operator cannot make up a quorum
    code, out, _ = cli(capsys, workspace, config, "proposals", "approve", p.id, "--as", "bea")
    assert (code, out) == (2, "")
    assert team.store.version("pair.db") == 0
    code, out, _ = cli(
        capsys, workspace, config, "proposals", "approve", p.id, "--as", "omar", "--json"
    )
    assert code == 0
    said = json.loads(out)
    assert said["outcome"] == "committed" and said["status"] == "applied"
    assert said["approvals"] == ["moderator:lena", "moderator:omar"] and said["quorum"] == 2
    assert said["as"] == "moderator:omar" and said["version"] == 1
    assert team.store.get("pair.db").value == "asked"  # type: ignore[union-attr]


def test_reject_ends_it_with_its_reason(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, team: App
) -> None:
    p = asked(team, "open.plan")
    argv = ("proposals", "reject", p.id, "--as", "omar", "--reason", "not this week")
    code, out, _ = cli(capsys, workspace, config, *argv)
    assert (code, out) == (0, "Discarded proposal: set open.plan = asked (not this week)\n")
    kept = team.gateway.proposals.get(p.id)
    assert kept is not None and kept.status is ProposalStatus.DISCARDED
    assert kept.reason == "not this week" and str(kept.resolved_by) == "moderator:omar"
    code, out, _ = cli(capsys, workspace, config, "proposals", "approve", p.id, "--as", "lena")
    assert code == 1 and out.startswith("Not done: this proposal was discarded by moderator:omar")
    assert team.store.version("open.plan") == 0 and len(team.log) == 0


@pytest.mark.parametrize(
    "named", ["01NOSUCHPROPOSAL", "nope@3", "\x1b[2J\x1b]0;owned\x07", "x" * 129, "a b"]
)
@pytest.mark.parametrize("verb", ["approve", "reject"])
def test_an_unknown_or_hostile_id_is_exit_2_in_one_line_and_changes_nothing(
    capsys: pytest.CaptureFixture[str],
    workspace: str,
    config: str,
    team: App,
    named: str,
    verb: str,
) -> None:
    p = asked(team, "open.plan")
    code, out, err = cli(capsys, workspace, config, "proposals", verb, named, "--as", "lena")
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "\x1b" not in err and "\x07" not in err, err
    assert "nothing was changed" in err or "is not a proposal id" in err
    assert status(team, p.id) is ProposalStatus.PENDING and len(team.log) == 0


def test_a_stale_revision_is_refused_and_the_one_read_now_counts(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, team: App
) -> None:
    p = asked(team, "pair.db")
    edited = team.gateway.apply_proposal(  # bea's value instead: revision 1, no approval
        p.id, actor("user:bea"), edit=Edit(value="edited"), revision=0
    )
    assert isinstance(edited, Pending)
    code, out, _ = cli(capsys, workspace, config, "proposals")
    assert "edited by user:bea (proposed: asked), revision 1" in out
    code, out, _ = cli(
        capsys, workspace, config, "proposals", "approve", f"{p.id}@0", "--as", "lena"
    )
    assert code == 1
    assert out == (
        "Not done: this proposal was edited by user:bea since you saw it: it now reads set "
        "pair.db = edited; nothing was changed\n"
    )
    # the id alone is the value as first proposed: the edit is not approved unseen
    code, out, _ = cli(capsys, workspace, config, "proposals", "approve", p.id, "--as", "lena")
    assert code == 1 and out.startswith("Not done: this proposal was edited by user:bea since")
    kept = team.gateway.proposals.get(p.id)
    assert kept is not None and kept.approvals == [] and kept.revision == 1
    code, out, _ = cli(
        capsys, workspace, config, "proposals", "approve", f"{p.id}@1", "--as", "lena"
    )
    assert code == 0 and "approved by moderator:lena (1 of 2)" in out


@pytest.mark.parametrize("reason", ["", "   ", "\u200b\u2060", None])
def test_break_glass_without_a_reason_is_refused_and_changes_nothing(
    capsys: pytest.CaptureFixture[str],
    workspace: str,
    config: str,
    team: App,
    reason: str | None,
) -> None:
    p = asked(team, "pair.db")
    given_reason = [] if reason is None else ["--reason", reason]
    argv = ("proposals", "breakglass", p.id, "--as", "ina", *given_reason)
    code, out, err = cli(capsys, workspace, config, *argv)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "--reason" in err if reason is None else "breaking the glass needs a reason" in err
    assert status(team, p.id) is ProposalStatus.PENDING and len(team.log) == 0


def test_break_glass_with_a_reason_commits_and_is_recorded_as_break_glass(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, team: App
) -> None:
    p = asked(team, "pair.db")
    argv = ("proposals", "breakglass", p.id, "--reason", "the stream is down")
    code, out, _ = cli(capsys, workspace, config, *argv, "--as", "lena")  # no oncall role
    assert code == 1 and "moderator:lena does not hold the oncall role" in out
    code, out, _ = cli(capsys, workspace, config, *argv, "--as", "ina")
    assert code == 0
    assert out == (
        'Break-glass apply. Committed: set pair.db "asked" (v1); reason: the stream is down\n'
    )
    [record] = team.log.latest(5)
    assert record.mutation.meta["breakGlass"] == {"by": "user:ina", "reason": "the stream is down"}
    assert record.mutation.actor.roles == ("oncall",)
    [listed] = BreakGlass(team.gateway).listed()
    assert listed["proposal"] == p.id and listed["reason"] == "the stream is down"
    code, out, _ = cli(capsys, workspace, config, "proposals", "--break-glass")
    assert "by user:ina: the stream is down" in out


@pytest.mark.parametrize("name", ["bad name", "lena\x1b[31m", "", "local:", "-dash", "é" * 3])
def test_a_name_that_is_no_name_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
    workspace: str,
    config: str,
    team: App,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
) -> None:
    p = asked(team, "open.plan")
    code, out, err = cli(capsys, workspace, config, "proposals", "approve", p.id, f"--as={name}")
    assert code == 2 and out == "" and "argument --as" in err and "e.g. lena" in err
    monkeypatch.setenv(AS_ENV, name or " ")
    code, out, err = cli(capsys, workspace, config, "proposals", "approve", p.id)
    assert code == 2 and out == "" and err.startswith(f"deliberate: ${AS_ENV}: ")
    assert status(team, p.id) is ProposalStatus.PENDING and len(team.log) == 0


def test_approvals_racing_from_two_processes_commit_once(
    config: str, team: App, workspace: str
) -> None:
    """Lena and Omar approve at once, each from a process of their own, round after round:
    one commit each round, the other told it was committed (or is being), never twice."""
    env = {k: v for k, v in os.environ.items() if k != AS_ENV}
    deliberate = [sys.executable, "-m", "bot.main", "--workspace", workspace, "--config", config]
    for n in range(3):
        p = asked(team, f"ops.n{n}", "moderator:max")
        runs = [
            subprocess.Popen(
                [*deliberate, "proposals", "approve", p.id, "--as", who, "--json"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for who in ("lena", "omar")
        ]
        answers = [json.loads(r.communicate(timeout=120)[0]) for r in runs]
        assert sorted(r.returncode for r in runs)[0] == 0, answers
        fresh = [a for a in answers if a["outcome"] == "committed" and not a["duplicate"]]
        assert len(fresh) == 1, answers
        assert len(team.log.latest(10, key=f"ops.n{n}")) == 1, n
        assert status(team, p.id) is ProposalStatus.APPLIED


@given(
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=60),
    st.one_of(st.none(), st.integers(0, 10**9 - 1)),
)
def test_an_id_and_its_revision_read_back_as_typed(named: str, revision: int | None) -> None:
    """Any id a proposal may have, with or without ``@REVISION``, reads back as it is; an id
    ending in ``@digits`` is read as one with a revision (as chat reads it)."""
    typed = named if revision is None else f"{named}@{revision}"
    ref = proposal_ref(typed)
    head, at, tail = named.rpartition("@")
    if revision is None and at and head and tail.isdigit():
        assert ref.revision is not None  # (it looks like one: ID@REVISION)
    elif revision is None:
        assert ref == ProposalRef(named, None)
    else:
        assert ref == ProposalRef(named, revision)


@given(st.text(max_size=80))
def test_any_text_is_a_name_or_a_clear_refusal(text: str) -> None:
    try:
        name = local_name(text)
    except ValueError as exc:
        assert str(exc).startswith(f"{text!r} is not a person's name here") and "e.g. lena" in str(
            exc
        )
        return
    assert name == text.removeprefix("local:") and name.isascii() and name.isprintable()
    assert " " not in name and ":" not in name and 1 <= len(name) <= 64


@given(st.text(max_size=200))
def test_any_text_is_a_proposal_or_a_clear_usage_error(text: str) -> None:
    try:
        ref = proposal_ref(text)
    except argparse.ArgumentTypeError as exc:
        assert "is not a proposal id" in str(exc) or "is not one a proposal has" in str(exc)
        return
    assert ref.id.isascii() and ref.id.isprintable() and " " not in ref.id
    assert 1 <= len(ref.id) <= 128
    if ref.revision is None:
        assert text == ref.id
    else:
        head, _, tail = text.rpartition("@")
        assert head == ref.id and int(tail) == ref.revision
