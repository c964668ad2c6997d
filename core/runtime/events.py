"""What adapters send the runtime and what it reports back: people's messages in; views to
render and the outcomes of clicks' commands out."""

from __future__ import annotations

from core.deliberation.messages import (
    ActionClicked,
    OutcomeNote,
    ShowRequested,
    TopicSet,
    UserSaid,
)
from core.deliberation.view import View

__all__ = ["Event", "FromPeople", "OutcomeEvent"]


class OutcomeEvent(OutcomeNote):
    """What a click's command came to: for adapters that show it, and for ``--json``."""

    session_id: str
    correlation_id: str
    action: str
    actor: str


Event = View | OutcomeEvent
FromPeople = UserSaid | ActionClicked | TopicSet | ShowRequested  # what adapters send
