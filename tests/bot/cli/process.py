"""The ``deliberate`` command run in this process, as a person would type it: its exit code
and what it printed. A test about what a command prints and does runs it here; one about the
process itself (signals, start-up, a terminal, two at once) starts a real one."""

from __future__ import annotations

import io
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import pytest

from bot.main import main

__all__ = ["Ran", "command", "run"]

# the warnings Python's default filters keep from a process's stderr (outside ``__main__``)
_UNSHOWN = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def _called(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse usage errors, sys.exit("...")
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)  # what Python does with it at exit
            return 1
        return int(exc.code or 0)


def run(capsys: pytest.CaptureFixture[str], workspace: str, *argv: str) -> tuple[int, str, str]:
    code = _called(["--workspace", workspace, *argv])
    out, err = capsys.readouterr()
    return code, out, err


@dataclass(frozen=True)
class Ran:
    """What a command did, named as ``subprocess.CompletedProcess`` names it."""

    returncode: int
    stdout: str
    stderr: str


def command(
    capsys: pytest.CaptureFixture[str],
    *argv: str,
    env: Mapping[str, str | None] | None = None,
    stdin: str | None = None,
) -> Ran:
    """``deliberate ARGV`` with ``env`` on top of this process's environment (``None``: the
    variable unset) and ``stdin`` as its standard input, all as they were afterwards."""
    capsys.readouterr()  # only this command's words
    with pytest.MonkeyPatch.context() as patch:
        for name, value in (env or {}).items():
            if value is None:
                patch.delenv(name, raising=False)
            else:
                patch.setenv(name, value)
        if stdin is not None:
            patch.setattr(sys, "stdin", io.StringIO(stdin))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code = _called(list(argv))
    out, err = capsys.readouterr()
    return Ran(code, out, err + _as_a_process_shows(caught))


def _as_a_process_shows(caught: list[warnings.WarningMessage]) -> str:
    """The warnings a real process would have printed on its stderr at the end of ``err``
    (pytest would keep them for its summary): each place's first, as Python's default
    filters show them, ``bot.main``'s own deprecations too, as it runs as ``__main__``."""
    shown: dict[tuple[object, ...], str] = {}
    for w in caught:
        main_module = w.filename.endswith("bot/main.py")
        if issubclass(w.category, _UNSHOWN) and not main_module:
            continue
        where = (w.category, str(w.message), w.filename, w.lineno)
        shown.setdefault(
            where, warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line)
        )
    return "".join(shown.values())
