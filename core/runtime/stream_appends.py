"""A row for one of the runtime's capped streams (the trace, a transcript, the beat log),
built before it is written: the runtime writes a message's rows together with the session's
save, in one script (``sessions``), rather than one round trip each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["StreamAppend"]


@dataclass(frozen=True)
class StreamAppend:
    """``XADD stream MAXLEN ~ keep * fields``, then (``ttl_sec`` not None) the stream's time
    to live set to ``ttl_sec``."""

    stream: str
    fields: dict[str, str]
    keep: int
    ttl_sec: int | None = None

    def send(self, client: RedisClient) -> str:
        """The row written on its own (one round trip); its id."""
        if self.ttl_sec is None:
            return str(client.xadd(self.stream, self.fields, maxlen=self.keep, approximate=True))  # type: ignore[arg-type]
        pipe = client.pipeline(transaction=False)
        pipe.xadd(self.stream, self.fields, maxlen=self.keep, approximate=True)  # type: ignore[arg-type]
        pipe.expire(self.stream, self.ttl_sec)
        row_id, _ = pipe.execute()
        return str(row_id)

    def args(self, stream_index: int) -> list[str | int]:
        """The row as the session script reads it (``session_cas.lua``): the index of its
        stream among the script's keys, MAXLEN, time to live ('' for none), the number of
        fields, then each field's name and value."""
        ttl = "" if self.ttl_sec is None else self.ttl_sec
        pairs = [part for item in self.fields.items() for part in item]
        return [stream_index, self.keep, ttl, len(self.fields), *pairs]
