"""``deliberate bench``: benchmarks that print ratios against a baseline measured in the same
run (``commits``: the gateway's commit against raw SETs and against its own writes by hand)."""

from bot.cli.bench.commits import register

__all__ = ["register"]
