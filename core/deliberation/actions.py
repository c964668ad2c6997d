"""Typed actions: the complete set of ways a person changes state from a view.

Ten are built in; more come from the config's ``actions:`` section (``SwitchScene`` →
``set scene.name``). Each maps deterministically to at most one model command and, for the
committing ones, one gateway mutation. Labels are contextual (the beats choose them); types
are fixed. Nothing here does I/O: the loop turns an :class:`Effect` into commands.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from string import Template
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

from core.state.keys import validate_state_key
from core.state.mutation import Op

__all__ = [
    "ACTION_NAME",
    "ASKS",
    "ActionType",
    "AppAction",
    "Asks",
    "Effect",
    "KeyTemplates",
    "Task",
    "builtin_effect",
    "is_builtin",
    "topic_slug",
]

ACTION_NAME = r"^[A-Z][A-Za-z0-9]{0,39}$"


class ActionType(StrEnum):
    """The built-in actions; an app action is any other name the config defines."""

    CONFIRM_CURRENT = "ConfirmCurrent"
    ALTERNATIVE_CURRENT = "AlternativeCurrent"
    EXPAND_CURRENT = "ExpandCurrent"
    ADD_CURRENT_TO_ARTIFACT = "AddCurrentToArtifact"
    DERIVE_ENTITY_FROM_CURRENT = "DeriveEntityFromCurrent"
    APPLY_PROPOSAL = "ApplyProposal"
    EDIT_PROPOSAL = "EditProposal"  # apply with a value of the clicker's own (``note``)
    DISCARD_PROPOSAL = "DiscardProposal"  # with a reason, if the clicker gives one (``note``)
    REVERT_MUTATION = "RevertMutation"  # "Undo" under what a click committed
    RESTORE_CANDIDATE = "RestoreCandidate"  # "Back to: ..." an earlier candidate


PROPOSAL_ACTIONS = frozenset(
    {ActionType.APPLY_PROPOSAL, ActionType.EDIT_PROPOSAL, ActionType.DISCARD_PROPOSAL}
)
Asks = Literal["value", "reason"]
# the actions whose button asks the clicker for something first (a form), and what
ASKS: Mapping[str, Asks] = {
    ActionType.EDIT_PROPOSAL: "value",
    ActionType.DISCARD_PROPOSAL: "reason",
}


def is_builtin(name: str) -> bool:
    return name in ActionType._value2member_map_


class Task(StrEnum):
    """What the executor is asked to do: answer a turn's act, or one of the two actions that
    need the model."""

    BRAINSTORM = "brainstorm"
    REFINE = "refine"
    COMMIT = "commit"
    QUESTION = "question"
    TANGENT = "tangent"
    ALTERNATIVE = "alternative"
    EXPAND = "expand"

    @property
    def keeps_candidate(self) -> bool:
        """A new version of the same candidate, rather than a new candidate."""
        return self in (Task.REFINE, Task.EXPAND)


class AppAction(BaseModel):
    """An action defined in config: a button that commits one mutation. ``value`` may be a
    string template over ``$candidate`` (the candidate's text) and ``$topic``; any other JSON
    value is used as it is."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = Field(default="", max_length=300)
    op: Op = Op.SET
    key: str
    value: JsonValue = "$candidate"
    confirm: bool = False  # ask the person to confirm before it commits

    @field_validator("key")
    @classmethod
    def _key_is_valid(cls, key: str) -> str:
        return validate_state_key(key)

    def value_for(self, candidate: str, topic: str) -> JsonValue:
        if isinstance(self.value, str):
            return Template(self.value).safe_substitute(candidate=candidate, topic=topic)
        return self.value


class KeyTemplates(BaseModel):
    """Where the built-in committing actions write. ``$topic`` is the session's topic as a
    slug (``db-engine``); the result must be a valid state key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    decision_key: str = "decision.$topic"
    artifact_key: str = "artifact.$topic"
    entity_prefix: str = "entity.task"

    @field_validator("decision_key", "artifact_key", "entity_prefix")
    @classmethod
    def _makes_valid_keys(cls, template: str) -> str:
        validate_state_key(Template(template).safe_substitute(topic="sample-topic"))
        return template

    def key(self, template: str, topic: str) -> str:
        return Template(template).safe_substitute(topic=topic)


@dataclass(frozen=True)
class Effect:
    """What a click does: ask the model (``generate``), or commit one mutation (``op`` on
    ``key`` with ``value``), and what working memory records about the candidate."""

    generate: Task | None = None
    op: Op | None = None
    key: str | None = None
    value: JsonValue = None
    reject_candidate: bool = False  # the candidate joins working memory's rejected ideas
    owned: bool = False  # the key is this session's to decide: compare with its last version


def builtin_effect(
    action: ActionType, text: str, topic: str, entity_id: str, keys: KeyTemplates
) -> Effect:
    """The deterministic effect of a built-in candidate action on the candidate ``text``."""
    if action is ActionType.CONFIRM_CURRENT:
        return Effect(op=Op.SET, key=keys.key(keys.decision_key, topic), value=text, owned=True)
    if action is ActionType.ALTERNATIVE_CURRENT:
        return Effect(generate=Task.ALTERNATIVE, reject_candidate=True)
    if action is ActionType.EXPAND_CURRENT:
        return Effect(generate=Task.EXPAND)
    if action is ActionType.ADD_CURRENT_TO_ARTIFACT:
        return Effect(op=Op.APPEND, key=keys.key(keys.artifact_key, topic), value=text)
    if action is ActionType.DERIVE_ENTITY_FROM_CURRENT:
        key = f"{keys.entity_prefix}.{entity_id}"
        return Effect(op=Op.SET, key=key, value={"title": text[:300], "topic": topic}, owned=True)
    raise ValueError(f"{action} acts on a proposal or a commit, not on the candidate")


_SLUG_DROP = frozenset(
    "a an the and or but of to in on at by for with from this that these those it its is are "  # noqa: SIM905
    "was were be been we you they i me my our your us what which who how why when where should "
    "could would can will do does did let lets use used using pick choose about new need if "
    "maybe perhaps idea ideas".split()
)


def topic_slug(text: str, fallback: str) -> str:
    """A short key-safe name for a topic: its first few content words (``db-engine``)."""
    words = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _SLUG_DROP]
    slug = "-".join(words[:4])[:48].strip("-")
    return slug or fallback
