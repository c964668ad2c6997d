"""OBS Studio through obs-websocket v5 (the ``obsws-python`` client): switch the program scene,
start and stop the stream, mute an input. Each call opens its own connection and closes it;
each action can tell whether its effect is already in place (``reconcile``), so a retry after
a worker died mid-call asks OBS instead of acting twice.

Env: ``OBS_WEBSOCKET_URL`` (default ``ws://127.0.0.1:4455``), ``OBS_WEBSOCKET_PASSWORD``
(only when OBS asks for one)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import obsws_python
from obsws_python.error import OBSSDKError, OBSSDKRequestError, OBSSDKTimeoutError
from pydantic import BaseModel, ConfigDict, JsonValue
from websocket import WebSocketException

from rules.connector_api import ActionContext, ConnectorAction, ConnectorError

from .env import optional

__all__ = ["ACTIONS"]

DEFAULT_URL = "ws://127.0.0.1:4455"
TIMEOUT_SEC = 10.0
# obs-websocket RequestStatus codes: NotReady (OBS is starting or shutting down) may pass;
# OutputRunning / OutputNotRunning mean the stream is already where we want it.
NOT_READY, OUTPUT_RUNNING, OUTPUT_NOT_RUNNING = 207, 500, 501


class _Quiet(logging.Filter):
    """obsws-python logs its connection parameters, password included, at INFO, and a failed
    connection with its traceback: the connector says the failure in its own words."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            return False
        if isinstance(record.msg, str) and record.msg.startswith("Connecting with parameters"):
            record.msg, record.args = "Connecting to obs-websocket (parameters withheld)", ()
        return True


logging.getLogger("obsws_python.baseclient.ObsClient").addFilter(_Quiet())


@dataclass(frozen=True)
class _Target:
    host: str
    port: int
    password: str = field(repr=False)


def _target(ctx: ActionContext) -> _Target:
    url = optional(ctx.env, "OBS_WEBSOCKET_URL", DEFAULT_URL)
    bad = ConnectorError("OBS: OBS_WEBSOCKET_URL must look like ws://host:port")
    try:
        parts = urlsplit(url)
        port = parts.port or 4455
    except ValueError:
        raise bad from None
    if parts.scheme != "ws" or not parts.hostname or parts.path not in ("", "/"):
        raise bad
    return _Target(parts.hostname, port, ctx.env.get("OBS_WEBSOCKET_PASSWORD", ""))


def _request_error(error: OBSSDKRequestError) -> ConnectorError:
    # str(error) is "Request X returned code N. With message: <OBS's comment>"
    return ConnectorError(f"OBS: {error}", retryable=error.code == NOT_READY)


def _identify_error(error: OBSSDKError, target: _Target) -> ConnectorError:
    if not target.password and "no password" in str(error):
        return ConnectorError(
            "OBS: obs-websocket asks for a password: OBS_WEBSOCKET_PASSWORD is not set"
        )
    # obs-websocket closes the socket (code 4009) on a wrong password; the client only sees
    # that identification failed.
    return ConnectorError(
        f"OBS: obs-websocket refused to identify us ({error}); check OBS_WEBSOCKET_PASSWORD"
    )


def _open(target: _Target) -> Any:
    failure: ConnectorError
    try:
        return obsws_python.ReqClient(
            host=target.host, port=target.port, password=target.password, timeout=TIMEOUT_SEC
        )
    except OBSSDKTimeoutError as error:
        failure = ConnectorError(f"OBS: timed out connecting ({error})", retryable=True)
    except OBSSDKError as error:
        _close_half_open(error)
        failure = _identify_error(error, target)
    except (OSError, WebSocketException) as error:
        kind = type(error).__name__
        failure = ConnectorError(f"OBS: cannot connect ({kind}: {error})", retryable=True)
    raise failure


def _close_half_open(error: OBSSDKError) -> None:
    """obsws-python raises from ReqClient's constructor when Identify fails and leaves the
    socket it opened to the garbage collector, so OBS keeps a half-open session meanwhile.
    The half-built client is still reachable from the traceback: close its socket now."""
    trace = error.__traceback__
    while trace is not None:
        client = trace.tb_frame.f_locals.get("self")
        socket = getattr(getattr(client, "base_client", client), "ws", None)
        if socket is not None:
            with suppress(OSError, WebSocketException):
                socket.shutdown()
            return
        trace = trace.tb_next


@contextmanager
def _connected(ctx: ActionContext) -> Iterator[Any]:
    """A ``ReqClient`` for the length of one action; every failure leaves as a ConnectorError."""
    client = _open(_target(ctx))
    try:
        yield client
    except OBSSDKRequestError as error:
        raise _request_error(error) from None
    except OBSSDKTimeoutError as error:
        raise ConnectorError(
            f"OBS: timed out waiting for an answer ({error})", retryable=True
        ) from None
    except (OSError, WebSocketException) as error:
        raise ConnectorError(
            f"OBS: connection lost ({type(error).__name__}: {error})", retryable=True
        ) from None
    finally:
        with suppress(OSError, WebSocketException):  # already gone: nothing left to close
            client.disconnect()


def _tolerating(code: int, send: Callable[[], object]) -> bool:
    """Send; True if OBS answered ``code``, meaning the output is already in the wanted state."""
    try:
        send()
    except OBSSDKRequestError as error:
        if error.code == code:
            return True
        raise
    return False


class SetSceneArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SetInputMuteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input: str
    muted: bool


def set_scene(args: SetSceneArgs, ctx: ActionContext) -> JsonValue:
    with _connected(ctx) as client:
        client.set_current_program_scene(args.name)
    return {"scene": args.name}


def scene_is_set(args: SetSceneArgs, ctx: ActionContext) -> bool:
    with _connected(ctx) as client:
        return bool(client.get_current_program_scene().current_program_scene_name == args.name)


def start_stream(args: NoArgs, ctx: ActionContext) -> JsonValue:
    with _connected(ctx) as client:
        already = _tolerating(OUTPUT_RUNNING, client.start_stream)
    return {"streaming": True, "already": already}


def stop_stream(args: NoArgs, ctx: ActionContext) -> JsonValue:
    with _connected(ctx) as client:
        already = _tolerating(OUTPUT_NOT_RUNNING, client.stop_stream)
    return {"streaming": False, "already": already}


def _streaming(ctx: ActionContext) -> bool:
    with _connected(ctx) as client:
        return bool(client.get_stream_status().output_active)


def stream_is_started(args: NoArgs, ctx: ActionContext) -> bool:
    return _streaming(ctx)


def stream_is_stopped(args: NoArgs, ctx: ActionContext) -> bool:
    return not _streaming(ctx)


def set_input_mute(args: SetInputMuteArgs, ctx: ActionContext) -> JsonValue:
    with _connected(ctx) as client:
        client.set_input_mute(args.input, args.muted)
    return {"input": args.input, "muted": args.muted}


def input_mute_is_set(args: SetInputMuteArgs, ctx: ActionContext) -> bool:
    with _connected(ctx) as client:
        return bool(client.get_input_mute(args.input).input_muted) == args.muted


ACTIONS = (
    ConnectorAction(
        "obs.setScene",
        SetSceneArgs,
        set_scene,
        "Switch OBS's program scene to {name}.",
        scene_is_set,
    ),
    ConnectorAction(
        "obs.startStream",
        NoArgs,
        start_stream,
        "Start OBS's stream output (already streaming counts as done).",
        stream_is_started,
    ),
    ConnectorAction(
        "obs.stopStream",
        NoArgs,
        stop_stream,
        "Stop OBS's stream output (already stopped counts as done).",
        stream_is_stopped,
    ),
    ConnectorAction(
        "obs.setInputMute",
        SetInputMuteArgs,
        set_input_mute,
        "Mute or unmute the OBS input {input}.",
        input_mute_is_set,
    ),
)
