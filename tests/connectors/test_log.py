"""log.write: one record on the deliberate.connectors logger, fields as
bot.screen.json_logging expects."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from bot.screen.json_logging import JsonFormatter
from core.redaction import SECRET
from tests.bot.secret_paths import VAULT
from tests.connectors.conftest import context, run
from tests.logs import LogLines, logged
from tests.rules.rig import make_rig


@pytest.fixture
def connector_log() -> Iterator[LogLines]:
    with logged("deliberate.connectors") as handler:
        yield handler


def test_write_logs_one_structured_line(connector_log: LogLines) -> None:
    args = {"message": "scene switched", "level": "warning", "fields": {"scene": "BRB", "n": 2}}

    assert run("log.write", args, context({})) == {"written": True}

    (record,) = connector_log.records
    assert record.levelno == logging.WARNING
    line = json.loads(JsonFormatter().format(record))
    assert line["msg"] == "scene switched"
    assert line["logger"] == "deliberate.connectors"
    assert (line["scene"], line["n"], line["correlation_id"]) == ("BRB", 2, "corr-test")


def test_level_defaults_to_info(connector_log: LogLines) -> None:
    run("log.write", {"message": "hello"}, context({}))

    assert connector_log.records[0].levelno == logging.INFO


def test_an_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError, match="level"):
        run("log.write", {"message": "x", "level": "critical"}, context({}))


LOGS_EVERY_CHANGE = """\
  - id: audits
    when: {key: "vault.*", op: set}
    then:
      - action: log.write
        args:
          message: "{{ mutation.key }} went from {{ mutation.prev }} to {{ mutation.value }}"
          level: warning
          fields: {was: "{{ mutation.prev }}", now: {value: "{{ mutation.value }}"}, n: 1}
"""


def test_a_rule_that_logs_every_change_writes_no_secret_value(
    tmp_path: Path, server_redis: Redis, workspace: str, connector_log: LogLines
) -> None:
    """A catch-all rule that logs each change wrote a secret key's values, old and new, on
    the worker's log (its stderr, a log file) in clear: they are struck out as they are of
    the step's result."""
    rig = make_rig(tmp_path, server_redis, workspace, LOGS_EVERY_CHANGE, keys=VAULT)
    rig.commit("set", "vault.token", "sk-live-OLD-1111", who="admin:root")
    rig.commit("set", "vault.token", "sk-live-NEW-2222", who="admin:root")
    rig.work()
    lines = [JsonFormatter().format(r) for r in connector_log.records]
    assert len(lines) == 2 and not [line for line in lines if "sk-live" in line], lines
    last = json.loads(lines[-1])
    assert last["msg"] == f"vault.token went from {SECRET} to {SECRET}"
    assert (last["was"], last["now"], last["n"]) == (SECRET, {"value": SECRET}, 1)
