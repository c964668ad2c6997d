"""One link of the log's hash chain, computed exactly as commit.lua computes it:

    hash = SHA-1( prev \\n n \\n  name \\n len \\n value  (\\n for each next field) )

over the record's fields in the order the stream holds them, ``chain`` left out, ``len`` the
value's length in bytes; ``prev`` is the hash of record ``n - 1``, or for record 1 the SHA-1
of the log's key name (``genesis``), so that a chain copied into another workspace breaks.
Record 1 follows nothing else: no record may come before it in the log (start.py)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["CHAIN_FIELD", "Link", "genesis", "link_hash", "link_hash_text", "parse_link"]

CHAIN_FIELD = b"chain"
_LINK = re.compile(r"([1-9][0-9]{0,18}):([0-9a-f]{40})")


@dataclass(frozen=True)
class Link:
    """Record ``n`` of the chain, ``log_id``, whose hash is ``hash``."""

    log_id: str
    n: int
    hash: str

    @property
    def field(self) -> str:
        """The record's ``chain`` field."""
        return f"{self.n}:{self.hash}"


def parse_link(log_id: str, field: str) -> Link | None:
    """The link a ``chain`` field names, or None when it is not ``<n>:<40 hex digits>``
    (``n`` from 1, with no leading zero)."""
    found = _LINK.fullmatch(field)
    return Link(log_id, int(found[1]), found[2]) if found else None


def genesis(log_key: str) -> str:
    """The hash record 1 of the chain follows."""
    return hashlib.sha1(log_key.encode()).hexdigest()


def link_hash(prev: str, n: int, fields: Mapping[bytes, bytes]) -> str:
    """The hash of record ``n`` with these raw fields (``chain`` among them or not), after
    the record whose hash is ``prev``."""
    parts = [prev.encode(), b"%d" % n]
    for name, value in fields.items():
        if name != CHAIN_FIELD:  # "name\nlen\nvalue", joined by the same "\n" as the rest
            parts += (name, b"%d" % len(value), value)
    return hashlib.sha1(b"\n".join(parts)).hexdigest()


def link_hash_text(prev: str, n: int, fields: Mapping[str, str]) -> str:
    """``link_hash`` of fields a client decoded as UTF-8 text (it decodes strictly, so their
    UTF-8 is the bytes the stream holds), encoded once as a whole: replay checks every
    record it reads."""
    parts = [prev, str(n)]
    for name, value in fields.items():
        if name != "chain":
            size = len(value) if value.isascii() else len(value.encode())
            parts.append(f"{name}\n{size}\n{value}")
    return hashlib.sha1("\n".join(parts).encode()).hexdigest()
