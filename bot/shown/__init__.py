"""The chat messages that show a pending proposal (``refs``: recorded by the adapters as they
post them), and what becomes of them when it expires (``expiry``: the worker edits each one,
on its platform, to say so, its buttons gone)."""

from __future__ import annotations
