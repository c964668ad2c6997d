"""A value on the command line the store would refuse is one usage error naming the argument
(exit 2), never a traceback, and nothing is written: JSON nested deeper than the store keeps
(64 levels; 50,000 levels once gave a RecursionError traceback), NaN and Infinity, numbers
too large for JSON, bytes that are not UTF-8, an escaped lone surrogate; what it takes still
goes through. The command runs in this process, as ``main`` reads its arguments; bytes argv
carries are given to a real process, as only one decodes them at start-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from core.redis.client import RedisClient
from core.state.value_json import MAX_DEPTH
from tests.bot.cli.process import Ran, command, run
from tests.conftest import write_config
from tests.reads import footprints

ANY = 'policy:\n  keys:\n    - pattern: "any.*"\n    - pattern: "count.*"\n      type: number\n'


def deep_array(levels: int, closed: bool = True) -> str:
    return "[" * levels + ("]" * levels if closed else "")


def deep_object(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


def in_a_process(
    config: Path, workspace: str, *argv: str | bytes
) -> subprocess.CompletedProcess[str]:
    command: list[str | bytes] = [sys.executable, "-m", "bot.main", "--config", str(config)]
    return subprocess.run(
        [*command, "--workspace", workspace, *argv],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=120,
        env=dict(os.environ),
        check=False,
    )


Deliberate = Callable[..., Ran]


@pytest.fixture
def deliberate(capsys: pytest.CaptureFixture[str]) -> Deliberate:
    """``deliberate --config CONFIG --workspace WORKSPACE ARGV`` in this process."""

    def ran(config: Path, workspace: str, *argv: str) -> Ran:
        return command(capsys, "--config", str(config), "--workspace", workspace, *argv)

    return ran


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_config(tmp_path, ANY)


def one_usage_error(done: Ran | subprocess.CompletedProcess[str], argument: str) -> str:
    """The one line printed, naming ``argument`` (and where the usage is): its words."""
    assert done.returncode == 2, (done.returncode, done.stderr[-500:])
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert len(done.stderr) < 2000  # the value is not echoed back
    [line] = done.stderr.splitlines()
    said, help_at = line.partition(f"error: argument {argument}: ")[2].rsplit(" (see ", 1)
    assert help_at.startswith("deliberate ") and help_at.endswith(" --help)"), line
    assert said.endswith("; nothing was written"), line
    return said


NESTED = f"nests more than {MAX_DEPTH} levels deep; nothing was written"
REFUSED_VALUES = [
    pytest.param(deep_array(50_000), NESTED, id="array-50000-deep"),
    pytest.param(deep_array(50_000, closed=False), NESTED, id="array-50000-deep-unclosed"),
    pytest.param(deep_object(20_000), NESTED, id="object-20000-deep"),
    pytest.param(deep_array(MAX_DEPTH + 1), NESTED, id="array-65-deep"),
    pytest.param(
        "NaN",
        "NaN is not a JSON number (to mean the text, quote it: '\"NaN\"'); nothing was written",
        id="NaN",
    ),
    pytest.param("Infinity", "Infinity is not a JSON number", id="Infinity"),
    pytest.param('{"n": [1, NaN]}', "NaN is not a JSON number; nothing was written", id="NaN-in"),
    pytest.param("1e400", "1e400 is too large a number; nothing was written", id="1e400"),
    pytest.param('{"n": -1e999}', "-1e999 is too large a number", id="-1e999-in"),
    pytest.param("9" * 5000, "has a number too large for JSON to hold", id="5000-digits"),
    pytest.param(
        '"\\ud800"', "holds U+D800, a lone surrogate: not text", id="escaped-lone-surrogate"
    ),
]


@pytest.mark.parametrize(("value", "said"), REFUSED_VALUES)
def test_state_set_refuses_what_the_store_would_in_one_line(
    deliberate: Deliberate,
    config: Path,
    workspace: str,
    redis_client: RedisClient,
    value: str,
    said: str,
) -> None:
    before = footprints(redis_client, [workspace])
    done = deliberate(config, workspace, "state", "set", "any.x", value, "--actor", "user:a")
    assert one_usage_error(done, "value").startswith(said)
    assert footprints(redis_client, [workspace]) == before  # nothing written, nor read


def test_bytes_that_are_not_utf8_are_named_and_nothing_is_written(
    config: Path, workspace: str, redis_client: RedisClient
) -> None:
    before = footprints(redis_client, [workspace])
    for value in (b"ab\xffcd", b'["\xc3\x28"]', "lone \udcfe from argv"):
        done = in_a_process(config, workspace, "state", "set", "any.x", value, "--actor", "user:a")
        assert "is not UTF-8 text (byte 0x" in one_usage_error(done, "value")
    assert footprints(redis_client, [workspace]) == before


def test_minus_infinity_after_the_end_of_options_is_refused(
    deliberate: Deliberate, config: Path, workspace: str
) -> None:
    done = deliberate(
        config, workspace, "state", "set", "any.x", "--actor", "user:a", "--", "-Infinity"
    )
    assert one_usage_error(done, "value").startswith("-Infinity is not a JSON number")


@pytest.mark.parametrize("by", ["NaN", "1e400", deep_array(50_000)], ids=["NaN", "1e400", "deep"])
def test_incr_by_refuses_the_same(
    deliberate: Deliberate, config: Path, workspace: str, by: str
) -> None:
    done = deliberate(config, workspace, "state", "incr", "count.n", "--by", by, "--actor", "u:a")
    assert one_usage_error(done, "--by")


@pytest.mark.parametrize(
    "option", ["--mutation", "--state"], ids=["rules-test-mutation", "rules-test-state"]
)
def test_rules_test_refuses_the_same(
    deliberate: Deliberate, config: Path, workspace: str, option: str
) -> None:
    ok = '{"op": "set", "key": "any.x", "value": 1}'
    deep = '{"op": "set", "key": "any.x", "value": ' + deep_array(50_000) + "}"
    for given, said in ((deep, NESTED), ('{"any.x": NaN}', "NaN is not a JSON number")):
        argv = ["--mutation", given] if option == "--mutation" else ["--mutation", ok]
        argv += ["--state", given] if option == "--state" else []
        done = deliberate(config, workspace, "rules", "test", *argv)
        assert one_usage_error(done, option).startswith(said)


def test_what_the_store_keeps_still_goes_through(
    deliberate: Deliberate, config: Path, workspace: str, redis_client: RedisClient
) -> None:
    """The limits are the store's, no tighter: 64 levels, a 4000-digit integer, text that
    is not JSON (though it starts as a number JSON cannot hold), "NaN" quoted as JSON text;
    each committed as given."""
    given = {
        "any.deep": (deep_array(MAX_DEPTH), json.loads(deep_array(MAX_DEPTH))),
        "any.big": ("9" * 4000, int("9" * 4000)),
        "any.text": ("NaN and Infinity", "NaN and Infinity"),
        "any.words": ("1e400 ways", "1e400 ways"),
        "any.quoted": ('"NaN"', "NaN"),
        "any.unicode": ('"\\u00e9t\\u00e9 ☀"', "été ☀"),
    }
    for key, (text, _) in given.items():
        done = deliberate(config, workspace, "state", "set", key, text, "--actor", "user:a")
        assert done.returncode == 0, done.stderr
    for key, (_, value) in given.items():
        done = deliberate(config, workspace, "state", "get", key, "--json")
        assert json.loads(done.stdout)["value"] == value
    assert footprints(redis_client, [workspace])[workspace][1] == len(given)  # the log


@pytest.mark.parametrize("levels", [600, 100_000])
def test_a_config_nested_thousands_deep_is_one_line_naming_the_file(
    deliberate: Deliberate, tmp_path: Path, workspace: str, levels: int
) -> None:
    """``rules check`` of a YAML file 100,000 lists deep printed a RecursionError
    traceback; with libyaml's parser (which stops at 1,000 levels), one 600 deep did, in the
    merge of the layers."""
    deep = tmp_path / "deep.yaml"
    deep.write_text("a: " + deep_array(levels) + "\n", encoding="utf-8")
    done = deliberate(deep, workspace, "rules", "check")
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr[-800:]
    said = (done.stdout + done.stderr).strip().splitlines()
    assert len(said) <= 3 and any("deep.yaml" in line and "nests too deep" in line for line in said)


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["trace", "ab\udcffc"], "correlation-id is not UTF-8 text (byte 0xff at character 3)"),
        (["revert", "m\udcfe", "--actor", "user:a"], "mutation-id is not UTF-8 text (byte 0xfe"),
        (["state", "set", "any.x", "1", "--actor", "user:a", "--reason", "r\udcff"], "reason is"),
        (["console", "--topic", "t\udcff"], "topic is not UTF-8 text (byte 0xff at character 2)"),
    ],
)
def test_any_argument_that_is_not_utf8_is_one_line_naming_it_and_nothing_is_done(
    capsys: pytest.CaptureFixture[str],
    config: Path,
    workspace: str,
    redis_client: RedisClient,
    argv: list[str],
    named: str,
) -> None:
    """Bytes argv carries that are not UTF-8 (Python keeps each as a lone surrogate) in an
    id, a reason or a key: one line naming the argument, exit 2, nothing read or written
    (``deliberate trace`` answered "'utf-8' codec can't encode character '\\udcff'")."""
    before = footprints(redis_client, [workspace])
    code, out, err = run(capsys, workspace, "--config", str(config), *argv)
    assert (code, out) == (2, ""), (code, out, err)
    [line] = err.splitlines()
    assert line.startswith(f"deliberate: {named}") and line.endswith("; nothing was done"), line
    assert footprints(redis_client, [workspace]) == before
