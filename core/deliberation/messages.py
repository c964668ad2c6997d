"""Messages: everything the loop hears. Adapters send ``UserSaid`` and ``ActionClicked``; the
runtime sends the results of the commands it ran (``Classified``, ``AssistantReplied``,
``ActionDone``). Each carries the correlation id of the turn or click it belongs to."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from core.deliberation.actions import ACTION_NAME, ActionType, Task
from core.deliberation.interpretation import ActType, TurnInterpretation
from core.deliberation.memory import Candidate, ProposalRef
from core.deliberation.recent import Marks
from core.deliberation.turn import ExecutorOutput
from core.state.actor import Actor
from core.state.mutation import new_id

__all__ = [
    "ID_PATTERN",
    "ActionClicked",
    "ActionDone",
    "AssistantReplied",
    "Classified",
    "Msg",
    "OutcomeNote",
    "ShowRequested",
    "TopicSet",
    "UserSaid",
]

ID_PATTERN = r"^[\x21-\x7e]{1,100}$"  # printable, no spaces: ids end up in mutation ids


class _Msg(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    correlation_id: str = Field(default_factory=new_id, pattern=ID_PATTERN)


class UserSaid(_Msg):
    kind: Literal["user_said"] = "user_said"
    text: str = Field(max_length=4000)
    actor: Actor
    topic: str | None = Field(default=None, max_length=200)  # e.g. a thread's title
    # it replies to someone: a platform's reply (Discord's reference, Slack's reply in a
    # thread to another person) or an @mention of a person
    replying: bool = False


class Classified(_Msg):
    kind: Literal["classified"] = "classified"
    text: str
    actor: Actor | None = None  # who said it: the person a proposal it leads to is for
    interpretation: TurnInterpretation
    routed: ActType
    classifier: str
    replying: bool = False  # it replied to someone (``UserSaid.replying``)
    marks: Marks = ""  # what a click may teach of it (``core.perception.team.marks``)


class AssistantReplied(_Msg):
    kind: Literal["assistant_replied"] = "assistant_replied"
    task: Task
    output: ExecutorOutput
    responder: str
    said: str = ""  # the turn's words, which a refinement adds to the candidate's
    based_on: Candidate | None = None  # the candidate the answer was made from
    attempt: int = 0
    asker: Actor | None = None  # whose turn or click it answers
    proposals: list[ProposalRef] = []
    tool_calls: list[str] = []


class ActionClicked(_Msg):
    """A button: only identification. The loop reloads the session and checks the rest."""

    kind: Literal["action_clicked"] = "action_clicked"
    action: str = Field(pattern=ACTION_NAME)
    target_id: str = Field(pattern=ID_PATTERN)  # a candidate id, or a proposal id
    expected_version: int = Field(ge=0)
    click_id: str = Field(pattern=ID_PATTERN)  # the platform's id of this click: idempotency
    actor: Actor
    # what the clicker typed into the form the button asked for: an edited value
    # (EditProposal), a reason (DiscardProposal)
    note: str | None = Field(default=None, max_length=4000)
    # an ApplyProposal click that breaks the glass (applies at once, whatever approvals it
    # awaits), for this reason; the gateway checks the clicker holds the role
    break_glass: str | None = Field(default=None, max_length=4000)

    @model_validator(mode="after")
    def _glass_on_apply(self) -> ActionClicked:
        if self.break_glass is not None and self.action != ActionType.APPLY_PROPOSAL:
            raise ValueError(f"only ApplyProposal breaks the glass, not {self.action}")
        return self


class TopicSet(_Msg):
    """People name (or rename) what the session deliberates: the decision key follows it."""

    kind: Literal["topic_set"] = "topic_set"
    topic: str = Field(min_length=1, max_length=200)
    actor: Actor


class ShowRequested(_Msg):
    """Someone opens the session (a resumed console, ``/deliberate show``): the current
    candidate and its buttons, for them alone. Changes nothing."""

    kind: Literal["show_requested"] = "show_requested"
    actor: Actor


class OutcomeNote(BaseModel):
    """What a click's command came to, as the loop needs to know it."""

    model_config = ConfigDict(frozen=True)

    outcome: Literal["committed", "rejected", "pending", "discarded"]
    message: str
    key: str | None = None
    value: JsonValue = None
    version: int | None = None
    reason: str | None = None
    duplicate: bool = False
    by: str | None = None  # who committed it (on a duplicate, whoever came first)
    mutation_id: str | None = None  # what was committed (an "Undo" reverts it)
    reverts_at: int | None = None  # a change for a while: when it reverts by itself
    waiting: ProposalRef | None = None  # the proposal a write became (it needs approval)
    proposal: str | None = None  # the proposal discarded, as its summary says it
    expired_at: int | None = None  # refused as expired: the proposal's deadline (server ms)


class ActionDone(_Msg):
    kind: Literal["action_done"] = "action_done"
    click: ActionClicked
    result: OutcomeNote


Msg = Annotated[
    UserSaid
    | Classified
    | AssistantReplied
    | ActionClicked
    | ActionDone
    | TopicSet
    | ShowRequested,
    Field(discriminator="kind"),
]
