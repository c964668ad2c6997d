"""The application-owned core: canonical state, the mutation log, policy and the gateway.

Nothing here imports an adapter, a connector, the rule engine or a platform SDK
(an import-linter contract in pyproject.toml keeps that true).
"""
