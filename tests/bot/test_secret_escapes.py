"""A webhook that answers 422 quoting the body it got, as services write JSON, URLs and HTML:
Go's JSON (``<``, ``>`` and ``&`` as ``\\u003c``...), PHP's (``/`` as ``\\/``), every character
a ``\\u`` escape, a query string with ``/`` left as it is, an HTML page of numeric character
references, a hex dump. Each put a secret webhook URL whole into the step's error, shown by a
member's ``/deliberate why``, the CLI's ``why`` and the Trace page (an attacker's read of
issue 41); none of it shows now."""

from __future__ import annotations

import html
import json
import re
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.chat.answers import answer
from core.gateway.outcome import SECRET
from core.redis.client import RedisClient
from tests.bot.cli.process import run
from tests.bot.secret_paths import leaks
from tests.bot.test_secret_shapes import ASKER, fired, parts, trace_page
from tests.servers.webhook import WebhookServer

HOOK = "https://hooks.example.com/services/T0B1/x9Zq7?sig=k2Lm&mode=<all>"


def _token(body: bytes) -> str:
    return str(json.loads(body)["token"])


def _go(body: bytes) -> bytes:
    quoted = json.dumps(_token(body))
    quoted = quoted.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return b'{"error":"invalid token","got":' + quoted.encode() + b"}"


def _php(body: bytes) -> bytes:
    quoted = json.dumps(_token(body)).replace("/", "\\/")
    return b'{"error":"invalid token","got":' + quoted.encode() + b"}"


def _every_u(body: bytes) -> bytes:
    quoted = "".join(f"\\u{ord(c):04x}" for c in _token(body))
    return b'{"got":"' + quoted.encode() + b'"}'


def _query(body: bytes) -> bytes:
    return b"refused: /hook?token=" + urllib.parse.quote(_token(body)).encode()


def _entities(body: bytes) -> bytes:
    return b"<p>refused: " + "".join(f"&#{ord(c)};" for c in _token(body)).encode() + b"</p>"


def _hex(body: bytes) -> bytes:
    return b"token bytes: " + _token(body).encode().hex().encode()


SHAPES: dict[str, Callable[[bytes], bytes]] = {
    "go": _go,
    "php": _php,
    "every-u": _every_u,
    "query": _query,
    "entities": _entities,
    "hex": _hex,
}


def read_back(shown: str) -> list[str]:
    """``shown`` and what it reads as once each kind of escape in it is read (by the
    standard library, not by the redactor), and its runs of hexadecimal as text."""
    unicode = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), shown)
    hexes = re.findall(r"(?:[0-9a-fA-F]{2}){8,}", shown)
    return [
        shown,
        unicode,
        shown.replace("\\/", "/"),
        urllib.parse.unquote(shown),
        html.unescape(shown),
        *(bytes.fromhex(h).decode("utf-8", "replace") for h in hexes),
    ]


@pytest.mark.parametrize("name", SHAPES)
def test_a_webhooks_422_quoting_the_secret_in_its_escapes_shows_none_of_it(
    tmp_path: Path,
    redis_client: RedisClient,
    workspace: str,
    capsys: pytest.CaptureFixture[str],
    name: str,
) -> None:
    with WebhookServer(echo=422, shape=SHAPES[name]) as hook:
        rig = fired(tmp_path, redis_client, workspace, hook.hook_url, HOOK)
        (request,) = hook.requests
    assert request.json["token"] == HOOK  # sent as it is; quoted back in escapes
    [failed] = rig.evaluations("action.failed")
    error = failed["data"]["error"]
    assert error.startswith("http.post: HTTP 422 ") and SECRET in error, error
    member = answer(rig.app, "why test.go", asker=ASKER)
    code, out, _ = run(capsys, workspace, "--config", str(rig.config_path), "why", "test.go")
    assert code == 0 and "HTTP 422" in out and "HTTP 422" in member, (out, member)
    page = trace_page(rig.app, failed["corr"])
    for shown in (error, member, out, page):
        kept = [p for p in parts(HOOK, 12) for read in read_back(shown) if p in read]
        assert not kept, (kept, shown)
    found = leaks(redis_client, workspace, parts(HOOK, 16), queue=rig.queue)
    assert not found, found.where
