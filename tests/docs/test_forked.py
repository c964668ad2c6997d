"""The console blocks' fork server (``forked.py``) outlives a client that leaves early."""

from __future__ import annotations

import os
import socket
import subprocess

from tests.docs.forked import HEADER, Forked


def test_a_client_gone_before_its_request_is_whole_leaves_the_server_serving() -> None:
    server = Forked()
    try:
        for sent in (b"", HEADER.pack(100), HEADER.pack(5) + b"{"):  # nothing, a half, no fds
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gone:
                gone.connect(str(server.socket))
                gone.sendall(sent)
        done = subprocess.run(
            [str(server.bin / "deliberate"), "--help"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PATH": f"{server.bin}:{os.environ['PATH']}"},
        )
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
        assert done.stdout.startswith("usage: deliberate")
        assert server.process.poll() is None
    finally:
        server.stop()
