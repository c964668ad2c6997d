"""The loop's ``update(session, msg) -> (session, cmds)``, in the Elm architecture:
``turns`` handles what people say, ``clicks`` what they click; ``present`` evaluates the beats
and shows the view; ``loop`` dispatches."""

from core.deliberation.update.clicks import action_mutation_id, on_clicked, on_done
from core.deliberation.update.loop import Loop
from core.deliberation.update.present import show, turn_for
from core.deliberation.update.settings import LoopSettings
from core.deliberation.update.turns import (
    MODE_FOR,
    candidate_id,
    on_classified,
    on_replied,
    on_said,
)

__all__ = [
    "MODE_FOR",
    "Loop",
    "LoopSettings",
    "action_mutation_id",
    "candidate_id",
    "on_classified",
    "on_clicked",
    "on_done",
    "on_replied",
    "on_said",
    "show",
    "turn_for",
]
