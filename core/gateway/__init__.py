"""The mutation gateway: the only way to change canonical state.

``MutationGateway.propose`` applies the policy (allowlist, value schemas, roles, protected keys,
agent proposals, rate limits), then commits through the store or keeps an agent's change as a
proposal for a person; every decision goes to the decision log.

Its modules are imported by name (``core.gateway.policy``...): this package imports none of
them, so that a command that asks the policy one question (is this key secret?) does not load
the gateway whole."""
