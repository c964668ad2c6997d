"""Secret values stay secret on every path: written through chat (the model proposes one),
a moderator's edit typed in a form, a stale Apply, an Apply by someone without the right,
a discard, an Undo, an expiry, the web Inbox (an edit, an Apply, a Reject and a break-glass
with a reason), the CLI (a write, and a write whose refusal quotes the value) and rules of
every trigger and condition kind, and rules sending it to a webhook that answers 422 quoting
it back; then every Redis key of the workspace, every page of the web window, every chat
answer and what the CLI prints are searched for each value. It stands only in the secret
keys' entries and the mutation log (``tests.bot.secret_paths``).

The values come in the shapes text gives them: several lines, blanks doubled or mixed; the
reasons people give quote them upper-cased, in base64, broken across lines and across the
cut of a long reason; the webhook quotes them upper-cased, at the cut of its excerpt and in
base64 at every alignment. None of those shapes may be found either (``shapes``)."""

from __future__ import annotations

import json
import string
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from bot.app import App
from bot.web.settings import WebSettings
from core.deliberation.actions import ActionType
from core.deliberation.messages import UserSaid
from core.gateway.break_glass import MAX_GLASS_REASON
from core.gateway.mutation_gateway import MAX_REASON, MutationGateway
from core.gateway.outcome import Pending, ProposalStatus
from core.llm.chat import ChatModel
from core.redis.client import RedisClient
from core.runtime.events import Event
from core.runtime.runner import Runtime
from core.state.actor import Actor
from tests.bot.cli.process import run
from tests.bot.secret_paths import (
    RULES,
    VAULT,
    echo_rules,
    found_in,
    leaks,
    quoting,
    raw,
    redis_text,
)
from tests.bot.web.conftest import OPERATOR_TOKEN, Site, serve_site
from tests.bot.web.sessions import csrf_of, person_in, signed_in
from tests.conftest import delete_workspace
from tests.core.runtime.test_lifecycle_loop import button, click, outcome
from tests.factories import actor, mutation
from tests.model_script import proposing
from tests.openai_server import OpenAIServer
from tests.rules.rig import Rig, make_rig
from tests.servers.webhook import WebhookServer

AL = actor("user:al")  # a member: may talk, not write vault.*
MIA, ZED, BO = actor("moderator:mia"), actor("moderator:zed"), actor("moderator:bo")
AGENT = actor("agent:assistant")
INA = actor("moderator:ina", "incident")  # (may break the glass on vault.glass)

# what people type: words of letters or digits and punctuation (HTML's and JSON's own
# included), apart by blanks, doubled blanks or line breaks, after a prefix no page or record
# says by itself
WORD = st.text(
    alphabet=st.sampled_from(string.ascii_letters + string.digits + "-_.:;!?@#$%^*()+=/<>&'\"é"),
    min_size=1,
    max_size=12,
)
GAP = st.sampled_from([" ", "  ", "\n", "\r\n", " \t ", "  \n  "])
SECRET = st.builds(
    lambda words, gaps: "Zq" + "".join(w + g for w, g in zip(words, gaps, strict=False)) + "qZ",
    st.lists(WORD, min_size=1, max_size=4),
    st.lists(GAP, min_size=4, max_size=4),
)
# one of each shape, every run
SHAPED = [
    "Zq-first-line\nsecond-line-qZ",
    "Zq open  sesame  twice qZ",
    "Zq" + "k9" * 40 + "qZ",
    "Zq:é<&>'\"\r\nqZ",
    "Zq hunter2\tcorrect horse qZ",
    "Zq4qZ",
    "Zq-short qZ",
    "Zq  a  b\nc  qZ",
    "Zq" + "ab" * 9 + "\n" + "cd" * 9 + "qZ",
    "Zq/+/+/+/+/+/+qZ",
    "Zq-the-glass-one qZ",
    "Zq-the rejected  one\nqZ",
]


@contextmanager
def vault(tmp_path: Path, client: RedisClient) -> Iterator[Rig]:
    workspace = f"test-{uuid.uuid4().hex[:12]}"
    home = tmp_path / workspace
    home.mkdir()
    with (
        WebhookServer(echo=422) as echo,
        WebhookServer(echo=422, encoded=True) as encoded,
    ):
        rules = RULES + echo_rules(echo.hook_url, encoded.hook_url)
        rig = make_rig(home, client, workspace, rules, keys=VAULT)
        try:
            yield rig
        finally:
            delete_workspace(client, workspace)


def chat(rig: Rig, server: OpenAIServer) -> Runtime:
    model = ChatModel(openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0), "m")
    return rig.app.runtime(model)


def said(rt: Runtime, server: OpenAIServer, value: str) -> list[Event]:
    """Al asks; the model proposes ``vault.token = value``."""
    server.answer_with = proposing("vault.token", value)
    return rt.send("s1", UserSaid(text="rotate the stream token", actor=AL))


def agent_proposes(gateway: MutationGateway, key: str, value: str) -> str:
    outcome = gateway.propose(mutation("set", key, value, AGENT, reason="rotate"))
    assert isinstance(outcome, Pending), outcome
    return outcome.proposal.id


def inbox_act(site: Site, who: Actor, proposal_id: str, verb: str, **form: str) -> str:
    workspace = site.app.store.workspace
    inbox = f"/w/{workspace}/inbox"
    with signed_in(site, person_in(workspace, who)) as client:
        found = site.app.gateway.proposals.get(proposal_id)
        fields = {"csrf_token": csrf_of(client, inbox), **form}
        fields.setdefault("revision", str(found.revision if found else 0))
        answer = client.post(f"{inbox}/{proposal_id}/{verb}", data=fields)
        assert answer.status_code == 303, answer.text[:300]
        return client.get(inbox).text


def ids_to_trace(app: App) -> set[str]:
    """Every correlation, mutation and proposal id the workspace's records name."""
    keys = app.store.keys
    found: set[str] = set()
    for _, fields in app.redis.xrange(keys.trace):
        found.add(_str(fields, "corr"))
    for row in app.evaluations.recent():
        found.add(row["corr"])
    for record in app.gateway.decisions.recent(1000):
        found.update(str(record[k]) for k in ("correlation_id", "proposal_id") if k in record)
    for record in app.log.latest(1000):
        found.update((record.mutation.id, record.mutation.correlation_id))
    return {f for f in found if f and f != "-"}


def _str(fields: dict[Any, Any], name: str) -> str:
    value = fields.get(name, fields.get(name.encode()))
    return value.decode() if isinstance(value, bytes) else str(value)


def pages(site: Site) -> dict[str, str]:
    """Every page of the workspace as the operator reads it."""
    workspace = site.app.store.workspace
    paths = [f"/w/{workspace}/{p}" for p in ("state", "log", "rules", "inbox")]
    paths += [f"/w/{workspace}/trace/{i}" for i in sorted(ids_to_trace(site.app))]
    headers = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    served: dict[str, str] = {}
    with httpx.Client(base_url=site.base, headers=headers) as client:
        for path in paths:
            answer = client.get(path)
            assert answer.status_code in (200, 404), (path, answer.status_code)
            served[path] = answer.text
    return served


def the_paths(
    rig: Rig, server: OpenAIServer, capsys: pytest.CaptureFixture[str], v: list[str]
) -> list[str]:
    """Drive each path with its own value of ``v``; what people were shown and told."""
    app, shown = rig.app, []
    rig.commit("set", "vault.other", v[0], who="admin:root")
    rt = chat(rig, server)
    asked = said(rt, server, v[1])
    edited = click(rt, button(asked, ActionType.EDIT_PROPOSAL), MIA, "e1", note=v[2])
    stale = button(asked, ActionType.APPLY_PROPOSAL)  # the revision before Mia's edit
    by_member = click(rt, stale, AL, "a1")
    by_moderator = click(rt, stale, ZED, "a2")
    assert outcome(by_member).outcome == outcome(by_moderator).outcome == "rejected"
    applied = click(rt, button(edited, ActionType.APPLY_PROPOSAL), ZED, "a3")
    assert outcome(applied).outcome == "committed", outcome(applied)
    rig.work()
    rig.clock.at_ms = app.store.get("vault.token").updated_at + 5_000  # type: ignore[union-attr]
    rig.work()  # the for-timer fires
    undone = click(rt, button(applied, ActionType.REVERT_MUTATION), ZED, "u1")
    again = said(rt, server, v[3])
    why = quoting(v[3], MAX_REASON)  # (the discard's reason: every shape of it, and the cut)
    dropped = click(rt, button(again, ActionType.DISCARD_PROPOSAL), BO, "d1", note=why)
    shown += [asked, edited, by_member, by_moderator, applied, undone, again, dropped]
    hurried = MutationGateway(app.store, app.policy, proposal_expiry_ms=0)
    agent_proposes(hurried, "vault.old", v[4])
    assert hurried.expire_due() == 1

    # (the operator reads every trace: more than the 60 a minute a person may)
    site = serve_site(app, WebSettings(operator_token=OPERATOR_TOKEN, trace_per_minute=10_000))
    try:
        pid = agent_proposes(app.gateway, "vault.web", v[5])
        shown.append(inbox_act(site, MIA, pid, "edit", value=v[6]))
        shown.append(inbox_act(site, ZED, pid, "apply"))
        assert app.store.get("vault.web").value == v[6]  # type: ignore[union-attr]
        pid = agent_proposes(app.gateway, "vault.glass", v[10])
        glass = quoting(v[10], MAX_GLASS_REASON)
        shown.append(inbox_act(site, INA, pid, "breakglass", reason=glass))
        assert app.store.get("vault.glass").value == v[10]  # type: ignore[union-attr]
        pid = agent_proposes(app.gateway, "vault.rejected", v[11])
        shown.append(inbox_act(site, ZED, pid, "reject", reason=quoting(v[11], MAX_REASON)))
        assert app.gateway.proposals.get(pid).status is ProposalStatus.DISCARDED  # type: ignore[union-attr]
        ws, config = app.store.workspace, str(rig.config_path)
        admin = ("--actor", "admin:root")
        said_cli = [
            run(capsys, ws, "--config", config, "state", "set", "vault.cli", v[7], *admin),
            run(capsys, ws, "--config", config, "state", "set", "vault.choice", v[8], *admin),
        ]
        assert [code for code, _, _ in said_cli] == [0, 1]
        rig.commit("set", "test.tick", 1)
        for _ in range(2):  # twice: the signal rule fires
            rig.commit("set", "vault.seen", {"value": v[9], "confidence": 0.9}, who="admin:root")
        rig.work()
        corr = {r["corr"] for r in app.evaluations.recent()}
        said_cli += [run(capsys, ws, "--config", config, "trace", c) for c in sorted(corr)]
        said_cli.append(run(capsys, ws, "--config", config, "rules", "why", "vault.token"))
        # (a key that holds its value: "rules why" printed it, in words and as JSON)
        for json_flag in ((), ("--json",)):
            why = ("rules", "why", "vault.web", *json_flag)
            said_cli.append(run(capsys, ws, "--config", config, *why))
        shown += [out + err for _, out, err in said_cli[1:]]  # (the first: the admin's own)
        shown += list(pages(site).values())
    finally:
        site.served.stop()
    return [json.dumps(s, default=str) if not isinstance(s, str) else s for s in shown]


@settings(
    max_examples=4,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # a failure names its values as is
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(values=st.lists(SECRET, min_size=12, max_size=12, unique=True))
@example(values=SHAPED)
def test_a_secret_value_stands_only_in_its_entry_and_the_log(
    values: list[str],
    tmp_path: Path,
    redis_client: RedisClient,
    openai_server: OpenAIServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with vault(tmp_path, redis_client) as rig:
        told = the_paths(rig, openai_server, capsys, values)
        state, workspace = rig.app.redis, rig.app.store.workspace
        leaked = leaks(state, workspace, values, queue=rig.queue)
        assert not leaked, leaked.where
        # the scan sees what is there: the log keeps the admin's value, its entry too
        for key in (rig.app.store.keys.log, rig.app.store.keys.entry("vault.cli")):
            assert found_in(redis_text(raw(state), key), values[7]), key
        # the webhook got them, and quoted them back
        echoed = {
            r["data"]["rule"]: r["data"]["error"]
            for r in rig.evaluations("action.failed")
            if r["data"]["rule"].startswith("echoed_")
        }
        assert len(echoed) == 3, echoed
        assert all(e.startswith("http.post: HTTP 422 ") for e in echoed.values()), echoed
    for v in values:
        assert not [text for text in told if found_in(text, v)], v
