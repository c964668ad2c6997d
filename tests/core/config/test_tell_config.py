"""How a requester is told of each change of their proposal: ``policy.proposals.tell``
(in the thread, by default; ``dm`` too when asked), which a key pattern's ``approval.tell``
replaces. A mistake fails the load, naming file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config.core_config import load_config
from core.errors import ConfigError
from core.gateway.policy import Policy, TellRule
from tests.conftest import write_config


def config(proposals: str, approval: str = "{quorum: 1}") -> str:
    return (
        "policy:\n"
        f"  proposals: {proposals}\n"
        "  keys:\n"
        '    - pattern: "k.*"\n'
        f"      approval: {approval}\n"
        '    - pattern: "other.*"\n'
    )


def test_the_thread_alone_by_default(tmp_path: Path) -> None:
    policy = Policy(load_config(write_config(tmp_path, "policy: {}\n")).policy)
    assert policy.tell("decision.db") == TellRule(thread=True, dm=False)


def test_the_policy_says_it_for_every_key_and_a_pattern_for_its_own(tmp_path: Path) -> None:
    text = config("{tell: {dm: true}}", "{tell: {thread: false, dm: true}}")
    policy = Policy(load_config(write_config(tmp_path, text)).policy)
    assert policy.tell("other.x") == TellRule(thread=True, dm=True)
    assert policy.tell("k.x") == TellRule(thread=False, dm=True)


@pytest.mark.parametrize(
    ("proposals", "approval", "field", "line", "message"),
    [
        (
            "{tell: {dms: true}}",
            "{}",
            "proposals.tell.dms",
            2,
            "is not a field here (did you mean dm:?)",
        ),
        ("{tell: {dm: maybe}}", "{}", "proposals.tell.dm", 2, "expected true or false, got text"),
        ("{tell: true}", "{}", "proposals.tell", 2, "expected a mapping (thread:, dm:), got true"),
        ("{}", "{tell: {thread: 2}}", "keys[0].approval.tell.thread", 5, "true or false, got a"),
        (
            "{}",
            "{tell: {slack: true}}",
            "keys[0].approval.tell.slack",
            5,
            "is not a field here (expected one of thread:, dm:)",
        ),
    ],
)
def test_a_bad_tell_fails_the_load_with_file_line_and_field(
    tmp_path: Path, proposals: str, approval: str, field: str, line: int, message: str
) -> None:
    path = write_config(tmp_path, config(proposals, approval))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    said = str(caught.value)
    assert f"{path.name}:{line}: policy.{field}: " in said, said
    assert message in said, said
    assert "Input should" not in said and "TellRule" not in said  # pydantic's own words
