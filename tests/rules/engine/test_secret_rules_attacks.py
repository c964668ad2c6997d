"""What an attacker's read of the masking found, each kept as a test that fails if it works
again: a long secret cut short by pydantic's error text (no masking recognised the cut
form), a value quoted with Python's ``repr``, a member learning whether a guess equals a
secret because their own words came back masked, and a rule copying a secret into a key
everyone reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from redis import Redis

from core.gateway.outcome import SECRET
from tests.bot.secret_paths import VAULT, leaks
from tests.rules.rig import Rig, make_rig

# long enough that pydantic quotes only its first and last characters
LONG = "xoxb-1234567890-1234567890-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
QUOTES = 'it\'s "q1x" \x01'  # both quotes and a control character: repr differs from JSON
PIN = "4711"

RULES = """\
  - id: long_level
    when: {key: test.go}
    then: [{action: log.write, args: {message: "x", level: "{{ state['vault.long'] }}"}}]
  - id: quoted_result
    when: {key: test.go}
    if: {expr: 'state["vault.quotes"]'}
    then: [{action: log.write, args: {message: "never"}}]
  - id: reads_state
    when: {key: test.go}
    if: {state: {test.flag: true}}
    then: [{action: log.write, args: {message: "flag"}}]
  - id: guess
    when: {key: test.guess, to: "never"}
    then: [{action: log.write, args: {message: "never"}}]
  - id: copies_out
    when: {key: test.copy_it}
    then:
      - mutate: {op: set, key: test.copy, value: "{{ state['vault.long'] }}"}
  - id: copies_derived
    when: {key: test.copy_derived}
    then:
      - mutate: {op: set, key: test.upper, value: "{{ state['vault.quotes'] | upper }}"}
  - id: copies_plain
    when: {key: test.copy_plain}
    then:
      - mutate: {op: set, key: test.plain, value: "{{ mutation.value }} again"}
  - id: names_a_key_after_it
    when: {key: test.name_it}
    then:
      - mutate: {op: set, key: "vault.k{{ state['vault.pin'] }}", value: "x"}
  - id: random_is_no_secret
    when: {key: test.roll}
    then:
      - mutate: {op: set, key: test.rolled, value: "{{ [1, 2, 3] | random }}"}
  - id: seen_thrice
    when: {key: vault.seen, op: set}
    signal: {at_least: 3, confidence: 0.5, within: 60s}
    then: [{action: log.write, args: {message: "seen"}}]
  - id: indexes_by_it
    when: {key: test.idx}
    if: {expr: '[1][int(state["vault.pin"])] == 1'}
    then: [{action: log.write, args: {message: "never"}}]
  - id: looks_it_up
    when: {key: test.lookup}
    if: {expr: '{"yes": true}[mutation.value]'}
    then: [{action: log.write, args: {message: "never"}}]
  - id: paints
    when: {key: test.paint}
    then:
      - mutate:
          op: set
          key: "test.color{{ '' if state['test.flag'] else '' }}"
          value: "{{ mutation.value }}"
"""
COLOR = """\
    - pattern: "test.color"
      type: string
      enum: [red, blue]
"""


def _rig(tmp_path: Path, server_redis: Redis, workspace: str) -> Rig:
    rig = make_rig(tmp_path, server_redis, workspace, RULES, keys=COLOR + VAULT)
    rig.commit("set", "vault.long", LONG, who="admin:root")
    rig.commit("set", "vault.quotes", QUOTES, who="admin:root")
    rig.commit("set", "vault.pin", PIN, who="admin:root")
    return rig


@pytest.fixture
def went(tmp_path: Path, server_redis: Redis, workspace: str) -> Rig:
    """The secrets set, then ``test.go`` written and every rule run."""
    rig = _rig(tmp_path, server_redis, workspace)
    rig.commit("set", "test.go", 1)
    rig.work()
    return rig


def test_a_long_secret_is_kept_nowhere_not_even_in_part(
    went: Rig, server_redis: Redis, workspace: str
) -> None:
    rig = went
    [failed] = [r for r in rig.evaluations("action.failed") if r["data"]["rule"] == "long_level"]
    assert failed["data"]["error"].startswith("bad arguments: level:"), failed["data"]
    for part in (LONG, LONG[:24], LONG[-24:]):
        found = leaks(server_redis, workspace, [part], queue=rig.queue)
        assert not found, found.where


def test_an_expressions_result_is_named_by_its_type_never_quoted(
    went: Rig, server_redis: Redis, workspace: str
) -> None:
    rig = went
    why = {r["data"]["rule"]: r["data"]["why"] for r in rig.evaluations("evaluated")}
    assert why["quoted_result"] == "if.expr is a string, not true or false"
    assert not leaks(server_redis, workspace, [QUOTES, repr(QUOTES)[1:-1]], queue=rig.queue)


def test_a_members_guess_comes_back_as_written_whether_or_not_it_is_the_secret(
    tmp_path: Path, server_redis: Redis, workspace: str
) -> None:
    """Masking by value struck the member's own "4711" out of ``to: is "4711"`` when, and
    only when, it was the PIN: three writes and one ``why`` told them the secret."""
    rig = _rig(tmp_path, server_redis, workspace)
    rig.commit("set", "test.go", 1)  # a rule reads state: the secrets are in play
    for guess in ("1234", PIN, "9999"):
        rig.commit("set", "test.guess", guess, who="user:al")
    rig.work()
    said = [r["data"]["why"] for r in rig.evaluations("evaluated") if r["data"]["rule"] == "guess"]
    assert said == [f'to: is "{g}", not "never"' for g in ("1234", PIN, "9999")]


def test_a_rule_cannot_copy_a_secret_or_what_is_made_of_it_into_a_key_all_read(
    tmp_path: Path, server_redis: Redis, workspace: str
) -> None:
    rig = _rig(tmp_path, server_redis, workspace)
    for key in ("test.copy_it", "test.copy_derived", "test.copy_plain"):
        rig.commit("set", key, "go")
    rig.work()
    assert rig.app.store.get("test.copy") is None
    assert rig.app.store.get("test.upper") is None
    plain = rig.app.store.get("test.plain")
    assert plain is not None and plain.value == "go again"  # a plain copy still works
    errors = {r["data"]["rule"]: r["data"]["error"] for r in rig.evaluations("action.failed")}
    for rule, key in (("copies_out", "test.copy"), ("copies_derived", "test.upper")):
        assert errors[rule] == (
            f"would copy a secret key's value into {key}, which is not secret; not written"
        )
    found = leaks(server_redis, workspace, [LONG, QUOTES.upper()], queue=rig.queue)
    assert not found, found.where
    assert SECRET not in json.dumps(rig.app.store.get("test.plain").value)  # type: ignore[union-attr]


def test_no_reason_tells_a_guess_of_the_secret_from_another_guess(
    went: Rig, server_redis: Redis, workspace: str
) -> None:
    """A member's guess came back masked where it equalled the PIN: in an expression's
    error (none of it kept) and in a derived mutation's refusal ('got "(secret)"')."""
    rig = went
    for guess in ("1234", PIN):
        for key in ("test.lookup", "test.paint"):
            rig.commit("set", key, guess, who="user:al")
    rig.work()
    rows = rig.evaluations()
    lookups = [r["data"]["why"] for r in rows if r["data"].get("rule") == "looks_it_up"]
    assert len(lookups) == 2 and lookups[0] == lookups[1], lookups
    assert "not kept" in lookups[0]
    refusals = [
        r["data"]["error"]
        for r in rows
        if r["event"] == "action.failed" and r["data"]["rule"] == "paints"
    ]
    assert [e.rsplit("got ", 1)[1] for e in refusals] == ['"1234"', f'"{PIN}"']  # as written


def test_a_secret_is_named_nowhere_not_in_a_signal_a_crash_or_a_key(
    went: Rig, server_redis: Redis, workspace: str
) -> None:
    rig = went
    rig.commit("set", "vault.seen", {"value": "x", "confidence": 0.8137}, who="admin:root")
    for key in ("test.idx", "test.name_it", "test.roll"):
        rig.commit("set", key, 1)
    rig.work()
    why = {r["data"]["rule"]: r["data"]["why"] for r in rig.evaluations("evaluated")}
    assert why["seen_thrice"].endswith(f'(this one: "{SECRET}")'), why["seen_thrice"]
    indexed = why["indexes_by_it"]  # (CEL's message might quote the PIN: not kept)
    assert indexed == (
        "if.expr could not be evaluated: (its message is not kept: secret values were in play)"
    ), indexed
    assert rig.app.store.get(f"vault.k{PIN}") is None
    rolled = rig.app.store.get("test.rolled")  # a template with a random in it: no secret
    assert rolled is not None and rolled.value in (1, 2, 3)
    found = leaks(server_redis, workspace, ["0.8137", f"bounds: {PIN}", f"vault.k{PIN}"])
    assert not found, found.where
