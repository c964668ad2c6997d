"""The ``deliberate`` command run in this process, as a person would type it: its exit code
and what it printed."""

from __future__ import annotations

import pytest

from bot.main import main


def run(capsys: pytest.CaptureFixture[str], workspace: str, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["--workspace", workspace, *argv])
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err
