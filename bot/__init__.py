"""The bot: everything between people (Slack, Discord, a terminal, a browser) and the core. It
translates events in and views out; it decides nothing. Its rooms, each importing only those
below it (``pyproject.toml`` holds the order; ``docs/architecture.md`` walks a click and a
message through them):

- ``main``: the ``deliberate`` command's entry point, which loads one command's module;
- ``cli`` and ``web``: the commands and the web site, thin entry points, apart from each other;
- ``commands``: what every command shares (its line in ``--help``, argument types, exits);
- ``slack``, ``discord`` and ``console``: the chat adapters, apart from each other;
- ``chat``: what they do alike (answers, break-glass, notices, requests, people, deliveries,
  what a click came to, the directory of workspaces);
- ``reports``: the lines, explanations and traces the command line, the web and chat show;
- ``proposals``: the chat messages that show a pending proposal, and their expiry,
  escalation and telling;
- ``app``: the composition root (config, Redis, store, gateway, runtime);
- ``redis`` and ``screen``: the connection and the embedded server; clean terminal output."""

__all__: list[str] = []
