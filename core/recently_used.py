"""A bounded table of the values used most recently, by name, safe to share between threads:
what a process keeps of many (workspaces, their people, the sessions it last saved) without
keeping them all."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

__all__ = ["Recent"]

V = TypeVar("V")


class Recent(Generic[V]):
    """The ``size`` most recently used values by name (the least recently used goes first)."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._lock = threading.Lock()  # adapters use it from several threads
        self._values: OrderedDict[str, V] = OrderedDict()

    def get(self, name: str) -> V | None:
        with self._lock:
            value = self._values.get(name)
            if value is not None:
                self._values.move_to_end(name)
            return value

    def put(self, name: str, value: V) -> V:
        with self._lock:
            self._values[name] = value
            self._values.move_to_end(name)
            while len(self._values) > self.size:
                self._values.popitem(last=False)
            return value

    def drop(self, name: str) -> None:
        with self._lock:
            self._values.pop(name, None)

    def __len__(self) -> int:
        return len(self._values)
