"""The deliberation loop, pure: no I/O, no store, no model client.

Messages in, commands out (``update/``, one module per message kind), over a session's
interaction state and working memory (``memory``); typed actions, the beat library and its
evaluator, the view an adapter renders, and every sentence the core says to people about a
click (``sentences``, used as a module)."""

from core.deliberation.actions import (
    ACTION_NAME,
    ActionType,
    AppAction,
    Effect,
    KeyTemplates,
    Task,
    builtin_effect,
    is_builtin,
    topic_slug,
)
from core.deliberation.beat_evaluator import BeatCheck, EvaluationResult, SurfacedAction, evaluate
from core.deliberation.beats import ActionSpec, ActionStyle, Beat
from core.deliberation.commands import (
    Classify,
    Cmd,
    Commit,
    Generate,
    LogEvaluation,
    Record,
    ResolveProposal,
    Show,
)
from core.deliberation.interpretation import ActType, Target, TurnInterpretation
from core.deliberation.memory import (
    MAX_CLICKS,
    MAX_ITEMS,
    Candidate,
    ClickRecord,
    ClickStatus,
    ContextState,
    ContextStateDelta,
    InteractionState,
    Mode,
    ModelDelta,
    ProposalRef,
    ThreadStatus,
    merge,
)
from core.deliberation.messages import (
    ID_PATTERN,
    ActionClicked,
    ActionDone,
    AssistantReplied,
    Classified,
    Msg,
    OutcomeNote,
    UserSaid,
)
from core.deliberation.session import Session
from core.deliberation.turn import (
    DEFAULT_CONTEXT_BUDGET,
    MIN_MEMORY,
    Answer,
    Answering,
    ExecutorOutput,
    Responder,
    Turn,
)
from core.deliberation.update.loop import Loop
from core.deliberation.update.settings import LoopSettings
from core.deliberation.view import Button, View, ViewKind, buttons_for

__all__ = [
    "ACTION_NAME",
    "DEFAULT_CONTEXT_BUDGET",
    "ID_PATTERN",
    "MAX_CLICKS",
    "MAX_ITEMS",
    "MIN_MEMORY",
    "ActType",
    "ActionClicked",
    "ActionDone",
    "ActionSpec",
    "ActionStyle",
    "ActionType",
    "Answer",
    "Answering",
    "AppAction",
    "AssistantReplied",
    "Beat",
    "BeatCheck",
    "Button",
    "Candidate",
    "Classified",
    "Classify",
    "ClickRecord",
    "ClickStatus",
    "Cmd",
    "Commit",
    "ContextState",
    "ContextStateDelta",
    "Effect",
    "EvaluationResult",
    "ExecutorOutput",
    "Generate",
    "InteractionState",
    "KeyTemplates",
    "LogEvaluation",
    "Loop",
    "LoopSettings",
    "Mode",
    "ModelDelta",
    "Msg",
    "OutcomeNote",
    "ProposalRef",
    "Record",
    "ResolveProposal",
    "Responder",
    "Session",
    "Show",
    "SurfacedAction",
    "Target",
    "Task",
    "ThreadStatus",
    "Turn",
    "TurnInterpretation",
    "UserSaid",
    "View",
    "ViewKind",
    "builtin_effect",
    "buttons_for",
    "evaluate",
    "is_builtin",
    "merge",
    "topic_slug",
]
