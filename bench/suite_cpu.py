"""What the test suite costs in CPU: runs pytest (the whole suite, or the paths given) as a
subprocess and prints the CPU (user + sys) of every process it started, the wall time, how many
``deliberate`` processes ran, and the test files that took the most CPU.

The total is ``resource.getrusage(RUSAGE_CHILDREN)`` after pytest exits: it holds every
descendant that was waited for (pytest, its xdist workers, and each ``deliberate`` or other
process a test ran and waited for). A process left running and never waited for, such as an
embedded redis-server a test starts and leaves to stop at exit, is not counted, nor is the
shared Redis at ``REDIS_URL``.

The ``deliberate`` processes are counted from ``/proc``, sampled every few milliseconds: a
process whose command line runs ``bot.main`` or the ``deliberate`` script, descended from this
pytest. A process that lives less than one sample may be missed, so the count is a floor.

The per-file figures come from a small pytest plugin this script hands to pytest (through a
temporary directory on ``PYTHONPATH``): each test's CPU, in its worker and in the children
that worker waited for, added to its file. Fixtures shared by a file's tests land on the test
that first asked for them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PLUGIN = '''
"""Each test's CPU, in this process and the children it waited for, added to its file."""

import json
import os
import resource
from collections import Counter

import pytest

_costs: Counter = Counter()


def _cpu(children=True) -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + (kids.ru_utime + kids.ru_stime if children else 0.0)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    start = _cpu()
    yield
    _costs[item.nodeid.split("::")[0]] += _cpu() - start


def pytest_sessionfinish(session):
    name = os.environ.get("PYTEST_XDIST_WORKER", "main")
    # The controller of xdist workers ran no test: its children are the workers, counted
    # by their own files.
    rest = _cpu(children=bool(_costs)) - sum(_costs.values())
    _costs["(start-up, collection, xdist)"] += rest
    out = os.path.join(os.environ["SUITE_CPU_DIR"], name + ".json")
    with open(out, "w") as f:
        json.dump(dict(_costs), f)
'''


def _is_deliberate(argv: list[str]) -> bool:
    """A command line that runs our command: ``python -m bot.main ...`` or ``.../deliberate``."""
    if "-m" in argv[:3] and "bot.main" in argv[:4]:
        return True
    return any(Path(arg).name == "deliberate" for arg in argv[:2])


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat = f.read()
    return int(stat[stat.rindex(b")") + 2 :].split()[1])


def _descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        pid = _parent(pid)
    return False


class DeliberateCounter(threading.Thread):
    """Samples ``/proc`` for ``deliberate`` processes below ``root`` until stopped."""

    def __init__(self, root: int, interval: float) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.interval = interval
        self.seen: set[tuple[int, str]] = set()
        self.looked: set[tuple[int, str]] = set()
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(self.interval):
            for entry in os.scandir("/proc"):
                if entry.name.isdigit():
                    self._look(int(entry.name))

    def _look(self, pid: int) -> None:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
            started = stat[stat.rindex(b")") + 2 :].split()[19].decode()
            if (pid, started) in self.looked:
                return
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [part.decode(errors="replace") for part in f.read().split(b"\0") if part]
            if not argv:
                return  # a zombie, or a process still between fork and exec: look again
            self.looked.add((pid, started))
            if _is_deliberate(argv) and _descends_from(pid, self.root):
                self.seen.add((pid, started))
        except (OSError, ValueError, IndexError):
            return


def run_suite(paths: list[str], extra: list[str], interval: float) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="suite-cpu-") as tmp:
        plugin_dir = Path(tmp) / "plugin"
        costs_dir = Path(tmp) / "costs"
        plugin_dir.mkdir()
        costs_dir.mkdir()
        (plugin_dir / "suite_cpu_plugin.py").write_text(PLUGIN)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(plugin_dir), *filter(None, [env.get("PYTHONPATH")])]
        )
        env["SUITE_CPU_DIR"] = str(costs_dir)
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "suite_cpu_plugin", *extra, *paths]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        pytest = subprocess.Popen(argv, cwd=ROOT, env=env)
        counter = DeliberateCounter(pytest.pid, interval)
        counter.start()
        code = pytest.wait()
        wall = time.perf_counter() - start
        counter.stopping.set()
        counter.join()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        per_file: Counter[str] = Counter()
        for worker in costs_dir.glob("*.json"):
            per_file.update(json.loads(worker.read_text()))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "exit": code,
        "cpu": cpu,
        "wall": wall,
        "deliberate": len(counter.seen),
        "per_file": dict(per_file),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="test files or folders (default: the suite)")
    parser.add_argument("--top", type=int, default=25, help="how many files to list (25)")
    parser.add_argument(
        "--interval", type=float, default=0.01, help="seconds between /proc samples (0.01)"
    )
    parser.add_argument(
        "--pytest-args",
        default="",
        help='more options for pytest, in one string, e.g. "-n0 -p no:randomly"',
    )
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    result = run_suite(args.paths, args.pytest_args.split(), args.interval)
    per_file: dict[str, float] = result["per_file"]  # type: ignore[assignment]
    print(f"pytest exit code      {result['exit']}")
    print(f"CPU, all processes    {result['cpu']:.1f} s")
    print(f"wall time             {result['wall']:.1f} s")
    print(f"deliberate processes  {result['deliberate']} (at least)")
    print(f"CPU seen by the tests {sum(per_file.values()):.1f} s")
    print(f"\nThe {args.top} test files that cost the most CPU (s):")
    for name, cost in sorted(per_file.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{cost:8.1f}  {name}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    sys.exit(0 if result["exit"] == 0 else 1)


if __name__ == "__main__":
    main()
