"""Reading Redis streams: replies as rows of (id, fields), and an entry id as the server
milliseconds it was written at. Every capped stream of a workspace is read through these."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from redis.client import NEVER_DECODE

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = [
    "RawRow",
    "Row",
    "after_id",
    "id_order",
    "raw_range",
    "raw_rows",
    "raw_stream_rows",
    "stream_ms",
    "stream_rows",
]

Row = tuple[str, dict[str, str]]
RawRow = tuple[str, dict[bytes, bytes]]


def stream_rows(reply: Any) -> list[Row]:
    """XRANGE/XREVRANGE rows as (id, fields) with text: clients decode responses, so the
    reply holds text already (no copy per row: replay reads every record of the log)."""
    return [(i, f) for i, f in reply or []]


def raw_stream_rows(reply: Any) -> list[RawRow]:
    """Stream rows read with ``NEVER_DECODE`` (XRANGE's, XREADGROUP's, XAUTOCLAIM's): their
    ids as text, their fields as the bytes Redis holds; an entry deleted since it was
    delivered (fields None) left out."""
    return [(row_id.decode(), fields) for row_id, fields in reply or [] if fields is not None]


def raw_range(
    client: RedisClient,
    key: str,
    start: str = "-",
    end: str = "+",
    count: int | None = None,
    reverse: bool = False,
) -> list[RawRow]:
    """One XRANGE from ``start`` to ``end`` (``reverse``: XREVRANGE, from ``start`` down to
    ``end``), at most ``count`` rows, their fields as the bytes Redis holds: a reader that
    decoded the reply whole would stop at one field that is not UTF-8, and read none of the
    rows beside it."""
    command: tuple[Any, ...] = ("XREVRANGE" if reverse else "XRANGE", key, start, end)
    if count is not None:
        command += ("COUNT", count)
    reply = client.execute_command(*command, **{NEVER_DECODE: True})  # type: ignore[no-untyped-call]
    return raw_stream_rows(reply)


def raw_rows(
    client: RedisClient, key: str, start: str = "-", batch: int = 1000, end: str = "+"
) -> Iterator[RawRow]:
    """The stream's rows from ``start`` to ``end`` (as XRANGE takes them), read in pages of
    ``batch``, with their fields as the bytes Redis holds: nothing decoded that the reader
    does not decode itself (replay and the chain's walk read every record this way)."""
    while True:
        chunk = raw_range(client, key, start, end, batch)
        yield from chunk
        if not chunk or len(chunk) < batch:
            return
        start = "(" + chunk[-1][0]


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
