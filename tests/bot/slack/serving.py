"""The bot's own HTTP server (``bot.slack.serve.http_server``: waitress and Bolt's WSGI
handler) on a free port of 127.0.0.1, run in a thread of its own for a test.

    served = Served(bolt).start()
    ... httpx.get(f"{served.base}/slack/install") ...
    served.stop()"""

from __future__ import annotations

from slack_bolt import App

from bot.slack.serve import http_server
from tests.servers.wsgi import ServedWsgi

__all__ = ["Served"]


class Served(ServedWsgi):
    def __init__(self, bolt: App, threads: int = 4) -> None:
        super().__init__(server=http_server(bolt, "127.0.0.1", 0, threads=threads))
