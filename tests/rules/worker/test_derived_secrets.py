"""A step that sends what it made of a secret without sending it whole (a part of it, or it
made over by a filter) to a webhook that answers 422 quoting it: what came back stood in the
step's error, shown by any member's ``/deliberate why`` (an attacker's read of issue 41:
``[4:]`` showed 32 of a 36-character token). What a step sent that differs from its
arguments rendered with the secrets masked is struck out of what comes back too."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis import Redis

from bot.chat.answers import answer
from core.redaction import SECRET, Redactor
from rules.worker.secret_parts import derived
from tests.bot.secret_paths import VAULT, leaks
from tests.rules.rig import make_rig
from tests.servers.webhook import WebhookServer

TOKEN = "tok-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
MADE = {
    "[4:]": TOKEN[4:],
    "[:20]": TOKEN[:20],
    "reverse": TOKEN[::-1],
    "replace('-', '')": TOKEN.replace("-", ""),
    "upper": TOKEN.upper(),
}


def posting(url: str, made: str) -> str:
    template = (
        f"state['vault.token']{made}" if made.startswith("[") else f"state['vault.token'] | {made}"
    )
    return f"""\
  - id: posts_what_it_made
    when: {{key: test.go}}
    then:
      - action: http.post
        args:
          url: "{url}"
          json: {{service: hook, token: "{{{{ {template} }}}}", who: "{{{{ mutation.actor.id }}}}"}}
"""


def windows(text: str, size: int = 8) -> list[str]:
    return [text[i : i + size] for i in range(len(text) - size + 1)]


@pytest.mark.parametrize("made", MADE)
def test_what_a_step_made_of_a_secret_is_struck_out_of_its_echo(
    tmp_path: Path, server_redis: Redis, workspace: str, made: str
) -> None:
    with WebhookServer(echo=422) as hook:
        rig = make_rig(tmp_path, server_redis, workspace, posting(hook.hook_url, made), keys=VAULT)
        rig.commit("set", "vault.token", TOKEN, who="admin:root")
        rig.commit("set", "test.go", 1, who="user:mia")
        rig.work()
        (request,) = hook.requests
    assert request.json["token"] == MADE[made]  # sent as the rule made it
    [failed] = rig.evaluations("action.failed")
    error = failed["data"]["error"]
    assert error == f'http.post: HTTP 422 {{"service":"hook","token":"{SECRET}","who":"mia"}}'
    member = answer(rig.app, "why test.go", asker="slack:U0ASKER")
    assert "HTTP 422" in member and not [w for w in windows(MADE[made]) if w in member], member
    found = leaks(server_redis, workspace, windows(MADE[made], 12), queue=rig.queue)
    assert not found, found.where


def test_what_differs_from_the_masked_rendering_is_what_was_made_of_a_secret() -> None:
    strike = Redactor(["tok-123", "sk-OLD-1", "sk-NEW-2"]).text
    sent = {"a": "Bearer tok-12 for mia", "b": ["x", 7], "c": "same"}
    masked = {"a": "Bearer (secret) for mia", "b": ["x", 8], "c": "same"}
    assert derived(sent, masked, strike) == ["tok-12", 7]
    assert derived({"a": "3-kot"}, {"a": ")terces("}, strike) == ["3-kot"]
    assert derived({"a": "x", "b": {"c": 1}}, None, strike) == ["x", 1]  # (only with them)
    # the secrets themselves, whole: what lies between them is no secret
    whole = {"m": "from sk-OLD-1 to sk-NEW-2 by mia"}
    assert derived(whole, {"m": f"from {SECRET} to {SECRET} by mia"}, strike) == []
    half = {"m": "from sk-OLD-1 to sk-NEW by mia"}
    assert derived(half, {"m": f"from {SECRET} to )terc by mia"}, strike) == ["sk-OLD-1 to sk-NEW"]
