"""The RQ worker of ``deliberate worker``, whose scheduler process dies with it.

The rules need RQ's scheduler: a run's retries wait ``backoff_sec`` (``Retry(interval=…)``),
which RQ implements by parking the job in its ``ScheduledJobRegistry``; only a scheduler
moves it back onto the queue. RQ forks the scheduler as a child process holding a lock per
queue (``rq:scheduler-lock:<queue>``), refreshed every second. When the worker is killed
with ``kill -9`` the child lives on, orphaned, and keeps refreshing that lock, so no new
worker becomes the scheduler of those queues while it lives.

Kept as RQ has it (a forked child: RQ restarts it when it dies, and stops it with the worker
on a warm shutdown), with one change: the child watches its parent. It waits on the pipe
multiprocessing keeps to the parent (it reads end-of-file the moment the parent dies, however
it died) and checks ``os.getppid()`` every half second (should a later fork of the worker
hold a copy of the pipe's other end). When the parent is gone it stops as on SIGTERM: it frees its
locks and registers its death within one scheduler interval, so a new worker takes the
scheduler role at once rather than after the lock's ttl. Should it not stop within
``GRACE_SEC`` (Redis unreachable), it exits anyway and its lock lapses by itself. Chosen
over a scheduler thread in the worker, which dies with it but cannot free its lock (so the
next worker waits out its ttl), and over ``prctl(PR_SET_PDEATHSIG)``, which is Linux-only
and fires when the forking *thread* ends, not the process."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable
from multiprocessing.connection import wait
from types import FrameType
from typing import Any

from rq import SimpleWorker
from rq.defaults import DEFAULT_LOGGING_DATE_FORMAT, DEFAULT_LOGGING_FORMAT
from rq.exceptions import StopRequested
from rq.job import Job
from rq.job_lifecycle import call_exception_handlers
from rq.scheduler import RQScheduler

from rules.connector_api import ConnectorError

__all__ = ["ParentBoundScheduler", "RuleWorker"]

PARENT_POLL_SEC = 0.5
GRACE_SEC = 10.0
STOP_WAIT_SEC = 2.0  # how long a SIGTERM to the scheduler child is waited for before another
STOP_TRIES = 10  # SIGTERMs sent before a SIGKILL (its lock then lapses by itself)


# the signals (SIGINT, SIGTERM) that came while a worker started, before its handlers were
# in place (``RuleWorker``); a scheduler child forked meanwhile has its own copy
_deferred: list[int] = []


def _defer(signum: int, frame: FrameType | None) -> None:
    _deferred.append(signum)


class ParentBoundScheduler(RQScheduler):
    """RQ's scheduler, which stops (freeing its locks) when the worker that forked it dies."""

    def _install_signal_handlers(self) -> None:
        """RQ's, then a stop for a Ctrl-C (or a SIGTERM) that reached this child before them:
        forked while the worker started, it was deferred (``RuleWorker``), not a
        ``KeyboardInterrupt`` with a traceback."""
        super()._install_signal_handlers()  # type: ignore[no-untyped-call]
        if _deferred:
            _deferred.clear()
            self.request_stop()  # type: ignore[no-untyped-call]

    def work(self) -> None:
        parent = multiprocessing.parent_process()
        if parent is not None and parent.pid is not None:  # forked by the worker, as RQ does
            watch = threading.Thread(
                target=self._watch, args=(parent.pid, parent.sentinel), daemon=True
            )
            watch.start()
        super().work()  # type: ignore[no-untyped-call]

    def _watch(self, parent_pid: int, sentinel: int) -> None:
        # the sentinel reads end-of-file once the parent is gone (multiprocessing closes the
        # parent's end only after this process ended); getppid() changes as it is reparented
        while os.getppid() == parent_pid and not wait([sentinel], timeout=PARENT_POLL_SEC):
            continue
        self.log.warning("Scheduler: the worker %d is gone; stopping", parent_pid)
        self.request_stop()  # type: ignore[no-untyped-call]
        threading.Event().wait(GRACE_SEC)
        os._exit(1)  # still here: stopping hangs (Redis unreachable); the lock lapses by itself


class RuleWorker(SimpleWorker):
    """RQ's ``SimpleWorker`` (jobs run in this process, where the rules' ``WorkerContext``
    is installed) whose scheduler is a ``ParentBoundScheduler``.

    Ctrl-C is RQ's warm shutdown (the job in hand finishes, then ``work`` returns) and
    ``interrupted`` says it came; a second Ctrl-C, however soon, is a ``KeyboardInterrupt``
    (RQ's cold shutdown ignores one within a second and exits 0). ``work`` puts back the
    signal handlers it found, so a Ctrl-C between two bursts is an ordinary one.

    RQ forks the scheduler, then installs its handlers, then enters the loop whose end stops
    the scheduler: a Ctrl-C before the loop ended the worker with its scheduler child still
    running, and the exit waited for that child for good (or the child, which had Python's
    handler, printed a traceback). Here a signal that comes before the loop is deferred, and
    the loop's first step installs RQ's handlers and acts on it, inside the loop."""

    interrupted = False
    # what a second Ctrl-C does before anything else: the CLI ends the process there and
    # then (the job's lease lapses and the scheduler child follows its parent, as after a
    # kill), rather than unwinding through a job that may be blocked on a connector
    at_second_interrupt: Callable[[], None] | None = None

    _in_loop = False

    def work(self, *args: Any, **kwargs: Any) -> bool:
        found = {each: signal.getsignal(each) for each in (signal.SIGINT, signal.SIGTERM)}
        self._in_loop = False
        _deferred.clear()
        for each in found:
            signal.signal(each, _defer)
        try:
            return bool(super().work(*args, **kwargs))
        except StopRequested:  # a Ctrl-C in RQ's teardown, after its loop: stopping already
            return False
        finally:
            for each, handler in found.items():
                signal.signal(each, handler)

    def _install_signal_handlers(self) -> None:
        """Not yet: at the loop's first step (``check_for_suspension``)."""

    def check_for_suspension(self, burst: bool) -> None:
        if not self._in_loop:  # the loop's first step: RQ's handlers, and what came before
            self._in_loop = True
            super()._install_signal_handlers()  # type: ignore[no-untyped-call]
            came, _deferred[:] = list(_deferred), []
            stopping: StopRequested | None = None
            for signum in came:  # (RQ's first handler puts the second in place)
                handler = signal.getsignal(signum)
                try:
                    if callable(handler):
                        handler(signum, None)
                except StopRequested as stop:  # (a second one, pressed as soon, still counts)
                    stopping = stopping or stop
            if stopping is not None:
                raise stopping
        super().check_for_suspension(burst)

    def stop_scheduler(self) -> None:
        """RQ's, a SIGTERM and a wait, with the SIGTERM sent again while the child lives: one
        that reaches the child in its first instants, before Python's fork is done with it,
        is lost (CPython clears the signals pending then), and RQ would wait for good. A
        worker stopped as soon as it started sends it just then."""
        process = self.scheduler._process if self.scheduler is not None else None
        if process is None or not process.pid or process.exitcode is not None:
            return  # (none, or stopped and waited for already: its pid may be another's now)
        for _ in range(STOP_TRIES):
            with contextlib.suppress(OSError):  # (gone already)
                os.kill(process.pid, signal.SIGTERM)
            process.join(STOP_WAIT_SEC)
            if not process.is_alive():
                return
        self.log.warning("Scheduler %d did not stop on SIGTERM; killed", process.pid)
        process.kill()
        process.join()

    def handle_exception(self, job: Job, *exc_info: Any) -> None:
        """A connector's failure is one line in its own words (the run's record and trace
        keep it): RQ's own line would carry a traceback through our code to say the same."""
        error = exc_info[1] if len(exc_info) > 1 else None
        if not isinstance(error, ConnectorError):
            super().handle_exception(job, *exc_info)
            return
        self.log.warning("job %s: %s", job.id, error)
        call_exception_handlers(self._exc_handlers, job, *exc_info)

    def request_stop(self, signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGINT:
            self.interrupted = True
        super().request_stop(signum, frame)  # type: ignore[no-untyped-call]

    def request_force_stop(self, signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGINT:
            self.interrupted = True
            if self.at_second_interrupt is not None:
                self.at_second_interrupt()
            raise KeyboardInterrupt
        super().request_force_stop(signum, frame)

    def _start_scheduler(
        self,
        burst: bool = False,
        logging_level: str | None = "INFO",
        date_format: str = DEFAULT_LOGGING_DATE_FORMAT,
        log_format: str = DEFAULT_LOGGING_FORMAT,
    ) -> None:
        # RQ's own, with the scheduler's class changed
        self.scheduler = ParentBoundScheduler(
            self.queues,
            connection=self.connection,
            logging_level=logging_level if logging_level is not None else self.log.level,
            date_format=date_format,
            log_format=log_format,
            serializer=self.serializer,
        )
        self.scheduler.acquire_locks()  # type: ignore[no-untyped-call]
        if not self.scheduler.acquired_locks:
            return
        if burst:
            try:
                self.scheduler.register_birth()
                self.scheduler.enqueue_scheduled_jobs()  # type: ignore[no-untyped-call]
            finally:
                self.scheduler.release_locks()  # type: ignore[no-untyped-call]
                self.scheduler.register_death()
        else:
            self.scheduler.start()  # type: ignore[no-untyped-call]
