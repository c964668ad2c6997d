"""Commit-to-action latency through a real worker: a mutation committed through the gateway,
the rule consumer (a `deliberate worker` process) sees it, enqueues the run on RQ, the worker
runs ``http.post`` against a local HTTP receiver. Latency: from just before the commit to the
receiver having the request. Baselines measured in the same run: the same POST sent directly
with httpx (what the action itself costs) and a Redis PING round trip.

Mutations are committed one at a time, each after the previous one arrived, so the figure
is the pipeline's latency, not its throughput.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path

import httpx
from prompt_size import redis_client

from bot.app import build_app
from bot.redis.connection import connection_url
from core.state.actor import Actor
from core.state.mutation import Mutation, Op
from rules.keys import CONSUMER_GROUP, RuleKeys

RULE = """
  - id: bench_latency
    when: {key: bench.latency, op: set}
    then:
      - action: http.post
        args: {url: "URL", json: {n: "{{ mutation.value }}"}}
"""


class Receiver:
    """Records the arrival time of each POSTed ``n``."""

    def __init__(self) -> None:
        self.arrived: dict[int, float] = {}
        self.event = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                now = time.perf_counter()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
                with receiver.event:
                    receiver.arrived[int(json.loads(body)["n"])] = now
                    receiver.event.notify_all()

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def wait(self, n: int, timeout: float = 30.0) -> float:
        with self.event:
            if not self.event.wait_for(lambda: n in self.arrived, timeout):
                raise TimeoutError(f"mutation {n} never reached the receiver")
            return self.arrived[n]


def write_config(url: str) -> Path:
    shipped = files("core.config").joinpath("default.yaml").read_text(encoding="utf-8")
    text = shipped.split("\nrules:\n")[0] + "\nrules:\n" + RULE.replace("URL", url)
    path = Path(tempfile.mkdtemp()) / "bench.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutations", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    client = redis_client()
    receiver = Receiver()
    config = write_config(receiver.url)
    workspace = f"bench-{uuid.uuid4().hex[:8]}"
    app = build_app(workspace, config, client=client)
    env = {**os.environ, "REDIS_URL": connection_url(client)}
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bot.main",
            "--workspace",
            workspace,
            "--config",
            str(config),
            "--log-level",
            "WARNING",
            "worker",
        ],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_for_group(client, workspace)
        latencies, direct, pings = [], [], []
        system = Actor.parse("system:bench")
        with httpx.Client() as http:
            for n in range(args.mutations):
                start = time.perf_counter()
                app.gateway.propose(Mutation(op=Op.SET, key="bench.latency", value=n, actor=system))
                latencies.append(receiver.wait(n) - start)
                start = time.perf_counter()
                http.post(receiver.url, json={"n": -1 - n})
                direct.append(time.perf_counter() - start)
                start = time.perf_counter()
                client.ping()
                pings.append(time.perf_counter() - start)
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=10)
        cleanup(client, workspace)
    report(args, latencies, direct, pings)


def wait_for_group(client: object, workspace: str, timeout: float = 30.0) -> None:
    log = RuleKeys(workspace).log
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.exists(log) and any(  # type: ignore[attr-defined]
            g["name"] == CONSUMER_GROUP
            for g in client.xinfo_groups(log)  # type: ignore[attr-defined]
        ):
            return
        time.sleep(0.05)
    raise TimeoutError("the worker never started consuming")


def cleanup(client: object, workspace: str) -> None:
    pattern = RuleKeys(workspace).tag.replace("{", "\\{").replace("}", "\\}") + "*"
    keys = list(client.scan_iter(match=pattern))  # type: ignore[attr-defined]
    if keys:
        client.delete(*keys)  # type: ignore[attr-defined]


def report(
    args: argparse.Namespace, latencies: list[float], direct: list[float], pings: list[float]
) -> None:
    def ms(values: list[float], q: float = 0.5) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000

    rows = {
        "commit to action (worker)": latencies,
        "direct http.post (baseline)": direct,
        "Redis PING (baseline)": pings,
    }
    result = {
        name: {"median_ms": round(statistics.median(v) * 1000, 3), "p95_ms": round(ms(v, 0.95), 3)}
        for name, v in rows.items()
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"{args.mutations} mutations, one at a time:")
    for name, row in result.items():
        ratio = row["median_ms"] / result["direct http.post (baseline)"]["median_ms"]
        print(
            f"  {name:<30} median {row['median_ms']:>8.3f} ms  p95 {row['p95_ms']:>8.3f} ms"
            f"  ratio to direct POST {ratio:.1f}"
        )
    headline = result["commit to action (worker)"]["median_ms"]
    print(f"Headline: commit-to-action median {headline:.2f} ms")


if __name__ == "__main__":
    main()
