"""Which config files a command layers on the shipped defaults. A module of its own, so that
a command that only asks which files (``state get``, to find its cached answer) imports none
of the config's models."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["config_paths"]


def config_paths(explicit: Sequence[str | os.PathLike[str]] | None = None) -> list[Path]:
    """The files to layer on the shipped defaults: each ``--config``, in order, else those
    ``DELIBERATE_CONFIG`` lists (separated by ``os.pathsep``), else none."""
    if explicit:
        return [Path(p) for p in explicit]
    listed = os.environ.get("DELIBERATE_CONFIG", "")
    return [Path(p) for p in listed.split(os.pathsep) if p]
