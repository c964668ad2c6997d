"""The worker's log lines as its operator reads them: JSON from the real RQ worker, with RQ
colouring its queue names and job ids as it does when stdout is a terminal, and not one
terminal escape in them."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator

import pytest
import rq.logutils
from redis import Redis
from rq import Queue

from bot.screen.json_logging import configure, plain_text
from rules.worker.scheduler import RuleWorker

ESC = "\x1b"


@pytest.fixture
def colouring_rq(monkeypatch: pytest.MonkeyPatch) -> None:
    """RQ as it is on a terminal (it decides once, at import, from ``sys.stdout``)."""
    monkeypatch.setattr(rq.logutils.colorizer, "notty", False)
    assert ESC in rq.logutils.green("queue")


@pytest.fixture
def queue(single_redis_url: str) -> Iterator[Queue]:
    name = f"test-colours-{uuid.uuid4().hex[:8]}"
    q = Queue(name, connection=Redis.from_url(single_redis_url))
    yield q
    q.delete(delete_jobs=True)
    q.connection.close()


@pytest.mark.usefixtures("colouring_rq")
@pytest.mark.parametrize("level", [None, "debug"])
def test_the_workers_json_lines_carry_no_terminal_escapes(
    queue: Queue, level: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    configure(level, serving=True)  # as `deliberate worker` does
    job = queue.enqueue(len, "abc")
    worker = RuleWorker([queue], connection=queue.connection)
    worker.work(burst=True)
    out = capsys.readouterr().err

    assert ESC not in out and "\\u001b" not in out
    lines = [json.loads(line) for line in out.splitlines()]
    said = [line["msg"] for line in lines if line["logger"].startswith("rq")]
    assert any(queue.name in msg and job.id in msg for msg in said), said  # RQ's own, coloured
    assert all(ESC not in str(value) for line in lines for value in line.values())


@pytest.mark.usefixtures("colouring_rq")
def test_a_persons_plain_lines_carry_none_either(capsys: pytest.CaptureFixture[str]) -> None:
    configure()
    logging.getLogger("rq.worker").warning("queue %s is stuck", rq.logutils.green("q1"))
    assert capsys.readouterr().err == "warning: queue q1 is stuck\n"


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[1;31mred\x1b[0m", "red"),
        ("\x1b]0;a window title\x07after", "after"),  # OSC to BEL
        ("\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC 8 link, to ST
        ("\x9b31mx", "x"),  # the 8-bit CSI
        ("\x9d0;title\x9cy", "y"),  # the 8-bit OSC and ST
        ("a\x1bb\x85c", "abc"),  # a lone escape, another C1 control
        ("café ☕ ünïcode", "café ☕ ünïcode"),  # text stays text
    ],
)
def test_every_terminal_control_is_taken_out_of_a_line(raw: str, shown: str) -> None:
    assert plain_text(raw) == shown
