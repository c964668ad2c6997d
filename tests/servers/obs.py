"""A local obs-websocket v5 server, for tests driven by the real ``obsws-python`` client.

It speaks the documented protocol: Hello (op 0, with an authentication challenge when a
password is set), Identify (op 1; a wrong or missing password closes with 4009), Identified
(op 2), Request (op 6) and RequestResponse (op 7). It keeps the little state the connectors
touch (scenes, the program scene, the stream output, input mutes), records every request, and
can hold the answer to one request after its effect happened (``hold``), which is how a test
kills a worker between "OBS did it" and "the worker heard back".

    with ObsServer(password="pw") as obs:
        env = {"OBS_WEBSOCKET_URL": obs.url, "OBS_WEBSOCKET_PASSWORD": "pw"}
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Self

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import Server, ServerConnection, serve

from tests.servers.obs_requests import ObsState, RequestFailed, execute

__all__ = ["Hold", "ObsRequest", "ObsServer", "ObsState", "auth_string"]

# WebSocketCloseCode values from the obs-websocket protocol
NOT_IDENTIFIED, AUTHENTICATION_FAILED, UNSUPPORTED_RPC_VERSION = 4007, 4009, 4010
MESSAGE_DECODE_ERROR, UNKNOWN_OP_CODE = 4002, 4004


def auth_string(password: str, salt: str, challenge: str) -> str:
    """base64(sha256(base64(sha256(password + salt)) + challenge)), as the protocol says."""
    secret = base64.b64encode(hashlib.sha256((password + salt).encode()).digest())
    return base64.b64encode(hashlib.sha256(secret + challenge.encode()).digest()).decode()


@dataclass(frozen=True)
class ObsRequest:
    type: str
    data: dict[str, Any]


@dataclass
class Hold:
    """Holds back the answer to the next request of ``request_type`` after its effect is
    applied. ``reached`` is set once that request is being held; ``release()`` lets the
    answer go (stopping the server releases it too)."""

    request_type: str
    reached: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)
    request: ObsRequest | None = None

    def wait(self, timeout: float = 5.0) -> bool:
        return self.reached.wait(timeout)

    def release(self) -> None:
        self.released.set()


class ObsServer:
    def __init__(
        self,
        password: str | None = None,
        port: int = 0,
        *,
        scenes: tuple[str, ...] = ("Starting Soon", "Live", "BRB"),
        inputs: tuple[str, ...] = ("Mic/Aux", "Desktop Audio"),
    ) -> None:
        self.password = password
        self.state = ObsState(scenes=list(scenes), mutes=dict.fromkeys(inputs, False))
        self.identified = 0  # connections that got through Identify
        self.open_sessions = 0  # connections open right now
        self.auth_failures = 0
        self._requests: list[ObsRequest] = []
        self._holds: list[Hold] = []
        self._lock = threading.Lock()
        self._port = port
        self._server: Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------------------

    def start(self) -> Self:
        # a short close_timeout: stop() must not wait on a client that stopped reading
        self._server = serve(self._session, "127.0.0.1", self._port, close_timeout=1)
        self._port = self._server.socket.getsockname()[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._lock:
            holds, self._holds = self._holds, []
        for hold in holds:
            hold.release()
        if self._server is not None:
            self._server.shutdown()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self._port}"

    def env(self) -> dict[str, str]:
        """The variables the OBS connector reads to reach this server."""
        env = {"OBS_WEBSOCKET_URL": self.url}
        if self.password:
            env["OBS_WEBSOCKET_PASSWORD"] = self.password
        return env

    # --- what tests look at and steer --------------------------------------------------

    @property
    def requests(self) -> list[ObsRequest]:
        with self._lock:
            return list(self._requests)

    def request_types(self) -> list[str]:
        return [request.type for request in self.requests]

    def hold(self, request_type: str) -> Hold:
        hold = Hold(request_type)
        with self._lock:
            self._holds.append(hold)
        return hold

    # --- the protocol ------------------------------------------------------------------

    def _session(self, ws: ServerConnection) -> None:
        with self._lock:
            self.open_sessions += 1
        try:
            if self._identify(ws):
                self._serve_requests(ws)
        except (ConnectionClosed, TimeoutError):
            pass  # the client left or never identified; a held answer has nobody to go to
        finally:
            with self._lock:
                self.open_sessions -= 1

    def wait_until_closed(self, timeout: float = 2.0) -> bool:
        """True once no client connection is open (the connector disconnects after each call)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if self.open_sessions == 0:
                    return True
            time.sleep(0.01)
        return False

    def _identify(self, ws: ServerConnection) -> bool:
        hello: dict[str, Any] = {"obsWebSocketVersion": "5.5.4", "rpcVersion": 1}
        salt, challenge = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        if self.password:
            hello["authentication"] = {"challenge": challenge, "salt": salt}
        ws.send(json.dumps({"op": 0, "d": hello}))
        message = _decode(ws.recv(timeout=10))
        if message is None or message.get("op") != 1:
            ws.close(NOT_IDENTIFIED, "The first message must be Identify.")
            return False
        data = message.get("d") or {}
        if data.get("rpcVersion") != 1:
            ws.close(UNSUPPORTED_RPC_VERSION, "Only rpcVersion 1 is supported.")
            return False
        if self.password and data.get("authentication") != auth_string(
            self.password, salt, challenge
        ):
            with self._lock:
                self.auth_failures += 1
            ws.close(AUTHENTICATION_FAILED, "Authentication failed.")
            return False
        with self._lock:
            self.identified += 1
        ws.send(json.dumps({"op": 2, "d": {"negotiatedRpcVersion": 1}}))
        return True

    def _serve_requests(self, ws: ServerConnection) -> None:
        for raw in ws:
            message = _decode(raw)
            if message is None:
                ws.close(MESSAGE_DECODE_ERROR, "The message is not valid JSON.")
                return
            if message.get("op") == 3:  # Reidentify
                ws.send(json.dumps({"op": 2, "d": {"negotiatedRpcVersion": 1}}))
            elif message.get("op") == 6:
                ws.send(json.dumps({"op": 7, "d": self._answer(message.get("d") or {})}))
            else:
                ws.close(UNKNOWN_OP_CODE, f"Unknown op code {message.get('op')}.")
                return

    def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        recorded = ObsRequest(
            str(request.get("requestType")), dict(request.get("requestData") or {})
        )
        with self._lock:
            self._requests.append(recorded)
            try:
                data = execute(self.state, recorded.type, recorded.data)
                status: dict[str, Any] = {"result": True, "code": 100}
            except RequestFailed as failed:
                data, status = (
                    None,
                    {"result": False, "code": failed.code, "comment": failed.comment},
                )
            hold = next((h for h in self._holds if h.request_type == recorded.type), None)
            if hold is not None:
                self._holds.remove(hold)
                hold.request = recorded
        if hold is not None:
            hold.reached.set()
            hold.released.wait()
        answer = {
            "requestType": recorded.type,
            "requestId": request.get("requestId"),
            "requestStatus": status,
        }
        if data is not None:
            answer["responseData"] = data
        return answer


def _decode(raw: str | bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(raw)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None
