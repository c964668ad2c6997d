"""The state store and its commit script, on a real Redis."""

from __future__ import annotations

import time

import pytest
from redis import Redis

from core.state.commit_result import Committed, Rejected, RejectReason
from core.state.limits import CommitLimits, RateLimit
from core.state.mutation_log import MutationLog
from core.state.store import StateStore
from tests.factories import mutation


@pytest.fixture
def store(redis_client: Redis, workspace: str) -> StateStore:
    return StateStore(redis_client, workspace)


def log_len(store: StateStore) -> int:
    return len(MutationLog(store.redis, store.keys))


def committed(outcome: Committed | Rejected) -> Committed:
    assert isinstance(outcome, Committed), outcome
    return outcome


def test_set_then_get_returns_the_entry_with_its_provenance(store: StateStore) -> None:
    m = mutation("set", "decision.db", "postgres", reason="faster joins")
    result = committed(store.commit(m))
    entry = store.get("decision.db")
    assert entry is not None
    assert entry == result.entry
    assert (entry.value, entry.version, entry.updated_by) == ("postgres", 1, m.actor)
    assert entry.updated_at == result.mutation.ts
    assert entry.meta == {
        "mutationId": m.id,
        "correlationId": m.correlation_id,
        "reason": "faster joins",
    }


def test_versions_start_at_one_and_grow_by_one(store: StateStore) -> None:
    versions = [committed(store.commit(mutation("set", "k.a", i))).version for i in range(5)]
    assert versions == [1, 2, 3, 4, 5]


def test_a_version_is_never_reused_after_delete(store: StateStore) -> None:
    committed(store.commit(mutation("set", "k.a", "one")))
    assert committed(store.commit(mutation("delete", "k.a"))).entry is None
    assert store.get("k.a") is None
    assert store.version("k.a") == 2
    again = committed(store.commit(mutation("set", "k.a", "two")))
    assert again.version == 3
    stale = store.commit(mutation("set", "k.a", "three", expected_version=1))
    assert isinstance(stale, Rejected) and stale.reason is RejectReason.CONFLICT


def test_a_version_is_never_reused_after_expiry(store: StateStore) -> None:
    committed(store.commit(mutation("set", "k.t", "soon gone", ttl_sec=0.05)))
    time.sleep(0.12)
    assert store.get("k.t") is None
    assert store.entries("k.") == []
    assert store.version("k.t") == 1
    assert committed(store.commit(mutation("set", "k.t", "back"))).version == 2


def test_cas_conflict_returns_the_latest_entry_and_writes_nothing(store: StateStore) -> None:
    first = committed(store.commit(mutation("set", "k.a", "mine")))
    before = log_len(store)
    outcome = store.commit(mutation("set", "k.a", "theirs", expected_version=0))
    assert isinstance(outcome, Rejected)
    assert outcome.reason is RejectReason.CONFLICT
    assert outcome.latest == first.entry
    assert outcome.version == 1
    assert store.get("k.a") == first.entry
    assert log_len(store) == before


def test_expected_version_zero_means_create_only(store: StateStore) -> None:
    assert committed(store.commit(mutation("set", "k.new", 1, expected_version=0))).version == 1
    again = store.commit(mutation("set", "k.new", 2, expected_version=0))
    assert isinstance(again, Rejected) and again.reason is RejectReason.CONFLICT


def test_a_repeated_mutation_id_returns_the_first_result_and_writes_nothing(
    store: StateStore,
) -> None:
    m = mutation("append", "k.list", "first item", reason="click")
    first = committed(store.commit(m))
    committed(store.commit(mutation("append", "k.list", "second item")))
    before = log_len(store)
    again = committed(store.commit(m))
    assert again.duplicate and not first.duplicate
    assert (again.version, again.entry, again.log_id) == (first.version, first.entry, first.log_id)
    assert log_len(store) == before
    assert store.get("k.list").value == ["first item", "second item"]  # type: ignore[union-attr]


def test_a_repeated_delete_id_returns_the_first_result(store: StateStore) -> None:
    committed(store.commit(mutation("set", "k.a", 1)))
    m = mutation("delete", "k.a")
    first = committed(store.commit(m))
    again = committed(store.commit(m))
    assert again.duplicate and again.entry is None and again.version == first.version == 2


def value_of(outcome: Committed | Rejected) -> object:
    entry = committed(outcome).entry
    assert entry is not None
    return entry.value


def test_incr_adds_numbers_and_keeps_integers_integers(store: StateStore) -> None:
    one = value_of(store.commit(mutation("incr", "k.n")))
    forty_two = value_of(store.commit(mutation("incr", "k.n", 41)))
    assert (one, type(one), forty_two, type(forty_two)) == (1, int, 42, int)
    assert type(store.get("k.n").value) is int  # type: ignore[union-attr]
    committed(store.commit(mutation("set", "k.f2", 2.0)))
    two_and_one = value_of(store.commit(mutation("incr", "k.f2")))
    assert (two_and_one, type(two_and_one)) == (3.0, float)
    result = committed(store.commit(mutation("incr", "k.n", 0.5))).entry
    assert result is not None and result.value == 42.5 and isinstance(result.value, float)
    tenth = committed(store.commit(mutation("incr", "k.f", 0.1))).entry
    assert tenth is not None
    assert committed(store.commit(mutation("incr", "k.f", 0.2))).entry.value == 0.1 + 0.2  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("op", "stored", "arg", "needs"),
    [
        ("incr", "a string", 1, "incr needs a number"),
        ("incr", [1, 2], 1, "incr needs a number"),
        ("incr", True, 1, "incr needs a number"),
        ("append", "a string", "x", "append needs a list"),
        ("append", {"a": 1}, "x", "append needs a list"),
    ],
)
def test_an_op_on_the_wrong_type_is_rejected_and_changes_nothing(
    store: StateStore, op: str, stored: object, arg: object, needs: str
) -> None:
    original = committed(store.commit(mutation("set", "k.x", stored))).entry
    before = log_len(store)
    outcome = store.commit(mutation(op, "k.x", arg))
    assert isinstance(outcome, Rejected) and outcome.reason is RejectReason.TYPE
    assert needs in outcome.message
    assert store.get("k.x") == original
    assert log_len(store) == before


def test_append_builds_a_list_and_keeps_nested_values(store: StateStore) -> None:
    for item in ["a", {"b": [1, 2]}, [], None, 'é ∑ "quoted"']:
        committed(store.commit(mutation("append", "k.l", item)))
    assert store.get("k.l").value == ["a", {"b": [1, 2]}, [], None, 'é ∑ "quoted"']  # type: ignore[union-attr]


def test_set_clears_an_expiry_while_incr_and_append_keep_it(store: StateStore) -> None:
    with_ttl = committed(store.commit(mutation("set", "k.n", 1, ttl_sec=60))).entry
    assert with_ttl is not None and with_ttl.expires_at is not None
    kept = committed(store.commit(mutation("incr", "k.n"))).entry
    assert kept is not None and kept.expires_at == with_ttl.expires_at
    cleared = committed(store.commit(mutation("set", "k.n", 5))).entry
    assert cleared is not None and cleared.expires_at is None
    assert store.redis.pttl(store.keys.entry("k.n")) == -1  # no TTL left on the hash either
    listed = committed(store.commit(mutation("append", "k.l", "a", ttl_sec=60))).entry
    assert listed is not None and listed.expires_at is not None
    grown = committed(store.commit(mutation("append", "k.l", "b"))).entry
    assert grown is not None and grown.expires_at == listed.expires_at
    assert 0 < store.redis.pttl(store.keys.entry("k.l")) <= 60_000


def test_incr_refuses_what_a_double_cannot_hold_exactly(store: StateStore) -> None:
    committed(store.commit(mutation("set", "k.big", 2**53 + 1)))
    committed(store.commit(mutation("set", "k.edge", 2**53 - 1)))
    before = log_len(store)
    for m in (
        mutation("incr", "k.big", -10),
        mutation("incr", "k.edge", 1),
        mutation("incr", "k.small", 2**60),
    ):
        outcome = store.commit(m)
        assert isinstance(outcome, Rejected) and outcome.reason is RejectReason.TYPE, outcome
        assert "2^53" in outcome.message
    assert log_len(store) == before
    assert store.get("k.big").value == 2**53 + 1  # type: ignore[union-attr]
    assert value_of(store.commit(mutation("incr", "k.edge", -1))) == 2**53 - 2


def test_a_type_error_names_the_type_never_the_value(store: StateStore) -> None:
    secret = "a" * 38 + "é and more that is nobody's business"
    committed(store.commit(mutation("set", "k.s", secret)))
    outcome = store.commit(mutation("incr", "k.s"))
    assert isinstance(outcome, Rejected) and outcome.reason is RejectReason.TYPE
    assert outcome.message == "incr needs a number; k.s holds a string"
    listed = store.commit(mutation("append", "k.s", 1))
    assert isinstance(listed, Rejected) and listed.message.endswith("holds a string")


def test_append_limits_are_checked_on_the_resulting_list(store: StateStore) -> None:
    limits = CommitLimits(max_bytes=30, max_items=3)
    for item in ("one", "two", "six"):
        committed(store.commit(mutation("append", "k.l", item), limits))
    full = store.commit(mutation("append", "k.l", "x"), limits)
    assert isinstance(full, Rejected) and full.reason is RejectReason.SCHEMA
    assert "at most 3 items" in full.message
    committed(store.commit(mutation("append", "k.m", "a" * 20), limits))
    big = store.commit(mutation("append", "k.m", "b" * 20), limits)
    assert isinstance(big, Rejected) and "bytes, more than the 30 allowed" in big.message
    assert store.get("k.l").value == ["one", "two", "six"]  # type: ignore[union-attr]
    assert store.get("k.m").version == 1  # type: ignore[union-attr]


def test_incr_on_an_expired_number_starts_from_zero(store: StateStore) -> None:
    committed(store.commit(mutation("set", "k.n", 40, ttl_sec=0.05)))
    time.sleep(0.12)
    result = committed(store.commit(mutation("incr", "k.n", 2))).entry
    assert result is not None and result.value == 2 and result.expires_at is None


def test_delete_of_an_absent_key_is_not_found(store: StateStore) -> None:
    outcome = store.commit(mutation("delete", "k.none"))
    assert isinstance(outcome, Rejected) and outcome.reason is RejectReason.NOT_FOUND
    assert log_len(store) == 0


def test_entries_lists_by_prefix_in_key_order(store: StateStore) -> None:
    for key in ["decision.b", "decision.a", "artifact.doc", "decisions.other"]:
        committed(store.commit(mutation("set", key, key)))
    assert [e.key for e in store.entries("decision.")] == ["decision.a", "decision.b"]
    assert [e.key for e in store.entries()] == [
        "artifact.doc",
        "decision.a",
        "decision.b",
        "decisions.other",
    ]


def test_every_redis_key_of_a_workspace_carries_its_hash_tag(
    store: StateStore, redis_client: Redis, workspace: str
) -> None:
    committed(store.commit(mutation("set", "k.a", 1, ttl_sec=60)))
    committed(store.commit(mutation("append", "k.b", 1)))
    store.commit(mutation("set", "k.c", 1), CommitLimits(RateLimit(5, 1000)))
    names = [n for n in redis_client.scan_iter(match=f"*{workspace}*", count=1000)]
    assert len(names) >= 6
    assert all(n.startswith(f"{{ws:{workspace}}}:") for n in names)


def test_the_rate_limit_counts_commits_per_actor_and_key(store: StateStore) -> None:
    limit = CommitLimits(RateLimit(max=2, window_ms=60_000))
    for value in (1, 2):
        committed(store.commit(mutation("set", "k.r", value, who="user:bob"), limit))
    third = store.commit(mutation("set", "k.r", 3, who="user:bob"), limit)
    assert isinstance(third, Rejected) and third.reason is RejectReason.RATE_LIMITED
    assert third.retry_after_ms is not None and 0 < third.retry_after_ms <= 60_000
    committed(store.commit(mutation("set", "k.r", 4, who="user:carol"), limit))
    committed(store.commit(mutation("set", "k.other", 5, who="user:bob"), limit))
    assert store.get("k.r").value == 4  # type: ignore[union-attr]


def test_the_rate_limit_window_slides(store: StateStore) -> None:
    limit = CommitLimits(RateLimit(max=1, window_ms=100))
    committed(store.commit(mutation("set", "k.r", 1), limit))
    assert isinstance(store.commit(mutation("set", "k.r", 2), limit), Rejected)
    time.sleep(0.3)
    committed(store.commit(mutation("set", "k.r", 3), limit))


def test_a_rejected_commit_does_not_count_against_the_rate_limit(store: StateStore) -> None:
    limit = CommitLimits(RateLimit(max=1, window_ms=60_000))
    conflict = store.commit(mutation("set", "k.r", 1, expected_version=7), limit)
    assert isinstance(conflict, Rejected) and conflict.reason is RejectReason.CONFLICT
    committed(store.commit(mutation("set", "k.r", 1), limit))


def test_the_commit_script_is_cached_on_the_server(store: StateStore) -> None:
    committed(store.commit(mutation("set", "k.a", 1)))
    assert store.redis.script_exists(store._commit.sha) == [True]


def test_workspaces_do_not_see_each_other(redis_client: Redis, workspace: str) -> None:
    other = StateStore(redis_client, f"{workspace}-b")  # only read: nothing to clean up
    committed(StateStore(redis_client, workspace).commit(mutation("set", "k.a", 1)))
    assert other.get("k.a") is None and other.version("k.a") == 0
    assert other.entries() == []
