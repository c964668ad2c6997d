"""Labelled conversations read as the bot reads them: the context each labelled message is
classified in, built by a scratch session (``scratch.py``) fed the conversation in order.

A row is ``{"text", "act_type", "source"?, "who"?, "before"?}``. Rows of one log
(``"source": "KIND:LOG:LINE"``, e.g. ``irc:rust.0:0012``, in the order given) are one
conversation; a row with
``"before": [{"who"?, "text", "act_type"?}, ...]`` is one of its own, after those. Training
reads the earlier messages at the acts they are labelled with (``labelled``); measuring
reads them as the classifier does, as the bot would (``read``). A message whose writer is
not known counts as someone else's; an IRC message that opens with "nick:" replies to
someone, as a platform's reply does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.deliberation.interpretation import ActType, Target, TurnInterpretation
from core.deliberation.recent import TurnContext
from core.deliberation.update.settings import LoopSettings
from core.perception.classifier import Classifier, ReadsAlone
from core.perception.features import normalise, unaddressed
from core.perception.stances import stance_of
from core.runtime.scratch import ScratchSession
from core.state.actor import Actor, ActorKind

__all__ = [
    "ALONE_EVERY",
    "MAX_BEFORE",
    "AsLabelled",
    "context_after",
    "contexts",
    "conversation_of",
    "earlier_messages",
    "training_set",
    "writer",
]

# one message of a conversation in this many is learned a second time read alone, so that a
# turn read with no context (``deliberate classify`` without ``before``) reads as well as it
# did (every message in context only: 8.6% false commits alone on held-out chat; one in two
# also alone: 2.7% on the calibration split, in context 75.7% there, 76.8% on the meetings'
# dev split; one in one: 73.0% and 79.4%)
ALONE_EVERY = 2

MAX_BEFORE = 50  # earlier messages a row may give (the session keeps the last few as features)


class AsLabelled(ReadsAlone):
    """A classifier that reads each message at the act it is labelled with (the stance as
    the words say it, as every classifier does)."""

    name = "labelled"

    def __init__(self) -> None:
        self.next: ActType = ActType.BRAINSTORM

    def classify(
        self, text: str, topic: str | None = None, context: TurnContext | None = None
    ) -> TurnInterpretation:
        stance = stance_of(unaddressed(normalise(text)))
        return TurnInterpretation(
            act_type=self.next, target=Target.CURRENT_CANDIDATE, confidence=1.0, stance=stance
        )


def conversation_of(row: dict[str, Any]) -> str | None:
    """The log a row belongs to (None: none): its ``source`` (``KIND:LOG:LINE``, the line
    a number) but the line."""
    log, _, line = str(row.get("source") or "").rpartition(":")
    return log if ":" in log and line.isdigit() else None


def writer(who: object, n: int) -> Actor:
    """The actor a message's ``who`` names; an unknown writer is one of their own."""
    name = str(who)[:128] if isinstance(who, str) and who.strip() else f"unknown-{n}"
    return Actor(kind=ActorKind.USER, id=name)


def replying(text: str) -> bool:
    said = normalise(text)
    return unaddressed(said) != said


def contexts(
    rows: Sequence[dict[str, Any]], classifier: Classifier | None = None
) -> list[TurnContext | None]:
    """The context each row is classified in (None: a row of no conversation). With a
    ``classifier``, earlier messages are read by it, as the bot reads them; without one, at
    their labelled acts."""
    labelled = AsLabelled()
    reader: Classifier = classifier or labelled
    logs: dict[str, ScratchSession] = {}
    found: list[TurnContext | None] = []
    for n, row in enumerate(rows):
        log = conversation_of(row)
        if row.get("before"):
            found.append(context_after(row, LoopSettings(), reader, labelled))
            continue
        if log is None:
            found.append(None)
            continue
        session = logs.setdefault(log, ScratchSession(LoopSettings(), reader))
        who, text = writer(row.get("who"), n), str(row["text"])
        found.append(session.context(text, who, replying=replying(text)))
        labelled.next = ActType(row["act_type"])  # the next message of the log reads this one
        session.say(text, who, replying=replying(text))
    return found


def training_set(
    rows: Sequence[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[TurnContext | None]]:
    """What the classifier is trained on: ``rows``, each in its context (at the acts
    earlier messages are labelled with), then one conversation message in ``ALONE_EVERY``
    again, alone."""
    alone = [row for row in rows if conversation_of(row)][::ALONE_EVERY]
    return [*rows, *alone], [*contexts(rows), *[None] * len(alone)]


def context_after(
    row: dict[str, Any],
    settings: LoopSettings,
    classifier: Classifier,
    labelled: AsLabelled | None = None,
) -> TurnContext:
    """The context ``row``'s text is classified in after its ``before`` (earlier messages
    of its conversation, oldest first), each run through a scratch session of its own in
    order, read by ``classifier`` (or at their ``act_type`` when it is ``labelled``).
    TypeError or ValueError: ``before`` or ``who`` is not what it must be."""
    earlier_ones = earlier_messages(row.get("before"))  # all checked before any is read
    session = ScratchSession(settings, classifier, topic=row.get("topic"))
    for k, earlier in enumerate(earlier_ones):
        if labelled is not None:
            labelled.next = ActType(earlier.get("act_type", "brainstorm"))
        text = earlier["text"]
        session.say(text, writer(earlier.get("who"), k + 1), replying=replying(text))
    text = row["text"]
    return session.context(text, writer(row.get("who"), 0), replying=replying(text))


def earlier_messages(before: object) -> list[dict[str, Any]]:
    """The earlier messages of ``before`` (TypeError: it is not a list of objects each
    with a ``text`` string and, if any, a ``who`` string; ValueError: more than
    ``MAX_BEFORE``)."""
    if not isinstance(before, list):
        raise TypeError('"before" must be a list of {"who": ..., "text": ...} objects')
    if len(before) > MAX_BEFORE:
        raise ValueError(f'"before" holds {len(before)} messages: at most {MAX_BEFORE}')
    for n, item in enumerate(before, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise TypeError(f'"before" message {n} must be an object with a "text" string')
        if item.get("who") is not None and not isinstance(item["who"], str):
            raise TypeError(f'"before" message {n}: "who" must be a string')
    return before
