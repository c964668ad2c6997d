"""The ``cel`` library, loaded without its package's ``__init__``: that imports the library's
own command line first (typer, rich, pygments, prompt_toolkit), ~170 ms of the start of every
command that reads the config (beats, approval rules and rules hold CEL conditions), four
times that on a busy machine. What we use (``compile``, ``Context``) is in its extension
module, ``cel.cel``, which this loads alone, as the package would, and registers under the
same name: an ``import cel`` later (the library's command line, a test) takes that one, for
an extension initialises only once in a process."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

__all__ = ["cel"]

_EXTENSION = "cel.cel"


def _extension() -> ModuleType:
    if (loaded := sys.modules.get(_EXTENSION)) is not None:
        return loaded
    package = importlib.util.find_spec("cel")  # finds the package without running it
    folders = package.submodule_search_locations if package is not None else None
    for folder in folders or ():
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(folder) / f"cel{suffix}"
            if not path.is_file():
                continue
            loader = importlib.machinery.ExtensionFileLoader(_EXTENSION, str(path))
            spec = importlib.util.spec_from_loader(_EXTENSION, loader)
            if spec is None:
                break
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
            sys.modules[_EXTENSION] = module
            return module
    return importlib.import_module(_EXTENSION)  # laid out otherwise: through the package


if TYPE_CHECKING:
    import cel
else:
    cel = _extension()
