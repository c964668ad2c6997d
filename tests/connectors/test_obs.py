"""The OBS actions against a local obs-websocket v5 server, through obsws-python."""

from __future__ import annotations

import threading

import pytest

from rules.connector_api import ConnectorError
from tests.connectors.conftest import context, reconcile, run
from tests.logs import LogLines
from tests.servers.obs import ObsServer


def test_set_scene_switches_the_program_scene(obs: ObsServer) -> None:
    result = run("obs.setScene", {"name": "BRB"}, context(obs.env()))

    assert result == {"scene": "BRB"}
    assert obs.state.program_scene == "BRB"
    assert obs.requests[-1].type == "SetCurrentProgramScene"
    assert obs.requests[-1].data == {"sceneName": "BRB"}


def test_an_unknown_scene_carries_obs_own_code_and_comment(obs: ObsServer) -> None:
    with pytest.raises(ConnectorError) as caught:
        run("obs.setScene", {"name": "Nowhere"}, context(obs.env()))

    assert "600" in caught.value.message
    assert "No source was found by the name of `Nowhere`" in caught.value.message
    assert not caught.value.retryable
    assert obs.state.program_scene == "Starting Soon"


def test_set_scene_reconciles_on_the_current_program_scene(obs: ObsServer) -> None:
    ctx = context(obs.env())
    assert not reconcile("obs.setScene", {"name": "Live"}, ctx)

    obs.state.program_scene = "Live"

    assert reconcile("obs.setScene", {"name": "Live"}, ctx)
    assert obs.request_types() == ["GetCurrentProgramScene", "GetCurrentProgramScene"]


def test_start_and_stop_stream(obs: ObsServer) -> None:
    ctx = context(obs.env())

    assert run("obs.startStream", {}, ctx) == {"streaming": True, "already": False}
    assert obs.state.streaming
    assert run("obs.stopStream", {}, ctx) == {"streaming": False, "already": False}
    assert not obs.state.streaming


def test_starting_a_running_stream_counts_as_done(obs: ObsServer) -> None:
    """OBS answers OutputRunning (500); the stream is where the rule wants it."""
    obs.state.streaming = True

    assert run("obs.startStream", {}, context(obs.env())) == {"streaming": True, "already": True}
    assert run("obs.stopStream", {}, context(obs.env()))["already"] is False
    assert run("obs.stopStream", {}, context(obs.env()))["already"] is True
    assert obs.state.stream_starts == 0


def test_stream_reconciles_on_output_active(obs: ObsServer) -> None:
    ctx = context(obs.env())
    assert not reconcile("obs.startStream", {}, ctx)
    assert reconcile("obs.stopStream", {}, ctx)

    obs.state.streaming = True

    assert reconcile("obs.startStream", {}, ctx)
    assert not reconcile("obs.stopStream", {}, ctx)
    assert set(obs.request_types()) == {"GetStreamStatus"}


def test_set_input_mute_and_its_reconcile(obs: ObsServer) -> None:
    ctx = context(obs.env())
    args = {"input": "Mic/Aux", "muted": True}
    assert not reconcile("obs.setInputMute", args, ctx)

    assert run("obs.setInputMute", args, ctx) == {"input": "Mic/Aux", "muted": True}

    assert obs.state.mutes["Mic/Aux"] is True
    assert reconcile("obs.setInputMute", args, ctx)
    assert not reconcile("obs.setInputMute", {"input": "Mic/Aux", "muted": False}, ctx)


def test_muting_an_unknown_input_carries_obs_comment(obs: ObsServer) -> None:
    with pytest.raises(ConnectorError, match="No source was found by the name of `Kazoo`"):
        run("obs.setInputMute", {"input": "Kazoo", "muted": True}, context(obs.env()))


def test_each_call_connects_and_disconnects(obs: ObsServer) -> None:
    ctx = context(obs.env())
    run("obs.setScene", {"name": "Live"}, ctx)
    run("obs.setScene", {"name": "BRB"}, ctx)

    assert obs.identified == 2
    assert obs.wait_until_closed()


def test_the_right_password_identifies(obs_locked: ObsServer, all_logs: LogLines) -> None:
    ctx = context(obs_locked.env())

    assert run("obs.setScene", {"name": "Live"}, ctx) == {"scene": "Live"}
    assert obs_locked.identified == 1
    assert obs_locked.auth_failures == 0
    # obsws-python logs its connection parameters, password included, unless we stop it
    assert "obs-secret-pw" not in all_logs.text()


def test_a_wrong_password_is_refused(obs_locked: ObsServer, all_logs: LogLines) -> None:
    env = {"OBS_WEBSOCKET_URL": obs_locked.url, "OBS_WEBSOCKET_PASSWORD": "not-the-pw"}

    with pytest.raises(ConnectorError) as caught:
        run("obs.setScene", {"name": "Live"}, context(env))

    assert "OBS_WEBSOCKET_PASSWORD" in caught.value.message
    assert not caught.value.retryable
    assert "not-the-pw" not in str(caught.value)
    assert "not-the-pw" not in all_logs.text()
    assert obs_locked.auth_failures == 1
    assert obs_locked.requests == []
    assert obs_locked.state.program_scene == "Starting Soon"


def test_a_missing_password_names_the_variable(obs_locked: ObsServer) -> None:
    with pytest.raises(ConnectorError) as caught:
        run("obs.setScene", {"name": "Live"}, context({"OBS_WEBSOCKET_URL": obs_locked.url}))

    assert caught.value.message == (
        "OBS: obs-websocket asks for a password: OBS_WEBSOCKET_PASSWORD is not set"
    )
    assert not caught.value.retryable
    # obsws-python leaves that socket open; the connector closes it
    assert obs_locked.wait_until_closed(timeout=1)


def test_an_unreachable_obs_is_retryable() -> None:
    with ObsServer() as gone:
        env = gone.env()

    with pytest.raises(ConnectorError) as caught:
        run("obs.startStream", {}, context(env))

    assert caught.value.message.startswith("OBS: cannot connect")
    assert caught.value.retryable


@pytest.mark.parametrize("url", ["http://127.0.0.1:4455", "wss://obs:4455", "ws://", "ws://h:port"])
def test_a_malformed_url_names_the_variable(url: str) -> None:
    with pytest.raises(ConnectorError, match="OBS_WEBSOCKET_URL must look like ws://host:port"):
        run("obs.stopStream", {}, context({"OBS_WEBSOCKET_URL": url}))


def test_a_held_answer_comes_after_the_effect(obs: ObsServer) -> None:
    """What the kill-a-worker test relies on: the scene changed, the caller still waits."""
    hold = obs.hold("SetCurrentProgramScene")
    results: list[object] = []
    caller = threading.Thread(
        target=lambda: results.append(run("obs.setScene", {"name": "Live"}, context(obs.env())))
    )
    caller.start()

    assert hold.wait(5)
    assert obs.state.program_scene == "Live"
    assert hold.request is not None and hold.request.data == {"sceneName": "Live"}
    caller.join(0.2)
    assert caller.is_alive() and results == []

    hold.release()
    caller.join(5)
    assert results == [{"scene": "Live"}]
    # a hold catches one request; the next goes straight through
    assert run("obs.setScene", {"name": "BRB"}, context(obs.env())) == {"scene": "BRB"}
