"""One run of a rule: its steps in order, each recorded in the step ledger so a second
execution of the job (a retry, a duplicate, a worker that died) never repeats an effect. A
run whose worker lost the lease stops before its next step (``LeaseLost``)."""

from __future__ import annotations

import contextlib
import hashlib
import json
from typing import Any, NoReturn

from pydantic import JsonValue, ValidationError
from redis.exceptions import RedisError
from rq.timeouts import JobTimeoutException

from core.field_errors import validation_problems
from core.redaction import Redactor
from core.state.actor import Actor, ActorKind
from core.state.commit_result import Committed, Rejected, RejectReason
from core.state.mutation import Mutation
from core.state.mutation_log import LogRecord
from rules.connector_api import ActionContext, ConnectorError
from rules.dsl import Rule, Step
from rules.templates import Escape, TemplateFailed, render
from rules.variables import StateView, masked_variables, variables
from rules.worker.context import WorkerContext
from rules.worker.ledger import Claim, Lease, LeaseLost, StepLedger
from rules.worker.secret_parts import derived

__all__ = ["Run", "StepFailed"]


class StepFailed(Exception):
    """A step failed for good: the run stops, and later steps do not run."""


class Run:
    def __init__(
        self,
        context: WorkerContext,
        job_id: str,
        payload: dict[str, Any],
        retries_left: int,
        lease: Lease,
    ) -> None:
        """``lease``: the run's, already acquired; every step is claimed under it."""
        self.context = context
        self.job_id = job_id
        self.retries_left = retries_left
        self.rule = self._rule(str(payload["rule"]))
        self.record = self._record(str(payload["logId"]))
        self.depth = int(payload.get("depth", 0))
        self.lease = lease
        self.ledger = StepLedger(context.redis, context.keys, job_id, lease)
        self.state = StateView.of_store(context.gateway.store)
        self._sent = ""  # what the step under way sent out (its arguments, its mutation)
        self._derived: list[Any] = []  # what of it was made from a secret (``derived``)

    def _rule(self, rule_id: str) -> Rule:
        rule = self.context.book.by_id.get(rule_id)
        if rule is None:
            raise RuntimeError(f"rule {rule_id} is no longer in this worker's config")
        return rule

    def _record(self, log_id: str) -> LogRecord:
        record = self.context.log.get(log_id)
        if record is None:
            raise RuntimeError(f"the mutation log no longer holds {log_id}")
        return record

    def perform(self) -> dict[str, Any]:
        results: list[Any] = []
        for index, step in enumerate(self.rule.then):
            if self.context.redis.exists(self.context.keys.stop(self.job_id)):
                why = "stopped: a newer run of this rule replaced it (mode restart)"
                self._report("action.skipped", index, step, why=why)
                return {"rule": self.rule.id, "stopped": why, "results": results}
            if not self.lease.held:
                raise self._lost(index, step)
            try:
                results.append(self._step(index, step))
            except StepFailed as exc:
                return {"rule": self.rule.id, "failed": str(exc), "results": results}
        return {"rule": self.rule.id, "results": results}

    def _step(self, index: int, step: Step) -> Any:
        unset = self.context.book.unset_env(self.rule, index)
        if unset:
            why = f"skipped: {', '.join(unset)} is not set"
            self._report("action.skipped", index, step, why=why)
            return {"skipped": why}
        claim, earlier = self.ledger.claim(index)
        if claim is Claim.LOST:
            raise self._lost(index, step)
        if claim is Claim.DONE:
            return earlier
        if claim is Claim.FAILED:
            raise StepFailed(str(earlier))
        if step.mutate is not None:
            return self._finish(index, step, self._mutate(index, step))
        return self._action(index, step, abandoned=claim is Claim.ABANDONED)

    def _finish(self, index: int, step: Step, result: Any) -> Any:
        result = self.context.book.mask_json(result, self._secrets())  # kept, and shown
        try:
            self.ledger.done(index, result)
        except LeaseLost:  # the step stays started: whoever took the run over reconciles it
            why = (
                "done, but this worker lost the run's lease during the step: the step is "
                "left started, for the worker that took the run over to reconcile"
            )
            with contextlib.suppress(RedisError):
                self._report("action.done", index, step, result=result, why=why)
            raise
        self._report("action.done", index, step, result=result)
        return result

    def _fail(self, index: int, step: Step, error: str) -> StepFailed:
        error = self._mask(error)
        self.ledger.failed(index, error)
        self._report("action.failed", index, step, error=error)
        return StepFailed(error)

    def _lost(self, index: int, step: Step) -> LeaseLost:
        """The run goes no further here; RQ's retry, or the worker that took the lease over,
        does this step (the ledger shows it never started)."""
        why = (
            "stopped before this step: this worker lost the run's lease (not renewed within "
            "lease_sec, or taken over); the step was not started here"
        )
        with contextlib.suppress(RedisError):  # the outage that lost the lease may go on
            self._report("action.skipped", index, step, why=why)
        return LeaseLost(f"job {self.job_id}: the lease was lost before step {index + 1}")

    def idempotency_key(self, index: int) -> str:
        return f"{self.job_id}.{index}"

    def _mutate(self, index: int, step: Step) -> JsonValue:
        assert step.mutate is not None
        self._sent, self._derived = "", []  # (nothing secret goes out: _no_secret_copied)
        names = variables(self.record, self.state)
        try:
            key, value = render(step.mutate.key, names), render(step.mutate.value, names)
            self._no_secret_copied(index, step, key, value)
        except TemplateFailed as exc:
            raise self._fail(index, step, f"template failed: {self._mask_all(str(exc))}") from None
        # (sent nothing secret: into a key everyone reads, _no_secret_copied saw to that; a
        # secret key's refusals quote no value)
        cause = self.record.mutation
        digest = hashlib.blake2s(self.idempotency_key(index).encode(), digest_size=16)
        try:
            mutation = Mutation(
                id=f"rule-{digest.hexdigest()}",
                op=step.mutate.op,
                key=key,
                value=value,
                ttl_sec=step.mutate.ttl_sec,
                actor=Actor(kind=ActorKind.AUTOMATION, id=self.rule.id),
                reason=f"rule {self.rule.id}, step {index + 1}",
                correlation_id=cause.correlation_id,
                causation_id=cause.id,
                meta={"rule": self.rule.id, "step": index, "depth": self.depth + 1},
            )
        except ValidationError as exc:
            raise self._fail(
                index, step, f"derived mutation is invalid: {validation_problems(exc, Mutation)}"
            ) from None
        outcome = self.context.gateway.propose(mutation)
        if isinstance(outcome, Committed):
            return {"committed": key, "version": outcome.version}
        message = getattr(outcome, "message", "it became a proposal")
        if isinstance(outcome, Rejected) and outcome.reason is RejectReason.RATE_LIMITED:
            self._retry_or_fail(index, step, ConnectorError(f"gateway: {message}", retryable=True))
        raise self._fail(index, step, f"gateway refused {key}: {message}")

    def _no_secret_copied(self, index: int, step: Step, key: Any, value: Any) -> None:
        """A derived mutation may write a secret key's value (or anything made of it) only
        as the value of a secret key: as another key's value, or in any key's name, it would
        be read by everyone. (Only templates that read state, or a secret mutation, are
        rendered twice: a ``random`` elsewhere is no secret.)"""
        assert step.mutate is not None
        if not isinstance(key, str) or not self._reads_secrets(
            [step.mutate.key, step.mutate.value]
        ):
            return
        if self._made_of_secrets(step.mutate.key, key):
            raise self._fail(index, step, "would put a secret key's value in a key's name")
        if not self.context.book.is_secret(key) and self._made_of_secrets(step.mutate.value, value):
            why = f"would copy a secret key's value into {key}, which is not secret; not written"
            raise self._fail(index, step, why)

    def _masked_render(self, templates: JsonValue) -> Any | None:
        """``templates`` rendered with the secrets masked (None: they render only with the
        real values)."""
        masked = masked_variables(self.record, self.state, self.context.book.is_secret)
        try:
            return render(templates, masked)
        except TemplateFailed:
            return None

    def _made_of_secrets(
        self, templates: JsonValue, rendered: Any, escape: Escape | None = None
    ) -> bool:
        """Whether ``rendered`` (``templates`` rendered) came from a secret: rendered again
        with the secrets masked, it changes, or it fails (it works only on the real value)."""
        masked = masked_variables(self.record, self.state, self.context.book.is_secret)
        try:
            return bool(render(templates, masked, escape) != rendered)
        except TemplateFailed:
            return True

    def _reads_secrets(self, templates: Any) -> bool:
        """Whether ``templates`` may read a secret: they read state, or the mutation when its
        key is secret. (Others are rendered once: a ``random`` in them is no secret.)"""
        text = json.dumps(templates, default=str)
        return "state" in text or (
            "mutation" in text and self.context.book.is_secret(self.record.mutation.key)
        )

    def _action(self, index: int, step: Step, *, abandoned: bool) -> Any:
        assert step.action is not None
        self._sent = ""  # a step's secrets are its own: an earlier step's are not this one's
        self._derived = []
        try:
            action = self.context.registry.get(step.action)
        except KeyError as exc:
            raise self._fail(index, step, str(exc)) from None
        names = (  # (a chat reads no secret key's value: its templates read it masked)
            masked_variables(self.record, self.state, self.context.book.is_secret)
            if action.shown_to_people
            else variables(self.record, self.state)
        )
        try:
            rendered = render(step.args, names, action.escape)
            args = action.args.model_validate(rendered)
        except (TemplateFailed, ValidationError) as exc:
            error = (
                validation_problems(exc, action.args)
                if isinstance(exc, ValidationError)
                else str(exc)
            )
            raise self._fail(index, step, f"bad arguments: {self._mask_all(error)}") from None
        if (
            not action.shown_to_people
            and self._reads_secrets(step.args)
            and self._made_of_secrets(step.args, rendered, action.escape)
        ):  # as sent before the connector's escaping, every character as itself
            sent = render(step.args, variables(self.record, self.state))
            self._sent = json.dumps(sent, default=str, ensure_ascii=False)
            strike = self.context.book.secrets(self.record, self.state).text
            self._derived = derived(sent, self._masked_render(step.args), strike)
        ctx = ActionContext(
            self.idempotency_key(index),
            self.record.mutation.correlation_id,
            self.context.env,
            self.context.book.redactor(self._secrets()),  # (what it quotes: struck out first)
        )
        if abandoned:
            return self._recover(index, step, action, args, ctx)
        return self._call(index, step, action, args, ctx)

    def _recover(self, index: int, step: Step, action: Any, args: Any, ctx: ActionContext) -> Any:
        """The worker that started this step died: act only when the connector can tell the
        effect is not there yet (never twice); otherwise report the outcome unknown."""
        if action.reconcile is None and action.resend_safe:
            return self._call(index, step, action, args, ctx)  # the remote side dedupes
        if action.reconcile is None:
            raise self._fail(
                index,
                step,
                "outcome unknown: a worker stopped during this step, and "
                f"{action.name} cannot tell whether it happened; not repeated",
            )
        try:
            present = action.reconcile(args, ctx)
        except ConnectorError as exc:
            self._retry_or_fail(index, step, exc)
        if present:
            return self._finish(index, step, {"reconciled": True})
        return self._call(index, step, action, args, ctx)

    def _call(self, index: int, step: Step, action: Any, args: Any, ctx: ActionContext) -> Any:
        if not self.ledger.holds(index):  # lost meanwhile (a slow reconcile, a long claim)
            raise self._lost(index, step)
        try:
            result = action.run(args, ctx)
        except ConnectorError as exc:
            self._retry_or_fail(index, step, exc)
        except JobTimeoutException:
            # the call may have had its effect: the step stays started, so the retry checks
            if self.retries_left <= 0:
                raise self._fail(index, step, "timed out (gave up after the last retry)") from None
            self._report("action.retry", index, step, error="timed out")
            raise
        except Exception as exc:  # a connector's bug must not pass for success or vanish
            self._retry_or_fail(
                index, step, ConnectorError(f"{type(exc).__name__}: {exc}", retryable=True)
            )
        return self._finish(index, step, result)

    def _retry_or_fail(self, index: int, step: Step, exc: ConnectorError) -> NoReturn:
        error = self._mask(exc.message)
        if not exc.retryable:
            raise self._fail(index, step, error) from None
        if self.retries_left <= 0:
            raise self._fail(index, step, f"{error} (gave up after the last retry)") from None
        self.ledger.retry(index)
        self._report("action.retry", index, step, error=error, retries_left=self.retries_left)
        raise ConnectorError(error, retryable=True) from None  # RQ keeps it: masked

    def _secrets(self) -> Redactor:
        """The secret values the step under way sent out (of those in play: the mutation's,
        state's as far as it was read), and what it sent made of one (a part of it, or it
        made over: ``derived``). A result or an error may echo them; only they are struck
        out, so that no member's own words come back masked for equalling a secret (which
        would confirm a guess)."""
        found = self.context.book.secrets(self.record, self.state).within(self._sent)
        return found.also(self._derived) if self._derived else found

    def _mask(self, text: str) -> str:
        return self.context.book.mask(text, self._secrets())

    def _mask_all(self, text: str) -> str:
        """A template's error, from before anything was sent: every secret in play."""
        return self.context.book.mask(text, self.context.book.secrets(self.record, self.state))

    def _report(self, event: str, index: int, step: Step, **data: Any) -> None:
        body: dict[str, Any] = {
            "rule": self.rule.id,
            "step": index,
            "do": step.label,
            "job": self.job_id,
            "mutationId": self.record.mutation.id,
        }
        body.update(data)
        body = self.context.book.mask_json(body, self._secrets())
        self.context.evaluations.record(
            self.record.mutation.correlation_id, self.record.mutation.key, event, body
        )
