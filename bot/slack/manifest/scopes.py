"""What the Slack app asks Slack for: its slash command, the events it takes, and the bot
scope of each Web API method the code calls and each event (``SCOPES``), grouped by the
feature that needs them (``FEATURES``). One table: the manifest (``document.py``) and an
OAuth install's default scopes (``oauth/settings.py``) both come from it, and a test holds
it against every Web API call in the code."""

from __future__ import annotations

__all__ = ["BOT_EVENTS", "COMMAND", "FEATURES", "NO_SCOPE", "SCOPES", "bot_scopes"]

COMMAND = "/deliberate"
BOT_EVENTS = ("app_mention", "message.channels", "message.groups", "message.im", "message.mpim")

# which bot scope each Web API method and event needs, as Slack's reference gives them
# (auth.test and views.open need none)
SCOPES = {
    "app_mention": "app_mentions:read",
    "message.channels": "channels:history",
    "message.groups": "groups:history",
    "message.im": "im:history",
    "message.mpim": "mpim:history",
    "chat.postMessage": "chat:write",
    "chat.postEphemeral": "chat:write",
    "chat.update": "chat:write",
    COMMAND: "commands",
    "usergroups.list": "usergroups:read",
    "users.info": "users:read",
    "conversations.open": "im:write",
    "team.info": "team:read",
}
NO_SCOPE = ("auth.test", "views.open")

# what each feature uses, by method or event; "chat" is always on
FEATURES = {
    "chat": (*BOT_EVENTS, "chat.postMessage", "chat.postEphemeral", "chat.update", COMMAND),
    "groups": ("usergroups.list",),  # roles bound to Slack user groups
    "dms": ("users.info", "conversations.open"),  # rules that tell a person directly
    "orgs": ("team.info",),  # Enterprise Grid: which org a Slack Connect guest's team is in
}


def bot_scopes(features: tuple[str, ...] = tuple(FEATURES)) -> tuple[str, ...]:
    """The bot scopes ``features`` need, each once, in the table's order."""
    wanted = [SCOPES[used] for name in ("chat", *features) for used in FEATURES[name]]
    return tuple(dict.fromkeys(wanted))
