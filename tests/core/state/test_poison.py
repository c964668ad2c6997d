"""Poison-proof: a value may nest as deep as every reader can read (``MAX_DEPTH``) and no
deeper; a log record or a snapshot entry that cannot be read anyway (an older version's, a
planted one) is named and skipped by the readers that must go on, and never stops the log or
the state of the workspace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from redis import Redis

from bot.app import App, build_app
from bot.chat.answers import answer
from bot.redis.keyspace import last_written
from bot.reports.trace import collect
from core.config.core_config import load_config
from core.errors import ConfigError
from core.llm.replies import ToolCall
from core.llm.tools import AgentTools
from core.state.chain.seal import _unchained_first
from core.state.codec import UnreadableEntry
from core.state.commit_result import Committed, Rejected, RejectReason
from core.state.compaction import Compactor, Retention
from core.state.mutation_log import LogRecord, MutationLog, UnreadableRecord
from core.state.replay import Replayer
from core.state.store import StateStore
from core.state.streams import id_order, stream_ms, stream_rows
from core.state.value_json import MAX_BYTES, MAX_DEPTH, dumps, nesting
from rules.engine.consumer import LogConsumer, ensure_group
from rules.keys import RuleKeys
from tests.bot.cli.process import run
from tests.bot.cli.test_rules_cli import rules_config
from tests.factories import actor, mutation
from tests.servers.webhook import WebhookServer

ASKER = "slack:U0ASKER"  # who asks /deliberate (each counted in their workspace)


def nested(depth: int) -> Any:
    """``depth`` levels of lists and objects, an object outermost."""
    value: Any = "core"
    for level in range(depth):
        value = {"k": value} if (depth - level) % 2 else [value]
    return value


@given(
    st.recursive(
        st.integers() | st.text(max_size=3),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        ),
        max_leaves=30,
    )
)
def test_nesting_counts_levels(value: Any) -> None:
    def depth(v: Any) -> int:
        if isinstance(v, dict):
            return 1 + max((depth(x) for x in v.values()), default=0)
        if isinstance(v, list):
            return 1 + max((depth(x) for x in v), default=0)
        return 0

    assert nesting(value) == min(depth(value), MAX_DEPTH + 1)


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=20,
)


@given(_JSON_VALUES)
def test_dumps_writes_what_the_json_module_writes(value: Any) -> None:
    expected = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    assert dumps(value) == expected


def test_dumps_refuses_what_the_json_module_refuses_and_goes_on() -> None:
    looped: list[Any] = []
    looped.append(looped)
    for bad, error in [
        ([1, {"a": float("nan")}], "Out of range float"),
        (looped, "Circular reference"),
        ({"a": [object()]}, "not JSON serializable"),
    ]:
        with pytest.raises((ValueError, TypeError), match=error):
            dumps(bad)
        # containers the failed call entered are not taken for a loop by the next one
        assert dumps([{"a": [1]}, [[]]]) == '[{"a":[1]},[[]]]'


def test_a_value_at_the_limit_is_kept_and_read_everywhere(app: App) -> None:
    deepest = nested(MAX_DEPTH)
    outcome = app.gateway.propose(
        mutation("set", "artifact.deep", [deepest]).with_changes(value=deepest)
        if False
        else mutation("set", "entity.task.deep", deepest)
    )
    assert isinstance(outcome, Committed)
    [*_, record] = app.log.latest(5)
    assert record.mutation.value == deepest
    assert app.store.get("entity.task.deep").value == deepest  # type: ignore[union-attr]
    assert Replayer(app.store).verify()[1] == []


def test_a_value_past_the_limit_is_refused_at_write(app: App) -> None:
    with pytest.raises(ValidationError, match=f"nests more than {MAX_DEPTH} levels"):
        mutation("set", "entity.task.deep", nested(MAX_DEPTH + 1))
    assert len(app.log) == 0


def test_an_append_whose_list_would_nest_past_the_limit_is_refused_at_write(app: App) -> None:
    """An appended item nests one level deeper in the list it joins: an item at the limit
    would make a value no reader reads (the entry skipped as unreadable, replay's image and
    checkpoint holding what the live state cannot), so it is refused; one level less is
    kept and read everywhere."""
    store = app.store
    fits = store.commit(mutation("append", "list.deep", nested(MAX_DEPTH - 1), "admin:root"))
    assert isinstance(fits, Committed)
    with pytest.raises(ValidationError, match=f"nests more than {MAX_DEPTH} levels"):
        store.commit(mutation("append", "list.deep", nested(MAX_DEPTH), "admin:root"))
    entry = store.get("list.deep")
    assert entry is not None and entry.value == [nested(MAX_DEPTH - 1)]
    assert Replayer(store).verify()[1] == []


def test_the_cli_refuses_it_with_a_sentence(
    capsys: pytest.CaptureFixture[str], workspace: str
) -> None:
    deep = json.dumps(nested(200))
    code, _, err = run(
        capsys, workspace, "state", "set", "entity.task.x", deep, "--actor", "user:a"
    )
    assert code == 2 and f"nests more than {MAX_DEPTH} levels deep" in err
    assert "Traceback" not in err


# a mutation whose bytes are not UTF-8 (its value's "y\xffs"), which a client that decodes
# replies cannot read at all: it fails on the whole reply, the rows beside it too
NOT_UTF8 = b"not UTF-8"


def plant(redis: Redis, app: App, value: Any) -> str:
    """A record as an older version might have written it: a good record's fields, with a
    mutation no reader here can parse (``NOT_UTF8``: one not even decoded)."""
    good = app.gateway.propose(mutation("set", "decision.good", "yes"))
    assert isinstance(good, Committed)
    [(_, fields)] = redis.xrange(app.store.keys.log, good.log_id, good.log_id)
    text = {k.decode() if isinstance(k, bytes) else k: v for k, v in fields.items()}
    bad = json.loads(text["mutation"]) | {"id": "planted", "value": value}
    if value is NOT_UTF8:
        bad["value"] = "y-s"
        raw = json.dumps(bad, separators=(",", ":")).encode().replace(b'"y-s"', b'"y\xffs"')
        pairs = [raw if k == "mutation" else str(v).encode() for k, v in text.items()]
        named = [k.encode() for k in text]
        flat = [part for pair in zip(named, pairs, strict=True) for part in pair]
        planted = redis.execute_command("XADD", app.store.keys.log, "*", *flat)
    else:
        text["mutation"] = json.dumps(bad, separators=(",", ":"))  # (as commit.lua writes it)
        planted = redis.xadd(app.store.keys.log, text)
    return planted.decode() if isinstance(planted, bytes) else str(planted)


@pytest.mark.parametrize(
    "value",
    [nested(300), "fine", float("inf"), [1, float("nan")], "\ud800", NOT_UTF8],
    ids=["too-deep", "bad-fields", "infinity", "nan", "lone-surrogate", "not-utf-8"],
)
def test_a_planted_record_is_named_and_skipped_by_those_who_read_on(
    app: App, redis_client: Redis, capsys: pytest.CaptureFixture[str], workspace: str, value: Any
) -> None:
    planted = plant(redis_client, app, value)
    if value == "fine":  # a record missing a field rather than too deep
        redis_client.xdel(app.store.keys.log, planted)
        planted_raw = redis_client.xadd(app.store.keys.log, {"mutation": "{}", "ts": "x"})
        planted = planted_raw.decode() if isinstance(planted_raw, bytes) else str(planted_raw)
    after = app.gateway.propose(mutation("set", "decision.after", "still"))
    assert isinstance(after, Committed)
    log = MutationLog(redis_client, app.store.keys)
    keys = [r.mutation.key for r in log.latest(10)]
    assert keys == ["decision.good", "decision.after"]
    assert [s.log_id for s in log.skipped] == [planted]
    assert log.get(planted) is None and [s.log_id for s in log.skipped] == [planted]  # (why)
    if value != "fine":  # (the planted record names its key and its id: looked for by them)
        assert log.find("planted") is None and [s.log_id for s in log.skipped] == [planted]
        history = log.of_key("decision.good", 5, scan=None)
        assert len(history.records) == 1 and [s.log_id for s in log.skipped] == [planted]
    assert f"(skipped {planted}:" in answer(app, "log", max_chars=4000, asker=ASKER)
    good = log.latest(10)[0].mutation  # (the planted record is a copy of it: its request too)
    steps = [s for s in collect(app, good.correlation_id) if s["event"] == "mutation"]
    assert [s["data"]["id"] for s in steps] == [good.id]  # (``trace``)
    code, out, err = run(capsys, workspace, "log")
    assert code == 0 and "decision.after" in out and f"{planted} cannot be read" in err
    with pytest.raises(UnreadableRecord, match=planted):
        list(log.records())
    code, out, err = run(capsys, workspace, "replay", "--verify")
    assert code == 1 and planted in out + err and "Traceback" not in err


@pytest.mark.parametrize("value", [nested(300), NOT_UTF8], ids=["too-deep", "not-utf-8"])
def test_the_worker_settles_a_planted_record_and_goes_on(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    workspace: str,
    redis_client: Redis,
    value: Any,
) -> None:
    with WebhookServer() as hook:
        config = str(rules_config(tmp_path, hook))
        assert run(capsys, workspace, "--config", config, "worker", "--burst")[0] == 0
        app = build_app(workspace, Path(config), client=redis_client)
        planted = plant(redis_client, app, value)
        app.gateway.propose(mutation("set", "decision.after", "still"))
        code, _, err = run(capsys, workspace, "--config", config, "worker", "--burst")
        # decision.good, the planted record, decision.after, and the rule's two test.last
        assert code == 0 and "5 mutations handled, 2 runs started" in err
        assert sorted(r.json["decided"] for r in hook.requests) == ["still", "yes"]
    rows = stream_rows(redis_client.xrange(app.evaluations.keys.evaluations))
    errors = [json.loads(fields["data"]) for _, fields in rows if fields["event"] == "error"]
    assert [e["logId"] for e in errors] == [planted]


# An entry of the snapshot planted past the limit (or not an entry at all): the readers that
# list go on without it and name it; a read of that key alone says why, in one line.


def plant_entry(redis: Redis, app: App, key: str, value: str) -> None:
    """A committed entry whose stored value is then overwritten by hand (planted)."""
    assert isinstance(app.gateway.propose(mutation("set", key, {"ok": True})), Committed)
    redis.hset(app.store.keys.entry(key), "value", value)


PLANTED = {
    "too-deep": (json.dumps(nested(200)), f"value nests more than {MAX_DEPTH} levels deep"),
    "far-too-deep": ("[" * 100_000 + "]" * 100_000, "recursion"),
    "not-json": ("{nope", "Expecting property name"),
    "not-finite": ('{"x": NaN}', "NaN is not a JSON number"),
    "too-large": ('{"x": [1e999]}', "1e999 is too large a number"),
    "lone-surrogate": ('{"x": "\\ud800"}', "holds U+D800, a lone surrogate: not text"),
    "lone-surrogate-name": ('{"\\udfff": 1}', "holds U+DFFF, a lone surrogate: not text"),
}


@pytest.mark.parametrize("planted", list(PLANTED))
def test_a_planted_entry_is_named_and_skipped_by_those_who_list(
    app: App, redis_client: Redis, capsys: pytest.CaptureFixture[str], workspace: str, planted: str
) -> None:
    value, why = PLANTED[planted]
    assert isinstance(app.gateway.propose(mutation("set", "decision.fine", "yes")), Committed)
    plant_entry(redis_client, app, "entity.task.bad", value)
    skipped: list[UnreadableEntry] = []
    assert [e.key for e in app.store.entries("", skipped)] == ["decision.fine"]
    assert [(s.key, why.lower() in s.why.lower()) for s in skipped] == [("entity.task.bad", True)]
    assert [e.key for e in app.store.entries()] == ["decision.fine"]
    snapshot = app.store.snapshot()
    assert list(snapshot.entries) == ["decision.fine"]
    assert snapshot.versions == {"decision.fine": 1, "entity.task.bad": 1}
    assert [s.key for s in snapshot.skipped] == ["entity.task.bad"]
    with pytest.raises(UnreadableEntry, match=r"entity\.task\.bad"):
        app.store.get("entity.task.bad")
    assert "decision.fine" in answer(app, "state", asker=ASKER)

    capsys.readouterr()  # (what the setting up printed is not the command's)
    code, out, err = run(capsys, workspace, "state", "list")
    assert code == 0 and "decision.fine" in out and "entity.task.bad" not in out
    said = [line for line in err.splitlines() if line.startswith("deliberate state: ")]
    assert said == [f"deliberate state: skipped entity.task.bad: {skipped[0].why}"]
    assert "Traceback" not in err
    code, out, err = run(capsys, workspace, "state", "list", "--json")
    assert code == 0 and [json.loads(o)["key"] for o in out.splitlines()] == ["decision.fine"]
    assert "skipped entity.task.bad" in err

    for argv in (
        ["state", "get", "entity.task.bad"],
        ["state", "get", "entity.task.bad", "--json"],
    ):
        code, out, err = run(capsys, workspace, *argv)
        assert code == 1 and out == ""
        [line] = [line for line in err.splitlines() if line.startswith("deliberate: ")]
        assert line == f"deliberate: entry entity.task.bad cannot be read: {skipped[0].why}"
        assert "Traceback" not in err
    code, out, _ = run(capsys, workspace, "state", "get", "decision.fine")
    assert code == 0 and '"yes"' in out

    code, out, err = run(capsys, workspace, "replay", "--verify")
    assert code == 1 and "entity.task.bad" in out and "Traceback" not in err

    # a person asking, and the model reading it, get a sentence and nothing
    assert answer(app, "why entity.task.bad", asker=ASKER).startswith("entity.task.bad: set")
    redis_client.xtrim(app.store.keys.log, maxlen=0)  # its record gone, why reads the entry
    said = answer(app, "why entity.task.bad", asker=ASKER)
    assert said == f"entry entity.task.bad cannot be read: {skipped[0].why}"
    tools = AgentTools(app.gateway, actor("agent:assistant"))
    read = tools.call(ToolCall("1", "getState", '{"keys": ["entity.task.bad"]}'), "corr")
    assert read.ok and read.result == {"entity.task.bad": None}


def test_an_entry_at_the_limit_reads_everywhere(
    app: App, capsys: pytest.CaptureFixture[str], workspace: str
) -> None:
    deepest = nested(MAX_DEPTH)
    assert isinstance(app.gateway.propose(mutation("set", "entity.task.deep", deepest)), Committed)
    skipped: list[UnreadableEntry] = []
    assert [e.value for e in app.store.entries("entity.", skipped)] == [deepest]
    assert skipped == []
    snapshot = app.store.snapshot()
    assert snapshot.entries["entity.task.deep"].value == deepest and snapshot.skipped == ()
    capsys.readouterr()  # (what the setting up printed is not the command's)
    code, out, err = run(capsys, workspace, "state", "list", "--json")
    assert code == 0 and err == "" and json.loads(out)["value"] == deepest
    code, out, err = run(capsys, workspace, "state", "get", "entity.task.deep", "--json")
    assert code == 0 and err == "" and json.loads(out)["value"] == deepest
    code, out, _ = run(capsys, workspace, "replay", "--verify")
    assert code == 0 and "OK" in out


def test_a_value_at_the_size_limit_is_kept_and_one_past_it_refused_whatever_the_policy(
    redis_client: Redis, workspace: str
) -> None:
    """The store holds every commit to MAX_BYTES (a policy may only lower it), and readers
    refuse a stored value past it rather than load it."""
    store = StateStore(redis_client, workspace)
    at_limit = "x" * (MAX_BYTES - 2)  # with its quotes, exactly MAX_BYTES
    done = store.commit(mutation("set", "artifact.big", at_limit))
    assert isinstance(done, Committed)
    entry = store.get("artifact.big")
    assert entry is not None and entry.value == at_limit
    past = store.commit(mutation("set", "artifact.bigger", at_limit + "y"))
    assert isinstance(past, Rejected) and past.reason is RejectReason.SCHEMA
    assert f"more than the {MAX_BYTES} allowed" in past.message
    grown = store.commit(mutation("append", "artifact.list", "z"))
    assert isinstance(grown, Committed)
    assert store.version("artifact.bigger") == 0
    # planted past the limit: skipped by listers, named by readers
    redis_client.hset(store.keys.entry("artifact.big"), "value", f'"{at_limit}yy"')
    skipped: list[UnreadableEntry] = []
    assert [e.key for e in store.entries("artifact.", skipped)] == ["artifact.list"]
    assert [s.key for s in skipped] == ["artifact.big"]
    assert f"more than {MAX_BYTES}" in skipped[0].why
    with pytest.raises(UnreadableEntry, match=r"artifact\.big"):
        store.get("artifact.big")


def test_a_policy_may_not_raise_the_size_limit(tmp_path: Path) -> None:
    config = tmp_path / "deliberate.yaml"
    config.write_text(f"policy:\n  max_value_bytes: {MAX_BYTES + 1}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r":2: policy.max_value_bytes: "):
        load_config(config)


def test_a_record_not_utf8_left_pending_by_a_dead_worker_is_claimed_and_named(
    app: App, redis_client: Redis, workspace: str
) -> None:
    """The worker reads the log undecoded: a batch the group delivered to a worker that died
    on it is claimed by the next one, the record that is not UTF-8 in it named alone."""
    keys = RuleKeys(workspace)
    ensure_group(redis_client, keys)
    planted = plant(redis_client, app, NOT_UTF8)
    after = app.gateway.propose(mutation("set", "decision.after", "still"))
    assert isinstance(after, Committed)
    died = LogConsumer(redis_client, keys, "died-mid-record:1", claim_idle_ms=0)
    assert len(died.read(count=2)) == 2  # delivered, never acknowledged
    survivor = LogConsumer(redis_client, keys, "survivor:2", claim_idle_ms=0)
    claimed = survivor.read()
    assert [type(r).__name__ for r in claimed] == ["LogRecord", "UnreadableRecord"]
    unreadable = claimed[1]
    assert isinstance(unreadable, UnreadableRecord) and unreadable.log_id == planted
    assert "its mutation field is not UTF-8" in str(unreadable)
    for record in claimed:  # (as the service does, once settled)
        survivor.ack(record.log_id)
    [last] = survivor.read()
    assert isinstance(last, LogRecord) and last.mutation.key == "decision.after"


def test_a_record_not_utf8_at_either_end_of_the_log_stops_no_reader_of_its_ends(
    app: App, redis_client: Redis, workspace: str
) -> None:
    """What reads the newest record's id (a workspace's last write, compaction's bound) or
    the oldest's (where the log starts, whether it is chained) reads it undecoded."""
    planted = plant(redis_client, app, NOT_UTF8)  # the newest
    assert last_written(redis_client, workspace) == stream_ms(planted)
    bound, _ = Compactor(app.store, Retention(keep_records=1)).kept_from()
    assert id_order(bound) <= id_order(planted)  # (the rules' group may need older ones)
    [good] = MutationLog(redis_client, app.store.keys).latest(2)  # (the planted one skipped)
    redis_client.xdel(app.store.keys.log, good.log_id)  # now the oldest too
    assert MutationLog(redis_client, app.store.keys).starts_at(planted)
    assert not _unchained_first(app.store)  # (a copy of a chained record: it has the field)
