"""What the console cannot send is refused in one line, and the session goes on (issue 41:
an edit whose value was ``{"a": 1e999}`` or held a lone surrogate ended the console with exit
2): a number JSON cannot carry, a lone surrogate escaped in JSON, and bytes that are not
UTF-8 on stdin (Python reads each as a lone surrogate). A proposal of an object waits for
approval (``entity.task.*``, "Make it a task"); nothing is written until a good edit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from bot.app import App, build_app
from bot.console import Console
from tests.bot.test_console_lifecycle import approval_config
from tests.factories import actor

IDEA = "how about postgres with read replicas"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return approval_config(tmp_path, "{people: true}", '"entity.task.*"')


def events(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines]


def task_proposed(app: App) -> tuple[Console, list[str], str]:
    """Alice's console, where "Make it a task" made a proposal that waits: its key."""
    said: list[str] = []
    alice = Console(app.runtime(use_env=False), "s1", actor("user:alice"), said.append)
    alice.as_json = True
    alice.handle(IDEA)
    view = [e for e in events(said) if "buttons" in e][-1]
    alice.handle(str({b["action"]: b["n"] for b in view["buttons"]}["DeriveEntityFromCurrent"]))
    pending = events(said)[-2]
    assert pending["event"] == "pending", pending
    return alice, said, pending["key"]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ('/edit {"title": 1e999}', "the new value holds a number too large for JSON"),
        ('/edit {"title": [-1e400]}', "the new value holds a number too large for JSON"),
        ('/edit {"title": "\\ud800"}', "the new value holds U+D800, a lone surrogate: not text"),
        ('/edit {"\\udfff": 1}', "the new value holds U+DFFF, a lone surrogate: not text"),
        ('/edit {"title": "\udced\udca0\udc80"}', "the line holds U+DCED, not text"),
        ("\udcff hello", "the line holds U+DCFF, not text (not UTF-8?); nothing was done"),
    ],
    ids=["1e999-in", "-1e400-deep", "escaped", "escaped-name", "bytes-in-edit", "bytes-said"],
)
def test_a_value_json_cannot_carry_is_one_line_and_the_session_goes_on(
    redis_client: Redis, workspace: str, config: Path, line: str, why: str
) -> None:
    app = build_app(workspace, config, client=redis_client)
    alice, said, key = task_proposed(app)
    before = len(app.log)
    said.clear()
    alice.handle(line)
    messages = [e.get("message") or e.get("text") for e in events(said)]
    assert any(m is not None and m.startswith(why) for m in messages), messages
    assert app.store.version(key) == 0 and len(app.log) == before
    said.clear()
    alice.handle('/edit {"title": "postgres", "topic": "db"}')
    assert [e["event"] for e in events(said)][-2:] == ["committed", "outcome"]
    entry = app.store.get(key)
    assert entry is not None and entry.value == {"title": "postgres", "topic": "db"}


def test_the_console_process_refuses_bad_bytes_and_bad_numbers_and_goes_on(
    workspace: str, config: Path
) -> None:
    env = {**os.environ, "DELIBERATE_WORKSPACE": workspace, "DELIBERATE_CONFIG": str(config)}
    env.pop("OPENAI_API_KEY", None)
    lines = [
        IDEA.encode(),
        b"5",  # Make it a task
        b'/edit {"title": 1e999}',
        b'/edit {"title": "\\ud800"}',
        b'/edit {"title": "\xed\xa0\x80"}',  # not UTF-8
        b"caf\xe9 au lait",  # Latin-1
        b'/edit {"title": "postgres"}',
    ]
    done = subprocess.run(
        [sys.executable, "-m", "bot.main", "--config", str(config), "console", "--json"],
        input=b"\n".join(lines) + b"\n",
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    said = events(done.stdout.decode().splitlines())
    errors = [e["message"] for e in said if e["event"] == "error"]
    refused = [e["message"] for e in said if e["event"] == "rejected"]
    assert refused == [
        "the new value holds a number too large for JSON (or NaN, or infinity)",
        "the new value holds U+D800, a lone surrogate: not text",
    ]
    assert errors == [
        "the line holds U+DCED, not text (not UTF-8?); nothing was done",
        "the line holds U+DCE9, not text (not UTF-8?); nothing was done",
    ]
    assert [e["event"] for e in said][-2:] == ["committed", "outcome"]
