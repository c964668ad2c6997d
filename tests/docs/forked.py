"""``deliberate`` for the console blocks: each command still a process of its own, forked
from a server that imported the command's modules once, instead of a new interpreter that
imports them again (~0.3 s of CPU a command, most of what a block costs).

The shell finds ``deliberate`` in a directory of the server's (``Forked.bin``): a small
client (``forked_client.py``, the standard library alone, started with ``-I -S``) that hands
the server its arguments, environment, working directory and its own standard input, output
and error (the descriptors themselves), and exits as the command did. The server forks; the
child takes those descriptors as 0, 1 and 2, that environment and directory, builds
``sys.stdin``, ``stdout`` and ``stderr`` as Python does at start-up, runs ``bot.main.main``
as the installed script does, and ends as an interpreter does (threads joined, ``atexit``,
streams flushed). So a pipe, a redirection, a here-document or ``$(...)`` around the command
sees what it would see from the real one, and the shell gets its exit code.

Not for a test about the process itself (start-up, signals, a terminal): nothing here
forwards a signal sent to the client."""

from __future__ import annotations

import atexit
import contextlib
import gc
import io
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.polling import wait_for

__all__ = ["Forked"]

CLIENT = Path(__file__).with_name("forked_client.py")
HEADER = struct.Struct("!I")  # the length of the JSON request that follows
CODE = struct.Struct("!i")  # the exit code, or a signal's number as its negative


class Forked:
    """The server as a process of this one's, with the directory of its ``deliberate``."""

    def __init__(self) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="deliberate-forked-"))  # short: a socket
        self.socket = self.home / "server.sock"
        self.bin = self.home / "bin"
        self.bin.mkdir()
        client = self.bin / "deliberate"
        source = CLIENT.read_text(encoding="utf-8").replace("@SOCKET@", str(self.socket))
        client.write_text(f"#!{sys.executable} -IS\n{source}", encoding="utf-8")
        client.chmod(0o755)
        argv = [sys.executable, "-m", "tests.docs.forked", str(self.socket)]
        root = str(Path(__file__).resolve().parents[2])
        self.process = subprocess.Popen(argv, cwd=root, stdin=subprocess.DEVNULL)
        wait_for(
            lambda: self.socket.exists() or self.process.poll() is not None,
            "the fork server's socket",
        )
        if self.process.poll() is not None:
            raise RuntimeError(f"the fork server ended with {self.process.returncode}")

    def stop(self) -> None:
        """End the server and wait for it, so that its CPU and its commands' count."""
        self.process.terminate()
        self.process.wait(timeout=60)
        for path in (self.bin / "deliberate", self.socket):
            path.unlink(missing_ok=True)
        self.bin.rmdir()
        self.home.rmdir()


def _preload() -> None:
    """What the blocks' commands import, imported once before any fork."""
    import importlib

    from bot.main import COMMANDS

    for module in dict.fromkeys(COMMANDS.values()):
        importlib.import_module(module)


def serve(path: str) -> None:
    _preload()
    assert threading.active_count() == 1, "a fork copies one thread alone"
    gc.freeze()  # what is imported stays shared: no child's collection walks (and copies) it
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".new")
    listener.listen(16)
    os.rename(path + ".new", path)  # there once it accepts: the tests wait for the name
    woken_r, woken_w = os.pipe()
    os.set_blocking(woken_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(woken_w)
    waiting: dict[int, socket.socket] = {}  # a running command's pid: its client
    while True:
        try:
            readable, _, _ = select.select([listener.fileno(), woken_r], [], [])
        except InterruptedError:
            continue
        if woken_r in readable:
            os.read(woken_r, 4096)
            _reap(waiting)
        if listener.fileno() in readable:
            conn, _ = listener.accept()
            try:
                request, fds = _request(conn)
            except (ConnectionError, OSError, ValueError):  # (a client gone: the next one)
                conn.close()
                continue
            pid = os.fork()
            if pid == 0:
                listener.close()
                os.close(woken_r)
                os.close(woken_w)
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                for held in (conn, *waiting.values()):
                    held.close()
                os._exit(_command(request, fds))
            for fd in fds:
                os.close(fd)
            waiting[pid] = conn
            _reap(waiting)


def _request(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """The client's request and descriptors; ``ConnectionError`` when it left before
    sending them whole (its descriptors, if any came, closed)."""
    data, fds, _, _ = socket.recv_fds(conn, HEADER.size, 3)
    try:
        data += _exactly(conn, HEADER.size - len(data))
        (size,) = HEADER.unpack(data)
        body = _exactly(conn, size)
        if len(fds) != 3:
            raise ConnectionError(f"the client sent {len(fds)} descriptors, not 3")
        request: dict[str, Any] = json.loads(body)
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return request, fds


def _exactly(conn: socket.socket, size: int) -> bytes:
    got = b""
    while len(got) < size:
        more = conn.recv(size - len(got))
        if not more:
            raise ConnectionError("the client left before its request was whole")
        got += more
    return got


def _reap(waiting: dict[int, socket.socket]) -> None:
    """Tell each client whose command ended its exit code (a signal's as its negative)."""
    while waiting:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        conn = waiting.pop(pid)
        with contextlib.suppress(OSError):  # (a client gone already)
            conn.sendall(CODE.pack(os.waitstatus_to_exitcode(status)))
        conn.close()


def _command(request: dict[str, Any], fds: list[int]) -> int:
    """In the child: become the command's process, run it, and return its exit code."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()  # the block's TZ, as a process started with it reads it (not the server's)
    os.chdir(str(request["cwd"]))
    _standard_streams(unbuffered=bool(os.environ.get("PYTHONUNBUFFERED")))
    # as the installed script starts: its path first in argv and in the import path
    script = Path(sys.executable).with_name("deliberate")
    sys.argv = [str(script), *request["argv"]]
    sys.path[0] = str(script.parent)
    from bot.main import main

    code = _exit_code(main)
    # as the interpreter ends: threads joined, atexit, the streams flushed; here the streams
    # are flushed first too, as the real process's last writes come out within microseconds
    # of its last line (a ``| grep -m1`` has left within a fraction of a millisecond)
    failed = _flushed()
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    return 120 if failed or _flushed() else code


def _flushed() -> bool:
    """Flush stdout and stderr; True when one failed (said on stderr, as Python says it)."""
    failed = False
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # what Python does with a stream it cannot flush
            traceback.print_exc()
            failed = True
    return failed


def _exit_code(main: Callable[[], int]) -> int:
    """``sys.exit(main())`` as the interpreter ends it: ``SystemExit``'s code, a message
    printed and 1, or an uncaught exception's traceback and 1."""
    try:
        return int(main() or 0)
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return int(exc.code or 0)
        print(exc.code, file=sys.stderr)
        return 1
    except BaseException as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
        return 1


def _standard_streams(unbuffered: bool) -> None:
    """``sys.stdin``, ``stdout`` and ``stderr`` on descriptors 0, 1 and 2, as Python makes
    them at start-up (``create_stdio``): with ``PYTHONUNBUFFERED`` (as the suite runs),
    stdout and stderr write through at once; else each has a buffer of its descriptor's
    block size, stdout a line at a time on a terminal alone, stderr a line at a time
    always. The encodings and error handlers are this process's."""
    streams = []
    like = (sys.__stdin__, sys.__stdout__, sys.__stderr__)
    for fd, (mode, was) in enumerate(zip(("rb", "wb", "wb"), like, strict=True)):
        raw = fd != 0 and unbuffered
        stream = open(fd, mode, buffering=0 if raw else -1, closefd=False)  # noqa: SIM115
        streams.append(
            io.TextIOWrapper(
                stream,
                encoding=was.encoding if was else "utf-8",
                errors=was.errors if was else ("backslashreplace" if fd == 2 else "strict"),
                newline="\n",
                line_buffering=not unbuffered and (fd == 2 or (fd == 1 and stream.isatty())),
                write_through=unbuffered,
            )
        )
    for name, stream in zip(("stdin", "stdout", "stderr"), streams, strict=True):
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


if __name__ == "__main__":
    serve(sys.argv[1])
