"""The bot's own HTTP server (``bot.slack.serve.http_server``: waitress and Bolt's WSGI
handler) on a free port of 127.0.0.1, run in a thread of its own for a test.

    served = Served(bolt).start()
    ... httpx.get(f"{served.base}/slack/install") ...
    served.stop()

``stop`` closes the server's sockets from its own loop's thread, through the server's
trigger: closed from another thread, a socket can vanish while that loop is in ``select``
on it, which then fails with "Bad file descriptor" (a thread's unhandled exception)."""

from __future__ import annotations

import threading
from typing import Any

from slack_bolt import App
from waitress import wasyncore

from bot.slack.serve import http_server

__all__ = ["Served"]


class Served:
    def __init__(self, bolt: App, threads: int = 4) -> None:
        self.server: Any = http_server(bolt, "127.0.0.1", 0, threads=threads)
        self.port: int = self.server.effective_port
        self.base = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> Served:
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Close every socket from the loop's thread (the loop ends when none is left), then
        stop the worker threads."""
        server = self.server
        if self._thread.is_alive():
            server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
            self._thread.join(timeout)
            assert not self._thread.is_alive(), f"the server still ran after {timeout}s"
        else:  # never started: nothing is in select
            wasyncore.close_all(server._map)
        server.task_dispatcher.shutdown()
