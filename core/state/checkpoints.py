"""Replay checkpoints: a snapshot image rebuilt from the log, saved with the last log id it
covers, so the next replay starts there instead of at the beginning of the log."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.state.entry import Entry
from core.state.keys import WorkspaceKeys

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["Checkpoints", "Image"]

_log = logging.getLogger("deliberate.replay")


@dataclass
class Image:
    """State rebuilt from the log: every entry ever set and not deleted (expired ones too,
    filtered by time when read), every key's version counter, the last applied log id."""

    entries: dict[str, Entry] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    last_id: str | None = None

    def to_json(self) -> str:
        return json.dumps(
            {
                "lastId": self.last_id,
                "versions": self.versions,
                "entries": [
                    e.model_dump(mode="json", by_alias=True) for e in self.entries.values()
                ],
            }
        )

    @classmethod
    def from_json(cls, raw: str) -> Image:
        data = json.loads(raw)
        entries = [Entry.model_validate(e) for e in data["entries"]]
        return cls({e.key: e for e in entries}, dict(data["versions"]), data["lastId"])


class Checkpoints:
    def __init__(self, client: Redis, keys: WorkspaceKeys) -> None:
        self.redis = client
        self.keys = keys

    def save(self, image: Image) -> None:
        self.redis.set(self.keys.checkpoint, image.to_json())

    def load(self) -> Image | None:
        """The latest checkpoint; an unreadable one is logged and ignored (replay starts over)."""
        raw = self.redis.get(self.keys.checkpoint)
        if raw is None:
            return None
        try:
            return Image.from_json(str(raw))
        except (ValueError, KeyError, TypeError) as exc:  # ValidationError is a ValueError
            _log.warning("ignoring unreadable checkpoint %s: %s", self.keys.checkpoint, exc)
            return None
