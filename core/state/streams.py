"""Reading Redis streams: replies as rows of (id, fields), and an entry id as the server
milliseconds it was written at. Every capped stream of a workspace is read through these."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from redis.client import NEVER_DECODE

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["RawRow", "Row", "after_id", "id_order", "raw_rows", "stream_ms", "stream_rows"]

Row = tuple[str, dict[str, str]]
RawRow = tuple[str, dict[bytes, bytes]]


def stream_rows(reply: Any) -> list[Row]:
    """XRANGE/XREVRANGE rows as (id, fields) with text: clients decode responses, so the
    reply holds text already (no copy per row: replay reads every record of the log)."""
    return [(i, f) for i, f in reply or []]


def raw_rows(
    client: RedisClient, key: str, start: str = "-", batch: int = 1000, end: str = "+"
) -> Iterator[RawRow]:
    """The stream's rows from ``start`` to ``end`` (as XRANGE takes them), read in pages of
    ``batch``, with their fields as the bytes Redis holds: nothing decoded that the reader
    does not decode itself (replay and the chain's walk read every record this way)."""
    while True:
        chunk = client.execute_command(  # type: ignore[no-untyped-call]
            "XRANGE", key, start, end, "COUNT", batch, **{NEVER_DECODE: True}
        )
        for row_id, fields in chunk or []:
            yield row_id.decode(), fields
        if not chunk or len(chunk) < batch:
            return
        start = "(" + chunk[-1][0].decode()


def stream_ms(row_id: str) -> int:
    """The server time (milliseconds) a stream entry was added, from its id ``<ms>-<seq>``."""
    return int(row_id.split("-")[0])


def id_order(row_id: str) -> tuple[int, int]:
    """A stream id as (milliseconds, sequence), which is how ids compare."""
    ms, _, seq = row_id.partition("-")
    return int(ms), int(seq or 0)


def after_id(row_id: str) -> str:
    """The smallest id greater than ``row_id`` (for XTRIM MINID, which keeps ids >= it)."""
    ms, seq = id_order(row_id)
    return f"{ms}-{seq + 1}"
