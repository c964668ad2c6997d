"""Canonical state: the versioned snapshot and the append-only mutation log of one workspace.

Key names (``keys``), what a state entry, an actor and a mutation are, the one JSON encoding of
values, the limits a commit is held to, the store whose ``commit`` runs one Lua script
(``lua/``, each script with its KEYS/ARGV contract), reading the log, checkpoints and replay.
Nothing here knows of the deliberation loop, the model or an adapter.

Its modules are imported by name (``core.state.store``...): this package imports none of
them, so that a command that reads one key does not load replay, checkpoints and the chain."""
