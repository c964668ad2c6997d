"""``deliberate worker [--burst]``: the rule consumer and an RQ worker in one process.

The consumer reads committed mutations (a consumer group on the mutation log) and enqueues
the runs of the rules they trigger; the worker runs them against the connectors. The queue
lives on ``DELIBERATE_QUEUE_URL`` when set (RQ does not support Redis Cluster), else beside
the state."""

from __future__ import annotations

import argparse
import os
import sys
import threading

from redis import Redis
from rq import Queue, SimpleWorker

from bot.app import App
from bot.redis_connection import connection_url
from rules.engine.engine import Engine
from rules.service import RuleService
from rules.worker.context import WorkerContext, install

__all__ = ["queue_for", "register"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    worker = commands.add_parser(
        "worker",
        help="run rules: the rule consumer and an RQ worker",
        description="Consume the mutation log, evaluate the rules, and run their actions on "
        "the connectors (credentials from the environment). With --burst, work until "
        "nothing is left, print a summary and exit.",
    )
    worker.add_argument(
        "--burst", action="store_true", help="stop when the log and the queue are empty"
    )
    worker.set_defaults(handler=_worker)


def queue_for(app: App) -> Queue:
    """The workspace's queue on ``DELIBERATE_QUEUE_URL``, else on the state's Redis."""
    url = os.environ.get("DELIBERATE_QUEUE_URL") or connection_url(app.redis)
    name = f"{app.config.automation.queue}.{app.store.workspace}"
    # RQ stores pickled jobs: it needs raw bytes, not decoded text
    return Queue(name, connection=Redis.from_url(url))


def _worker(app: App, args: argparse.Namespace) -> int:
    from connectors.registry import default_registry

    queue = queue_for(app)
    book = app.rules
    install(WorkerContext(app.redis, app.gateway, book, default_registry()))
    service = RuleService(Engine(app.store, book, queue), queue)
    worker = SimpleWorker([queue], connection=queue.connection)
    if args.burst:
        return _burst(service, worker, queue)
    stop = threading.Event()
    consumer = threading.Thread(target=service.run, args=(stop,), name="rules", daemon=True)
    consumer.start()
    print(f"deliberate worker: rules on {app.store.workspace}, queue {queue.name}", flush=True)
    try:
        worker.work(with_scheduler=True)
    finally:
        stop.set()
        consumer.join(timeout=5)
    return 0


def _burst(service: RuleService, worker: SimpleWorker, queue: Queue) -> int:
    service.start()
    rounds = 0
    while True:
        rounds += 1
        handled = service.drain()
        ran = len(queue) > 0
        if ran:
            worker.work(burst=True)
        if not handled and not ran:
            break
    p = service.progress
    print(
        f"deliberate worker --burst: {p.handled} mutations handled, {p.started} runs "
        f"started, {rounds} rounds",
        file=sys.stderr,
    )
    return 0
