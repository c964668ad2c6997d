"""The command line masks the values of secret keys as ``(secret)``, as every other reader
does: ``state get|list`` (``--at`` and ``--json`` too), a write's committed line and a
conflict's ``latest:``, ``log`` and ``log --json``, ``proposals`` and ``--json``, ``revert``,
``replay --verify``'s differences, a proposal's trace and the console's ``/state``.
``--reveal`` shows them, and says so on stderr in one line. Run in this process, on a real
Redis; each value is written through the gateway as an admin or an agent would."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.app import App, build_app
from bot.console import Console
from bot.main import REVEALING
from core.gateway.edits import Edit
from core.gateway.outcome import SECRET, Pending
from core.redis.client import RedisClient
from core.state.commit_result import Committed
from tests.bot.cli.process import run
from tests.conftest import write_config
from tests.factories import actor, mutation
from tests.rules.rig import config_text

KEYS = """\
    - pattern: "vault.n"
      type: integer
      secret: true
      writers: [admin, system]
    - pattern: "vault.*"
      type: string
      secret: true
      agent: propose
      writers: [moderator, admin, system]
"""
ADMIN = "admin:root"
FIRST, NOW, ASKED, NUMBER = "Zq-first-hunter2", "Zq-now-s3cr3t", "Zq-asked-0pen", 987654321
SECRETS = (FIRST, NOW, ASKED, str(NUMBER))
PLAIN = "plain-for-all"  # a key that is not secret shows its value either way


@dataclass
class Vault:
    app: App
    config: str
    first_log_id: str  # the record that set vault.token to FIRST
    proposal_id: str  # the agent's proposal of vault.asked = ASKED

    def cli(self, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
        return run(capsys, self.app.store.workspace, "--config", self.config, *argv)


@pytest.fixture
def vault(tmp_path: Path, redis_client: RedisClient, workspace: str) -> Vault:
    config = write_config(tmp_path, config_text("  []\n", keys=KEYS))
    app = build_app(workspace, config, client=redis_client)
    admin, gateway = actor(ADMIN), app.gateway
    first = gateway.propose(mutation("set", "vault.token", FIRST, admin, reason="rotate"))
    assert isinstance(first, Committed), first
    for key, value in (("vault.token", NOW), ("vault.n", NUMBER), ("test.plain", PLAIN)):
        assert isinstance(gateway.propose(mutation("set", key, value, admin)), Committed)
    asked = gateway.propose(mutation("set", "vault.asked", ASKED, "agent:assistant"))
    assert isinstance(asked, Pending), asked
    return Vault(app, str(config), first.log_id, asked.proposal.id)


def leaked(text: str) -> list[str]:
    return [value for value in SECRETS if value in text]


def revealed(err: str) -> bool:
    """stderr says, in its one line, that secret values are shown."""
    return err.splitlines().count(REVEALING) == 1


# each read, and the secret values it shows with --reveal
READS: list[tuple[Sequence[str], Sequence[str]]] = [
    (["state", "get", "vault.token"], [NOW]),
    (["state", "get", "vault.token", "--json"], [NOW]),
    (["state", "get", "vault.token", "--at", "{first}"], [FIRST]),
    (["state", "get", "vault.token", "--at", "{first}", "--json"], [FIRST]),
    (["state", "get", "vault.n"], [str(NUMBER)]),
    (["state", "list", "vault"], [NOW, str(NUMBER)]),
    (["state", "list", "--json"], [NOW, str(NUMBER)]),
    (["state", "list", "vault", "--at", "{first}"], [FIRST]),
    (["state", "list", "--at", "{first}", "--json"], [FIRST]),
    (["log"], [FIRST, NOW, str(NUMBER)]),
    (["log", "--json"], [FIRST, NOW, str(NUMBER)]),
    (["log", "--key", "vault.token"], [FIRST, NOW]),
    (["proposals"], [ASKED]),
    (["proposals", "--json"], [ASKED]),
    (["proposals", "--all"], [ASKED]),
]


@pytest.mark.parametrize(("argv", "secrets"), READS, ids=[" ".join(a) for a, _ in READS])
def test_a_read_masks_secret_values_and_reveal_shows_them(
    capsys: pytest.CaptureFixture[str], vault: Vault, argv: list[str], secrets: list[str]
) -> None:
    argv = [a.format(first=vault.first_log_id) for a in argv]
    code, out, err = vault.cli(capsys, *argv)
    assert code == 0, err
    assert not leaked(out + err), (out, err)
    assert SECRET in out and not revealed(err)
    code, out, err = vault.cli(capsys, *argv, "--reveal")
    assert code == 0 and revealed(err), err
    assert all(value in out for value in secrets), out
    if "--json" in argv:  # stdout stays JSON, one object a line
        assert all(json.loads(line) for line in out.splitlines() if not line.startswith("as of"))


def test_a_key_that_is_not_secret_shows_its_value_without_reveal(
    capsys: pytest.CaptureFixture[str], vault: Vault
) -> None:
    for argv in (["state", "get", "test.plain"], ["state", "list", "test"], ["log"]):
        code, out, err = vault.cli(capsys, *argv)
        assert code == 0 and PLAIN in out and not revealed(err), out


def test_state_get_reads_the_policy_of_the_config_it_is_given(
    capsys: pytest.CaptureFixture[str], vault: Vault
) -> None:
    """``state get`` loads the config's policy alone (not the app): the workspace's
    ``--config`` decides, and a broken config is a configuration error before anything is
    read, never a value shown."""
    broken = Path(vault.config).with_name("broken.yaml")
    broken.write_text("policy: {keys: [{pattern: 'vault.*', secret: maybe}]}\n", encoding="utf-8")
    code, out, err = run(
        capsys, vault.app.store.workspace, "--config", str(broken), "state", "get", "vault.token"
    )
    assert code == 2 and "configuration error" in err and not leaked(out + err)
    # --reveal needs no policy: the broken config is not even read
    code, out, err = run(
        capsys,
        vault.app.store.workspace,
        "--config",
        str(broken),
        "state",
        "get",
        "vault.token",
        "--reveal",
    )
    assert code == 0 and NOW in out and revealed(err)


WRITES = [
    (["state", "set", "vault.token", "Zq-next-value", "--actor", ADMIN], "Zq-next-value", 0),
    (
        ["state", "set", "vault.token", "Zq-next-value", "--actor", ADMIN, "--json"],
        "Zq-next-value",
        0,
    ),
    (["state", "incr", "vault.n", "--actor", ADMIN], str(NUMBER + 1), 0),
    (["state", "incr", "vault.n", "--actor", ADMIN, "--json"], str(NUMBER + 1), 0),
    # a conflict: its latest entry
    (["state", "set", "vault.token", "x", "--actor", ADMIN, "--expected-version", "1"], NOW, 1),
    (
        ["state", "set", "vault.token", "x", "--actor", ADMIN, "--expected-version", "1", "--json"],
        NOW,
        1,
    ),
    # an agent's write waits: the proposal's summary
    (
        ["state", "set", "vault.other", "Zq-agent-asks", "--actor", "agent:assistant"],
        "Zq-agent-asks",
        0,
    ),
]


@pytest.mark.parametrize(
    ("argv", "value", "exit_code"), WRITES, ids=[" ".join(w[0]) for w in WRITES]
)
@pytest.mark.parametrize("reveal", [False, True], ids=["masked", "revealed"])
def test_a_write_masks_what_it_committed_or_met(
    capsys: pytest.CaptureFixture[str],
    vault: Vault,
    argv: list[str],
    value: str,
    exit_code: int,
    reveal: bool,
) -> None:
    code, out, err = vault.cli(capsys, *argv, *(["--reveal"] if reveal else []))
    assert code == exit_code, (out, err)
    assert (value in out) is reveal, out
    assert revealed(err) is reveal
    if not reveal:
        assert SECRET in out and not leaked(out + err), out


def test_an_edited_proposals_value_as_proposed_is_masked_too(
    capsys: pytest.CaptureFixture[str], vault: Vault
) -> None:
    """A moderator applies the agent's proposal with a value of their own: the entry and the
    log keep the value it was proposed with (``proposedValue``), shown as ``(secret)`` too."""
    edited = "Zq-edited-by-mia"
    done = vault.app.gateway.apply_proposal(
        vault.proposal_id, actor("moderator:mia"), edit=Edit(edited), revision=0
    )
    assert isinstance(done, Committed), done
    for argv in (
        ["state", "get", "vault.asked", "--json"],
        ["state", "list", "vault", "--json"],
        ["log", "--json"],
        ["proposals", "--all"],
        ["proposals", "--all", "--json"],
    ):
        code, out, err = vault.cli(capsys, *argv)
        assert code == 0 and not leaked(out + err) and edited not in out, (argv, out)
    code, out, err = vault.cli(capsys, "state", "get", "vault.asked", "--json", "--reveal")
    meta = json.loads(out)["meta"]
    assert code == 0 and meta["proposedValue"] == ASKED and json.loads(out)["value"] == edited


def test_revert_masks_what_it_restored_and_what_the_key_holds_now(
    capsys: pytest.CaptureFixture[str], vault: Vault
) -> None:
    second = vault.app.log.latest(10, key="vault.token")[-1].mutation.id
    code, out, err = vault.cli(capsys, "revert", second, "--actor", ADMIN)
    assert code == 0 and "restored vault.token = " in out and not leaked(out + err), out
    again = vault.app.log.latest(10, key="vault.token")[0].mutation.id  # moved on since
    code, out, err = vault.cli(capsys, "revert", again, "--actor", ADMIN)
    assert code == 1 and "  now: vault.token = " in out and not leaked(out + err), out
    code, out, err = vault.cli(capsys, "revert", again, "--actor", ADMIN, "--reveal")
    assert code == 1 and f'now: vault.token = "{FIRST}"' in out and revealed(err), out


def test_replay_verify_masks_the_values_of_a_secret_key_that_differs(
    capsys: pytest.CaptureFixture[str], vault: Vault
) -> None:
    entry = vault.app.store.keys.entry("vault.token")
    vault.app.redis.hset(entry, "value", json.dumps("Zq-planted-value"))
    code, out, err = vault.cli(capsys, "replay", "--verify")
    assert code == 1 and "MISMATCH" in out and "vault.token" in out, out
    assert not leaked(out + err) and "Zq-planted-value" not in out
    code, out, err = vault.cli(capsys, "replay", "--verify", "--reveal")
    assert code == 1 and "Zq-planted-value" in out and NOW in out and revealed(err), out


def test_a_proposals_trace_masks_its_value(
    capsys: pytest.CaptureFixture[str], vault: Vault
) -> None:
    """``trace PROPOSAL_ID`` began with the proposal's own lines, its value in clear."""
    for json_flag in ([], ["--json"]):
        code, out, err = vault.cli(capsys, "trace", vault.proposal_id, *json_flag)
        assert code == 0 and vault.proposal_id in out, err
        assert not leaked(out + err), out


def test_the_consoles_state_masks_secret_values(vault: Vault) -> None:
    for as_json in (False, True):
        said: list[str] = []
        runtime = vault.app.runtime(use_env=False)
        console = Console(runtime, "s1", actor("user:ann"), said.append, as_json=as_json)
        console.handle("/state vault")
        assert said and not leaked("\n".join(said)) and SECRET in said[0], said


def test_the_reveal_flag_says_what_it_does(
    capsys: pytest.CaptureFixture[str], vault: Vault
) -> None:
    for argv in (
        ["state", "get"],
        ["state", "list"],
        ["state", "set"],
        ["log"],
        ["proposals"],
        ["revert"],
        ["replay"],
    ):
        code, out, _ = vault.cli(capsys, *argv, "--help")
        assert code == 0 and "--reveal" in out and "(secret)" in out, argv
