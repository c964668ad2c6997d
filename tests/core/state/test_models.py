"""Mutations, actors and key names: what they accept and how they refuse."""

from __future__ import annotations

import json
import os
from dataclasses import FrozenInstanceError, fields, replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from core.state.actor import Actor, ActorKind
from core.state.commit_result import Committed
from core.state.entry import Entry
from core.state.keys import WorkspaceKeys, validate_state_key
from core.state.mutation import Mutation, new_id
from core.state.mutation_log import LogRecord
from tests.factories import mutation


def test_an_actor_parses_from_kind_and_id() -> None:
    parsed = Actor.parse("moderator:maria")
    assert (parsed.kind, parsed.id, parsed.platform) == (ActorKind.MODERATOR, "maria", "local")
    assert parsed.effective_roles == {"moderator"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("alice", "must look like KIND:ID"),
        ("user:", "must look like KIND:ID"),
        ("wizard:merlin", "is not one of: user, guest, moderator"),
    ],
)
def test_a_bad_actor_is_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Actor.parse(text)


def test_incr_defaults_to_one_and_takes_only_numbers() -> None:
    assert mutation("incr", "k.n").value == 1
    with pytest.raises(ValidationError, match="incr takes a number"):
        mutation("incr", "k.n", "2")
    with pytest.raises(ValidationError, match="incr takes a number"):
        mutation("incr", "k.n", True)


def test_delete_takes_no_value_and_ttl_must_be_positive() -> None:
    with pytest.raises(ValidationError, match="delete takes no value"):
        mutation("delete", "k.n", 1)
    with pytest.raises(ValidationError, match="delete takes no ttl"):
        mutation("delete", "k.n", ttl_sec=5)
    with pytest.raises(ValidationError, match="finite number"):
        mutation("set", "k.n", 1, ttl_sec=float("inf"))
    with pytest.raises(ValidationError, match="greater than 0"):
        mutation("set", "k.n", 1, ttl_sec=0)


@pytest.mark.parametrize("key", ["", "has space", ".leading", "a" * 201, "tab\tkey", "ключ"])
def test_a_bad_state_key_is_refused(key: str) -> None:
    with pytest.raises(ValueError, match="state key"):
        validate_state_key(key)


def test_a_workspace_id_is_validated() -> None:
    with pytest.raises(ValueError, match="workspace"):
        WorkspaceKeys("bad workspace")


def test_a_mutation_round_trips_through_its_log_json() -> None:
    m = mutation(
        "set",
        "decision.db",
        {"engine": "postgres"},
        reason="why",
        expected_version=3,
        ttl_sec=1.5,
        causation_id="c",
    )
    assert Mutation.model_validate_json(m.to_json()) == m
    assert '"expectedVersion":3' in m.to_json() and '"ttlSec":1.5' in m.to_json()


def test_a_logged_mutation_reads_as_its_validated_copy_stamped_with_its_time() -> None:
    m = mutation("append", "k.list", {"a": [1]}, reason="why", ttl_sec=2.0)
    read = Mutation.from_log(m.to_json(), 1234)
    copied = Mutation.model_validate_json(m.to_json()).model_copy(update={"ts": 1234})
    assert read == copied and read.ts == 1234
    assert read.model_fields_set == copied.model_fields_set
    assert read.value_json == '{"a":[1]}'
    with pytest.raises(ValidationError, match="must be 1-200 characters"):
        Mutation.from_log(m.to_json().replace("k.list", "bad key"), 1)


def test_an_entry_built_from_its_fields_is_the_one_model_construct_makes() -> None:
    ann = Actor.parse("user:ann")
    built = Entry.built("k.a", {"b": [1, 2]}, 3, 1000, ann, 2000, {"mutationId": "m"})
    constructed = Entry.model_construct(
        key="k.a",
        value={"b": [1, 2]},
        version=3,
        updated_at=1000,
        updated_by=ann,
        expires_at=2000,
        meta={"mutationId": "m"},
    )
    assert built == constructed and built.model_fields_set == constructed.model_fields_set
    assert built.to_json() == constructed.to_json()
    assert built.model_extra is None and built.__pydantic_private__ is None
    with pytest.raises(ValidationError, match="frozen"):
        built.version = 4  # type: ignore[misc]


def test_a_log_record_read_from_the_stream_is_the_one_its_constructor_makes() -> None:
    m = mutation("append", "k.list", {"a": 1})
    fields = {"mutation": m.to_json(), "version": "4", "ts": "1000", "expiresAt": "9000"}
    fields |= {"prev": "[2]", "prevSha1": "ab", "prevBytes": "3"}
    read = LogRecord.from_stream("5-1", fields)
    made = LogRecord("5-1", Mutation.from_log(m.to_json(), 1000), 4, 1000, 9000, "[2]", "ab", 3)
    assert read == made and repr(read) == repr(made)
    bare = LogRecord.from_stream("5-2", {"mutation": m.to_json(), "version": "1", "ts": "7"})
    assert (bare.expires_at, bare.prev_json, bare.prev_sha1, bare.prev_bytes) == (None,) * 4
    with pytest.raises(FrozenInstanceError):
        read.version = 5  # type: ignore[misc]


def test_a_commit_result_is_the_frozen_dataclass_its_fields_say() -> None:
    m = mutation("set", "k.a", 1)
    made = Committed(m, 2, "5-1", 1000, "1", None, {"mutationId": m.id})
    assert [f.name for f in fields(Committed)] == list(vars(made))
    assert (made.duplicate, made.value_known) == (False, True)
    again = replace(made, duplicate=True)
    assert again.duplicate and again.version == 2 and again != made
    assert made == Committed(m, 2, "5-1", 1000, "1", None, {"mutationId": m.id}, False, True)
    assert repr(made).startswith("Committed(request=")
    assert made.entry is not None and made.entry.value == 1 and made.mutation.ts == 1000
    with pytest.raises(FrozenInstanceError):
        made.version = 3  # type: ignore[misc]


def test_ids_are_unique_across_a_fork() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: report its first id, then leave without running pytest's atexit
        os.write(write, new_id().encode())
        os._exit(0)
    os.close(write)
    child_id = os.read(read, 64).decode()
    os.waitpid(pid, 0)
    mine = {new_id() for _ in range(1000)}
    assert len(mine) == 1000 and child_id not in mine
    assert len(child_id) == 32


def test_a_copy_with_a_new_value_never_keeps_the_old_encoding() -> None:
    m = mutation("set", "k.a", {"old": 1})
    assert m.value_json == '{"old":1}'
    changed = m.model_copy(update={"value": [2]})
    assert changed.value_json == "[2]"
    assert m.model_copy(update={"ttl_sec": 5.0}).value_json == '{"old":1}'


def test_a_copy_with_new_roles_never_keeps_the_old_derived_values() -> None:
    bob = Actor.parse("user:bob")
    assert bob.effective_roles == {"user"} and '"roles":[]' in bob.json_text
    promoted = bob.model_copy(update={"roles": ("moderator",)})
    assert promoted.effective_roles == {"user", "moderator"}
    assert '"roles":["moderator"]' in promoted.json_text
    assert bob.effective_roles == {"user"}


# What JSON in UTF-8 cannot carry: a number that is not finite, a lone surrogate (issue 41).
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),  # (hypothesis draws no surrogate unless asked)
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=15,
)
POISON = st.sampled_from([float("inf"), float("-inf"), float("nan"), "\ud800", "a\udcff"])


@given(JSON_VALUES, POISON, st.integers(0, 3))
def test_a_value_json_cannot_carry_is_refused_wherever_it_sits(
    value: Any, poison: Any, where: int
) -> None:
    """Anywhere in the value or the meta, or as a name; what can be carried is kept, its
    JSON as ``json.dumps`` writes it."""
    assert mutation("set", "k.a", value).value_json == json.dumps(
        value, separators=(",", ":"), ensure_ascii=False
    )
    if where == 3 and not isinstance(poison, str):
        where = 0  # (a number is no name)
    placed = [
        lambda: {"value": [value, {"deep": poison}]},
        lambda: {"value": {"x": value, "y": [poison]}},
        lambda: {"value": "ok", "meta": {"note": [value, poison]}},
        lambda: {"value": {str(poison): value}},
    ][where]()
    with pytest.raises(ValidationError, match=r"a lone surrogate|a number too large for JSON"):
        mutation("set", "k.a", **placed)


def test_a_logged_record_json_cannot_carry_is_refused_as_it_is_read() -> None:
    good = mutation("set", "k.a", 1).to_json()
    for bad in ('"value":Infinity', '"value":[1e999]', '"value":{"x":NaN}'):
        with pytest.raises(ValidationError, match="a number too large for JSON"):
            Mutation.from_log(good.replace('"value":1', bad), 1)
