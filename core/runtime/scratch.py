"""A scratch session: the loop the bot runs, over messages given in order, in memory. Each
message goes through the same ``Loop.update`` as a live turn, its ``Classify`` to the given
classifier and its ``Generate`` to the offline responder (so an idea is put on the table as
the bot would put it there offline); nothing else runs: no transcript, no view, no Redis, no
model. ``deliberate classify`` reads a message's ``before`` through one, so that the
context it classifies with is built exactly as the bot builds it."""

from __future__ import annotations

from core.deliberation.commands import Classify, Generate
from core.deliberation.messages import Classified, Msg, UserSaid
from core.deliberation.recent import TurnContext
from core.deliberation.session import Session
from core.deliberation.topics import MAX_TOPIC
from core.deliberation.turn import Answering
from core.deliberation.update.loop import Loop
from core.deliberation.update.settings import LoopSettings
from core.deliberation.update.turns import context_of
from core.llm.offline_responder import OfflineResponder
from core.perception.classifier import Classifier
from core.runtime.results import classified, replied
from core.state.actor import Actor

__all__ = ["MAX_TEXT", "ScratchSession"]

MAX_TEXT = 4000  # what of a message a turn holds (``UserSaid.text``)


class ScratchSession:
    """A session that lives in this object only, fed messages in conversation order."""

    def __init__(
        self,
        settings: LoopSettings,
        classifier: Classifier,
        responder: Answering | None = None,
        topic: str | None = None,
    ) -> None:
        self.loop = Loop(settings)
        self.classifier = classifier
        self.responder = responder or OfflineResponder()
        self.topic = None if topic is None else topic[:MAX_TOPIC]  # (as a thread's title)
        self.session = Session(id="scratch")

    def say(self, text: str, who: Actor, *, replying: bool = False) -> Classified:
        """``who`` says ``text``: the turn runs through the loop; how it was read."""
        queue: list[Msg] = [self._said(text, who, replying)]
        first: Classified | None = None
        while queue:
            self.session, cmds = self.loop.update(self.session, queue.pop(0))
            for cmd in cmds:
                if isinstance(cmd, Classify):
                    turn, source = self.classifier.interpret(
                        cmd.text, cmd.topic, cmd.correlation_id, context=cmd.context
                    )
                    read = classified(cmd, turn, source, self.loop.settings)
                    first = first or read
                    queue.append(read)
                elif isinstance(cmd, Generate):
                    answer = self.responder.answer(cmd.turn, cmd.correlation_id, cmd.asker)
                    queue.append(replied(cmd, answer))
        assert first is not None, "a turn is always classified"
        return first

    def context(self, text: str, who: Actor, *, replying: bool = False) -> TurnContext:
        """The context ``who`` saying ``text`` now is classified with (nothing runs)."""
        return context_of(self.session.interaction, self._said(text, who, replying))

    def _said(self, text: str, who: Actor, replying: bool) -> UserSaid:
        return UserSaid(text=text[:MAX_TEXT], actor=who, topic=self.topic, replying=replying)
