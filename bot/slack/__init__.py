"""The Slack adapter (slack-bolt): threads are sessions, views are Block Kit, clicks commit
through the runtime. It translates between Slack and the core; it decides nothing."""

__all__: list[str] = []
