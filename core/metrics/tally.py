"""Counts kept in Redis, where every process adds its own and ``deliberate web`` reads the
sums: one hash per workspace (``WorkspaceKeys.metrics``, under the workspace's hash tag like
all its keys), whose fields are the series (``core.metrics.catalogue``).

Counting costs no round trip: a ``Tally`` (one per Redis client per process) adds each count
to a table in memory; a thread sends the table every ``FLUSH_SEC`` (per workspace counted
in, one ``MULTI``/``HINCRBY``…/``EXEC``), and so does the process at its normal exit. So a
process killed with SIGKILL loses at most its last second of counts. A flush that fails
(Redis away) keeps its counts for the next one; if Redis applied it but the answer was lost,
those counts are sent twice. A forked child starts with an empty table (its parent sends its
own).

Each hash expires ``KEEP_SEC`` after its last count: a workspace quiet that long starts again
from zero, which Prometheus reads as a counter reset. Counts are sent through a client of
the tally's own (short timeouts, no retries: the next flush is the retry), so a slow Redis
never holds up a commit; when the client the tally was made for is gone, the thread sends
what is left once more, and forgets the tally."""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from redis import ConnectionPool, Redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.retry import Retry

from core.state.keys import WorkspaceKeys

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = [
    "FLUSH_SEC",
    "KEEP_SEC",
    "Tally",
    "counts_key",
    "discard_unsent",
    "flush_all",
    "tally_for",
]

FLUSH_SEC = 1.0
KEEP_SEC = 35 * 86_400
TIMEOUT_SEC = 2.0  # each flush's connect and reply

_log = logging.getLogger("deliberate.metrics")


def counts_key(workspace: str) -> str:
    """The hash of a workspace's counts."""
    return WorkspaceKeys(workspace).metrics


class Tally:
    """The counts this process made since its last flush, for one Redis client."""

    def __init__(self, origin: RedisClient) -> None:
        self._connect = _copier(origin)  # (``origin`` itself is not kept)
        self._client: RedisClient | None = None
        self._lock = threading.Lock()
        self._sending = threading.Lock()  # one flush at a time: the thread's, or a caller's
        self._counts: dict[tuple[str, str], int] = {}
        # moved on by each discard: counts a flush took before it are not put back after it
        self._epoch = 0
        self.failing = False  # its last flush failed

    def add(self, workspace: str, field: str, amount: int = 1) -> None:
        key = (workspace, field)
        with self._lock:
            self._counts[key] = self._counts.get(key, 0) + amount
        _flusher.ensure_running()

    def pending(self) -> int:
        """How many series have counts not sent yet."""
        with self._lock:
            return len(self._counts)

    def flush(self) -> int:
        """Send every count made so far; how many series it moved. If it fails, what was not
        sent stays for the next flush and the error is raised (unless the counts were
        discarded meanwhile: then nothing is said)."""
        with self._sending:
            with self._lock:
                taken, self._counts = self._counts, {}
                epoch = self._epoch
            if not taken:
                return 0
            by_workspace: dict[str, list[tuple[str, int]]] = {}
            for (workspace, field), amount in taken.items():
                by_workspace.setdefault(workspace, []).append((field, amount))
            sent = 0
            try:
                for workspace, fields in by_workspace.items():
                    self._send(workspace, fields)
                    sent += len(fields)
                    for field, _ in fields:
                        del taken[(workspace, field)]
            except BaseException as exc:
                kept = self._keep(taken, epoch)  # what was not sent (unless discarded since)
                if not kept and isinstance(exc, Exception):  # nowhere to go: no word of it
                    return sent  # (a Ctrl-C or an exit still goes on up)
                self.failing = True
                raise
            self.failing = False
            return sent

    def discard(self) -> int:
        """Drop what is not sent, also what a flush under way fails to send (it is not put
        back): the counts have nowhere to go. How many series were dropped."""
        with self._lock:
            dropped, self._counts = len(self._counts), {}
            self._epoch += 1
        return dropped

    def forget(self) -> None:
        """Drop what is not sent, and the locks: in a forked child (its parent sends the
        counts; another thread of the parent may have held a lock at the fork)."""
        self._lock, self._sending = threading.Lock(), threading.Lock()
        self._counts = {}
        self._epoch += 1

    def _keep(self, unsent: dict[tuple[str, str], int], epoch: int) -> bool:
        """Put back what a flush did not send; false when the tally was discarded meanwhile
        (nothing is put back)."""
        with self._lock:
            if epoch != self._epoch:
                return False
            for key, amount in unsent.items():
                self._counts[key] = self._counts.get(key, 0) + amount
            return True

    def _send(self, workspace: str, fields: list[tuple[str, int]]) -> None:
        """One workspace's counts, in one transaction (one shard of a cluster holds them)."""
        if self._client is None:
            self._client = self._connect()
        key = counts_key(workspace)
        with self._client.pipeline(transaction=True) as pipe:
            for field, amount in fields:
                pipe.hincrby(key, field, amount)
            pipe.expire(key, KEEP_SEC)
            pipe.execute()


def _copier(origin: RedisClient) -> Callable[[], RedisClient]:
    """How to make a client of the tally's own to ``origin``'s server or cluster, with short
    timeouts and no retries, without keeping ``origin`` (a cluster client connects when it
    is made: only at the first flush)."""
    settings: dict[str, Any] = {
        "socket_timeout": TIMEOUT_SEC,
        "socket_connect_timeout": TIMEOUT_SEC,
        "retry": Retry(NoBackoff(), 0),
    }
    if isinstance(origin, RedisCluster):
        # redis-py leaves the cluster client's helpers unannotated, hence the ignores
        kwargs = dict(origin.get_connection_kwargs(), **settings)  # type: ignore[no-untyped-call]
        kwargs.pop("redis_connect_func", None)  # the cluster client sets its own
        nodes = [(n.host, n.port) for n in origin.get_nodes()]  # type: ignore[no-untyped-call]
        return lambda: RedisCluster(
            startup_nodes=[ClusterNode(h, p) for h, p in nodes],  # type: ignore[no-untyped-call]
            **kwargs,
        )
    pool = origin.connection_pool
    copy = Redis(
        connection_pool=ConnectionPool(
            connection_class=pool.connection_class, **dict(pool.connection_kwargs, **settings)
        )
    )
    return lambda: copy  # (it connects on first use)


_tallies: weakref.WeakKeyDictionary[RedisClient, Tally] = weakref.WeakKeyDictionary()
_retired: list[Tally] = []  # their client is gone: sent once more, then forgotten
_tallies_lock = threading.Lock()


def tally_for(client: RedisClient) -> Tally:
    """The process's tally for ``client`` (made on first use)."""
    with _tallies_lock:
        tally = _tallies.get(client)
        if tally is None:
            tally = _tallies[client] = Tally(client)
            weakref.finalize(client, _retire, tally)
        return tally


def _retire(tally: Tally) -> None:
    with _tallies_lock:
        _retired.append(tally)


def flush_all(tallies: Iterable[Tally] | None = None) -> int:
    """Flush every tally of the process (or ``tallies``): how many series moved. One that
    fails keeps its counts (the first failure of a run of them is logged); the others are
    still sent. A tally whose client is gone is forgotten after this."""
    if tallies is None:
        with _tallies_lock:
            retired = list(_retired)
            _retired.clear()
            tallies = [*_tallies.values(), *retired]
    moved = 0
    for tally in tallies:
        was_failing = tally.failing
        try:
            moved += tally.flush()
        except Exception as exc:  # Redis away: the counts wait for the next flush
            if not was_failing:
                _log.warning("metrics: counts not sent yet: %s: %s", type(exc).__name__, exc)
    return moved


def discard_unsent() -> int:
    """Drop every count not sent yet, of every tally (one whose server is gone, as a test
    session's are when it ends, has nowhere to send them), and what a flush under way fails
    to send; how many series were dropped."""
    with _tallies_lock:
        tallies = dict.fromkeys([*_tallies.values(), *_retired])
        _retired.clear()
    return sum(tally.discard() for tally in tallies)


def _at_exit() -> None:
    """The last flush (logging may be shut down already: a failure is said on stderr)."""
    with _tallies_lock:
        tallies = dict.fromkeys([*_tallies.values(), *_retired])  # (retired at exit, too)
    unsent, errors = 0, []
    for tally in tallies:
        try:
            tally.flush()
        except Exception as exc:
            unsent += tally.pending()
            errors.append(f"{type(exc).__name__}: {exc}")
    if errors:
        print(f"deliberate: {unsent} metric series not sent: {errors[0]}", file=sys.stderr)


class _Flusher:
    """The one thread that flushes every tally each ``FLUSH_SEC``, started with the first
    count (a process that counts nothing starts none)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def ensure_running(self) -> None:
        if self._thread is not None:
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="deliberate-metrics", daemon=True
                )
                self._thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(FLUSH_SEC)
            flush_all()

    def after_fork(self) -> None:
        """The child has no flushing thread (its first count starts one) and none of the
        parent's counts; locks another thread held at the fork are made anew."""
        global _tallies_lock
        self._lock, self._thread = threading.Lock(), None
        _tallies_lock = threading.Lock()
        _retired.clear()
        for tally in list(_tallies.values()):
            tally.forget()


_flusher = _Flusher()
os.register_at_fork(after_in_child=_flusher.after_fork)
atexit.register(_at_exit)
