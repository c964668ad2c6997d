"""Handing CEL only what the beats read of the state changes no condition's answer, nor the
error it raises: checked on generated states and conditions (Hypothesis), on the shipped
beats, and for the ways of naming ``state`` that are not read for paths."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.cel.library import cel
from core.config.core_config import load_config
from core.deliberation.beat_reads import Reads, reads_of

NAMES = ("a", "b", "text", "size", "earlier")
scalars = st.one_of(
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from(["", "open", "x", "state.a"]),
    st.floats(-2, 2, allow_nan=False),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(NAMES), inner, max_size=3)
    ),
    max_leaves=8,
)
states = st.dictionaries(st.sampled_from(NAMES), values, max_size=4)
paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map(
    lambda names: "state." + ".".join(names)
)
uses = st.one_of(
    paths.map(lambda p: f"has({p})"),
    paths.map(lambda p: f"size({p}) > 0"),
    paths.map(lambda p: f"{p}.size() == 1"),
    paths.map(lambda p: f'{p} == "open"'),
    paths.map(lambda p: f"{p} == 1"),
    paths.map(lambda p: f'"x" in {p}'),
    paths.map(lambda p: f"{p}[0] == 1"),
    paths.map(lambda p: f"{p}.exists(v, v == 1)"),
    paths.map(lambda p: f"{p}"),
    st.sampled_from(["size(state) > 1", 'state.?a == "x"', '"state" == "state"']),
)
conditions = st.lists(
    st.lists(uses, min_size=1, max_size=3).map(" && ".join), min_size=1, max_size=4
)


def outcome(condition: str, state: dict[str, Any]) -> object:
    try:
        return cel.compile(condition).execute(cel.Context({"state": state}))
    except Exception as exc:  # (an IndexError too, which the evaluator does not catch)
        return f"{type(exc).__name__}: {exc}"


@settings(max_examples=300, deadline=None)
@given(states, conditions)
def test_what_is_read_answers_as_the_whole_state(state: dict[str, Any], when: list[str]) -> None:
    kept = reads_of(tuple(when)).kept(state)
    assert [outcome(c, kept) for c in when] == [outcome(c, state) for c in when]


def test_the_shipped_beats_read_a_few_fields_and_only_the_size_of_the_earlier_ones() -> None:
    beats = load_config().loop_settings().beats
    reads = reads_of(tuple(beat.when for beat in beats))
    assert not reads.whole
    assert reads.fields["earlier"] == Reads(size=True)
    assert "clicks" not in reads.fields
    state = {"earlier": [{"text": "a cabin"}, {"text": "a boat"}], "clicks": {"x": "y"}}
    assert reads.kept(state) == {"earlier": [None, None]}


def test_a_state_named_otherwise_than_by_a_path_is_handed_over_whole() -> None:
    for when in ("size(state) > 0", 'state.?a == "x"', "[1].exists(state, state > 0)"):
        assert reads_of((when, "has(state.a)")).whole, when
    assert not reads_of(("has(state.a)", "state.a.b == 1")).whole
