"""``approval.escalate`` is checked when the config loads, naming file, line and field: it
comes before the proposal expires (the key's ``expire_after_sec``, else the policy's), its
channel is a channel id, its reviewers are people's ids (a name could be anyone's). A
proposal stored before escalation existed still loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config.core_config import load_config
from core.errors import ConfigError
from core.gateway.outcome import Proposal
from tests.conftest import write_config
from tests.factories import mutation


def config(escalate: str, expiry: str = "") -> str:
    return (
        "policy:\n"
        "  proposals: {expire_after_sec: 7200}\n"
        "  keys:\n"
        '    - pattern: "k.*"\n'
        "      approval:\n"
        f"{expiry}"
        "        escalate:\n"
        f"          {escalate}\n"
    )


def test_a_good_escalation_loads(tmp_path: Path) -> None:
    text = config(
        '{after_sec: 3600, channel: "discord:1300000000000000010", reviewers: '
        '["slack:U0SARA", "slack:W0GRID", "discord:1400000000000000002"]}'
    )
    loaded = load_config(write_config(tmp_path, text))
    escalate = loaded.policy.keys[0].approval.escalate
    assert escalate is not None and escalate.reviewers[0] == "slack:U0SARA"


@pytest.mark.parametrize(
    ("escalate", "expiry", "field", "line", "message"),
    [
        ("{after_sec: 7200}", "", "after_sec", 7, "is not before the proposal expires (7200 s"),
        (
            "{after_sec: 600}",
            "        expire_after_sec: 600\n",
            "after_sec",
            8,
            "after_sec 600 is not before the proposal expires (600 s",
        ),
        ("{after_sec: 30}", "", "after_sec", 7, "greater than or equal to 60"),
        ('{after_sec: 600, reviewers: ["slack:sara"]}', "", "reviewers[0]", 7, "not a person"),
        (
            '{after_sec: 600, reviewers: ["slack:U0SARA", "discord:Moderators"]}',
            "",
            "reviewers[1]",
            7,
            "'discord:Moderators' is not a person's id",
        ),
        ('{after_sec: 600, reviewers: ["slack:S0MODS"]}', "", "reviewers[0]", 7, "not a person"),
        ('{after_sec: 600, reviewers: ["teams:U0SARA"]}', "", "reviewers[0]", 7, "not a person"),
        ('{after_sec: 600, channel: "C0ESC"}', "", "channel", 7, "is not a channel id"),
        ('{after_sec: 600, channel: "slack:U0SARA"}', "", "channel", 7, "is not a channel id"),
        (
            "{after_sec: 600, to: everyone}",
            "",
            "to",
            7,
            "is not a field here (expected one of after_sec:, channel:, reviewers:)",
        ),
    ],
)
def test_a_bad_escalation_fails_the_load_with_file_line_and_field(
    tmp_path: Path, escalate: str, expiry: str, field: str, line: int, message: str
) -> None:
    path = write_config(tmp_path, config(escalate, expiry))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    said = str(caught.value)
    assert f"{path.name}:{line}: policy.keys[0].approval.escalate.{field}" in said, said
    assert message in said, said


def test_a_proposal_stored_without_escalation_loads() -> None:
    old = Proposal(mutation=mutation("set", "k.x", "v", "agent:llm")).model_dump(by_alias=True)
    old.pop("escalate")
    assert Proposal.model_validate(old).escalate is None
