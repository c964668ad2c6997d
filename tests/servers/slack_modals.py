"""Slack's modals, as the local Slack Web API serves them (``views.open``): each trigger id is
exchanged once (``exchanged_trigger_id`` after), a modal is checked against Block Kit's
documented limits (``invalid_arguments``, its ``response_metadata.messages`` saying which),
and the answer is the view as Slack stores it: its ``id``, ``hash`` and an empty ``state``.

    modals = Modals("A0TEST")
    answer = modals.open(fields, team_id="T0TEST", bot_id="B0TESTBOT")
    [opened] = modals.opened   # {"trigger_id": ..., "view": {...}}
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

__all__ = ["Modals", "modal_problems"]


class Modals:
    def __init__(self, app_id: str) -> None:
        self.app_id = app_id
        self.opened: list[dict[str, Any]] = []
        self._triggers: set[str] = set()
        self._lock = threading.Lock()

    def open(self, fields: dict[str, Any], *, team_id: str | None, bot_id: str) -> dict[str, Any]:
        """``views.open``'s answer (``ok`` or Slack's error) to ``fields``."""
        trigger, view = fields.get("trigger_id"), fields.get("view")
        if isinstance(view, str):  # a form body, or slack_sdk's JSON body with a string
            try:
                view = json.loads(view)
            except ValueError:
                view = None
        if not trigger:
            return _invalid("missing required field: trigger_id")
        if not isinstance(view, dict):
            return _invalid("missing required field: view")
        with self._lock:
            if trigger in self._triggers:
                return {"ok": False, "error": "exchanged_trigger_id"}
            self._triggers.add(trigger)
            view_id = f"V{len(self._triggers):08d}"
        problems = modal_problems(view)
        if problems:
            return _invalid(*problems)
        stored = {
            "id": view_id,
            "team_id": team_id,
            "type": "modal",
            "blocks": view.get("blocks") or [],
            "private_metadata": view.get("private_metadata", ""),
            "callback_id": view.get("callback_id", ""),
            "state": {"values": {}},
            "hash": f"{int(time.time())}.{view_id.lower()}",
            "title": view.get("title"),
            "submit": view.get("submit"),
            "close": view.get("close"),
            "clear_on_close": False,
            "notify_on_close": False,
            "root_view_id": view_id,
            "previous_view_id": None,
            "app_id": self.app_id,
            "external_id": "",
            "app_installed_team_id": team_id,
            "bot_id": bot_id,
        }
        with self._lock:
            self.opened.append({"trigger_id": trigger, "view": stored})
        return {"ok": True, "view": stored}


def _invalid(*messages: str) -> dict[str, Any]:
    return {
        "ok": False,
        "error": "invalid_arguments",
        "response_metadata": {"messages": list(messages)},
    }


def modal_problems(view: dict[str, Any]) -> list[str]:
    """What Slack would refuse in a modal: a title, submit and close of at most 24
    characters, private_metadata of 3000, callback_id, block_id and action_id of 255, at most
    100 blocks, section text of 3000, an input's label of 2000, a plain_text_input's
    max_length of 3000 with an initial_value within it; input blocks need a submit button."""
    problems = []
    if view.get("type") != "modal":
        problems.append("view.type must be modal")
    for name in ("title", "submit", "close"):
        part = view.get(name)
        if part is None and name != "title":
            continue
        if not isinstance(part, dict) or part.get("type") != "plain_text":
            problems.append(f"view.{name} must be plain_text")
        elif not 0 < len(str(part.get("text") or "")) <= 24:
            problems.append(f"view.{name}.text must be 1 to 24 characters")
    if len(str(view.get("private_metadata") or "")) > 3000:
        problems.append("view.private_metadata must be at most 3000 characters")
    if len(str(view.get("callback_id") or "")) > 255:
        problems.append("view.callback_id must be at most 255 characters")
    blocks = view.get("blocks")
    if not isinstance(blocks, list) or not 0 < len(blocks) <= 100:
        return [*problems, "view.blocks must hold 1 to 100 blocks"]
    for n, block in enumerate(blocks):
        problems += [f"blocks[{n}]: {p}" for p in _block_problems(block)]
    if any(b.get("type") == "input" for b in blocks) and view.get("submit") is None:
        problems.append("a view with input blocks needs a submit button")
    return problems


def _block_problems(block: dict[str, Any]) -> list[str]:
    problems = []
    if len(str(block.get("block_id") or "")) > 255:
        problems.append("block_id must be at most 255 characters")
    if block.get("type") == "section":
        text = block.get("text") or {}
        if not 0 < len(str(text.get("text") or "")) <= 3000:
            problems.append("text must be 1 to 3000 characters")
    elif block.get("type") == "input":
        label = block.get("label") or {}
        if label.get("type") != "plain_text" or not 0 < len(str(label.get("text") or "")) <= 2000:
            problems.append("label must be plain_text of 1 to 2000 characters")
        problems += _input_problems(block.get("element") or {})
    else:
        problems.append(f"a modal block of type {block.get('type')!r} is not checked here")
    return problems


def _input_problems(element: dict[str, Any]) -> list[str]:
    problems = []
    if len(str(element.get("action_id") or "")) > 255:
        problems.append("element.action_id must be at most 255 characters")
    if element.get("type") != "plain_text_input":
        return [*problems, f"an input element {element.get('type')!r} is not checked here"]
    most = element.get("max_length", 3000)
    if not isinstance(most, int) or not 0 < most <= 3000:
        problems.append("element.max_length must be 1 to 3000")
        most = 3000
    initial = element.get("initial_value")
    if initial is not None and not 0 < len(str(initial)) <= most:
        problems.append(f"element.initial_value must be 1 to {most} characters")
    return problems
