"""What ``deliberate`` loads before it does anything: ``--help`` alone lists every command
without importing one, and a command that never converses starts without the loop."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from bot.commands import SUMMARIES
from bot.main import COMMANDS, listing, main, parser
from tests.bot.cli.process import run


def _loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
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
