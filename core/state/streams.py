"""Reading Redis streams: replies as rows of (id, fields), and an entry id as the server
milliseconds it was written at. Every capped stream of a workspace is read through these."""

from __future__ import annotations

from typing import Any

__all__ = ["Row", "after_id", "id_order", "stream_ms", "stream_rows"]

Row = tuple[str, dict[str, str]]


def stream_rows(reply: Any) -> list[Row]:
    """XRANGE/XREVRANGE rows as (id, fields) with text: clients decode responses, so the
    reply holds text already (no copy per row: replay reads every record of the log)."""
    return [(i, f) for i, f in reply or []]


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
