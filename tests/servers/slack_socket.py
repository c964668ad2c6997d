"""A local Slack Socket Mode endpoint: the websocket that ``apps.connections.open`` hands out.
It greets with ``hello``, sends envelopes (``events_api``, ``interactive``, ``slash_commands``)
and records the acknowledgements that come back, as Slack documents them.

    with SocketModeServer() as socket, SlackServer(socket_url=socket.url) as slack:
        socket.wait_connected()
        envelope = socket.send("events_api", event_callback(...))
        socket.wait_acked(envelope)
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any, Self

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import Server, ServerConnection, serve

__all__ = ["SocketModeServer"]


class SocketModeServer:
    def __init__(self) -> None:
        self.acks: dict[str, dict[str, Any]] = {}
        self._connections: list[ServerConnection] = []
        self._lock = threading.Condition()
        self._server: Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        self._server = serve(self._session, "127.0.0.1", 0, close_timeout=1)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"ws://127.0.0.1:{self._server.socket.getsockname()[1]}/link/?ticket=t1"

    def wait_connected(self, timeout: float = 20.0) -> None:
        self._wait(lambda: self._connections, timeout, "no Socket Mode client connected")

    def send(self, envelope_type: str, payload: dict[str, Any]) -> str:
        """Send an envelope to every connected client; returns its id."""
        envelope_id = str(uuid.uuid4())
        envelope = {
            "envelope_id": envelope_id,
            "type": envelope_type,
            "payload": payload,
            "accepts_response_payload": envelope_type != "events_api",
            "retry_attempt": 0,
            "retry_reason": "",
        }
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            connection.send(json.dumps(envelope))
        return envelope_id

    def wait_acked(self, envelope_id: str, timeout: float = 20.0) -> dict[str, Any]:
        self._wait(lambda: envelope_id in self.acks, timeout, f"{envelope_id} not acknowledged")
        return self.acks[envelope_id]

    def _wait(self, condition: Any, timeout: float, message: str) -> None:
        deadline = time.monotonic() + timeout
        with self._lock:
            while not condition():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(message)
                self._lock.wait(left)

    def _session(self, connection: ServerConnection) -> None:
        hello = {"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0TEST"}}
        connection.send(json.dumps(hello))
        with self._lock:
            self._connections.append(connection)
            self._lock.notify_all()
        try:
            for raw in connection:
                message = json.loads(raw)
                if isinstance(message, dict) and "envelope_id" in message:
                    with self._lock:
                        self.acks[str(message["envelope_id"])] = message
                        self._lock.notify_all()
        except ConnectionClosed:
            pass
        finally:
            with self._lock:
                self._connections.remove(connection)
