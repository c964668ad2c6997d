"""log.write: one record on the deliberate.connectors logger, fields as bot.json_logging expects."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from bot.json_logging import JsonFormatter
from tests.connectors.conftest import context, run
from tests.logs import LogLines, logged


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
