"""Discord's interaction endpoints for the local REST API: the callback
(``POST /interactions/{id}/{token}/callback``, once, within 3 seconds of the interaction, or
``Unknown interaction``), then the original response (``PATCH
/webhooks/{application}/{token}/messages/@original``) and follow-ups (``POST
/webhooks/{application}/{token}``), which need the interaction acknowledged first.

A modal (callback type 9) is checked as Discord documents it (a custom_id of 1 to 100
characters, a title of at most 45, 1 to 5 components: text inputs in Labels, or in action rows
as before) and kept in ``modals``; it is no answer to a submitted modal, and only a
component's interaction, or a modal's submitted from one, may edit the clicked message.

The test says which interaction it dispatched (``started``); Discord knows it from the
gateway. Ephemeral messages (flag 64) are kept with the others, flagged."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.servers.http import Request, Response

if TYPE_CHECKING:
    from tests.servers.discord_api import DiscordServer

__all__ = ["EPHEMERAL", "CallbackType", "InteractionRoutes", "modal_problem"]

EPHEMERAL, LOADING = 64, 128
RESPOND_WITHIN_SEC = 3.0
MODAL_SUBMIT = 5  # the interaction type of a submitted modal
ACTION_ROW, TEXT_INPUT, LABEL = 1, 4, 18
MAX_TITLE, MAX_LABEL, MAX_DESCRIPTION, MAX_TEXT, MAX_PLACEHOLDER = 45, 45, 100, 4000, 100


class CallbackType:
    MESSAGE = 4  # CHANNEL_MESSAGE_WITH_SOURCE
    DEFERRED_MESSAGE = 5  # "thinking…", the message comes as the original response
    DEFERRED_UPDATE = 6  # a component's: the clicked message is the original
    UPDATE = 7  # a component's: the clicked message, edited now
    MODAL = 9  # a form for the person to fill in (not for a submitted modal)


@dataclass
class Started:
    id: str
    channel_id: str
    message_id: str | None  # the clicked message, for a component (or a modal opened by one)
    kind: int = 3  # the interaction's type
    at: float = field(default_factory=time.monotonic)
    callback: int | None = None  # its type, once acknowledged
    original: str | None = None  # the message id of the original response


class InteractionRoutes:
    def __init__(self, server: DiscordServer) -> None:
        self.server = server
        self.started_: dict[str, Started] = {}  # by token
        self.callbacks: list[tuple[str, dict[str, Any], float]] = []  # (token, body, delay)
        self.modals: list[dict[str, Any]] = []  # the modals shown, in order
        api = "/api/v10"
        server.route("POST", api + "/interactions/{id}/{token}/callback", self._callback)
        hook = api + "/webhooks/{application_id}/{token}"
        server.route("PATCH", hook + "/messages/@original", self._edit_original)
        server.route("POST", hook, self._followup)

    def started(
        self,
        interaction_id: str,
        token: str,
        channel_id: str,
        message_id: str | None,
        kind: int = 3,
    ) -> None:
        with self.server.lock:
            self.started_[token] = Started(interaction_id, channel_id, message_id, kind)

    def _callback(self, request: Request) -> Response:
        body = request.json if isinstance(request.json, dict) else {}
        with self.server.lock:
            started = self.started_.get(request.params["token"])
            if started is None or started.id != request.params["id"]:
                return _error(404, "Unknown interaction", 10062)
            delay = time.monotonic() - started.at
            if started.callback is not None:
                return _error(400, "Interaction has already been acknowledged.", 40060)
            if delay > RESPOND_WITHIN_SEC:
                return _error(404, "Unknown interaction", 10062)
            self.callbacks.append((request.params["token"], body, delay))
            problem = self._acknowledge(started, int(body.get("type", 0)), body.get("data") or {})
        if problem is not None:
            return problem
        if request.arg("with_response") is None:
            return Response(204)
        return Response(200, self._callback_response(started, int(body["type"])))

    def _acknowledge(self, started: Started, kind: int, data: dict[str, Any]) -> Response | None:
        flags = int(data.get("flags") or 0) & EPHEMERAL
        if kind in (CallbackType.MESSAGE, CallbackType.DEFERRED_MESSAGE):
            loading = LOADING if kind == CallbackType.DEFERRED_MESSAGE else 0
            body = data if kind == CallbackType.MESSAGE else {"content": ""}
            message = self.server.new_message(started.channel_id, body, flags | loading)
            self.server.messages.append(message)
            started.original = message["id"]
        elif kind in (CallbackType.DEFERRED_UPDATE, CallbackType.UPDATE):
            if started.message_id is None:
                return _error(400, "Interaction is not a component's", 50035)
            started.original = started.message_id
            if kind == CallbackType.UPDATE:
                self.server.edit(started.message_id, data)
        elif kind == CallbackType.MODAL:
            if started.kind == MODAL_SUBMIT:
                return _error(400, "A modal is no answer to a submitted modal", 50035)
            problem = modal_problem(data)
            if problem is not None:
                return _error(400, f"Invalid Form Body: {problem}", 50035)
            self.modals.append(data)
        else:
            return _error(400, f"Invalid interaction response type {kind}", 50035)
        started.callback = kind
        return None

    def _callback_response(self, started: Started, kind: int) -> dict[str, Any]:
        original = self.server.message(started.original) if started.original else None
        flags = int((original or {}).get("flags") or 0)
        interaction = {
            "id": started.id,
            "type": started.kind,
            "response_message_id": started.original,
            "response_message_loading": bool(flags & LOADING),
            "response_message_ephemeral": bool(flags & EPHEMERAL),
        }
        resource: dict[str, Any] = {"type": kind}
        if original is not None and kind != CallbackType.DEFERRED_MESSAGE:
            resource["message"] = original
        return {"interaction": interaction, "resource": resource}

    def _acknowledged(self, request: Request) -> Started | Response:
        with self.server.lock:
            started = self.started_.get(request.params["token"])
        if started is None:
            return _error(404, "Unknown Webhook", 10015)
        if started.callback is None:
            return _error(404, "Unknown Message", 10008)  # nothing to follow up or edit yet
        return started

    def _edit_original(self, request: Request) -> Response:
        started = self._acknowledged(request)
        if isinstance(started, Response):
            return started
        body = request.json if isinstance(request.json, dict) else {}
        assert started.original is not None
        with self.server.lock:  # the "thinking…" message stops loading once edited
            original = self.server.message(started.original)
            original["flags"] = int(original.get("flags") or 0) & ~LOADING
        return self.server.edit(started.original, body)

    def _followup(self, request: Request) -> Response:
        started = self._acknowledged(request)
        if isinstance(started, Response):
            return started
        body = request.json if isinstance(request.json, dict) else {}
        problem = self.server.check_message(body)
        if problem is not None:
            return problem
        flags = int(body.get("flags") or 0) & EPHEMERAL
        with self.server.lock:
            message = self.server.new_message(started.channel_id, body, flags)
            message["interaction_token"] = request.params["token"]
            self.server.messages.append(message)
        return Response(200, message)


def modal_problem(data: dict[str, Any]) -> str | None:
    """What Discord would refuse in a modal's callback data, or None."""
    custom_id, title = data.get("custom_id"), data.get("title")
    if not isinstance(custom_id, str) or not 1 <= len(custom_id) <= 100:
        return "custom_id: 1 to 100 characters"
    if not isinstance(title, str) or not 1 <= len(title) <= MAX_TITLE:
        return f"title: 1 to {MAX_TITLE} characters"
    components = data.get("components")
    if not isinstance(components, list) or not 1 <= len(components) <= 5:
        return "components: 1 to 5"
    inputs = []
    for component in components:
        kind = component.get("type")
        if kind == LABEL:
            label, description = component.get("label"), component.get("description")
            if not isinstance(label, str) or not 1 <= len(label) <= MAX_LABEL:
                return f"label: 1 to {MAX_LABEL} characters"
            if description is not None and len(description) > MAX_DESCRIPTION:
                return f"description: at most {MAX_DESCRIPTION} characters"
            inputs.append((component.get("component") or {}, False))
        elif kind == ACTION_ROW and len(component.get("components") or []) == 1:
            inputs.append((component["components"][0], True))  # deprecated, still taken
        else:
            return "components: a Label, or an action row holding one text input"
    for text_input, labelled in inputs:
        problem = _text_input_problem(text_input, labelled)
        if problem is not None:
            return problem
    ids = [text_input.get("custom_id") for text_input, _ in inputs]
    return "custom_id: must be unique in a modal" if len(set(ids)) != len(ids) else None


def _text_input_problem(text_input: dict[str, Any], needs_label: bool) -> str | None:
    if text_input.get("type") != TEXT_INPUT:
        return "component: a text input (4) is the only kind checked here"
    custom_id, label = text_input.get("custom_id"), text_input.get("label")
    if not isinstance(custom_id, str) or not 1 <= len(custom_id) <= 100:
        return "text input custom_id: 1 to 100 characters"
    if text_input.get("style") not in (1, 2):
        return "text input style: 1 (short) or 2 (paragraph)"
    if needs_label and (not isinstance(label, str) or not 1 <= len(label) <= MAX_LABEL):
        return f"text input label: 1 to {MAX_LABEL} characters"
    least, most = text_input.get("min_length", 0), text_input.get("max_length", MAX_TEXT)
    if not 0 <= least <= MAX_TEXT or not 1 <= most <= MAX_TEXT or least > most:
        return f"text input min_length 0 to {MAX_TEXT}, max_length 1 to {MAX_TEXT}"
    if len(text_input.get("value") or "") > most:
        return "text input value: longer than its max_length"
    if len(text_input.get("placeholder") or "") > MAX_PLACEHOLDER:
        return f"text input placeholder: at most {MAX_PLACEHOLDER} characters"
    if "disabled" in text_input:
        return "modals can not have disabled components"
    return None


def _error(status: int, message: str, code: int) -> Response:
    return Response(status, {"message": message, "code": code})
