"""A WSGI application (the web inspector, or any Flask app a test builds) served by waitress
on a free port of 127.0.0.1, in a thread of its own, so real HTTP clients and a real browser
reach it:

    with ServedWsgi(flask_app) as served:
        httpx.get(f"{served.base}/health")

``stop`` closes the sockets from the server loop's own thread (through its trigger), as
``tests/bot/slack/serving.py`` explains."""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Any

from waitress import wasyncore
from waitress.server import create_server

__all__ = ["ServedWsgi"]


class ServedWsgi:
    def __init__(self, app: Any, threads: int = 4) -> None:
        self.server: Any = create_server(app, host="127.0.0.1", port=0, threads=threads)
        self.port: int = self.server.effective_port
        self.base = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> ServedWsgi:
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        server = self.server
        if self._thread.is_alive():
            server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
            self._thread.join(timeout)
            assert not self._thread.is_alive(), f"the server still ran after {timeout}s"
        else:
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
