"""Button numbers kept with the session: a button (its action on its target) gets the next
number the first time it is shown and keeps it, through a resume (``--session``) and for
every console on the session; a number is never given to another button. The buttons last
shown are kept too, so a resumed console takes ``6`` for the Undo it showed before.

One Redis hash per session (``WorkspaceKeys.adapter("console", ...)``), with the session's
TTL: ``#`` the last number given, ``n:ACTION TARGET`` a button's number, ``l:N`` its label,
``shown`` the buttons last shown (JSON). A number is given by one script, so two consoles
never give one number twice."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pydantic import TypeAdapter

from core.deliberation.view import Button
from core.state.keys import WorkspaceKeys, validate_session_id
from core.state.scripts import LuaScript

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["ButtonNumbers"]

_NUMBER_LUA = """
local n = redis.call('HGET', KEYS[1], ARGV[1])
if not n then
  n = redis.call('HINCRBY', KEYS[1], '#', 1)
  redis.call('HSET', KEYS[1], ARGV[1], n)
end
redis.call('HSET', KEYS[1], 'l:' .. n, ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return tonumber(n)
"""
_BUTTONS = TypeAdapter(list[Button])


class ButtonNumbers:
    def __init__(self, client: RedisClient, workspace: str, session_id: str, ttl_ms: int) -> None:
        self.redis = client
        self.key = WorkspaceKeys(workspace).adapter(
            "console", f"buttons:{validate_session_id(session_id)}"
        )
        self.ttl_ms = ttl_ms
        self._number = LuaScript(client, _NUMBER_LUA)
        self._numbers: dict[tuple[str, str], int] = {}  # numbers never change: read once
        self._labels: dict[int, str] = {}

    def of(self, button: Button) -> int:
        key = (button.action, button.target_id)
        known = self._numbers.get(key)
        if known is None or self._labels.get(known) != button.label:
            field = f"n:{button.action} {button.target_id}"
            known = int(self._number(keys=[self.key], args=[field, button.label, self.ttl_ms]))
            self._numbers[key], self._labels[known] = known, button.label
        return known

    def find(self, number: int, shown: list[Button]) -> Button | None:
        """The button ``number`` stands for, if it is among ``shown`` (a button not numbered
        yet gets its number now, in the order shown)."""
        return next((b for b in shown if self.of(b) == number), None)

    def label(self, number: int) -> str | None:
        """What button ``number`` was, if it was ever shown (by any console on the session)."""
        if number not in self._labels:
            label = self.redis.hget(self.key, f"l:{number}")
            if label is None:
                return None
            self._labels[number] = str(label)
        return self._labels[number]

    def remember(self, buttons: list[Button]) -> None:
        """Keep ``buttons`` as the ones shown, for a console that resumes the session."""
        shown = json.dumps([b.model_dump(mode="json") for b in buttons], separators=(",", ":"))
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(self.key, "shown", shown)
        pipe.pexpire(self.key, self.ttl_ms)
        pipe.execute()

    def shown(self) -> list[Button]:
        """The buttons last shown on the session (none if it was never shown or expired)."""
        raw = self.redis.hget(self.key, "shown")
        return _BUTTONS.validate_json(str(raw)) if raw else []
