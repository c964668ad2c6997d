"""The service files people copy (``docs/services/``: a systemd unit per process, the
environment they read) and the ``Procfile``, checked as far as this machine can without
running systemd: each unit is what ``systemd-analyze verify`` accepts, each command line is
one ``deliberate`` takes (its options included), and each variable of the environment file
is one the code reads."""

from __future__ import annotations

import configparser
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "docs" / "services"
UNITS = sorted(SERVICES.glob("*.service"))
INSTALLED = "/opt/deliberate/bin/deliberate"  # where the units expect the virtualenv
DELIBERATE = Path(sys.executable).with_name("deliberate")


def unit(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys keep their case
    parser.read(path, encoding="utf-8")
    return parser


def commands() -> list[tuple[str, list[str]]]:
    """Each place's ``deliberate`` command line: the units' ExecStart, the Procfile's lines."""
    found = [(p.name, shlex.split(unit(p)["Service"]["ExecStart"])) for p in UNITS]
    for line in (ROOT / "Procfile").read_text(encoding="utf-8").splitlines():
        name, _, command = line.partition(":")
        if command.strip():
            found.append((f"Procfile {name}", shlex.split(command)))
    return found


def test_there_is_a_unit_for_each_process_the_procfile_runs() -> None:
    procfile = {name.split()[1] for name, _ in commands() if name.startswith("Procfile")}
    assert {p.stem.removeprefix("deliberate-") for p in UNITS} == procfile


@pytest.mark.parametrize(("where", "argv"), commands(), ids=lambda v: str(v)[:40])
def test_each_command_line_is_one_deliberate_takes(where: str, argv: list[str]) -> None:
    assert Path(argv[0]).name == "deliberate", where
    # its options are read as written (argparse refuses an unknown one with exit 2), then
    # --help stops it before it serves
    ran = subprocess.run(
        [str(DELIBERATE), *argv[1:], "--help"], capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, f"{where}: {ran.stderr}"
    assert ran.stdout.startswith("usage: deliberate "), where


def test_systemd_accepts_the_units(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    assert analyze is not None, "systemd-analyze is missing: scripts/setup installs systemd"
    for path in UNITS:  # as installed, with this machine's deliberate and user
        text = path.read_text(encoding="utf-8").replace(INSTALLED, str(DELIBERATE))
        text = re.sub(r"^(User|Group)=.*$", r"\1=root", text, flags=re.M)
        (tmp_path / path.name).write_text(text, encoding="utf-8")
    ran = subprocess.run(
        [analyze, "verify", "--man=no", *sorted(map(str, tmp_path.glob("*.service")))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (ran.returncode, ran.stdout + ran.stderr) == (0, "")


def test_the_check_sees_a_unit_systemd_refuses(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    assert analyze is not None
    bad = tmp_path / "bad.service"
    bad.write_text("[Service]\nExecStart=/nonexistent/deliberate web\nRestart=sometimes\n")
    ran = subprocess.run([analyze, "verify", "--man=no", str(bad)], capture_output=True)
    assert ran.returncode != 0 or ran.stderr


def test_each_unit_reads_the_environment_file_and_restarts_on_failure() -> None:
    for path in UNITS:
        service = unit(path)["Service"]
        assert service["EnvironmentFile"] == "/etc/deliberate/env", path.name
        assert service["Restart"] == "on-failure", path.name
        assert service["ExecStart"].startswith(INSTALLED + " "), path.name


def test_every_variable_of_the_environment_file_is_one_the_code_reads() -> None:
    names = [
        line.partition("=")[0]
        for line in (SERVICES / "env.example").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    code = "\n".join(
        p.read_text(encoding="utf-8")
        for package in ("bot", "core", "rules", "connectors")
        for p in (ROOT / package).rglob("*.py")
    )
    assert names and [n for n in names if f'"{n}"' not in code] == []
