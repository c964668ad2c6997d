"""The messages a turn's commands come back as, made the same way by the runtime and by a
scratch session (``scratch.py``): a classification routed at the loop's confidence gate, and
a responder's answer."""

from __future__ import annotations

from core.deliberation.commands import Classify, Generate
from core.deliberation.interpretation import TurnInterpretation
from core.deliberation.messages import AssistantReplied, Classified
from core.deliberation.turn import Answer
from core.deliberation.update.settings import LoopSettings
from core.perception.team import marks

__all__ = ["classified", "replied"]


def classified(
    cmd: Classify, turn: TurnInterpretation, source: str, settings: LoopSettings
) -> Classified:
    """How ``cmd``'s turn was read, routed at ``settings.min_confidence``, with the marks a
    click may teach of it when ``settings.adapt`` (``core.perception.team``)."""
    min_confidence = settings.min_confidence
    return Classified(
        correlation_id=cmd.correlation_id,
        text=cmd.text,
        interpretation=turn,
        routed=turn.routed(min_confidence),
        classifier=source,
        actor=cmd.actor,
        replying=cmd.context is not None and cmd.context.replying,
        marks=marks(cmd.text, cmd.context, cmd.topic) if settings.adapt else "",
    )


def replied(cmd: Generate, answer: Answer) -> AssistantReplied:
    return AssistantReplied(
        correlation_id=cmd.correlation_id,
        task=cmd.turn.task,
        said=cmd.turn.user_input,
        based_on=cmd.turn.candidate,
        attempt=cmd.attempt,
        asker=cmd.asker,
        output=answer.output,
        responder=answer.source,
        proposals=answer.proposals,
        tool_calls=answer.tool_calls,
    )
