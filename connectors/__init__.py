"""One module per external system (OBS, Twitch, webhooks, Slack, Discord, the log) and a
registry of their named actions (``obs.setScene``). Connectors never write state except
through the MutationGateway; the rule workers call them through ``rules.connector_api``."""

__all__: list[str] = []
