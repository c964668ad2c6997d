"""Which of Discord's shards a process runs: ``I/N`` (shard I of N) or ``I,J/N`` (several in
one process). Discord sends a shard the events of the servers with ``(server id >> 22) % N``
equal to its number, and those of no server (direct messages) to shard 0 alone; past 2,500
servers a bot must shard. Replicas of ``deliberate run discord`` share the work by running
one shard each, every one with the same N."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Shards", "shard_of"]


def shard_of(guild_id: int, count: int) -> int:
    """The shard Discord sends a server's events to (its documented formula)."""
    return (guild_id >> 22) % count


@dataclass(frozen=True)
class Shards:
    """``ids``: the shards this process runs (sorted, distinct, each below ``count``)."""

    ids: tuple[int, ...]
    count: int

    @classmethod
    def parse(cls, text: str) -> Shards:
        """``I/N`` or ``I,J,…/N``; ValueError saying what is wrong (the caller names where
        it came from)."""
        spec = text.strip()
        numbers, slash, count_text = spec.partition("/")
        if not slash or not numbers.strip() or not count_text.strip():
            raise ValueError(f"{spec!r} is not a shard: write I/N (shard I of N), e.g. 0/2")
        count = _whole(count_text, spec)
        if count < 1:
            raise ValueError(f"{spec!r}: the shard count must be at least 1")
        ids = [_whole(n, spec) for n in numbers.split(",")]
        over = [n for n in ids if n >= count]
        if over:
            raise ValueError(
                f"{spec!r}: shard {over[0]} does not exist when there are {count} "
                f"(they are 0 to {count - 1})"
            )
        if len(set(ids)) != len(ids):
            raise ValueError(f"{spec!r} names a shard twice")
        return cls(tuple(sorted(ids)), count)

    @property
    def first(self) -> bool:
        """Whether this process runs shard 0, which alone gets direct messages: it also
        registers ``/deliberate`` (once for the whole bot, not once per replica)."""
        return 0 in self.ids

    def __str__(self) -> str:
        return ",".join(str(n) for n in self.ids) + f"/{self.count}"


def _whole(text: str, spec: str) -> int:
    part = text.strip()
    if not (part.isascii() and part.isdigit()):
        raise ValueError(f"{spec!r}: {part!r} is not a shard number (0, 1, 2, …)")
    return int(part)
