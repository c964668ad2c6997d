"""What every command of ``deliberate`` shares, beneath the command line (``bot.cli``) and the
web (``bot.web``) alike: each command's line in ``deliberate --help`` (``SUMMARIES``: the
module that registers a command takes its line from here, so that ``--help`` alone lists
every command without importing one, each importing the SDKs and models it needs: together
about a second and a half of start-up), the argument types they parse (``args``), and how a
command ends (``exits``)."""

SUMMARIES = {
    "state": "read and write canonical state",
    "proposals": "list the proposals that wait for people",
    "revert": "undo a committed mutation",
    "log": "show the mutation log",
    "replay": "rebuild state from the log",
    "compact": "trim the log behind a checkpoint, as retention says",
    "bench": "measure the store",
    "classify": "interpret a turn",
    "perception": "what the team's clicks taught the classifier: status, reset",
    "console": "think out loud in the terminal",
    "trace": "follow one turn or click, or one proposal's life",
    "rules": "check, dry-run and explain rules",
    "why": "how a key came to hold its value, and what its changes triggered",
    "worker": "run rules: the rule consumer and an RQ worker",
    "run": "run the bot on Slack or Discord",
    "slack": "the Slack app's set-up: its manifest",
    "workspaces": "list the workspaces: one per Slack team, Discord server or DM",
    "redis": "the embedded Redis: status, stop",
    "config": "show the configuration in effect, and where each value comes from",
    "web": "serve the web inspector, inbox and /metrics",
}

__all__ = ["SUMMARIES"]
