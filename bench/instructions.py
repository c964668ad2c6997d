"""Instructions per commit, counted by valgrind (cachegrind) rather than timed: on a machine
that other processes load, a count holds where a time does not. Each side against a raw
``SET`` counted in the same run:

- client: a Python process making ``--ops`` read-then-CAS increments through
  ``app.gateway.propose`` (building each mutation, the policy, the commit script's call, the
  decision), as ``deliberate bench commits`` makes them, against the same process making as
  many ``SET`` round trips; each less the same process making none (its start-up);
- server: a redis-server of its own, run under cachegrind, given as many commits through the
  gateway, against one given as many ``SET``; each less one given none.

With ``--replay N``: instructions per record of ``Replayer.verify`` (from scratch, no
checkpoint) over a log of N records written as ``bench/replay.py`` writes it, less the same
process taking the live snapshot alone (what verify reads besides the log).

Needs valgrind and redis-server on the PATH. Slow (a minute or two per count): valgrind runs
the program some fifty times slower.

    python bench/instructions.py              # 1,000 of each
    python bench/instructions.py --ops 300
    python bench/instructions.py --replay 10000
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from redis import Redis

from bot.app import build_app
from core.state.actor import Actor
from core.state.commit_result import Committed
from core.state.keys import WorkspaceKeys
from core.state.mutation import Mutation, Op

VALGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]


def work(kind: str, ops: int) -> None:
    """``ops`` commits or SETs against ``REDIS_URL``, in a workspace of its own."""
    app = build_app(f"instructions-{os.getpid()}")
    actor = Actor.parse("user:bench")
    seen = {f"bench.counter.{k}": (0, 0) for k in range(8)}
    app.redis.ping()
    for n in range(ops if kind == "commit" else 0):
        key = f"bench.counter.{n % 8}"
        version, value = seen[key]
        mutation = Mutation(
            op=Op.SET, key=key, value=value + 1, actor=actor, expected_version=version
        )
        outcome = app.gateway.propose(mutation)
        assert isinstance(outcome, Committed), outcome
        seen[key] = (outcome.version, mutation.value)
    for n in range(ops if kind == "set" else 0):
        app.redis.set("bench:raw", n)
    names = list(app.redis.scan_iter(match=WorkspaceKeys(app.store.workspace).every_key))
    app.redis.delete("bench:raw", *names)
    print(f"{ops} {kind}s made")  # (the tests run a worker alone: valgrind is too slow there)


def replay_work(workspace: str, verify: bool) -> None:
    """``Replayer.verify`` of ``workspace``'s log (or, without ``verify``, its snapshot):
    both import replay (the commit counts need none of it), so that the difference is the
    records' alone, not the import (or, with no bytecode cached, the compiling) of its
    modules."""
    from core.state.replay import Replayer

    store = build_app(workspace).store
    if not verify:
        store.snapshot()
        return
    _, diffs = Replayer(store).verify(use_checkpoint=False)
    assert not diffs, diffs[:3]


def replay_count(records: int) -> None:
    """Instructions per record of ``Replayer.verify``, on a server of its own."""
    sys.path.insert(0, str(Path(__file__).parent))
    from replay import write_log  # bench/replay.py's log: sets, increments, appends

    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        server = start_server(Path(folder), port, counted=False)
        try:
            url = f"redis://127.0.0.1:{port}/0"
            workspace = "instructions-replay"
            write_log(build_app(workspace, redis_url=url).store, records, 500)
            counts = []
            for kind in ("snapshot", "verify"):
                command = [*VALGRIND, sys.executable, __file__, "--replay-worker", kind]
                env = {**os.environ, "REDIS_URL": url}
                done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
                counts.append(refs(done.stderr))
        finally:
            server.kill()
            server.wait()
    per_record = (counts[1] - counts[0]) / records
    print(f"Replayer.verify, {records:,} records: {per_record:,.0f} instructions per record")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(folder: Path, port: int, counted: bool) -> subprocess.Popen[bytes]:
    log = folder / "valgrind.log"
    command = ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"]
    command += ["--dir", str(folder)]
    if counted:  # its timer at 1 Hz: the counts are of the commands, not of the seconds
        command = [*VALGRIND, f"--log-file={log}", *command, "--hz", "1"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = Redis(port=port)
    for _ in range(600):  # valgrind takes a few seconds to start it
        try:
            client.ping()
            return server
        except OSError:
            time.sleep(0.1)
        except Exception:  # redis-py's ConnectionError, until it listens
            time.sleep(0.1)
    raise RuntimeError("redis-server did not start")


def refs(text: str) -> int:
    found = re.search(r"I\s+refs:\s+([\d,]+)", text)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output: {text[-500:]}")
    return int(found.group(1).replace(",", ""))


def client_count(kind: str, ops: int, url: str) -> int:
    """Instructions of a Python process doing ``ops`` of ``kind`` (start-up included)."""
    command = [*VALGRIND, sys.executable, __file__, "--worker", kind, "--ops", str(ops)]
    done = subprocess.run(
        command, env={**os.environ, "REDIS_URL": url}, capture_output=True, text=True, check=True
    )
    return refs(done.stderr)


def server_count(kind: str, ops: int) -> int:
    """Instructions of a redis-server given ``ops`` of ``kind`` (start-up included)."""
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        server = start_server(Path(folder), port, counted=True)
        try:
            subprocess.run(
                [sys.executable, __file__, "--worker", kind, "--ops", str(ops)],
                env={**os.environ, "REDIS_URL": f"redis://127.0.0.1:{port}/0"},
                check=True,
            )
            Redis(port=port).shutdown(nosave=True)
        except Exception:
            server.kill()
            raise
        finally:
            server.wait()
        return refs((Path(folder) / "valgrind.log").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=1000, help="commits and SETs (1,000)")
    parser.add_argument("--replay", type=int, metavar="N", help="count replay instead, N records")
    parser.add_argument("--worker", choices=["commit", "set"], help=argparse.SUPPRESS)
    parser.add_argument("--replay-worker", choices=["snapshot", "verify"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        work(args.worker, args.ops)
        return
    if args.replay_worker:
        replay_work("instructions-replay", args.replay_worker == "verify")
        return
    if args.replay:
        replay_count(args.replay)
        return
    rows = {}
    with tempfile.TemporaryDirectory() as folder:  # the client side's server, not counted
        port = free_port()
        server = start_server(Path(folder), port, counted=False)
        try:
            url = f"redis://127.0.0.1:{port}/0"
            none = client_count("commit", 0, url)
            rows["client"] = [(client_count(k, args.ops, url) - none) / args.ops for k in KINDS]
        finally:
            server.kill()
            server.wait()
    none = server_count("commit", 0)
    rows["server"] = [(server_count(k, args.ops) - none) / args.ops for k in KINDS]
    rows["both"] = [rows["client"][i] + rows["server"][i] for i in range(2)]
    print(f"instructions per operation (valgrind), {args.ops:,} of each:")
    print(f"  {'':8} {'commit':>10} {'SET':>10} {'ratio':>7}")
    for side, (commit, raw) in rows.items():
        print(f"  {side:8} {commit:>10,.0f} {raw:>10,.0f} {commit / raw:>7.2f}")


KINDS = ("commit", "set")

if __name__ == "__main__":
    main()
