"""What the adapters say to one person when their message, click or command cannot go its
usual way: the same sentences on Slack and on Discord."""

from __future__ import annotations

__all__ = [
    "GUESTS_MAY_NOT_READ",
    "NOT_SHOWN",
    "NO_DMS",
    "TROUBLE",
    "UNCHANGED",
    "UNCONFIRMED",
    "not_served",
]

UNCHANGED = "; nothing was changed."
TROUBLE = "Something went wrong on our side" + UNCHANGED + " Please try again."
NOT_SHOWN = (
    "Your click was handled, but its outcome could not be shown here; "
    "`/deliberate log` shows what changed."
)
# a commit Redis did not confirm within store.commit_retry_sec (a failover that took longer)
UNCONFIRMED = (
    "Redis did not confirm this change in time (a failover, perhaps): it was applied once "
    "or not at all, never twice. `/deliberate log` shows which."
)
NO_DMS = "Deliberate doesn't take direct messages here"
GUESTS_MAY_NOT_READ = "Guests may talk here, not read the workspace's state."


def not_served(unit: str) -> str:
    """``unit``: what the platform calls a tenant (a server, a workspace)."""
    return f"This {unit} isn't set up for Deliberate"
