"""The application-owned core, a room per idea:

- ``core.state``: canonical state (keys, entries, mutations, the Lua commit, the mutation log,
  checkpoints and replay);
- ``core.gateway``: the one way to change it (policy, proposals, the decision log);
- ``core.deliberation``: the pure loop (messages, commands, typed actions, memory tiers,
  beats and their evaluator, views, and ``update``);
- ``core.runtime``: the runtime that runs the loop against Redis, sessions, transcripts,
  traces;
- ``core.llm``: stateless model calls, prompts, responders and the model's tools;
- ``core.perception``: classifying a turn;
- ``core.config``: the configuration file.

Shared leaves: ``core.errors`` (exceptions) and ``core.cached_models`` (models with derived
fields). Nothing here imports an adapter, a connector, the rule engine or a platform SDK, and
the rooms stand in layers (import-linter contracts in pyproject.toml keep both true).
"""

__all__: list[str] = []
