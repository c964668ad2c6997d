"""The Slack app as Slack is told of it: what it asks for (``scopes``: its slash command,
events and the bot scope of each Web API method it calls, by feature) and the manifest made
from that for where the bot runs (``document``; ``deliberate slack manifest``)."""
