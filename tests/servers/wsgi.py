"""A WSGI application (the web inspector, Bolt's handler, any app a test builds) served by
waitress on a free port of 127.0.0.1, in a thread of its own, so real HTTP clients and a
real browser reach it:

    with ServedWsgi(flask_app) as served:
        httpx.get(f"{served.base}/health")

``server``: a waitress server already made (the Slack bot's own, with its body limit).
``stop`` closes every socket from the server loop's own thread, through the server's
trigger: closed from another thread, a socket can vanish while that loop is in ``select`` on
it, which then fails with "Bad file descriptor" (a thread's unhandled exception). The pull
holds the trigger's lock: the loop runs its thunks under that lock, and another thread's pull
(a worker done with a request) could otherwise wake it to run ours, closing the pipe before
our own write to it ("Bad file descriptor" in ``stop``)."""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Any

from waitress import wasyncore
from waitress.server import create_server

__all__ = ["ServedWsgi"]


class ServedWsgi:
    def __init__(self, app: Any = None, threads: int = 4, *, server: Any = None) -> None:
        if server is None:
            server = create_server(app, host="127.0.0.1", port=0, threads=threads)
        self.server: Any = server
        self.port: int = self.server.effective_port
        self.base = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> ServedWsgi:
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Close every socket from the loop's thread (the loop ends when none is left), then
        stop the worker threads."""
        server = self.server
        if self._thread.is_alive():
            trigger = server.trigger
            with trigger.lock:
                trigger.thunks.append(lambda: wasyncore.close_all(server._map))
                trigger._physical_pull()
            self._thread.join(timeout)
            assert not self._thread.is_alive(), f"the server still ran after {timeout}s"
        else:  # never started: nothing is in select
            wasyncore.close_all(server._map)
        server.task_dispatcher.shutdown()

    def __enter__(self) -> ServedWsgi:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()
