"""The mutation gateway: the only way to change canonical state.

``MutationGateway.propose`` applies the policy (allowlist, value schemas, roles, protected keys,
agent proposals, rate limits), then commits through the store or keeps an agent's change as a
proposal for a person; every decision goes to the decision log."""

from core.gateway.decisions import DecisionLog
from core.gateway.mutation_gateway import MutationGateway, UnknownProposal
from core.gateway.outcome import Outcome, Pending, Proposal, ProposalStatus
from core.gateway.policy import KeyRule, Policy, PolicyConfig, Verdict, VerdictKind
from core.gateway.proposals import ProposalBox
from core.gateway.value_schema import ValueSchema, ValueType

__all__ = [
    "DecisionLog",
    "KeyRule",
    "MutationGateway",
    "Outcome",
    "Pending",
    "Policy",
    "PolicyConfig",
    "Proposal",
    "ProposalBox",
    "ProposalStatus",
    "UnknownProposal",
    "ValueSchema",
    "ValueType",
    "Verdict",
    "VerdictKind",
]
