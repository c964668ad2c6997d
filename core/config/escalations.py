"""Checks of each key pattern's ``approval.escalate`` against the rest of the file: it comes
before the proposal expires (after the key's ``expire_after_sec``, or the policy's, it
could never happen), its channel is one platform's channel id, and its reviewers are
people's ids, as roles bind them (a name could be anyone's)."""

from __future__ import annotations

import re

from core.config.yaml_source import Located
from core.errors import ConfigIssue
from core.gateway.policy import PolicyConfig

__all__ = ["escalation_issues"]

# a channel a message can be posted to: Slack's public, private or shared ones, a Discord one
_CHANNELS = {
    "slack": re.compile(r"^[CG][A-Z0-9]{2,20}$"),
    "discord": re.compile(r"^[0-9]{15,21}$"),
}
# a person (a mention pings them), as ``core.config.roles`` knows ids: Slack's users (``W``: an
# Enterprise Grid one; not a user group), Discord's
_PEOPLE = {
    "slack": re.compile(r"^[UW][A-Z0-9]{2,20}$"),
    "discord": re.compile(r"^[0-9]{15,21}$"),
}


def escalation_issues(policy: PolicyConfig, located: Located) -> list[ConfigIssue]:
    issues = []
    default_sec = policy.proposals.expire_after_sec
    for index, rule in enumerate(policy.keys):
        escalate = rule.approval.escalate
        if escalate is None:
            continue
        path = ("policy", "keys", index, "approval", "escalate")
        expiry = rule.approval.expire_after_sec or default_sec
        if escalate.after_sec >= expiry:
            message = (
                f"after_sec {escalate.after_sec} is not before the proposal expires "
                f"({expiry} s after it is made): it would never escalate"
            )
            issues.append(located.issue((*path, "after_sec"), message))
        if escalate.channel and not _shaped(escalate.channel, _CHANNELS):
            message = (
                f"{escalate.channel!r} is not a channel id: slack:C… (or G…) or "
                "discord:<channel id>; leave it empty for no channel post"
            )
            issues.append(located.issue((*path, "channel"), message))
        for slot, reviewer in enumerate(escalate.reviewers):
            if not _shaped(reviewer, _PEOPLE):
                message = (
                    f"{reviewer!r} is not a person's id: slack:U… or discord:<user id>, "
                    "as roles bind them (a name could be anyone's)"
                )
                issues.append(located.issue((*path, "reviewers", slot), message))
    return issues


def _shaped(entry: str, shapes: dict[str, re.Pattern[str]]) -> bool:
    platform, sep, ident = entry.partition(":")
    shape = shapes.get(platform)
    return bool(sep) and shape is not None and bool(shape.match(ident))
