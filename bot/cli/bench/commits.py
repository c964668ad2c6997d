"""``deliberate bench commits``: concurrent read-then-CAS increments through the gateway,
against the same increments' Redis writes made by hand in one MULTI/EXEC pipeline
(``by_hand``) and against raw Redis ``SET`` round trips, by the same writer processes, in one
run."""

from __future__ import annotations

import argparse
import multiprocessing as mp
import queue
import statistics
import sys
import threading
import time
from dataclasses import dataclass, replace
from functools import partial
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

from bot.app import App, build_app
from bot.cli.bench.by_hand import HandKeys, HandWriter
from bot.commands import SUMMARIES
from bot.redis.connection import connect, connection_url
from bot.reports.render import json_line
from core.config.core_config import config_paths
from core.redis.client import RedisClient, resend
from core.state.actor import Actor
from core.state.commit_result import Committed, Rejected, RejectReason
from core.state.keys import WorkspaceKeys
from core.state.mutation import Mutation, Op

__all__ = ["register"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = commands.add_parser(
        "bench",
        help=SUMMARIES["bench"],
        description="Benchmarks that print ratios against a baseline measured in the same run.",
    )
    sub = bench.add_subparsers(dest="bench_command", required=True, metavar="BENCHMARK")
    commits = sub.add_parser(
        "commits",
        help="gateway commits vs their writes by hand vs raw SET",
        description="N writer processes each make M successful read-then-CAS increments "
        "through the gateway over K keys (K=1: all on bench.counter), retrying conflicts; M "
        "increments whose Redis writes (those of the commit script, on scratch keys) they "
        "send by hand in one MULTI/EXEC pipeline; and M raw SET round trips, alternating the "
        "three in rounds so all see the same machine. Prints throughput, p50/p99 latency and "
        "conflicts for each, with ratios.",
    )
    commits.add_argument(
        "--writers", type=int, default=8, metavar="N", help="writer processes (default 8)"
    )
    commits.add_argument(
        "--ops",
        type=int,
        default=200,
        metavar="M",
        help="successful increments per writer (default 200)",
    )
    commits.add_argument(
        "--keys",
        type=int,
        default=1,
        metavar="K",
        help="keys to spread them over (default 1: bench.counter)",
    )
    commits.add_argument(
        "--rounds",
        type=int,
        default=10,
        metavar="R",
        help="alternate gateway and raw chunks R times (default 10)",
    )
    commits.add_argument(
        "--reread",
        action="store_true",
        help="read the key fresh before every CAS instead of using the entry "
        "the previous commit returned",
    )
    commits.add_argument("--json", action="store_true", help="print the figures as JSON")
    commits.set_defaults(handler=_commits)


@dataclass(frozen=True)
class Job:
    """What one writer process needs; plain data, so it crosses the process boundary."""

    writer: int
    writers: int
    ops: int
    keys: int
    rounds: int
    workspace: str
    config: list[str]  # the --config files
    redis_url: str
    reread: bool


@dataclass(frozen=True)
class Chunk:
    began: float
    ended: float
    latencies: list[int]
    conflicts: int


Seen = tuple[int, Any] | None


def key_for(job: Job, op_index: int) -> str:
    if job.keys == 1:
        return "bench.counter"
    return f"bench.counter.{(job.writer + op_index * job.writers) % job.keys}"


def _increment(app: App, actor: Actor, key: str, seen: Seen) -> tuple[int, int, Seen]:
    """One successful read-then-CAS increment: returns (commit latency ns, conflicts, the
    state it leaves). ``seen`` is the (version, value) the last commit or conflict of this
    writer returned for the key (None: read it fresh): the gateway answers with the state it
    compared against, so a writer need not read again."""
    conflicts = 0
    if seen is None:  # read again after a failover as a commit is sent again (see StateStore)
        version, entry = resend(lambda: app.store.read(key), app.redis, _patience(app))
        current: Any = entry.value if entry else 0
        seen = (version, current)
    version, value = seen
    while True:
        mutation = Mutation(
            op=Op.SET, key=key, value=value + 1, actor=actor, expected_version=version
        )
        start = time.perf_counter_ns()
        outcome = app.gateway.propose(mutation)
        elapsed = time.perf_counter_ns() - start
        if isinstance(outcome, Committed):
            return elapsed, conflicts, (outcome.version, mutation.value)
        if not (isinstance(outcome, Rejected) and outcome.reason is RejectReason.CONFLICT):
            raise RuntimeError(f"bench commit failed: {outcome}")
        conflicts += 1
        assert outcome.version is not None
        version, value = outcome.version, outcome.latest.value if outcome.latest else 0


def _gateway_chunk(app: App, actor: Actor, job: Job, ops: range, last: dict[str, Seen]) -> Chunk:
    latencies, conflicts = [], 0
    began = time.perf_counter()
    for i in ops:
        key = key_for(job, i)
        latency, retried, seen = _increment(app, actor, key, last.get(key))
        if not job.reread:
            last[key] = seen
        latencies.append(latency)
        conflicts += retried
    return Chunk(began, time.perf_counter(), latencies, conflicts)


def _patience(app: App) -> float:
    return app.store.durability.retry_sec


def _hand_chunk(
    writer: HandWriter,
    actor: Actor,
    job: Job,
    ops: range,
    last: dict[str, Seen],
    patience: float,
) -> Chunk:
    """Increments whose writes are made by hand (``by_hand``): the mutation built as the
    gateway's is, outside the timing, as there. A pipeline cut off by a failover is sent
    again, as a commit is (its writes go to the bench's own keys: twice does no harm)."""
    latencies = []
    began = time.perf_counter()
    for i in ops:
        key = key_for(job, i)
        version, value = last.get(key) or (0, 0)
        mutation = Mutation(
            op=Op.SET, key=key, value=value + 1, actor=actor, expected_version=version
        )
        prev = "" if version == 0 else str(value)
        start = time.perf_counter_ns()
        now_ms = time.time_ns() // 1_000_000
        write = partial(writer.write, mutation, version + 1, prev, now_ms)
        resend(write, writer.client, patience)
        latencies.append(time.perf_counter_ns() - start)
        last[key] = (version + 1, mutation.value)
    return Chunk(began, time.perf_counter(), latencies, 0)


def _raw_chunk(client: RedisClient, job: Job, ops: range, patience: float) -> Chunk:
    """Raw ``SET`` round trips; one cut off by a failover is sent again, as a commit is."""
    keys = WorkspaceKeys(job.workspace)
    latencies = []
    began = time.perf_counter()
    for i in ops:
        name = keys.bench(key_for(job, i))
        start = time.perf_counter_ns()
        resend(partial(client.set, name, i), client, patience)
        latencies.append(time.perf_counter_ns() - start)
    return Chunk(began, time.perf_counter(), latencies, 0)


def _worker(job: Job, barrier: Barrier, results: Any) -> None:
    try:
        results.put(_alternate(job, barrier))
    except BaseException as exc:  # report, and release the others from the barrier
        barrier.abort()
        aborted = isinstance(exc, threading.BrokenBarrierError)
        results.put(None if aborted else f"writer {job.writer}: {exc}")


def _alternate(job: Job, barrier: Barrier) -> list[tuple[str, int, Chunk]]:
    """Alternate a chunk of gateway increments, a chunk of the same writes by hand and a
    chunk of raw SETs, every writer starting each chunk together, so that all kinds see the
    same machine at the same time. The writes by hand go through the gateway's own client."""
    app = build_app(job.workspace, [Path(path) for path in job.config], job.redis_url)
    actor = Actor.parse(f"user:bench-{job.writer}")
    raw_client = connect(job.redis_url)
    hand = HandWriter(app.redis, HandKeys(app.store.keys), app.store.idempotency_ttl_ms)
    last: dict[str, Seen] = {}
    hand_last: dict[str, Seen] = {}
    chunks: list[tuple[str, int, Chunk]] = []
    for number, ops in enumerate(_rounds(job.ops, job.rounds)):
        barrier.wait()
        chunks.append(("gateway", number, _gateway_chunk(app, actor, job, ops, last)))
        barrier.wait()
        by_hand = _hand_chunk(hand, actor, job, ops, hand_last, _patience(app))
        chunks.append(("by_hand", number, by_hand))
        barrier.wait()
        chunks.append(("raw", number, _raw_chunk(raw_client, job, ops, _patience(app))))
    return chunks


class BenchFailed(Exception):
    pass


def _next_report(results: Any, procs: list[Any]) -> Any:
    """The next writer's report; a writer that died without one fails the bench."""
    while True:
        try:
            return results.get(timeout=2)
        except queue.Empty:
            dead = [p for p in procs if p.exitcode not in (None, 0)]
            if dead:
                raise BenchFailed(f"a writer exited with code {dead[0].exitcode}") from None


def _rounds(ops: int, rounds: int) -> list[range]:
    size = -(-ops // rounds)
    return [range(i, min(i + size, ops)) for i in range(0, ops, size)]


def _run(base: Job) -> dict[str, dict[str, Any]]:
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(base.writers)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(replace(base, writer=w), barrier, results))
        for w in range(base.writers)
    ]
    for proc in procs:
        proc.start()
    reports = [_next_report(results, procs) for _ in procs]
    for proc in procs:
        proc.join()
    failures = [r for r in reports if not isinstance(r, list)]
    if failures:
        raise BenchFailed(next((f for f in failures if f), "a writer stopped"))
    chunks = [c for r in reports for c in r]
    return {
        kind: _summary([(n, c) for k, n, c in chunks if k == kind])
        for kind in ("gateway", "by_hand", "raw")
    }


def _summary(chunks: list[tuple[int, Chunk]]) -> dict[str, Any]:
    """Throughput: all ops over the summed wall time of the rounds (a round's wall time runs
    from its first writer's start to its last writer's end)."""
    latencies = sorted(x for _, c in chunks for x in c.latencies)
    wall = 0.0
    for number in {n for n, _ in chunks}:
        round_chunks = [c for n, c in chunks if n == number]
        wall += max(c.ended for c in round_chunks) - min(c.began for c in round_chunks)
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    return {
        "ops": len(latencies),
        "seconds": round(wall, 4),
        "ops_per_sec": round(len(latencies) / wall, 1),
        "p50_ms": round(statistics.median(latencies) / 1e6, 4),
        "p99_ms": round(p99 / 1e6, 4),
        "conflicts": sum(c.conflicts for _, c in chunks),
    }


def _commits(app: App, args: argparse.Namespace) -> int:
    if min(args.writers, args.ops, args.keys, args.rounds) < 1:
        print(
            "deliberate bench commits: --writers, --ops, --keys and --rounds must be at least 1",
            file=sys.stderr,
        )
        return 2
    base = Job(
        0,
        args.writers,
        args.ops,
        args.keys,
        min(args.rounds, args.ops),
        app.store.workspace,
        [str(path) for path in config_paths(args.config)],
        connection_url(app.redis),
        args.reread,
    )
    refusal = _policy_refusal(app, base)
    if refusal:
        print(f"deliberate bench commits: {refusal}", file=sys.stderr)
        return 2
    try:
        figures = _run(base)
    except BenchFailed as exc:
        print(f"deliberate bench commits: {exc}", file=sys.stderr)
        return 1
    finally:
        _delete_scratch(app, base, args.ops)
    ours, hand, raw = figures["gateway"], figures["by_hand"], figures["raw"]
    report = {
        "writers": args.writers,
        "ops": args.ops,
        "keys": args.keys,
        "reread": args.reread,
        "workspace": app.store.workspace,
        "gateway": ours,
        "by_hand": hand,
        "raw_set": raw,
        "ratio": _ratios(ours, raw),
        "ratio_by_hand": _ratios(ours, hand),
    }
    if args.json:
        print(json_line(report))
    else:
        _print_table(report)
    return 0


def _ratios(ours: dict[str, Any], other: dict[str, Any]) -> dict[str, float]:
    return {
        "throughput": round(ours["ops_per_sec"] / other["ops_per_sec"], 3),
        "p50_latency": round(ours["p50_ms"] / other["p50_ms"], 3),
        "p99_latency": round(ours["p99_ms"] / other["p99_ms"], 3),
    }


def _delete_scratch(app: App, job: Job, ops: int) -> None:
    """The raw SETs' keys and the writes by hand's, none of them canonical state."""
    names = {key_for(job, i) for i in range(min(ops * job.writers, job.keys))}
    app.redis.delete(*(app.store.keys.bench(n) for n in names))
    hand = list(app.redis.scan_iter(match=HandKeys(app.store.keys).pattern, count=1000))
    if hand:  # all in the workspace's hash tag: one slot
        app.redis.delete(*hand)


def _policy_refusal(app: App, job: Job) -> str | None:
    """Why the config's policy would refuse the bench's writes, before any process starts."""
    probe = Mutation(op=Op.SET, key=key_for(job, 0), value=1, actor=Actor.parse("user:bench-0"))
    verdict = app.policy.check(probe)
    return f"the policy refuses it: {verdict.message}" if verdict.reason else None


def _print_table(r: dict[str, Any]) -> None:
    print(
        f"bench commits: {r['writers']} writers x {r['ops']} ops over {r['keys']} key(s), "
        f"workspace {r['workspace']}"
    )
    print(f"{'':18}{'ops/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'conflicts':>11}")
    rows = (("gateway commit", r["gateway"]), ("writes by hand", r["by_hand"]))
    for label, row in (*rows, ("raw SET", r["raw_set"])):
        print(
            f"{label:18}{row['ops_per_sec']:>10.0f}{row['p50_ms']:>10.3f}"
            f"{row['p99_ms']:>10.3f}{row['conflicts']:>11}"
        )
    for label, x in (("ours / by hand", r["ratio_by_hand"]), ("ours / raw", r["ratio"])):
        print(
            f"{label:18}{x['throughput']:>10.2f}{x['p50_latency']:>10.2f}{x['p99_latency']:>10.2f}"
        )
