"""The ```console blocks of the README and of ``docs/``, run as a reader would run them.

A block is a shell session: each ``$ `` line is a command (``> `` lines right after it
continue it, as the shell prompts for a here-document's lines), the lines after it until the
next ``$ `` are what it prints (standard output and standard error, as a terminal shows both). A
block runs in one ``bash`` of its own, in an empty directory with a data directory of its own
(``DELIBERATE_HOME``, no ``REDIS_URL``: the embedded Redis a new user gets), so a variable set
by one command is there for the next. What changes from run to run (ids, clocks, log ids) is
written as it came out once and compared by its shape: ``normalise`` turns both sides into
the same placeholders. Blocks fenced as ``sh`` are shown, never run (they need Slack, Discord
or a model key)."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Block", "blocks_of", "normalise", "run_block"]

ROOT = Path(__file__).resolve().parents[2]
PROMPT = "$ "
MORE = "> "  # a command's next line (a here-document), as the shell prompts for it
_FENCE = re.compile(r"^```console\s*$")

# what differs between two runs of the same command, as (pattern, placeholder), in order
_VARIABLE = (
    (re.compile(r"\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z?"), "<time>"),
    (re.compile(r"\b\d\d:\d\d:\d\d\.\d{3}\b"), "<clock>"),
    (re.compile(r"\b\d{13}-\d+\b"), "<log-id>"),
    (re.compile(r"\b[0-9a-f]{12,64}\b"), "<id>"),
    (re.compile(r"\b(pid|uptime|memory)\b[ :=]+\S+"), r"\1 <n>"),
    (re.compile(r"[0-9.]+ ?(ms|µs|s)\b"), "<duration>"),
    (re.compile(r"\b[0-9][0-9,]* records/s\b"), "<n> records/s"),
)


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    commands: list[tuple[str, str]]  # (command, what it prints)

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks_of(path: Path) -> list[Block]:
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    n = 0
    while n < len(lines):
        if not _FENCE.match(lines[n]):
            n += 1
            continue
        start, n = n + 1, n + 1
        commands: list[tuple[str, list[str]]] = []
        while n < len(lines) and lines[n].strip() != "```":
            if lines[n].startswith(PROMPT):
                commands.append((lines[n][len(PROMPT) :], []))
            elif commands and not commands[-1][1] and commands[-1][0].endswith("\\"):
                commands[-1] = (commands[-1][0] + "\n" + lines[n], [])  # a line went on
            elif lines[n].startswith(MORE) and commands and not commands[-1][1]:
                commands[-1] = (commands[-1][0] + "\n" + lines[n][len(MORE) :], [])
            elif commands:
                commands[-1][1].append(lines[n])
            else:
                raise ValueError(f"{path}:{n + 1}: a console block starts with '$ '")
            n += 1
        found.append(Block(path, start, [(c, "\n".join(out)) for c, out in commands]))
        n += 1
    return found


def normalise(text: str) -> str:
    lines = [line.rstrip() for line in text.strip("\n").splitlines()]
    said = "\n".join(lines)
    for pattern, placeholder in _VARIABLE:
        said = pattern.sub(placeholder, said)
    return said


def run_block(
    block: Block, workdir: Path, timeout: float = 120.0, commands: Path | None = None
) -> list[str]:
    """What each command of ``block`` printed, run in one bash in ``workdir``; with
    ``commands``, the ``deliberate`` of that directory first (``tests/docs/forked.py``)."""
    marker = f"--- deliberate-docs {secrets.token_hex(8)} ---"
    script = ["set +e", "exec 2>&1", f"cd {str(workdir)!r}"]
    for command, _ in block.commands:
        script += [f"echo {marker!r}", command]
    script.append(f"echo {marker!r}")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("REDIS_", "DELIBERATE_", "SLACK_", "DISCORD_", "OPENAI_"))
    }
    bin_dirs = [*([str(commands)] if commands else []), str(Path(sys.executable).parent)]
    env |= {
        "PATH": ":".join([*bin_dirs, env.get("PATH", "")]),
        "DELIBERATE_HOME": str(workdir / ".deliberate"),
        "TZ": "UTC",
        "NO_COLOR": "1",
        "COLUMNS": "100",
        "HOME": str(workdir),
    }
    try:
        out = subprocess.run(
            ["bash", "--noprofile", "--norc", "-c", "\n".join(script)],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        ).stdout
    finally:
        subprocess.run(
            ["deliberate", "redis", "stop"],
            env=env,
            cwd=workdir,
            capture_output=True,
            timeout=60,
            check=False,
        )
    parts = out.split(marker + "\n")
    return [part.rstrip("\n") for part in parts[1:-1]]
