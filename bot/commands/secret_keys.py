"""Which keys the config marks secret, remembered between commands.

``state get`` masks a secret key's value, so it asks the policy. Loading the config for that
imports every section's models: about as much start-up again as the rest of the command. So
the answer (each policy pattern of the workspace, in order, and whether it is secret) is kept
in the user's cache directory (``$DELIBERATE_CACHE_DIR`` instead, where set), with what it
was computed from: the config files (includes
and the shipped defaults too) and the modules that read them, each by its size, times and
inode, and the variables its ``${NAME}`` refer to (a salted digest of their values, never
the values). Any of those changed, or gone, and the config is loaded and checked again, so
an error in it is still reported with its file, line and field. Nothing is kept while a file
is younger than ``SETTLE_SEC``: an edit within the file system's clock tick would not show
in its times."""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["CACHE_ENTRIES", "SETTLE_SEC", "cache_file", "secret_test"]

CACHE_ENTRIES = 16  # configs remembered (a few workspaces, a few config files)
SETTLE_SEC = 2.0
_FORMAT = 1

Rules = list[tuple[str, bool]]


def cache_file() -> Path:
    """``$DELIBERATE_CACHE_DIR/secret-keys.json``, else the user's cache directory's."""
    own = os.environ.get("DELIBERATE_CACHE_DIR")
    if own:
        return Path(own) / "secret-keys.json"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "deliberate" / "secret-keys.json"


def secret_test(paths: Sequence[Path], workspace: str) -> Callable[[str], bool]:
    """``is_secret(key)`` as the policy of ``workspace`` under the config ``paths`` says.
    Raises the config's ``ConfigError`` when it is not valid, as loading it does."""
    name = _entry_name(paths, workspace)
    rules = _remembered(name)
    if rules is None:
        rules = _loaded(paths, workspace, name)
    return lambda key: _first_match(rules, key)


def _first_match(rules: Rules, key: str) -> bool:
    """What ``Policy.is_secret`` answers: the first pattern matching ``key`` decides."""
    return next((secret for pattern, secret in rules if fnmatch.fnmatchcase(key, pattern)), False)


def _entry_name(paths: Sequence[Path], workspace: str) -> str:
    said = json.dumps([[str(p.absolute()) for p in paths], workspace])
    return hashlib.sha256(said.encode()).hexdigest()


def _stamp(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _read_cache() -> dict[str, Any]:
    with contextlib.suppress(OSError, ValueError):
        kept = json.loads(cache_file().read_text(encoding="utf-8"))
        if isinstance(kept, dict) and kept.get("format") == _FORMAT:
            return kept if isinstance(kept.get("entries"), dict) else _empty()
    return _empty()


def _empty() -> dict[str, Any]:
    return {"format": _FORMAT, "entries": {}}


def _remembered(name: str) -> Rules | None:
    entry = _read_cache()["entries"].get(name)
    if not isinstance(entry, dict):
        return None
    stamps = entry.get("stamps")
    if not isinstance(stamps, dict) or not stamps:
        return None
    if any(_stamp(path) != stamp for path, stamp in stamps.items()):
        return None
    env = entry.get("env")
    if not isinstance(env, dict):
        return None
    if env.get("digest") != _env_digest(env.get("salt"), env.get("names")):
        return None  # a variable the config names was set, changed or unset since
    return [(str(pattern), bool(secret)) for pattern, secret in entry.get("rules", [])]


def _loaded(paths: Sequence[Path], workspace: str, name: str) -> Rules:
    """The rules from the config itself, checked; kept for the next command where safe."""
    # the config's and the policy's models: imported only when the cache cannot answer
    from importlib.resources import as_file, files

    from core.config.core_config import CoreConfig, load_config
    from core.config.files import file_paths

    whole = load_config(list(paths), CoreConfig)
    config = whole.for_workspace(workspace)
    rules = [(rule.pattern, rule.secret) for rule in config.policy.keys]
    with as_file(files("core.config").joinpath("default.yaml")) as shipped:
        read = [shipped, *(f for p in paths for f in file_paths(p))]
    names = sorted({ref.name for ref in [*whole.env_refs, *config.env_refs]})
    _keep(name, rules, [str(p.absolute()) for p in read], names)
    return rules


def _env_digest(salt: object, names: object) -> str | None:
    if not isinstance(salt, str) or not isinstance(names, list):
        return None
    values = json.dumps([[str(n), os.environ.get(str(n))] for n in names])
    return hashlib.sha256(bytes.fromhex(salt) + values.encode()).hexdigest()


def _keep(name: str, rules: Rules, read: list[str], names: list[str]) -> None:
    code = [m.__file__ for n, m in list(sys.modules.items()) if n.startswith("core.")]
    stamps = {path: _stamp(path) for path in [*read, *filter(None, code)]}
    settled = time.time_ns() - int(SETTLE_SEC * 1e9)
    if any(s is None or max(s[1], s[2]) > settled for s in stamps.values()):
        return  # a file gone meanwhile, or too young to be told apart by its times
    salt = os.urandom(16).hex()
    env = {"salt": salt, "names": names, "digest": _env_digest(salt, names)}
    kept = _read_cache()
    entries = kept["entries"]
    entries.pop(name, None)
    entries[name] = {"stamps": stamps, "env": env, "rules": rules}
    while len(entries) > CACHE_ENTRIES:
        entries.pop(next(iter(entries)))
    _write(kept)


def _write(kept: dict[str, Any]) -> None:
    """Whole or not at all (a rename), readable by this user alone; a cache that cannot be
    written is only slower."""
    target = cache_file()
    with contextlib.suppress(OSError):
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=".secret-keys-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(kept, out)
            os.replace(temporary, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
