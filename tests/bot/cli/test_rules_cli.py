"""`deliberate rules check|test|why`, `deliberate worker --burst` and the trace of a rule's
work, through the real CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from rules.keys import RuleKeys
from tests.bot.cli.process import run
from tests.bot.secret_paths import VAULT
from tests.conftest import write_config
from tests.rules.rig import config_text
from tests.servers.webhook import WebhookServer


@pytest.fixture
def hook() -> Iterator[WebhookServer]:
    with WebhookServer() as server:
        yield server


def rcli(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, *argv: str
) -> tuple[int, str, str]:
    return run(capsys, workspace, "--config", config, *argv)


def dry(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, mutation: str, *argv: str
) -> tuple[int, str, str]:
    return rcli(capsys, workspace, config, "rules", "test", "--mutation", mutation, *argv)


def rules_config(tmp_path: Path, hook: WebhookServer) -> Path:
    rules = f"""
  - id: notify
    when: {{key: "decision.*", op: set}}
    if: {{expr: 'mutation.value != "skip"'}}
    then:
      - action: http.post
        args: {{url: "{hook.hook_url}", json: {{decided: "{{{{ mutation.value }}}}"}}}}
      - mutate: {{op: set, key: "test.last", value: "{{{{ mutation.key }}}}"}}
"""
    return write_config(tmp_path, config_text(rules))


def test_check_passes_a_good_file_and_locates_every_problem(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, hook: WebhookServer
) -> None:
    good = rules_config(tmp_path, hook)
    code, out, _ = run(capsys, "w", "rules", "check", str(good))
    assert code == 0 and f"{good}: OK, 1 rules" in out
    bad = write_config(
        tmp_path,
        "rules:\n  - id: x\n    when: {key: a}\n    then:\n      - action: obs.nope\n",
        "bad.yaml",
    )
    code, _, err = run(capsys, "w", "rules", "check", str(good), str(bad))
    assert code == 2
    assert f"{bad}:5: rules[0].then[0].action: unknown action 'obs.nope'" in err
    code, out, _ = run(capsys, "w", "rules", "check")
    assert code == 0 and "the shipped config: OK, 6 rules" in out


def test_test_is_a_dry_run_that_executes_nothing(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    hook: WebhookServer,
    workspace: str,
    redis_client: Redis,
) -> None:
    config = str(rules_config(tmp_path, hook))
    mutation = json.dumps({"op": "set", "key": "decision.db", "value": "postgres"})
    code, out, _ = dry(capsys, workspace, config, mutation, "--state", "{}")
    assert code == 0
    assert "notify: WOULD RUN (the trigger and the condition hold)" in out
    assert '  step 1: http.post {"url":"' in out and '"json":{"decided":"postgres"}' in out
    assert '  step 2: set test.last "decision.db"' in out
    skip = json.dumps({"op": "set", "key": "decision.db", "value": "skip"})
    code, out, _ = dry(capsys, workspace, config, skip, "--json")
    assert json.loads(out) == {"rule": "notify", "held": False, "why": "if.expr is false"}
    code, out, _ = rcli(
        capsys,
        workspace,
        config,
        "rules",
        "test",
        "--mutation",
        '{"op": "set", "key": "scene.name", "value": "BRB"}',
    )
    assert "no rule watches scene.name (1 rules loaded)" in out
    code, _, err = rcli(
        capsys,
        workspace,
        config,
        "rules",
        "test",
        "--mutation",
        '{"op": "frob", "key": "a"}',
    )
    assert code == 2 and "--mutation: op:" in err
    log = RuleKeys(workspace).log  # the empty log its cursor waits on: nothing else was written
    assert hook.requests == [] and list(redis_client.scan_iter(f"*{workspace}*")) == [log]
    assert redis_client.xlen(log) == 0


def test_burst_worker_runs_the_rules_then_why_and_trace_explain_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, hook: WebhookServer, workspace: str
) -> None:
    config = str(rules_config(tmp_path, hook))
    assert rcli(capsys, workspace, config, "worker", "--burst")[0] == 0  # the group
    code, out, _ = rcli(
        capsys,
        workspace,
        config,
        "state",
        "set",
        "decision.db",
        "postgres",
        "--actor",
        "user:alice",
        "--reason",
        "joins",
        "--json",
    )
    corr = json.loads(out)["correlationId"]
    code, _, err = rcli(capsys, workspace, config, "worker", "--burst")
    assert code == 0 and "2 mutations handled, 1 runs started" in err
    assert hook.requests[0].json == {"decided": "postgres"}
    code, out, _ = rcli(capsys, workspace, config, "rules", "why", "test.last")
    assert code == 0
    assert (
        'test.last: set "decision.db" -> v1 by automation:notify, reason: rule notify, step 2'
        in out
    )
    assert "derived by rule notify from decision.db (set by user:alice" in out
    # `deliberate why` is `deliberate rules why`
    assert rcli(capsys, workspace, config, "why", "test.last")[:2] == (code, out)
    code, out, _ = rcli(capsys, workspace, config, "rules", "why", "decision.db")
    assert "evaluated notify: fired: the trigger and the condition hold; enqueued rule-" in out
    assert "action.done notify step 1 (http.post)" in out
    code, out, _ = rcli(capsys, workspace, config, "trace", corr)
    lines = out.splitlines()
    assert any("rule              notify on decision.db: fired" in line for line in lines)
    assert any("rule.action.done  notify step 2 (mutate test.last)" in line for line in lines)
    code, _, _ = rcli(capsys, workspace, config, "rules", "why", "nothing.here")
    assert code == 1


def test_check_names_a_template_name_no_trigger_gives_with_its_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``{{ mutaton.key }}`` passed ``rules check`` and failed at every run."""
    typo = write_config(
        tmp_path,
        "rules:\n  - id: x\n    when: {key: a}\n    then:\n"
        "      - action: log.write\n        args: {message: '{{ mutaton.key }}'}\n",
        "typo.yaml",
    )
    code, out, err = run(capsys, "w", "rules", "check", str(typo))
    assert code == 2 and "OK" not in out
    assert f"{typo}:6: rules[0].then[0].args" in err
    assert "template uses mutaton, which no trigger gives (only actor, mutation, state)" in err


@pytest.mark.parametrize(
    ("then", "condition", "said"),
    [
        (
            "{message: '{{ mutation.kye }}'}",
            "",
            "rules[0].then[0].args: template reads mutation.kye, which mutation never has",
        ),
        (
            "{message: '{{ actor[\"nmae\"] }}'}",
            "",
            "rules[0].then[0].args: template reads actor.nmae, which actor never has",
        ),
        (
            "{message: ok}",
            "    if: {expr: 'mutaton.key == \"q\"'}\n",
            "rules[0].if.expr: CEL reads unknown names ['mutaton']",
        ),
        (
            "{message: ok}",
            "    if: {expr: 'mutation.kye == \"q\"'}\n",
            "rules[0].if.expr: CEL reads mutation.kye, which mutation never has",
        ),
        (
            "{message: ok}",
            "    if: {expr: 'mutation.key.split(\".\").size() > 1'}\n",
            "rules[0].if.expr: CEL has no function ['split']",
        ),
    ],
)
def test_check_names_a_field_or_name_that_would_fail_every_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, then: str, condition: str, said: str
) -> None:
    """``{{ mutation.kye }}`` and ``if: mutaton.key`` passed ``rules check`` ("OK") and
    failed, or never held, at every run."""
    typo = write_config(
        tmp_path,
        f"rules:\n  - id: x\n    when: {{key: a}}\n{condition}    then:\n"
        f"      - action: log.write\n        args: {then}\n",
        "typo.yaml",
    )
    code, out, err = run(capsys, "w", "rules", "check", str(typo))
    assert code == 2 and "OK" not in out
    assert f"{typo}:" in err and said in err


def test_check_passes_what_a_run_can_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Every field a trigger gives, a state key of any name, a map's own fields, a loop's
    variable and a comprehension's: no false alarm."""
    good = write_config(
        tmp_path,
        "rules:\n  - id: x\n    when: {key: a}\n"
        '    if: {expr: \'mutation.after != mutation.prev && actor.kind == "user" &&'
        ' [1, 2].exists(n, n > 1) && state.anything == null && "mutation.kye" != ""\'}\n'
        "    then:\n      - action: log.write\n        args: {message: '{{ mutation.meta.why }}"
        ' {{ state["scene.name"] }} {{ actor.roles | join(",") }} {% for k in mutation.keys()'
        " %}{{ k.anything }}{% endfor %} {{ mutation.logId }} {{ mutation.expectedVersion }}'}\n",
        "good.yaml",
    )
    code, out, err = run(capsys, "w", "rules", "check", str(good))
    assert (code, err) == (0, "")
    assert "good.yaml: OK" in out


def decided(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    workspace: str,
    rules: str,
    state: str,
    keys: str = "",
) -> tuple[int, str, str]:
    """``rules test`` of ``decision.db`` set to "postgres", with ``rules`` (and the policy
    patterns ``keys``) over ``state``."""
    config = str(write_config(tmp_path, config_text(rules, keys=keys)))
    mutation = json.dumps({"op": "set", "key": "decision.db", "value": "postgres"})
    return dry(capsys, workspace, config, mutation, "--state", state)


def test_test_fails_when_a_rule_that_would_run_would_fail(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, workspace: str
) -> None:
    """``rules test`` printed the failing step and exited 0: a check that cannot fail."""
    rules = """
  - id: reads_a_missing_field
    when: {key: "decision.*", op: set}
    then:
      - action: log.write
        args: {message: "{{ mutation.value.missing }}"}
"""
    code, out, err = decided(capsys, tmp_path, workspace, rules, "{}")
    assert code == 1, (out, err)
    assert "reads_a_missing_field: WOULD RUN" in out and "template failed" in out
    assert "1 rule(s) would fail in a condition or at a step" in err


@pytest.mark.parametrize(
    ("expr", "why"),
    [
        # a string plus a number: CEL's own words, without an exception's class name
        ("mutation.value + 1 > 2", "if.expr could not be evaluated: Unsupported operation"),
        ("mutation.value", "if.expr is a string, not true or false"),
    ],
)
def test_test_fails_when_a_condition_cannot_be_evaluated(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, workspace: str, expr: str, why: str
) -> None:
    """A condition that errors read as "no": the rule never ran and ``rules test`` said 0."""
    rules = f"""
  - id: adds_to_text
    when: {{key: "decision.*", op: set}}
    if: {{expr: '{expr}'}}
    then:
      - action: log.write
        args: {{message: hi}}
"""
    code, out, err = decided(capsys, tmp_path, workspace, rules, "{}")
    assert code == 1, (out, err)
    assert f"adds_to_text: no ({why}" in out
    assert "1 rule(s) would fail in a condition or at a step" in err
    code, out, err = decided(capsys, tmp_path, workspace, rules.replace(expr, "false"), "{}")
    assert code == 0 and "adds_to_text: no (if.expr is false)" in out


def test_test_passes_a_rule_that_fails_only_on_the_masked_plan(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, workspace: str
) -> None:
    """The plan shows a secret as "(secret)", on which ``+ 1`` fails; the run would not."""
    rules = """
  - id: counts_on_a_secret
    when: {key: "decision.*", op: set}
    then:
      - action: log.write
        args: {message: "{{ state['vault.n'] + 1 }}"}
"""
    code, out, err = decided(capsys, tmp_path, workspace, rules, '{"vault.n": 41}', keys=VAULT)
    assert "counts_on_a_secret: WOULD RUN" in out and "template failed" in out  # (masked)
    assert "42" not in out and "41" not in out
    assert code == 0 and "would fail" not in err


BAD_ARGUMENTS = """rules:
  - id: posts_badly
    when: {key: "decision.*", op: set}
    then:
      - action: http.post
        args: {url: "not a url", json: {}}
      - action: slack.postMessage
        args: {channel: "#not a channel", text: hi}
      - action: discord.sendMessage
        args: {channel_id: "general", content: hi}
      - action: slack.postMessage
        args: {channel: C0GENERAL}
      - action: http.post
        args: {url: "https://{{ mutation.value }}"}
      - action: http.post
        args: {url: "${TEST_UNSET_HOOK:-}"}
"""


def test_check_holds_the_arguments_a_file_writes_to_their_connectors_schema(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``rules check`` said OK to an ``http.post`` to "not a url" (and a Slack channel's
    name, a Discord channel's name, a message with no text): each failed at every run. A
    URL a template gives is known only once rendered (``rules test`` checks it), and a step
    whose ``${NAME:-}`` is unset is skipped at runs: neither is named."""
    bad = write_config(tmp_path, BAD_ARGUMENTS, "bad.yaml")
    code, out, err = run(capsys, "w", "rules", "check", str(bad))
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"{bad}:6: rules[0].then[0].args.url: expected an http(s) URL with a host "
        "(rule posts_badly)",
        f"{bad}:8: rules[0].then[1].args.channel: expected a Slack channel: its id (C…, G…, "
        "D…), a person's id (U…) or its name (#general) (rule posts_badly)",
        f"{bad}:10: rules[0].then[2].args.channel_id: expected a Discord channel id (a number, "
        "its snowflake) (rule posts_badly)",
        f"{bad}:12: rules[0].then[3].args.text: is required, and missing (rule posts_badly)",
    ]
    fixed = (
        BAD_ARGUMENTS.replace("not a url", "https://hooks.example/decided")
        .replace("#not a channel", "#general")
        .replace('"general"', '"1234567890"')
        .replace("{channel: C0GENERAL}", "{channel: C0GENERAL, text: hi}")
    )
    good = write_config(tmp_path, fixed, "good.yaml")
    code, out, err = run(capsys, "w", "rules", "check", str(good))
    assert (code, err) == (0, "") and f"{good}: OK" in out


TENANT_RULES = """rules:
  - id: posts_badly
    when: {key: "decision.*", op: set}
    then:
      - action: http.post
        args: {url: "not a url"}
tenants:
  slack:
    teams:
      - id: T0123ABCD
        rules:
          - id: team_hook
            when: {key: "decision.*", op: set}
            then:
              - action: discord.sendMessage
                args: {channel_id: "general", content: hi}
      - T0456EFGH
  discord:
    servers:
      - id: "123456789012345678"
        workspace: guild-one
        rules:
          - id: guild_hook
            when: {key: "decision.*", op: set}
            then:
              - action: http.post
                args: {url: "https://hooks.example/decided"}
"""


def test_check_holds_a_tenant_s_own_rules_to_their_connectors_schema_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A rule a tenant writes for its workspace alone (``tenants.slack.teams[0].rules``) was
    never looked at by ``rules check``, which said OK, and failed at every run there. Each
    problem is named once, at the field as the file spells it: the whole config's rule,
    which every tenant's workspace takes too, once; the tenant's own under its entry."""
    bad = write_config(tmp_path, TENANT_RULES, "tenants.yaml")
    code, out, err = run(capsys, "w", "rules", "check", str(bad))
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"{bad}:6: rules[0].then[0].args.url: expected an http(s) URL with a host "
        "(rule posts_badly)",
        f"{bad}:16: tenants.slack.teams[0].rules[0].then[0].args.channel_id: expected a "
        "Discord channel id (a number, its snowflake) (rule team_hook)",
    ]
    fixed = TENANT_RULES.replace("not a url", "https://hooks.example/all").replace(
        '"general"', '"1234567890"'
    )
    good = write_config(tmp_path, fixed, "fixed.yaml")
    code, out, err = run(capsys, "w", "rules", "check", str(good))
    assert (code, err) == (0, "")
    # the shipped rules and the file's, then each tenant's workspace that writes its own
    [line] = out.splitlines()
    assert line.startswith(f"{good}: OK, ")
    assert line.endswith("; in guild-one, 8; in slack-T0123ABCD, 8"), line


def test_check_holds_a_value_the_environment_gives_to_the_schema_too(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped rule posts each decision to ``${DELIBERATE_DECISIONS_CHANNEL:-}``: unset,
    its step is skipped (fine); set to something no channel is called, it would fail at
    every run."""
    monkeypatch.setenv("DELIBERATE_DECISIONS_CHANNEL", "#the decisions")
    code, out, err = run(capsys, "w", "rules", "check")
    assert code == 2 and "OK" not in out
    [issue] = err.splitlines()
    assert issue.endswith(
        ".args.channel: expected a Slack channel: its id (C…, G…, D…), a person's id (U…) or "
        "its name (#general) (rule announce_decision)"
    )
    assert "default.yaml:" in issue and "#the decisions" not in issue
    monkeypatch.setenv("DELIBERATE_DECISIONS_CHANNEL", "#decisions")
    code, out, err = run(capsys, "w", "rules", "check")
    assert (code, err) == (0, "") and "OK" in out


def test_test_holds_the_arguments_as_rendered_to_their_connectors_schema(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    hook: WebhookServer,
    workspace: str,
    redis_client: Redis,
) -> None:
    """``rules test`` said WOULD RUN, exit 0, of an ``http.post`` to a URL a template
    renders to a sentence: each refused argument is named by file, line, field and rule,
    and the test fails; a value that renders to a good URL passes. Nothing is sent or
    written either way."""
    rules = """
  - id: hooks_a_decision
    when: {key: "decision.*", op: set}
    then:
      - action: http.post
        args:
          url: "{{ mutation.value }}"
          json: {decided: "{{ mutation.value }}"}
      - action: slack.postMessage
        args: {channel: "{{ mutation.key[9:] }}", text: hi}
"""
    config = str(write_config(tmp_path, config_text(rules)))
    sentence = json.dumps({"op": "set", "key": "decision.C0DB", "value": "not a url"})
    code, out, err = dry(capsys, workspace, config, sentence, "--state", "{}")
    assert code == 1, (out, err)
    said = out.split("hooks_a_decision: ")[1].splitlines()
    assert said == [
        "WOULD RUN (the trigger and the condition hold)",
        "  step 1: http.post: WOULD FAIL: bad arguments",
        f"    {config}:{line_of(config, 'url:')}: rules[0].then[0].args.url: expected an "
        "http(s) URL with a host (rule hooks_a_decision)",
        '  step 2: slack.postMessage {"channel":"C0DB","text":"hi"}',
    ]
    assert "1 rule(s) would fail" in err
    code, out, _ = dry(capsys, workspace, config, sentence, "--state", "{}", "--json")
    [report] = [json.loads(x) for x in out.splitlines() if "hooks_a_decision" in x]
    assert report["steps"][0]["invalid"] == [
        {
            "field": "rules[0].then[0].args.url",
            "at": f"{config}:{line_of(config, 'url:')}",
            "message": "expected an http(s) URL with a host",
        }
    ]
    assert "not a url" not in json.dumps(report["steps"][0]["invalid"])  # never the value
    odd = json.dumps({"op": "set", "key": "decision.Not_A_Channel", "value": hook.hook_url})
    code, out, err = dry(capsys, workspace, config, odd, "--state", "{}")
    assert code == 1 and "rules[0].then[1].args.channel: expected a Slack channel: " in out
    good = json.dumps({"op": "set", "key": "decision.C0DB", "value": hook.hook_url})
    code, out, err = dry(capsys, workspace, config, good, "--state", "{}")
    assert (code, err) == (0, "") and "WOULD FAIL" not in out
    assert f'  step 1: http.post {{"url":"{hook.hook_url}"' in out
    log = RuleKeys(workspace).log  # the empty log its cursor waits on: nothing else was written
    assert hook.requests == [] and list(redis_client.scan_iter(f"*{workspace}*")) == [log]


def line_of(path: str, text: str) -> int:
    """The line of ``path`` where ``text`` first appears (1-based)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)
