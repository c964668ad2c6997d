"""The Redis key names the rule engine and its workers use, under the workspace's hash tag,
and the name RQ calls a rule's run by."""

from __future__ import annotations

from core.state.keys import WorkspaceKeys

__all__ = ["CONSUMER_GROUP", "JOB_FUNCTION", "KEEP_SEC", "RuleKeys"]

CONSUMER_GROUP = "rules"  # the mutation log's consumer group; its cursor is the engine's
JOB_FUNCTION = "rules.worker.job.run_rule"  # what RQ calls for a rule's run, by name
KEEP_SEC = 7 * 86400  # a run's bookkeeping (its steps, its place in the runs set) and its RQ job


class RuleKeys:
    def __init__(self, workspace: str) -> None:
        self.workspace = WorkspaceKeys(workspace)
        self.tag = self.workspace.tag

    @property
    def log(self) -> str:
        return self.workspace.log

    @property
    def every_key(self) -> str:
        """SCAN MATCH pattern of all the rules' keys of the workspace (the tag escaped)."""
        return self.workspace.every_key.removesuffix("*") + ":rules:*"

    @property
    def every_runs_key(self) -> str:
        """SCAN MATCH pattern of every ``runs`` sorted set of the workspace."""
        return self.every_key.removesuffix("*") + "runs:*"

    @property
    def evaluations(self) -> str:
        """Capped stream: every rule evaluation, fired or not, and why."""
        return f"{self.tag}:rules:evals"

    @property
    def timers(self) -> str:
        """Sorted set of pending ``for`` timers (member rule|key, score due ms)."""
        return f"{self.tag}:rules:timers"

    @property
    def timer_causes(self) -> str:
        """Hash rule|key -> log id of the mutation that started the timer."""
        return f"{self.tag}:rules:timer-causes"

    def signal(self, rule_id: str, key: str) -> str:
        """Sorted set of a signal's qualifying observations (score: commit ms)."""
        return f"{self.tag}:rules:signal:{rule_id}:{key}"

    def cooldown(self, rule_id: str, key: str) -> str:
        return f"{self.tag}:rules:cooldown:{rule_id}:{key}"

    def runs(self, rule_id: str, key: str) -> str:
        """Sorted set of the job ids of a rule's runs for one key (score: enqueue ms); ids
        older than ``KEEP_SEC`` are trimmed, and the set expires ``KEEP_SEC`` after its last
        run."""
        return f"{self.tag}:rules:runs:{rule_id}:{key}"

    def steps(self, job_id: str) -> str:
        """Hash step index -> started | done (with the result) | failed, of one run; it
        expires ``KEEP_SEC`` after its last write."""
        return f"{self.tag}:rules:steps:{job_id}"

    def stop(self, job_id: str) -> str:
        """Set when a newer run replaces this one (mode restart): it stops before its next
        step, never in the middle of one."""
        return f"{self.tag}:rules:stop:{job_id}"

    @property
    def swept(self) -> str:
        """Set (with a TTL) while the runs sets' sweep is done for now, by whichever worker
        got there first."""
        return f"{self.tag}:rules:swept"

    def lease(self, job_id: str) -> str:
        """Held by the worker running a job, renewed while it runs."""
        return f"{self.tag}:rules:lease:{job_id}"
