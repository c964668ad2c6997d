"""What a test reads of the counts: every count this process made, sent, then the
workspace's sums as ``/metrics`` reads them."""

from __future__ import annotations

from core.metrics import Counts, flush_all, read_counts
from core.redis.client import RedisClient


def counted(client: RedisClient, workspace: str) -> Counts:
    flush_all()
    return read_counts(client, workspace)
