"""The rule engine: for each committed mutation, the rules its key matches are evaluated;
those that hold start a run on the queue (as their mode, cooldown, ``for`` and ``signal``
allow). Every evaluation is recorded, fired or not, with why."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from core.state.actor import ActorKind
from core.state.mutation_log import LogRecord, MutationLog
from core.state.store import StateStore
from rules.book import RuleBook
from rules.dsl import Rule
from rules.engine.admission import RunStarter
from rules.engine.conditions import Activation, check_condition, check_rule, plan_steps, shown
from rules.engine.signals import SignalCounter
from rules.engine.timers import DueTimer, Timers
from rules.history import RuleHistory
from rules.keys import RuleKeys
from rules.variables import StateView, same

if TYPE_CHECKING:
    from rq import Queue

    from core.redis.client import RedisClient

__all__ = ["Engine"]


class Engine:
    def __init__(self, store: StateStore, book: RuleBook, queue: Queue) -> None:
        self.store = store
        self.book = book
        redis: RedisClient = store.redis
        self.keys = RuleKeys(store.workspace)
        self.log = MutationLog(redis, store.keys)
        self.evaluations = RuleHistory(redis, self.keys, book.automation.evaluations_kept)
        self.timers = Timers(redis, self.keys)
        self.signals = SignalCounter(redis, self.keys)
        self.runs = RunStarter(redis, queue, self.keys, book.automation)

    def _state(self) -> StateView:
        return StateView.of_store(self.store)

    def handle(self, record: LogRecord) -> int:
        """Evaluate the rules ``record`` triggers; the number of runs started."""
        rules = self.book.index.match(record.mutation.key)
        if not rules:
            return 0
        state = self._state()
        depth = _depth(record)
        activation = Activation(record, state)
        started = 0
        for rule in rules:
            if depth >= self.book.automation.max_chain_depth:
                self._cut(rule, record, depth)
                continue
            started += self._evaluate(rule, state, activation, depth)
        return started

    def _cut(self, rule: Rule, record: LogRecord, depth: int) -> None:  # (no value in it)
        limit = self.book.automation.max_chain_depth
        why = (
            f"cut: this mutation is {depth} derived mutations deep, the limit is {limit} "
            f"(automation.max_chain_depth); a rule loop?"
        )
        self._record(record, "cut", rule, fired=False, why=why)

    def _evaluate(self, rule: Rule, state: StateView, activation: Activation, depth: int) -> int:
        record = activation.record
        masker = self._masker(record, state)
        check = check_rule(rule, record, state, self.book.is_secret, masker, activation)
        m = record.mutation
        if rule.for_ is not None:
            if not check.held:
                cancelled = self.timers.cancel(rule.id, m.key)
                why = check.why + ("; its for-timer is cancelled" if cancelled else "")
                self._record(record, "evaluated", rule, fired=False, why=why)
                return 0
            due = record.ts + int(rule.for_ * 1000)
            # with `to`, holding again keeps the timer; without, the new value must hold anew
            replace = not rule.when.tests_to
            new = self.timers.start(rule.id, m.key, record.log_id, due, replace=replace)
            why = (
                f"holds; fires in {rule.for_:g}s if it still holds then"
                if new
                else ("holds; a for-timer started earlier is still running")
            )
            self._record(record, "evaluated", rule, fired=False, why=why, waiting=True)
            return 0
        if not check.held:
            self._record(record, "evaluated", rule, fired=False, why=check.why)
            return 0
        if rule.signal is not None:
            count, confidence = self.signals.observe(rule.id, rule.signal, record)
            if count < rule.signal.at_least:
                this_one = shown(record.mutation.key, confidence, self.book.is_secret)
                why = (
                    f"signal: {count} of {rule.signal.at_least} observations with confidence "
                    f"≥ {rule.signal.confidence:g} in {rule.signal.within:g}s "
                    f"(this one: {this_one})"
                )
                self._record(record, "evaluated", rule, fired=False, why=why)
                return 0
        return self._fire(rule, record, state, depth, "the trigger and the condition hold")

    def _fire(self, rule: Rule, record: LogRecord, state: StateView, depth: int, why: str) -> int:
        payload: dict[str, Any] = {
            "workspace": self.store.workspace,
            "rule": rule.id,
            "logId": record.log_id,
            "depth": depth,
            "correlationId": record.mutation.correlation_id,
            "key": record.mutation.key,
        }
        admission = self.runs.start(rule, record.mutation.key, record.mutation.id, payload)
        fired = admission.job_id is not None
        self._record(
            record,
            "evaluated",
            rule,
            fired=fired,
            why=f"{why}; {admission.why}",
            job=admission.job_id,
            steps=plan_steps(rule, record, state, self.book.is_secret),
        )
        return int(fired)

    def tick(self, now_ms: int) -> int:
        """Fire the ``for`` timers due by ``now_ms`` whose condition still holds."""
        started = 0
        while due := self.timers.take_due(now_ms, limit=1):  # one at a time: a crash loses one
            started += self._timer(due[0])
        return started

    def _timer(self, timer: DueTimer) -> int:
        rule = self.book.by_id.get(timer.rule_id)
        record = self.log.get(timer.log_id)
        if rule is None or record is None:
            return 0  # the rule left the config, or the log was trimmed: nothing to fire
        state = self._state()
        why = self._still_holds(rule, record, state)
        if why is not None:
            why = f"stopped holding: {why}"
            self._record(record, "evaluated", rule, fired=False, why=why)
            return 0
        held = f"held for {rule.for_:g}s"
        return self._fire(rule, record, state, _depth(record), held)

    def _still_holds(self, rule: Rule, record: LogRecord, state: StateView) -> str | None:
        key = record.mutation.key
        if rule.when.tests_to:
            if not same(state[key], rule.when.to):
                return f"{key} is now {shown(key, state[key], self.book.is_secret)}"
        elif self.store.version(key) != record.version:
            return f"{key} changed since"
        masker = self._masker(record, state)
        return check_condition(rule.if_, Activation(record, state), self.book.is_secret, masker)

    def _masker(self, record: LogRecord, state: StateView) -> Callable[[str], str]:
        """An expression's error message as kept: not at all while secret values are in
        play (it may quote one, and striking out only what equals one would confirm a
        member's guess), else with the environment's values masked."""

        def kept(text: str) -> str:
            if self.book.secrets(record, state):
                return "(its message is not kept: secret values were in play)"
            return self.book.mask(text)

        return kept

    def _record(
        self,
        record: LogRecord,
        event: str,
        rule: Rule,
        *,
        fired: bool,
        why: str,
        **extra: Any,
    ) -> None:
        """Kept with no secret in it: ``why`` and the planned steps quote a secret key's
        value as ``(secret)`` already (``shown``, ``plan_steps``: masked by key, so that no
        member's own words come back masked, which would confirm a guess); the
        environment's values are masked here."""
        m = record.mutation
        data: dict[str, JsonValue] = {
            "rule": rule.id,
            "fired": fired,
            "why": self.book.mask(why),
            "mutationId": m.id,
            "logId": record.log_id,
            "op": m.op.value,
        }
        if "steps" in extra:
            extra["steps"] = self.book.mask_json(extra["steps"])
        data.update(extra)
        self.evaluations.record(m.correlation_id, m.key, event, data)


def _depth(record: LogRecord) -> int:
    """How many derived mutations deep this one is; only a rule's own derived mutation (an
    automation with a cause) may say, so no caller can lift or lower the cut."""
    m = record.mutation
    if m.actor.kind is not ActorKind.AUTOMATION or m.causation_id is None:
        return 0
    depth = m.meta.get("depth", 0)
    return max(0, depth) if isinstance(depth, int) and not isinstance(depth, bool) else 0
