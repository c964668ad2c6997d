"""The obs-websocket v5 requests the local OBS server understands, applied to its state. Field
names, status codes and comments follow obs-websocket's protocol.md; the caller holds the
server's lock."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ObsState", "RequestFailed", "execute"]

# RequestStatus codes
UNKNOWN_REQUEST_TYPE, MISSING_REQUEST_FIELD, INVALID_REQUEST_FIELD_TYPE = 204, 300, 401
OUTPUT_RUNNING, OUTPUT_NOT_RUNNING, RESOURCE_NOT_FOUND = 500, 501, 600


class RequestFailed(Exception):
    def __init__(self, code: int, comment: str) -> None:
        super().__init__(comment)
        self.code = code
        self.comment = comment


@dataclass
class ObsState:
    """What OBS would hold. Tests may set these directly to arrange a situation."""

    scenes: list[str]
    mutes: dict[str, bool]
    program_scene: str = ""
    streaming: bool = False
    stream_starts: int = field(default=0)  # StartStream requests that started the output

    def __post_init__(self) -> None:
        self.program_scene = self.program_scene or (self.scenes[0] if self.scenes else "")


def _field(data: dict[str, Any], name: str, kind: type) -> Any:
    if name not in data:
        raise RequestFailed(MISSING_REQUEST_FIELD, f"Your request is missing the `{name}` field.")
    if not isinstance(data[name], kind):
        raise RequestFailed(
            INVALID_REQUEST_FIELD_TYPE, f"The field value of `{name}` must be a {kind.__name__}."
        )
    return data[name]


def _scene(state: ObsState, data: dict[str, Any]) -> str:
    name = _field(data, "sceneName", str)
    if name not in state.scenes:
        raise RequestFailed(RESOURCE_NOT_FOUND, f"No source was found by the name of `{name}`.")
    return str(name)


def _input(state: ObsState, data: dict[str, Any]) -> str:
    name = _field(data, "inputName", str)
    if name not in state.mutes:
        raise RequestFailed(RESOURCE_NOT_FOUND, f"No source was found by the name of `{name}`.")
    return str(name)


def _get_version(state: ObsState, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "obsVersion": "30.2.0",
        "obsWebSocketVersion": "5.5.4",
        "rpcVersion": 1,
        "availableRequests": sorted(HANDLERS),
        "supportedImageFormats": ["png", "jpg"],
        "platform": "linux",
        "platformDescription": "local test server",
    }


def _get_program_scene(state: ObsState, data: dict[str, Any]) -> dict[str, Any]:
    name = state.program_scene
    return {"currentProgramSceneName": name, "sceneName": name, "sceneUuid": f"uuid-{name}"}


def _set_program_scene(state: ObsState, data: dict[str, Any]) -> None:
    state.program_scene = _scene(state, data)


def _get_scene_list(state: ObsState, data: dict[str, Any]) -> dict[str, Any]:
    scenes = [{"sceneName": name, "sceneIndex": i} for i, name in enumerate(state.scenes)]
    return {
        "currentProgramSceneName": state.program_scene,
        "currentPreviewSceneName": None,
        "scenes": scenes,
    }


def _get_stream_status(state: ObsState, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "outputActive": state.streaming,
        "outputReconnecting": False,
        "outputTimecode": "00:00:00.000",
        "outputDuration": 0,
        "outputCongestion": 0,
        "outputBytes": 0,
        "outputSkippedFrames": 0,
        "outputTotalFrames": 0,
    }


def _start_stream(state: ObsState, data: dict[str, Any]) -> None:
    if state.streaming:
        raise RequestFailed(OUTPUT_RUNNING, "The stream output is already running.")
    state.streaming = True
    state.stream_starts += 1


def _stop_stream(state: ObsState, data: dict[str, Any]) -> None:
    if not state.streaming:
        raise RequestFailed(OUTPUT_NOT_RUNNING, "The stream output is not running.")
    state.streaming = False


def _get_input_mute(state: ObsState, data: dict[str, Any]) -> dict[str, Any]:
    return {"inputMuted": state.mutes[_input(state, data)]}


def _set_input_mute(state: ObsState, data: dict[str, Any]) -> None:
    name = _input(state, data)
    state.mutes[name] = _field(data, "inputMuted", bool)


Handler = Callable[[ObsState, dict[str, Any]], dict[str, Any] | None]

HANDLERS: dict[str, Handler] = {
    "GetVersion": _get_version,
    "GetCurrentProgramScene": _get_program_scene,
    "SetCurrentProgramScene": _set_program_scene,
    "GetSceneList": _get_scene_list,
    "GetStreamStatus": _get_stream_status,
    "StartStream": _start_stream,
    "StopStream": _stop_stream,
    "GetInputMute": _get_input_mute,
    "SetInputMute": _set_input_mute,
}


def execute(state: ObsState, request_type: str, data: dict[str, Any]) -> dict[str, Any] | None:
    """The request's responseData (None when it has none); RequestFailed on a failure."""
    handler = HANDLERS.get(request_type)
    if handler is None:
        raise RequestFailed(UNKNOWN_REQUEST_TYPE, "Your request type is not valid.")
    return handler(state, data)
