"""What the chat side may ask of the core beside what it sends (``Runtime.send``): the narrow
door the adapters read through, so that none of them reaches into the sessions, the gateway
or the policy. Each answer is a read; nothing here changes anything."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.deliberation.memory import InteractionState
    from core.gateway.mutation_gateway import MutationGateway
    from core.gateway.outcome import Proposal
    from core.runtime.sessions import SessionStore

__all__ = ["Queries"]


class Queries:
    def __init__(self, sessions: SessionStore, gateway: MutationGateway) -> None:
        self._sessions = sessions
        self._gateway = gateway

    def has_session(self, session_id: str) -> bool:
        """Whether a session is saved here and has not expired (a thread the bot is in)."""
        return self._sessions.exists(session_id)

    def sessions_starting(self, prefix: str, limit: int = 1000) -> list[str]:
        """The ids of live sessions starting with ``prefix`` (a scan: for what a person asks,
        never on a turn's path)."""
        return self._sessions.ids_starting(prefix, limit)

    def interaction(self, session_id: str) -> InteractionState:
        """What the session holds now: its candidate, pending proposals, recent turns."""
        return self._sessions.load(session_id).interaction

    def proposal(self, proposal_id: str) -> Proposal | None:
        """The proposal ``proposal_id`` names, as kept (None: none is)."""
        return self._gateway.proposals.get(proposal_id)

    def is_secret(self, key: str) -> bool:
        """Whether ``key``'s value is never shown in chat (the policy's one answer)."""
        return self._gateway.policy.is_secret(key)

    @property
    def workspace(self) -> str:
        return self._gateway.store.workspace
