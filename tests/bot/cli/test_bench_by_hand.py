"""The bench's writes by hand are the commit script's writes: the same keys, types, fields and
values (the clock and the log id aside), a chain that verifies, and none of it in the
workspace's canonical state."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis import Redis

from bot.cli.bench.by_hand import HandKeys, HandWriter
from core.state.chain.links import genesis, link_hash
from core.state.keys import WorkspaceKeys
from core.state.store import StateStore
from tests.factories import mutation

NOW_MS = 1_700_000_000_000


def shape(client: Redis, name: str) -> tuple[str, Any]:
    """A key's type and what it holds (a hash's fields, a stream's records' fields)."""
    kind = client.type(name)
    kind = kind.decode() if isinstance(kind, bytes) else kind
    if kind == "hash":
        return kind, client.hgetall(name)
    if kind == "zset":
        return kind, client.zrange(name, 0, -1)
    if kind == "stream":
        return kind, [fields for _, fields in client.xrange(name)]
    return kind, client.pttl(name) > 0


def test_the_writes_by_hand_are_the_scripts_key_by_key(redis_client: Redis, workspace: str) -> None:
    store = StateStore(redis_client, workspace)
    canonical, hand = store.keys, HandKeys(WorkspaceKeys(workspace))
    writer = HandWriter(redis_client, hand, store.idempotency_ttl_ms)
    first = mutation("set", "plan.db", "postgres")
    second = mutation("set", "plan.db", "naïve ✓", expected_version=1)
    for number, (made, prev) in enumerate([(first, ""), (second, '"postgres"')], start=1):
        assert store.commit(made).version == number  # type: ignore[union-attr]
        writer.write(made, number, prev, NOW_MS)

    pairs = [
        (canonical.entry("plan.db"), hand.entry("plan.db")),
        (canonical.versions, hand.versions),
        (canonical.index, hand.index),
        (canonical.log, hand.log),
        (canonical.chain, hand.chain),
        (canonical.idempotency(second.id), hand.idempotency(second.id)),
    ]
    for ours, theirs in pairs:
        (kind, held), (hand_kind, hand_held) = (
            shape(redis_client, ours),
            shape(redis_client, theirs),
        )
        assert kind == hand_kind, ours
        if kind == "hash":
            assert held.keys() == hand_held.keys(), ours
            for name in set(held) - {b"updatedAt", "updatedAt", b"hash", "hash", b"id", "id"}:
                assert held[name] == hand_held[name], (ours, name)
        elif kind == "stream":
            for record, hand_record in zip(held, hand_held, strict=True):
                assert list(record) == list(hand_record)  # the same fields in the same order
                for name in ("mutation", "version", "expiresAt", "prev"):
                    assert record[name] == hand_record[name], name
        else:
            assert held == hand_held, ours


def test_the_writes_by_hand_leave_canonical_state_alone(
    redis_client: Redis, workspace: str
) -> None:
    keys = WorkspaceKeys(workspace)
    writer = HandWriter(redis_client, HandKeys(keys), 60_000)
    writer.write(mutation("set", "plan.db", 1), 1, "", NOW_MS)
    assert redis_client.exists(keys.versions, keys.log, keys.chain, keys.entry("plan.db")) == 0
    left = set(redis_client.scan_iter(match=HandKeys(keys).pattern))
    assert len(left) == 6  # entry, versions, index, log, chain, the mutation id


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(values=st.lists(st.text(max_size=40), min_size=1, max_size=4))
def test_the_chain_by_hand_is_hashed_as_the_scripts_is(
    redis_client: Redis, workspace: str, values: list[str]
) -> None:
    hand = HandKeys(WorkspaceKeys(workspace))
    redis_client.delete(hand.log)
    writer = HandWriter(redis_client, hand, 60_000)
    prev = ""
    for version, value in enumerate(values, start=1):
        made = mutation("set", "plan.note", value)
        writer.write(made, version, prev, NOW_MS)
        prev = made.value_json
    last = genesis(hand.log)
    for n, (_, fields) in enumerate(redis_client.xrange(hand.log), start=1):
        stored = {name.encode(): text.encode() for name, text in fields.items()}  # as held
        assert fields["chain"] == f"{n}:{link_hash(last, n, stored)}"
        last = link_hash(last, n, stored)
