"""The local servers serve other processes too (the end-to-end tests run workers that way),
and a held OBS answer survives its caller being killed."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.connectors.conftest import context, reconcile
from tests.servers.http import HttpServer, Response
from tests.servers.obs import ObsServer

SET_SCENE = """
from connectors.registry import default_registry
from rules.connector_api import ActionContext
import os
action = default_registry().get("obs.setScene")
print(action.run(action.args(name="Live"), ActionContext("k", "c", os.environ)))
"""


def test_another_process_reaches_the_http_server() -> None:
    with HttpServer() as server:
        server.route("POST", "/in", Response(200, {"ok": True}))
        code = f"import httpx; print(httpx.post('{server.url}/in', json={{'a': 1}}).status_code)"

        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=20
        )

        assert out.stdout.strip() == "200"
        assert server.wait_for_requests(1)[0].json == {"a": 1}


def test_a_worker_killed_while_its_answer_is_held(obs: ObsServer) -> None:
    hold = obs.hold("SetCurrentProgramScene")
    env = {**os.environ, **obs.env()}
    worker = subprocess.Popen([sys.executable, "-c", SET_SCENE], env=env, stdout=subprocess.PIPE)
    try:
        assert hold.wait(15)
        worker.kill()
        worker.wait(5)
    finally:
        hold.release()

    assert obs.state.program_scene == "Live"
    assert reconcile("obs.setScene", {"name": "Live"}, context(obs.env()))
    assert obs.wait_until_closed()
