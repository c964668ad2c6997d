"""The rule engine's side: reading the mutation log as a consumer group, checking the triggers
and conditions of the rules a key matches (the book's index), ``for`` timers and signals, and
admitting runs onto the queue as their mode and cooldown allow."""

from rules.engine.admission import Admission, RunStarter, job_id_for
from rules.engine.conditions import Check, check_condition, check_rule, check_trigger, plan_steps
from rules.engine.consumer import LogConsumer, ensure_group
from rules.engine.engine import Engine
from rules.engine.signals import SignalCounter, confidence_of
from rules.engine.timers import DueTimer, Timers

__all__ = [
    "Admission",
    "Check",
    "DueTimer",
    "Engine",
    "LogConsumer",
    "RunStarter",
    "SignalCounter",
    "Timers",
    "check_condition",
    "check_rule",
    "check_trigger",
    "confidence_of",
    "ensure_group",
    "job_id_for",
    "plan_steps",
]
