"""A simulated network link in front of a Redis server: a TCP proxy, in a process of its own,
that holds every chunk of bytes for a set time each way before passing it on, so that a
round trip costs what it costs across a network (issue 33: "on a cloud network every round
trip costs 0.3-1 ms"). Used by ``turn_overhead.py --rtt``.

This machine's kernel has no ``netem`` qdisc (``tc qdisc add ... netem`` answers "Specified
qdisc kind is unknown"), so the delay is made here: a thread per direction reads, stamps
each chunk with the time it may leave, and a second thread sends it when due (sleeping with
a timer slack of 1 ns rather than Linux's 50 µs default). What it adds beyond the delay (two
loopback hops and a little Python) is in every round trip, the PING baseline's too; the
PING measured through it is what a report quotes as the link's round trip.

    python bench/delayed_link.py --to 127.0.0.1:6379 --one-way-us 250   # prints its port
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

__all__ = ["DelayedLink"]

PR_SET_TIMERSLACK = 29


class DelayedLink:
    """The proxy process in front of ``url``'s server (TCP), ``one_way_us`` each way;
    ``url`` is the same URL through it."""

    def __init__(self, url: str, one_way_us: int) -> None:
        parts = urlsplit(url)
        if parts.scheme != "redis" or not parts.hostname:
            raise SystemExit(f"--rtt needs a Redis reached over TCP, not {url}")
        target = f"{parts.hostname}:{parts.port or 6379}"
        command = [sys.executable, str(Path(__file__)), "--to", target]
        command += ["--one-way-us", str(one_way_us)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        port = int(self.process.stdout.readline())
        auth = parts.netloc.rpartition("@")[0]
        netloc = f"{auth}@127.0.0.1:{port}" if auth else f"127.0.0.1:{port}"
        self.url = urlunsplit(parts._replace(netloc=netloc))

    def close(self) -> None:
        self.process.terminate()
        self.process.wait()


def serve(target: tuple[str, int], delay_s: float) -> None:
    with contextlib.suppress(OSError):  # wake on time (Linux), not up to 50 µs late
        ctypes.CDLL(None).prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0)
    listener = socket.create_server(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)
    while True:
        client, _ = listener.accept()
        server = socket.create_connection(target)
        for end in (client, server):
            end.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for source, sink in ((client, server), (server, client)):
            Direction(source, sink, delay_s).start()


class Direction:
    """Bytes from ``source`` to ``sink``, each chunk held ``delay_s`` from its arrival."""

    def __init__(self, source: socket.socket, sink: socket.socket, delay_s: float) -> None:
        self.source, self.sink, self.delay_s = source, sink, delay_s
        self.queue: deque[tuple[float, bytes]] = deque()
        self.ready = threading.Condition()

    def start(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._write, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                data = self.source.recv(1 << 16)
            except OSError:
                data = b""
            with self.ready:
                self.queue.append((time.perf_counter() + self.delay_s, data))
                self.ready.notify()
            if not data:
                return

    def _write(self) -> None:
        while True:
            with self.ready:
                while not self.queue:
                    self.ready.wait()
                due, data = self.queue.popleft()
            wait = due - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            if not data:
                with contextlib.suppress(OSError):
                    self.sink.shutdown(socket.SHUT_WR)
                return
            try:
                self.sink.sendall(data)
            except OSError:
                return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--to", required=True, help="host:port of the server")
    parser.add_argument("--one-way-us", type=int, required=True, help="delay each way, µs")
    args = parser.parse_args()
    host, _, port = args.to.rpartition(":")
    serve((host, int(port)), args.one_way_us / 1e6)


if __name__ == "__main__":
    main()
