"""The chat messages that show a pending proposal (``refs``: recorded by the adapters as they
post them, with the team or server they were posted in), and what the worker does with them:
closes them when it expires (``expiry``), tells its requester of each change in the thread
and by DM (``telling``), escalates it when nobody decides (``escalation``), each through the
closer with the token that reaches the message (``bot.cli.closers`` finds the environment's,
or a Slack team's installation's: it knows each platform, which this room does not), and the
lines a click's outcome adds under the message (``click_lines``)."""

from __future__ import annotations
