"""http.post against a local webhook receiver, through httpx."""

from __future__ import annotations

import json
import time

import pytest
from pydantic import ValidationError

from connectors.webhook import PostArgs
from core.field_errors import plain_problems
from rules.connector_api import ConnectorError
from tests.connectors.conftest import context, run
from tests.servers.http import HttpServer, Request, Response
from tests.servers.webhook import HOOK, WebhookServer, signature

SECRET_ENV = {"HOOK_SECRET": "hook-signing-secret"}


def test_a_signed_post_is_verified_by_the_receiver(webhook: WebhookServer) -> None:
    args = {
        "url": webhook.hook_url,
        "json": {"scene": "Live", "n": 1},
        "hmac_secret_env": "HOOK_SECRET",
    }

    result = run("http.post", args, context(SECRET_ENV, key="mut-7:rule-2:1"))

    assert result == {"status": 200}
    request = webhook.requests[-1]
    assert request.json == {"scene": "Live", "n": 1}
    assert request.header("X-Deliberate-Signature") == signature(
        "hook-signing-secret", request.body
    )
    assert request.header("Idempotency-Key") == "mut-7:rule-2:1"
    assert request.header("Content-Type") == "application/json"


def test_a_signature_made_with_another_secret_is_refused(webhook: WebhookServer) -> None:
    args = {"url": webhook.hook_url, "json": {"a": 1}, "hmac_secret_env": "HOOK_SECRET"}

    with pytest.raises(ConnectorError) as caught:
        run("http.post", args, context({"HOOK_SECRET": "some-other-secret"}))

    assert caught.value.message == 'http.post: HTTP 401 {"error": "bad signature"}'
    assert not caught.value.retryable
    assert "some-other-secret" not in str(caught.value)


def test_the_signature_header_can_be_renamed() -> None:
    with WebhookServer(secret="s", signature_header="X-Hub-Signature-256") as hook:
        args = {
            "url": hook.hook_url,
            "json": [1, "two", None],
            "hmac_secret_env": "S",
            "signature_header": "X-Hub-Signature-256",
        }
        assert run("http.post", args, context({"S": "s"})) == {"status": 200}
        assert "x-deliberate-signature" not in hook.requests[-1].headers


def test_an_unset_secret_variable_is_named(webhook: WebhookServer) -> None:
    args = {"url": webhook.hook_url, "hmac_secret_env": "HOOK_SECRET"}

    with pytest.raises(ConnectorError) as caught:
        run("http.post", args, context({}))

    assert caught.value.message == "http.post (hmac_secret_env): HOOK_SECRET is not set"
    assert webhook.requests == []


def test_unsigned_post_with_custom_headers_and_null_body() -> None:
    with HttpServer() as server:
        server.route("POST", "/in", Response(201, {"ok": True}))
        args = {
            "url": server.url + "/in",
            "headers": {"X-Team": "blue", "Idempotency-Key": "forged"},
        }

        assert run("http.post", args, context({}, key="k-1")) == {"status": 201}

        request = server.requests[-1]
        assert request.body == b"null"
        assert request.header("X-Team") == "blue"
        assert request.header("Idempotency-Key") == "k-1"  # the step's key wins
        assert "x-deliberate-signature" not in request.headers


def test_the_body_is_sent_exactly_as_signed() -> None:
    with HttpServer() as server:
        server.route("POST", "/in", Response(204))
        value = {"text": "café ☕", "nested": {"b": [1.5, True]}}
        run(
            "http.post",
            {"url": server.url + "/in", "json": value, "hmac_secret_env": "K"},
            context({"K": "k"}),
        )

        request = server.requests[-1]
        assert json.loads(request.body) == value
        assert request.header("X-Deliberate-Signature") == signature("k", request.body)


def test_a_5xx_is_retryable_with_an_excerpt_and_no_url() -> None:
    with HttpServer() as server:
        server.route("POST", "/secret-path-token", Response(502, body=b"bad gateway " + b"x" * 500))

        with pytest.raises(ConnectorError) as caught:
            run("http.post", {"url": server.url + "/secret-path-token"}, context({}))

    assert caught.value.retryable
    assert caught.value.message.startswith("http.post: HTTP 502 bad gateway xxx")
    assert len(caught.value.message) < 260
    assert "secret-path-token" not in caught.value.message


def test_a_429_is_retryable_and_a_404_is_not() -> None:
    with HttpServer() as server:
        server.script("POST", HOOK, Response(429, {"error": "slow down"}))
        with pytest.raises(ConnectorError) as limited:
            run("http.post", {"url": server.url + HOOK}, context({}))
        with pytest.raises(ConnectorError) as missing:
            run("http.post", {"url": server.url + HOOK}, context({}))

    assert limited.value.retryable
    assert not missing.value.retryable
    assert missing.value.message.startswith("http.post: HTTP 404")


def test_an_unreachable_url_is_retryable() -> None:
    with HttpServer() as gone:
        url = gone.url + HOOK

    with pytest.raises(ConnectorError) as caught:
        run("http.post", {"url": url}, context({}))

    assert caught.value.retryable
    assert caught.value.message.startswith("http.post: connection failed")


def slow_answer(request: Request) -> Response:
    time.sleep(0.5)
    return Response()


def test_a_timeout_is_retryable() -> None:
    with HttpServer() as server:
        server.route(
            "POST", "/slow", lambda request: (__import__("time").sleep(0.5), Response())[1]
        )

        with pytest.raises(ConnectorError) as caught:
            run("http.post", {"url": server.url + "/slow", "timeout_sec": 0.1}, context({}))

    assert caught.value.retryable
    assert caught.value.message.startswith("http.post: timed out")


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("", "is empty: expected an http(s) URL with a host"),
        ("   ", "is empty: expected an http(s) URL with a host"),
        ("not a url", "expected an http(s) URL with a host"),
        # what a template "https://{{ mutation.value }}" renders a sentence to
        ("https://not a url", "expected an http(s) URL with a host"),
        ("file:///etc/passwd", "expected an http(s) URL with a host"),
        ("https://", "expected an http(s) URL with a host"),
        ("http://hooks.example:port/x", "expected an http(s) URL with a host"),
    ],
)
def test_a_url_that_is_no_http_url_with_a_host_is_refused_by_the_schema(
    url: str, said: str
) -> None:
    """Refused by the action's own schema (what the worker and ``rules test`` check before
    anything is sent), in words that leave the URL out (it may be the secret)."""
    with pytest.raises(ValidationError) as caught:
        run("http.post", {"url": url}, context({}))
    assert plain_problems(caught.value, PostArgs) == [(("url",), said)]


@pytest.mark.parametrize(
    "url", ["http://hooks.example/x", "https://[::1]:8080/p", "https://h.example:443/a?b=c"]
)
def test_an_http_url_with_a_host_is_taken(url: str) -> None:
    assert PostArgs.model_validate({"url": url}).url == url
