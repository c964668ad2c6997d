"""A TCP proxy in front of the test Redis whose link a test can cut and restore: a short
Redis outage as a client sees it, without touching the server other tests share.

    with RedisProxy(redis_client) as proxy:
        client = proxy.client()   # a Redis client that goes through the proxy
        proxy.cut()               # every connection dropped, new ones closed at once
        proxy.restore()           # connections go through again
        proxy.freeze()            # bytes held, nothing closed: a network dropping packets
        proxy.thaw()
        proxy.hold_replies()      # requests reach the server, its replies are held
        proxy.release_replies()
        proxy.answer_lost(call, landed, "the save")   # call's answer lost once it landed

It listens on 127.0.0.1 with a free port; the upstream is the test Redis's TCP address or
its unix socket (the embedded server)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from typing import Any, Self, TypeVar

from redis import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from tests.polling import wait_for

__all__ = ["RedisProxy"]

T = TypeVar("T")


class RedisProxy:
    def __init__(self, upstream: Redis) -> None:
        self.kwargs: dict[str, Any] = dict(upstream.connection_pool.connection_kwargs)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._open = threading.Event()
        self._open.set()
        self._flowing = threading.Event()
        self._flowing.set()
        self._replying = threading.Event()
        self._replying.set()
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self.refused = 0  # connections closed at once while cut
        self._thread = threading.Thread(target=self._accept, name="proxy", daemon=True)

    @property
    def port(self) -> int:
        port: int = self._listener.getsockname()[1]
        return port

    def client(self, **options: Any) -> Redis:
        """A client through the proxy: no retries of its own (the code under test does its
        own), a short socket timeout, the upstream's database and credentials."""
        settings: dict[str, Any] = {
            "db": self.kwargs.get("db", 0),
            "username": self.kwargs.get("username"),
            "password": self.kwargs.get("password"),
            "decode_responses": self.kwargs.get("decode_responses", False),
            "socket_timeout": 2,
            "socket_connect_timeout": 2,
            "retry": Retry(NoBackoff(), 0),
        }
        return Redis(host="127.0.0.1", port=self.port, **{**settings, **options})

    def cut(self) -> None:
        self._open.clear()
        with self._lock:
            for sock in self._sockets:
                _close(sock)
            self._sockets.clear()

    def restore(self) -> None:
        self._open.set()

    def freeze(self) -> None:
        self._flowing.clear()

    def thaw(self) -> None:
        self._flowing.set()

    def hold_replies(self) -> None:
        self._replying.clear()

    def release_replies(self) -> None:
        self._replying.set()

    def answer_lost(
        self, call: Callable[[], T], landed: Callable[[], object], what: str, hold: bool = True
    ) -> T:
        """``call()``'s result when the server's answer to what it sent is lost: it runs in
        a thread while replies are held; once ``landed()`` says the server did it, every
        connection is cut (the answer never reaches the caller), then the link restored for
        whatever ``call`` sends again. What ``call`` raised is raised here. ``hold`` False:
        the caller has the replies held itself, from a later write of ``call``'s on
        (``hold_replies``), so that those before it are answered."""
        done: list[T] = []
        failed: list[BaseException] = []

        def run() -> None:
            try:
                done.append(call())
            except BaseException as error:
                failed.append(error)

        if hold:
            self.hold_replies()
        thread = threading.Thread(target=run)
        thread.start()
        try:
            wait_for(landed, what)
        finally:
            self.cut()
            self.release_replies()
            self.restore()
        thread.join(timeout=30)
        if failed:
            raise failed[0]
        [result] = done
        return result

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.thaw()
        self.release_replies()
        self.cut()
        _close(self._listener)
        self._thread.join(timeout=5)

    def _upstream(self) -> socket.socket:
        path = self.kwargs.get("path")
        if path:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(path)
            return sock
        host, port = self.kwargs.get("host", "127.0.0.1"), self.kwargs.get("port", 6379)
        return socket.create_connection((host, port))

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            if not self._open.is_set():
                self.refused += 1
                _close(client)
                continue
            try:
                upstream = self._upstream()
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._sockets.update((client, upstream))
            for src, dst, gates in (
                (client, upstream, (self._flowing,)),
                (upstream, client, (self._flowing, self._replying)),
            ):
                pump = threading.Thread(target=_pump, args=(src, dst, gates), daemon=True)
                pump.start()


def _pump(src: socket.socket, dst: socket.socket, gates: tuple[threading.Event, ...]) -> None:
    try:
        while data := src.recv(65536):
            for gate in gates:
                gate.wait()
            dst.sendall(data)
    except OSError:
        pass
    finally:
        _close(src)
        _close(dst)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in recv on it
    with contextlib.suppress(OSError):
        sock.close()
