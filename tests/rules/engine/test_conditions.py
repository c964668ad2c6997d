"""Matching and conditions, pure: no Redis."""

from __future__ import annotations

import json
from fnmatch import fnmatchcase

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis import Redis
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError
from redis.retry import Retry

from core.state.mutation_log import LogRecord
from core.state.store import StateStore
from rules.dsl import Rule
from rules.engine.conditions import Activation, check_rule, plan_steps
from rules.index import RuleIndex
from rules.templates import TemplateFailed, check_templates, render
from rules.variables import StateView
from tests.factories import mutation
from tests.servers.refusing import refusing_port


def record(op: str, key: str, value: object = None, prev: object = None) -> LogRecord:
    m = mutation(op, key, value)
    return LogRecord("1-0", m, 3, 1000, None, None if prev is None else json.dumps(prev))


def rule(**fields: object) -> Rule:
    data: dict[str, object] = {"id": "r", "then": [{"action": "log.write", "args": {}}]}
    data.update(fields)
    return Rule.model_validate(data)


STATE = StateView.of({"obs.connected": True, "viewers": 120})


@pytest.mark.parametrize(
    ("when", "rec", "held", "why"),
    [
        ({"key": "scene.name"}, record("set", "scene.name", "BRB"), True, ""),
        (
            {"key": "scene.name", "op": "delete"},
            record("set", "scene.name", "BRB"),
            False,
            "op set is not delete",
        ),
        ({"key": "s", "to": "off"}, record("set", "s", "live"), False, 'to: is "live", not "off"'),
        ({"key": "s", "to": "off"}, record("set", "s", "off"), True, ""),
        ({"key": "s", "from": "live"}, record("set", "s", "off", prev="live"), True, ""),
        (
            {"key": "s", "from": "live"},
            record("set", "s", "off"),
            False,
            'from: was null, not "live"',
        ),
        ({"key": "n", "to": 5}, record("incr", "n", 2, prev=3), True, ""),
        ({"key": "n", "to": True}, record("set", "n", 1), False, "to: is 1, not true"),
        ({"key": "l", "to": ["a", "b"]}, record("append", "l", "b", prev=["a"]), True, ""),
        ({"key": "s", "to": None}, record("delete", "s", prev="x"), True, ""),
    ],
)
def test_triggers(when: dict[str, object], rec: LogRecord, held: bool, why: str) -> None:
    check = check_rule(rule(when=when), rec, STATE)
    assert check.held is held
    assert why in check.why


def test_conditions_say_why() -> None:
    rec = record("set", "scene.name", "BRB")
    equal = rule(when={"key": "scene.name"}, **{"if": {"state": {"obs.connected": False}}})
    assert check_rule(equal, rec, STATE).why == "if.state: obs.connected is true, not false"
    expr = rule(
        when={"key": "scene.name"},
        **{
            "if": {
                "expr": 'state["viewers"] > 100 && mutation.value == "BRB" && actor.id == "alice"'
            }
        },
    )
    assert check_rule(expr, rec, STATE).held
    missing = rule(when={"key": "scene.name"}, **{"if": {"expr": 'state["no.pe"] > 1'}})
    failed = check_rule(missing, rec, STATE)
    assert failed.failed and failed.why == (
        'if.expr: the key no.pe is not set; check it first with "no.pe" in state, or give it '
        "a default"
    )
    guarded = rule(
        when={"key": "scene.name"}, **{"if": {"expr": '"no.pe" in state && state["no.pe"] > 1'}}
    )
    assert check_rule(guarded, rec, STATE).why == "if.expr is false"  # as the words advise
    absent = rule(when={"key": "scene.name"}, **{"if": {"expr": "mutation.meta.why == 1"}})
    assert check_rule(absent, rec, STATE).why == (
        "if.expr: why is not there; check it first, with has() or in"
    )
    bad = rule(when={"key": "scene.name"}, **{"if": {"expr": "[1][3] == 1"}})
    assert (
        check_rule(bad, rec, STATE).why == "if.expr could not be evaluated: index out of bounds: 3"
    )
    falsy = rule(when={"key": "scene.name"}, **{"if": {"expr": 'state["viewers"] < 100'}})
    assert check_rule(falsy, rec, STATE).why == "if.expr is false"


EXPRESSIONS = [
    'state["viewers"] > 100',
    'state["viewers"] < 100',
    'state["nope"] > 1',
    'mutation.value == "BRB" && actor.id == "alice"',
    'state["obs.connected"]',
    'state["viewers"]',
    'size(state) > 1 && mutation.key.startsWith("scene")',
]


@given(
    picked=st.lists(st.sampled_from(EXPRESSIONS), min_size=1, max_size=6),
    viewers=st.one_of(st.none(), st.integers(-1000, 1000), st.text(max_size=5)),
    value=st.sampled_from(["BRB", "live", 3, None, ["a"]]),
)
def test_a_records_rules_give_the_same_answers_over_one_context(
    picked: list[str], viewers: object, value: object
) -> None:
    """The engine checks every rule a record triggers over one ``Activation`` (one CEL
    context for the record): each answer is the one a context of its own would give, in
    any order, whatever an earlier rule's expression did (failed, or gave no bool)."""
    rec = record("set", "scene.name", value)
    state = StateView.of({"obs.connected": True, "viewers": viewers})  # type: ignore[dict-item]
    rules = [rule(when={"key": "scene.*"}, **{"if": {"expr": e}}) for e in picked]
    shared = Activation(rec, state)
    for r in rules:
        alone, together = check_rule(r, rec, state), check_rule(r, rec, state, activation=shared)
        assert (together.held, together.why, together.failed) == (
            alone.held,
            alone.why,
            alone.failed,
        )


def test_a_records_context_reads_the_state_once_and_only_for_an_expression() -> None:
    loads: list[int] = []

    def load() -> dict[str, object]:
        loads.append(1)
        return {"viewers": 120}

    state = StateView(load)  # type: ignore[arg-type]
    rec = record("set", "scene.name", "BRB")
    shared = Activation(rec, state)
    plain = rule(when={"key": "scene.name"})
    assert check_rule(plain, rec, state, activation=shared).held and loads == []
    with_expr = rule(when={"key": "scene.name"}, **{"if": {"expr": 'state["viewers"] > 100'}})
    for _ in range(3):
        assert check_rule(with_expr, rec, state, activation=shared).held
    assert loads == [1] and "context" in vars(shared)


def test_templates_keep_types_and_refuse_the_sandbox_escapes() -> None:
    names = {"state": STATE, "mutation": {"value": 7, "key": "k"}, "actor": {"id": "a"}}
    assert render("{{ mutation.value }}", names) == 7
    assert render("v{{ mutation.value }}", names) == "v7"
    assert render({"a": ["{{ state['viewers'] }}", "plain"]}, names) == {"a": [120, "plain"]}
    assert render("{{ state['absent'] }}", names) is None
    with pytest.raises(TemplateFailed, match="undefined"):
        render("{{ nothing.here }}", names)
    with pytest.raises(TemplateFailed):
        render("{{ ''.__class__.__mro__[1].__subclasses__() }}", names)
    assert render("{{ state }}", names) == {"obs.connected": True, "viewers": 120}
    with pytest.raises(TemplateFailed, match="gave a range, not JSON data"):
        render("{{ range(3) }}", names)
    with pytest.raises(ValueError, match="does not compile"):
        check_templates({"x": "{% if %}"})


def test_a_template_that_fails_says_why_in_words_not_python_s() -> None:
    """A division by zero said "ZeroDivisionError: division by zero", a sum of a number and
    a text "TypeError: ...": what a person wrote is answered in words, without a class
    name (Jinja's own, for a missing key, were words already)."""
    names = {"mutation": {"value": "5"}, "state": {}}
    said = []
    for text in ("{{ mutation.value | int / 0 }}", "{{ {'a': 1}['x'] }}", "{{ 1 + 'a' }}"):
        with pytest.raises(TemplateFailed) as failed:
            render(text, names)
        said.append(str(failed.value).removeprefix(repr(text) + ": "))
    assert said == [
        "division by zero",
        "'dict object' has no attribute 'x'",
        "unsupported operand type(s) for +: 'int' and 'str'",
    ]


def test_a_plan_renders_actions_and_derived_mutations() -> None:
    r = rule(
        when={"key": "scene.name"},
        then=[
            {"action": "obs.setScene", "args": {"name": "{{ mutation.value }}"}},
            {"mutate": {"op": "set", "key": "test.{{ actor.id }}", "value": "{{ mutation.ts }}"}},
            {"action": "log.write", "args": {"message": "{{ mutation.value.missing }}"}},
        ],
    )
    planned = plan_steps(r, record("set", "scene.name", "BRB"), STATE, lambda key: False)
    assert planned[0] == {"step": 0, "action": "obs.setScene", "args": {"name": "BRB"}}
    assert planned[1]["mutate"] == {"op": "set", "key": "test.alice", "value": 1000}
    assert "template failed" in planned[2]["error"]


def test_a_plan_shows_no_secret_value_of_the_mutation_or_of_state() -> None:
    """What a plan shows is written down (the Rules and Trace pages, ``rules why``): a
    secret key's value renders as ``(secret)``, the mutation's and state's alike."""
    r = rule(
        when={"key": "vault.*"},
        then=[
            {
                "action": "http.post",
                "args": {
                    "url": "https://hooks.example/x",
                    "json": {
                        "key": "{{ mutation.value }}",
                        "was": "{{ mutation.prev }}",
                        "other": "{{ state['vault.other'] }}",
                        "viewers": "{{ state['viewers'] }}",
                    },
                },
            },
        ],
    )
    state = StateView.of({"vault.other": "0ther-S3CRET", "viewers": 120})
    rec = record("set", "vault.token", "n3w-S3CRET", prev="01d-S3CRET")
    [planned] = plan_steps(r, rec, state, lambda key: key.startswith("vault."))
    assert planned["args"]["json"] == {
        "key": "(secret)",
        "was": "(secret)",
        "other": "(secret)",
        "viewers": 120,
    }
    assert "S3CRET" not in json.dumps(planned)


PATTERNS = st.sampled_from(
    ["a.b", "a.*", "a.b*", "*", "b.?", "a.[bc]", "decision.*", "x", "a.b.c", "*.c", "a.?.c"]
)
KEYS = st.sampled_from(["a.b", "a.c", "a.bb", "b.x", "a.b.c", "decision.db", "x", "y.c", "a.x.c"])


@given(st.lists(PATTERNS, max_size=30), KEYS)
def test_the_index_matches_exactly_what_a_scan_would(patterns: list[str], key: str) -> None:
    rules = [rule(id=f"r{i}", when={"key": p}) for i, p in enumerate(patterns)]
    expected = [r.id for r in rules if fnmatchcase(key, r.when.key)]
    assert [r.id for r in RuleIndex(rules).match(key)] == expected


def test_a_state_that_cannot_be_read_is_raised_not_taken_for_a_failed_expression() -> None:
    """Reading the state for a rule's expression fails (Redis unreachable): the error reaches
    the engine, which handles the record again, as it does for any read of the store; it is
    not the expression failing, which would record the rule as not fired for good. So with
    the record's context shared by its rules (``Activation``) as with one of the rule's own."""
    rec = record("set", "scene.name", "BRB")
    with_expr = rule(when={"key": "scene.name"}, **{"if": {"expr": 'state["viewers"] > 100'}})
    with refusing_port() as port:
        client = Redis(port=port, socket_connect_timeout=2, retry=Retry(NoBackoff(), 0))
        state = StateView.of_store(StateStore(client, "unreachable"))
        with pytest.raises(ConnectionError):
            check_rule(with_expr, rec, state)
        with pytest.raises(ConnectionError):
            check_rule(with_expr, rec, state, activation=Activation(rec, state))
        client.close()
