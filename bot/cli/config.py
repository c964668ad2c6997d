"""``deliberate config show``: the configuration the other commands load (the shipped defaults
with each ``--config`` file merged on top), as YAML; ``--origin`` ends each line with the
file and line its value came from. ``${NAME}`` references are shown as written, never their
values."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import yaml

from bot.commands import SUMMARIES
from bot.screen import json_safe
from core.config.core_config import CoreConfig
from core.config.layers import Where
from core.config.yaml_source import Located

__all__ = ["register", "render"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    config = commands.add_parser(
        "config",
        help=SUMMARIES["config"],
        description=__doc__,
    )
    sub = config.add_subparsers(dest="config_command", required=True, metavar="SUBCOMMAND")
    show = sub.add_parser(
        "show",
        help="print the merged configuration as YAML",
        description="The shipped defaults with each --config file (and what it includes) "
        "merged on top, as one YAML document that loads as it is; with --workspace, the "
        "config that holds there (its tenant's own sections merged on top).",
    )
    show.add_argument(
        "--origin", action="store_true", help="end each line with '# FILE:LINE' of its value"
    )
    show.add_argument("--json", action="store_true", help="one JSON object instead of YAML")
    show.set_defaults(handler=_show, offline=True)


def _show(config: CoreConfig, args: argparse.Namespace) -> int:
    located = config.for_workspace(args.workspace).located  # with its tenant's own sections
    assert located is not None  # a loaded config always has it
    if args.json:
        print(json_safe(json.dumps(located.data, ensure_ascii=False)))
        return 0
    print("\n".join(render(located, origin=args.origin)))
    return 0


def render(located: Located, *, origin: bool = False) -> list[str]:
    """``located.data`` as YAML lines, each ending with where its value was written."""

    def where(path: Where) -> str:
        if not origin:
            return ""
        filename, line = located.origin_of(path)
        return f"  # {_short(filename)}:{line}" if line else f"  # {_short(filename)}"

    return _lines(located.data, (), where)


def _lines(value: Any, path: Where, where: Any) -> list[str]:
    lines: list[str] = []
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        here = (*path, key)
        head = f"{_scalar(key)}:" if isinstance(value, dict) else "-"
        if _nested(item):
            inner = _lines(item, here, where)
            if isinstance(value, dict):
                lines.append(head + where(here))
                lines += ["  " + line for line in inner]
            else:  # a list item: its first line follows the dash
                lines.append("- " + inner[0])
                lines += ["  " + line for line in inner[1:]]
        else:
            lines.append(f"{head} {_scalar(item)}{where(here)}")
    return lines


def _nested(value: Any) -> bool:
    return isinstance(value, dict | list) and bool(value)


def _scalar(value: Any) -> str:
    if isinstance(value, dict | list):
        return "{}" if isinstance(value, dict) else "[]"
    if isinstance(value, str) and (not value.isprintable() or value != value.strip()):
        return json_safe(json.dumps(value, ensure_ascii=False))  # a JSON string is YAML too
    dumped = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=1 << 30)
    return dumped.removesuffix("\n").removesuffix("\n...").strip()


def _short(filename: str) -> str:
    """``filename`` relative to the working directory when it is below it."""
    try:
        return str(Path(filename).resolve().relative_to(Path(os.getcwd()).resolve()))
    except ValueError:
        return filename
