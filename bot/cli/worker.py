"""``deliberate worker [--burst]``: the rule consumer and an RQ worker in one process.

The consumer reads committed mutations (a consumer group on the mutation log) and enqueues
the runs of the rules they trigger; the worker runs them against the connectors. The queue
lives on ``DELIBERATE_QUEUE_URL`` when set (RQ does not support Redis Cluster), else beside
the state. Each workspace's consumer loop also runs its periodic upkeep (``schedule``); RQ's
scheduler child, which moves retries back onto the queue, dies with the worker
(``rules.worker.scheduler``)."""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
import threading
import time
from collections.abc import Callable

from bot.app import App
from bot.chat.workspaces import WorkspaceDirectory
from bot.cli.closers import closers_from_env
from bot.cli.history import compaction_line
from bot.commands import SUMMARIES
from bot.commands.exits import exit_at_once, say_interrupted
from bot.proposals.escalation import Escalations
from bot.proposals.expiry import ByPlatform, ExpiredMessages
from bot.proposals.telling import Requesters
from bot.screen.json_logging import shown_from_info
from core.gateway.timed import revert_due
from core.state.compaction import Compactor
from rules.engine.engine import Engine
from rules.service import Chore, RuleService, run_due
from rules.worker.context import WorkerContext, install
from rules.worker.scheduler import RuleWorker

__all__ = ["Unlisted", "register", "schedule", "served", "upkeep"]

TIMED_EVERY_SEC = 5  # how often due changes made for a while are reverted (at most this late)
FIND_EVERY_SEC = 60  # how often the workspaces the bots reached beyond the listed are looked for

_log = logging.getLogger("deliberate.worker")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    worker = commands.add_parser(
        "worker",
        help=SUMMARIES["worker"],
        description="Consume the mutation logs, evaluate the rules, and run their actions on "
        "the connectors (credentials from the environment), in --workspace's workspace and "
        "every configured tenant's (restart it after listing a new one; a server or a DM "
        "nobody configured runs no rule). With --burst, work until nothing is left, print "
        "a summary and exit; the lines rules write with log.write show on stderr (from "
        "info, unless --log-level sets the level).",
    )
    worker.add_argument(
        "--burst", action="store_true", help="stop when the log and the queue are empty"
    )
    worker.set_defaults(handler=_worker)


def served(app: App) -> list[App]:
    """The workspaces rules run in, from the config alone: ``--workspace``'s (a single-team
    Slack token's team is served there) and every listed tenant's."""
    return [app.for_workspace(name) for name in app.rule_workspaces()]


def schedule(service: RuleService, app: App, report: Callable[[str], None] = _log.info) -> None:
    """The workspace's periodic upkeep (``upkeep``) beyond the rules' own chores (requeuing
    abandoned runs, deleting dead consumers, timer causes and stale runs sets, which
    ``RuleService`` schedules itself), in the workspace's consumer thread."""
    service.chores.extend(upkeep(app, report))


def upkeep(
    app: App, report: Callable[[str], None] = _log.info, closers: ByPlatform | None = None
) -> list[Chore]:
    """A workspace's periodic upkeep. Each chore that fails is logged and tried at its next
    turn.

    Compaction (``store.retention``) runs here: it never trims what the consumer has not
    handled, and the consumer is the one that handles it. So does the daily sweep that gives
    an expiry to proposals an older release stored without one, and the minute's sweep that
    expires those past their deadline, tells their requesters and closes the chat messages
    that show them (with the bot tokens of the environment, or of each Slack team's
    installation: ``closers_from_env``), and the revert of changes made for a while. What
    compaction did goes to ``report`` (the log of a worker that serves; a person's terminal
    for ``--burst``)."""
    closers = closers if closers is not None else closers_from_env(os.environ, app.redis)
    closing, telling = ExpiredMessages(app, closers), Requesters(app, closers)
    escalating = Escalations(app, closers)

    def expire() -> None:  # then their messages say so, on every platform with a token here
        app.gateway.expire_due()
        telling.run()  # (before their messages are done with)
        closing.run()
        escalating.run()  # those still waiting past their key's ``escalate.after_sec``

    chores = [
        Chore("proposals", 86_400, app.gateway.proposals.sweep),
        Chore(
            "expire proposals, tell their requesters, close their messages, escalate", 60, expire
        ),
        # changes made for a while (``--for``): reverted within seconds of their deadline
        Chore(
            "revert changes made for a while at their deadline",
            TIMED_EVERY_SEC,
            functools.partial(revert_due, app.gateway),
        ),
    ]
    retention = app.config.store.retention
    if not retention.retention.trims:
        return chores

    def compact() -> None:
        done = Compactor(app.store, retention.retention).run()
        if done.trimmed or done.held_back or done.index_dropped:
            report(compaction_line(app.store.workspace, retention.retention, done))

    return [*chores, Chore("compact", retention.compact_every_sec, compact)]


class Unlisted:
    """The upkeep of the workspaces the bots reached that no config lists (``any_team``,
    ``any_server``, direct messages): no rule runs there, by design, but their proposals
    still expire and are told and closed, their changes for a while revert and their logs
    are compacted. They are found in the workspace directory every ``FIND_EVERY_SEC``, and
    served in one thread, each with its own chores."""

    def __init__(self, app: App, report: Callable[[str], None] = _log.info) -> None:
        self.app, self.report = app, report
        self.listed = set(app.rule_workspaces())
        self.closers = closers_from_env(os.environ, app.redis)
        self.chores: dict[str, list[Chore]] = {}
        self._find_at = 0.0

    def step(self) -> None:
        """Look for new ones when due, then run each one's due chores."""
        now = time.monotonic()
        if now >= self._find_at:
            self._find_at = now + FIND_EVERY_SEC
            for row in WorkspaceDirectory(self.app.redis).seen():
                name = row.workspace
                if name in self.listed or name in self.chores:
                    continue
                try:  # one that cannot be opened must not keep the others from their upkeep
                    each = self.app.for_workspace(name, rules=False)
                except Exception:
                    _log.exception("worker: the workspace %r cannot be opened for upkeep", name)
                    continue
                self.chores[name] = upkeep(each, self.report, self.closers)
        for chores in self.chores.values():
            run_due(chores)

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                self.step()
            except Exception:  # a Redis blip must not end the worker: log it and go on
                _log.exception("worker: the upkeep of unlisted workspaces failed")
            stop.wait(1.0)


def _worker(app: App, args: argparse.Namespace) -> int:
    from connectors.log import LOGGER_NAME
    from connectors.registry import default_registry

    if args.burst and args.log_level is None:  # what rules write is for whoever runs it
        shown_from_info(LOGGER_NAME)
    registry = default_registry()
    services, queues = [], []
    for each in served(app):
        queue = each.queue()
        book = each.rules
        install(WorkerContext(each.redis, each.gateway, book, registry))
        service = RuleService(Engine(each.store, book, queue), queue)
        schedule(service, each, _say if args.burst else _log.info)
        services.append(service)
        queues.append(queue)
    worker = RuleWorker(queues, connection=queues[0].connection)
    worker.at_second_interrupt = _interrupted_at_once
    unlisted = Unlisted(app, _say if args.burst else _log.info)
    if args.burst:
        return _burst(services, worker, unlisted)
    stop = threading.Event()
    consumers = [
        threading.Thread(
            target=s.run,
            args=(stop,),
            name=f"rules:{s.engine.keys.workspace.workspace}",
            daemon=True,
        )
        for s in services
    ]
    consumers.append(
        threading.Thread(target=unlisted.run, args=(stop,), name="unlisted", daemon=True)
    )
    for consumer in consumers:
        consumer.start()
    names = ", ".join(s.engine.store.workspace for s in services)
    print(
        f"deliberate worker: rules on {names}; queues {', '.join(q.name for q in queues)}",
        flush=True,
    )
    try:
        worker.work(with_scheduler=True)
    finally:
        stop.set()
        for consumer in consumers:
            consumer.join(timeout=5)
    if worker.interrupted:  # RQ stopped warmly on Ctrl-C: the command still says so
        raise KeyboardInterrupt
    return 0


def _burst(services: list[RuleService], worker: RuleWorker, unlisted: Unlisted) -> int:
    """Work until the logs and the queues are empty: one line saying where, one summing up
    (RQ's own lines only at the ``--log-level`` that asks for them). The unlisted
    workspaces' upkeep runs once."""
    names = ", ".join(s.engine.store.workspace for s in services)
    _say(f"deliberate worker --burst: rules on {names}; running until nothing is left")
    for service in services:
        service.start()
    unlisted.step()
    rounds = 0
    while True:
        rounds += 1
        handled = sum(service.drain() for service in services)
        ran = any(len(service.queue) > 0 for service in services)
        if ran:
            worker.work(burst=True)
            if worker.interrupted:
                raise KeyboardInterrupt
        if not handled and not ran:
            break
    mutations = sum(s.progress.handled for s in services)
    started = sum(s.progress.started for s in services)
    others = f"; upkeep in {len(unlisted.chores)} unlisted" if unlisted.chores else ""
    _say(
        f"deliberate worker --burst: {mutations} mutations handled, {started} runs started "
        f"in {len(services)} workspace(s), {rounds} rounds{others}"
    )
    return 0


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _interrupted_at_once() -> None:
    """A second Ctrl-C while the worker winds down: the one line, and gone. Nothing is
    lost: the step's lease lapses and the reaper runs it again, and the scheduler child
    stops once it sees its parent gone."""
    say_interrupted()
    exit_at_once()
