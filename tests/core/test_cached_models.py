"""``Copied.model_copy`` is pydantic's copy, made without its general paths: the same fields,
the same fields set, the original untouched; what it leaves to pydantic (a deep copy, a
model with private attributes or extra fields) still comes out as pydantic makes it. And a
``Derived`` model's copy drops its derived values."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, PrivateAttr

from core.cached_models import Copied
from core.deliberation.memory import Candidate, ContextState, InteractionState, Mode
from core.deliberation.session import Session
from core.deliberation.view import View, ViewKind
from tests.factories import actor, mutation

CANDIDATE = Candidate(id="c1", text="postgres", version=2)
SAMPLES: list[Copied] = [
    InteractionState(topic="db", candidate=CANDIDATE, turn_count=3, undoable=["m1"]),
    Session(id="s1", version=4, working=ContextState(pinned_decisions=["postgres"])),
    ContextState(summary="so far", constraints=["cheap"]),
    CANDIDATE,
    View(session_id="s1", correlation_id="k", kind=ViewKind.OUTCOME, text="done"),
]
values = st.one_of(
    st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=3)
)


def as_pydantic_copies(model: BaseModel, **kwargs: Any) -> BaseModel:
    return BaseModel.model_copy(model, **kwargs)


def same(copy: BaseModel, expected: BaseModel) -> None:
    assert type(copy) is type(expected)
    assert copy.__dict__ == expected.__dict__
    assert copy.__pydantic_fields_set__ == expected.__pydantic_fields_set__
    assert copy.__pydantic_extra__ == expected.__pydantic_extra__
    assert copy.__pydantic_private__ == expected.__pydantic_private__


@given(st.sampled_from(SAMPLES), st.data())
def test_a_copy_is_pydantics_copy(model: Copied, data: st.DataObject) -> None:
    names = sorted(type(model).model_fields)
    chosen = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=3))
    update = {name: data.draw(values) for name in chosen} or None
    before = dict(model.__dict__), set(model.__pydantic_fields_set__)
    copy = model.model_copy(update=update)
    same(copy, as_pydantic_copies(model, update=update))
    assert (dict(model.__dict__), set(model.__pydantic_fields_set__)) == before
    copy.__dict__["marker"] = 1  # (its own dict and set, not the original's)
    copy.__pydantic_fields_set__.add("marker")
    assert "marker" not in model.__dict__ and "marker" not in model.__pydantic_fields_set__


def test_a_deep_copy_is_pydantics() -> None:
    state = SAMPLES[0]
    deep = state.model_copy(update={"mode": Mode.REFINING}, deep=True)
    same(deep, as_pydantic_copies(state, update={"mode": Mode.REFINING}, deep=True))
    assert deep.candidate == state.candidate and deep.candidate is not state.candidate


class WithPrivate(Copied):
    name: str = "a"
    _seen: int = PrivateAttr(default=0)


class WithExtra(Copied):
    model_config = ConfigDict(extra="allow")
    name: str = "a"


def test_what_it_leaves_to_pydantic_is_copied_as_pydantic_copies_it() -> None:
    private = WithPrivate(name="b")
    private._seen = 3
    same(
        private.model_copy(update={"name": "c"}), as_pydantic_copies(private, update={"name": "c"})
    )
    assert private.model_copy()._seen == 3
    extra = WithExtra(name="b", colour="red")  # type: ignore[call-arg]
    copied = extra.model_copy(update={"name": "c", "size": 2})
    same(copied, as_pydantic_copies(extra, update={"name": "c", "size": 2}))
    assert copied.__pydantic_extra__ == {"colour": "red", "size": 2}


def test_a_derived_models_copy_drops_its_derived_values() -> None:
    made = mutation("set", "decision.db", "postgres", "user:al")
    assert made.value_json == '"postgres"'  # (derived, kept in its __dict__)
    changed = made.model_copy(update={"value": "mysql"})
    assert "value_json" not in changed.__dict__ and changed.value_json == '"mysql"'
    assert made.actor == actor("user:al")
