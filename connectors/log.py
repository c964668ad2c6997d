"""``log.write``: one structured line on the ``deliberate.connectors`` logger, its fields passed as
``extra={"fields": ...}`` the way ``bot.screen.json_logging`` expects, with the correlation id
that links it to the message, rule and mutation it came from. A log is no place for a secret
key's value, nor for one the environment gave (a catch-all rule that logs every change would
write them all out): the step's secrets are struck out of the message and the fields, as they
are out of its result."""

from __future__ import annotations

import logging
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from rules.connector_api import ActionContext, ConnectorAction

__all__ = ["ACTIONS", "LOGGER_NAME"]

LOGGER_NAME = "deliberate.connectors"
LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


class WriteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    message: str
    level: Literal["debug", "info", "warning", "error"] = "info"
    fields: dict[str, JsonValue] = Field(default_factory=dict)


def write(args: WriteArgs, ctx: ActionContext) -> JsonValue:
    hide = ctx.redactor
    fields = {**hide.json(args.fields), "correlation_id": ctx.correlation_id}
    message = hide.text(args.message)
    logging.getLogger(LOGGER_NAME).log(LEVELS[args.level], message, extra={"fields": fields})
    return {"written": True}


ACTIONS = (
    ConnectorAction(
        "log.write",
        WriteArgs,
        write,
        "Write one structured log line (message, level, fields).",
    ),
)
