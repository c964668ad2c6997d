"""A model that cannot be used says why in the log line itself (a closed port, a refused key, a
server error, a timeout), and never shows the API key: the real openai client against a closed
port and a local server speaking the OpenAI protocol."""

from __future__ import annotations

import logging

import openai
import pytest

from core.llm.chat import ChatModel
from core.perception import EmbeddedClassifier
from core.perception.llm import LLMClassifier
from tests.openai_server import OpenAIServer
from tests.servers.refusing import refusing_port

KEY = "sk-proj-Zq8tTESTKEYnotrealAbCdEf0123456789"


def classify_failing(base_url: str, caplog: pytest.LogCaptureFixture, timeout: float = 5.0) -> str:
    """The warning logged for one classify call that fails, with its fields (the JSON line's)."""
    caplog.set_level(logging.INFO, logger="deliberate.llm")
    client = openai.OpenAI(api_key=KEY, base_url=base_url, max_retries=0)
    classifier = LLMClassifier(ChatModel(client, "test-model", timeout), EmbeddedClassifier())
    assert classifier.interpret("brb coffee")[1] == "embedded"
    [record] = [r for r in caplog.records if r.name == "deliberate.llm"]
    assert record.levelno == logging.WARNING
    line = record.getMessage()
    assert line.startswith("classify call to test-model: error: ")
    assert record.fields["error"] in line  # type: ignore[attr-defined]
    assert KEY not in f"{line} {record.fields}"  # type: ignore[attr-defined]
    assert "TESTKEY" not in f"{line} {record.fields}"  # type: ignore[attr-defined]
    return line


def test_a_closed_port_is_named_with_the_refusal_and_the_address(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with refusing_port() as port:  # held, never listening: no other server can take it
        line = classify_failing(f"http://127.0.0.1:{port}/v1", caplog)
    assert "APIConnectionError: Connection error (ConnectError: " in line
    assert "Connection refused" in line
    assert line.endswith(f"POST http://127.0.0.1:{port}/v1/chat/completions")


def test_a_refused_key_says_401_and_the_endpoints_words_without_the_key(
    openai_server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    # as OpenAI answers it: the key, partly masked, in the message
    openai_server.reply(status=401, error=f"Incorrect API key provided: {KEY[:8]}****{KEY[-4:]}.")
    line = classify_failing(openai_server.base_url, caplog)
    assert "AuthenticationError: HTTP 401: Incorrect API key provided: sk-***" in line
    assert KEY[-4:] not in line
    assert line.endswith(f"POST {openai_server.base_url}/chat/completions")


def test_a_server_error_says_500_and_the_endpoints_words(
    openai_server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    openai_server.reply(status=500, error=f"upstream unavailable (key {KEY})")
    line = classify_failing(openai_server.base_url, caplog)
    assert "InternalServerError: HTTP 500: upstream unavailable (key ***)" in line


def test_a_timeout_says_so(openai_server: OpenAIServer, caplog: pytest.LogCaptureFixture) -> None:
    openai_server.reply('{"act_type": "commit"}', delay=1.5)
    line = classify_failing(openai_server.base_url, caplog, timeout=0.3)
    assert "APITimeoutError: Request timed out (ReadTimeout: " in line
    assert openai_server.base_url in line


def test_credentials_in_the_url_are_not_shown(caplog: pytest.LogCaptureFixture) -> None:
    with refusing_port() as port:
        url = f"http://user:hunter2@127.0.0.1:{port}/v1?api-key=hunter3"
        line = classify_failing(url, caplog)
    assert "hunter2" not in line and "hunter3" not in line and "user" not in line
    assert f"POST http://127.0.0.1:{port}/v1/" in line  # (openai puts the path after the query)
