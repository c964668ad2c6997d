"""Argument types shared by the CLI commands: bad input is a usage error (exit 2) naming
what is wrong, before anything touches Redis."""

from __future__ import annotations

import argparse
import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from bot.chat.people import local_name
from bot.reports.render import Masking
from core.state.actor import Actor
from core.state.keys import validate_session_id, validate_state_key
from core.state.moment import Moment
from core.state.scripts import server_ms
from core.state.value_json import MAX_BYTES, MAX_DEPTH, dumps, loads, nesting

if TYPE_CHECKING:
    from core.gateway.policy import Policy
    from core.state.store import StateStore

__all__ = [
    "TIME_HELP",
    "When",
    "actor",
    "add_reveal",
    "env_port",
    "json_object",
    "json_or_text",
    "local_as",
    "masking",
    "port",
    "positive_int",
    "session_id",
    "state_key",
    "when",
]


def add_reveal(parser: argparse.ArgumentParser) -> None:
    """``--reveal``: a command that prints values shows a secret key's as ``(secret)``
    without it."""
    parser.add_argument(
        "--reveal",
        action="store_true",
        help="show the values of secret keys (the policy's 'secret: true'), which are "
        "masked as (secret) otherwise, --json included; for someone who holds the Redis "
        "credentials (who could read them there). Said on stderr",
    )


def masking(args: argparse.Namespace, policy: Policy | None = None) -> Masking:
    """What a command shows of secret keys' values: ``(secret)`` as ``policy`` (the app's)
    says, unless ``--reveal``. Without ``policy``, the config's answer (``secret_keys``: kept
    between commands, else its core sections loaded, the rules unchecked), unless ``--reveal``,
    which needs none."""
    if args.reveal:
        return Masking.revealing()
    if policy is None:
        from bot.commands.secret_keys import secret_test
        from core.config.paths import config_paths

        return Masking(secret_test(config_paths(args.config), args.workspace))
    return Masking(policy.is_secret)


def state_key(text: str) -> str:
    try:
        return validate_state_key(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def session_id(text: str) -> str:
    try:
        return validate_session_id(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def port(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)")
    return int(text)


def env_port(default: int) -> int:
    """``$PORT`` (a platform sets it), else ``default``; a bad one is named."""
    try:
        return port(os.environ.get("PORT") or str(default))
    except argparse.ArgumentTypeError as exc:
        raise ValueError(f"PORT: {exc}") from None


def positive_int(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def duration(text: str) -> int:
    """``--for 30m``: seconds (``core.gateway.timed.duration_sec`` reads it)."""
    from core.gateway.durations import duration_sec  # the gateway, loaded by a write alone

    try:
        return duration_sec(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def actor(text: str) -> Actor:
    try:
        return Actor.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def local_as(text: str) -> str:
    """``--as NAME``: a person at this machine, ``local:NAME`` to the config's role bindings
    (``local:`` before it is allowed)."""
    try:
        return local_name(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def json_or_text(text: str) -> Any:
    """JSON when it parses as JSON, else the text itself as a string. A value the store
    would refuse is a usage error saying why, never the text instead: JSON nested more than
    ``MAX_DEPTH`` levels, more than ``MAX_BYTES``, a number JSON cannot hold (NaN,
    Infinity, 1e400, more digits than can be read), or what is not UTF-8 text."""
    _utf8(text)
    try:
        value = loads(text)
    except json.JSONDecodeError:
        value = text  # not JSON: the text itself
    except RecursionError:
        raise argparse.ArgumentTypeError(_TOO_DEEP) from None
    except ValueError as exc:  # a number JSON cannot hold: in JSON, or in text?
        if _shaped_as_json(text):
            raise argparse.ArgumentTypeError(_number_problem(text, exc)) from None
        value = text  # ("NaN and Infinity")
    return _storable(value)


def json_object(text: str) -> dict[str, Any]:
    """A JSON object (its values as ``json_or_text`` takes a JSON value, one level down)."""
    _utf8(text)
    try:
        value = loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    except RecursionError:
        raise argparse.ArgumentTypeError(_TOO_DEEP) from None
    except ValueError as exc:
        raise argparse.ArgumentTypeError(_number_problem(text, exc)) from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object")
    for item in value.values():
        _storable(item)
    return value


_UNWRITTEN = "nothing was written"
_TOO_DEEP = f"nests more than {MAX_DEPTH} levels deep; {_UNWRITTEN}"


def _utf8(text: str) -> None:
    """Text argv could carry that is not UTF-8: bytes that are not (Python keeps each as a
    lone surrogate, U+DC80 to U+DCFF), or a surrogate itself."""
    if (what := _not_utf8(text)) is not None:
        raise argparse.ArgumentTypeError(f"{what}; {_UNWRITTEN}")


def _not_utf8(text: str) -> str | None:
    for at, char in enumerate(text):
        if "\ud800" <= char <= "\udfff":
            code = ord(char)
            what = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
            return f"is not UTF-8 text ({what} at character {at + 1})"
    return None


def not_utf8(args: argparse.Namespace) -> str | None:
    """Which argument of a parsed command line is not UTF-8 text, and where, or None: every
    command refuses it before anything is read or written (an id, a reason, a name)."""
    for name, value in vars(args).items():
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and (what := _not_utf8(text)) is not None:
                return f"{name.replace('_', '-')} {what}"
    return None


# JSON's syntax, whatever its numbers: Python's reader also takes NaN and Infinity
_SHAPE = json.JSONDecoder(parse_int=len, parse_float=len, parse_constant=len)


def _shaped_as_json(text: str) -> bool:
    try:
        _SHAPE.decode(text)
    except json.JSONDecodeError:
        return False
    return True


def _number_problem(text: str, exc: ValueError) -> str:
    """What is wrong with a JSON number Python's reader refused (NaN, Infinity, 1e400, an
    integer of more digits than it reads)."""
    said, bare = str(exc), text.strip()
    if bare in ("NaN", "Infinity", "-Infinity"):
        return f"{said} (to mean the text, quote it: '\"{bare}\"'); {_UNWRITTEN}"
    if "digits" in said or len(said) > 80:  # (Python's words, or the whole number)
        return f"has a number too large for JSON to hold; {_UNWRITTEN}"
    return f"{said}; {_UNWRITTEN}"


def _storable(value: Any) -> Any:
    """``value``, if the store would keep it: else a usage error saying why."""
    if nesting(value) > MAX_DEPTH:
        raise argparse.ArgumentTypeError(_TOO_DEEP)
    encoded = dumps(value)
    try:
        size = len(encoded.encode("utf-8"))
    except UnicodeEncodeError as exc:  # a JSON escape of a lone surrogate: not text
        lone = f"U+{ord(encoded[exc.start]):04X}"
        raise argparse.ArgumentTypeError(
            f"holds {lone}, a lone surrogate: not text; {_UNWRITTEN}"
        ) from None
    if size > MAX_BYTES:
        raise argparse.ArgumentTypeError(
            f"is {size} bytes as JSON, more than the {MAX_BYTES} a value may take; {_UNWRITTEN}"
        )
    return value


# --- a moment in the log's history: TIME -------------------------------------------------

TIME_HELP = (
    "ISO-8601 (2026-11-25T10:00Z, 2026-11-25 10:00: UTC unless it names a zone), a time "
    "ago (45s, 30m, 2h, 1d, 1w) or a log id (1795292750809-0)"
)
_AGO = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])(?:\s+ago)?", re.IGNORECASE)
_UNIT_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_LOG_ID = re.compile(r"(\d{1,19})-(\d{1,20})")
# what a moment may be: a Redis stream id's parts, and a time Python's dates can show
_MAX_MS = 253_402_300_799_999  # 9999-12-31 23:59:59.999Z
_MAX_SEQ = 2**64 - 1


@dataclass(frozen=True)
class When:
    """A TIME as given: a server time (``ms``), a time ago (``ago_ms``, resolved against the
    server's clock) or a log id."""

    text: str
    ms: int | None = None
    ago_ms: int | None = None
    log_id: str | None = None

    def moment(self, store: StateStore) -> Moment:
        if self.log_id is not None:
            return Moment.at_record(self.log_id)
        if self.ago_ms is not None:
            return Moment.at_time(max(0, server_ms(store.redis, store.keys.log) - self.ago_ms))
        assert self.ms is not None
        return Moment.at_time(self.ms)


def when(text: str) -> When:
    """TIME (see ``TIME_HELP``): a usage error naming the forms when it is none of them."""
    bare = text.strip()
    if found := _LOG_ID.fullmatch(bare):
        if int(found.group(1)) > _MAX_MS or int(found.group(2)) > _MAX_SEQ:
            raise argparse.ArgumentTypeError(f"{text!r} is past any log id (9999-12-31)")
        return When(text, log_id=bare)
    if ago := _AGO.fullmatch(bare):
        back = float(ago.group(1)) * _UNIT_MS[ago.group(2).lower()]
        if not back <= _MAX_MS:  # also an overflow to inf
            raise argparse.ArgumentTypeError(f"{text!r} ago is before 1970, when no log starts")
        return When(text, ago_ms=round(back))
    try:
        moment = datetime.fromisoformat(bare)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        ms = round(moment.timestamp() * 1000)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a time: give {TIME_HELP}") from None
    if ms < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is before 1970, when no log starts")
    if ms > _MAX_MS:
        raise argparse.ArgumentTypeError(f"{text!r} is past 9999-12-31")
    return When(text, ms=ms)
