"""A workspace where secret values travel every path there is, and the places they may be
found afterwards: the ``vault.*`` keys are secret (``vault.choice`` quotes a refused value
in its schema's message), a moderator's click, an edit in a form, a stale Apply, a
discard, an Undo, an expiry, the web Inbox, the CLI and rules of every trigger and
condition kind read them. ``leaks`` scans every Redis key of the workspace (the queue's jobs and the
web's sessions too) for a value: it may stand in a secret key's entry, the mutation log (which keeps
values: replay rebuilds state from it) and the checkpoint (a copy of the entries), and
nowhere else."""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import markupsafe
from redis import Redis, RedisCluster
from rq import Queue

from bot.redis_connection import connection_url
from core.redis_client import RedisClient
from core.state.keys import WorkspaceKeys

__all__ = ["RULES", "VAULT", "Found", "forms", "leaks", "redis_text"]

VAULT = """\
    - pattern: "vault.seen"
      description: an observation with a confidence, promoted by a signal rule
      type: object
      secret: true
      writers: [admin, connector, system]
      agent: deny
    - pattern: "vault.choice"
      type: string
      enum: [red, blue]
      secret: true
      writers: [admin, system]
    - pattern: "vault.*"
      type: string
      secret: true
      agent: propose
      writers: [moderator, admin, automation, system]
      approval: {quorum: 2}
"""

# every trigger and condition kind over a secret key, and templates that read one
RULES = """\
  - id: copies_the_token
    when: {key: vault.token, op: set}
    then:
      - action: log.write
        args:
          message: "rotated to {{ mutation.value }}"
          fields: {was: "{{ mutation.prev }}", other: "{{ state['vault.other'] }}"}
      - mutate: {op: set, key: vault.copy, value: "{{ mutation.value }}"}
  - id: to_a_value
    when: {key: vault.token, to: "nope"}
    then: [{action: log.write, args: {message: "to"}}]
  - id: from_a_value
    when: {key: vault.token, from: "nope"}
    then: [{action: log.write, args: {message: "from"}}]
  - id: held_for_a_while
    when: {key: vault.token, op: set}
    for: 1s
    then: [{action: log.write, args: {message: "held {{ mutation.value }}"}}]
  - id: seen_often_enough
    when: {key: vault.seen, op: set}
    signal: {at_least: 2, confidence: 0.5, within: 60s}
    then: [{action: log.write, args: {message: "seen {{ mutation.value }}"}}]
  - id: state_equals
    when: {key: "test.*"}
    if: {state: {vault.token: "nope"}}
    then: [{action: log.write, args: {message: "state"}}]
  - id: expression_of_it
    when: {key: "test.*"}
    if: {expr: 'state["vault.other"]'}
    then: [{action: log.write, args: {message: "expr"}}]
  - id: reads_it
    when: {key: "test.*"}
    then:
      - action: log.write
        args: {message: "{{ state['vault.other'] }} / {{ state['vault.copy'] }}"}
  - id: bad_arguments_quote_it
    when: {key: "test.*"}
    then:
      - action: log.write
        args: {message: "x", level: "{{ state['vault.other'] }}"}
"""


def forms(value: str) -> set[str]:
    """How ``value`` can stand in a stored or served text: as written, JSON-escaped (ASCII
    or not), HTML-escaped."""
    return {
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        html.escape(value),
        html.escape(value, quote=False),
        str(markupsafe.escape(value)),
    }


def raw(client: RedisClient) -> RedisClient:
    """``client``'s server (or cluster), answering bytes (an RQ job's data is compressed)."""
    if isinstance(client, RedisCluster):
        node = client.get_default_node()
        return RedisCluster(host=node.host, port=node.port)
    return Redis.from_url(connection_url(client))


def redis_text(client: RedisClient, key: str) -> str:
    """Everything ``key`` holds, whatever its type, as text."""
    kind = client.type(key)
    kind = kind.decode() if isinstance(kind, bytes) else kind
    parts: Iterable[object]
    if kind == "string":
        parts = [client.get(key)]
    elif kind == "hash":
        parts = list(client.hgetall(key).items())
    elif kind == "list":
        parts = client.lrange(key, 0, -1)
    elif kind == "set":
        parts = client.smembers(key)
    elif kind == "zset":
        parts = client.zrange(key, 0, -1, withscores=True)
    elif kind == "stream":
        parts = client.xrange(key)
    else:
        parts = []
    return "\n".join(_text(p) for p in parts)


def _text(part: object) -> str:
    if isinstance(part, bytes):
        return part.decode("utf-8", "replace")
    if isinstance(part, tuple | list):
        return " ".join(_text(p) for p in part)
    if isinstance(part, dict):
        return " ".join(f"{_text(k)} {_text(v)}" for k, v in part.items())
    return str(part)


@dataclass
class Found:
    where: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.where)


def _allowed(keys: WorkspaceKeys, key: str) -> bool:
    return (
        key.startswith(keys.entry("vault."))
        or key in (keys.log, keys.checkpoint)
        or key.startswith(keys.checkpoint + ":")
    )


def _keys(client: RedisClient, match: str, queue: str | None = None) -> Iterator[str]:
    for found in client.scan_iter(match=match, count=1000):
        key = found.decode() if isinstance(found, bytes) else str(found)
        if queue is None or queue in key or key.startswith("rq:job:"):
            yield key


def leaks(
    client: RedisClient,
    workspace: str,
    values: Iterable[str],
    *,
    waiting: Iterable[str] = (),
    queue: Queue | None = None,
) -> Found:
    """Each key of the workspace, of those all workspaces share (web sessions) and of the
    ``queue``'s jobs, where one of ``values`` stands outside the places a secret value is
    kept (and the proposals ``waiting`` for a person: applying one needs its value)."""
    keys = WorkspaceKeys(workspace)
    pending = {keys.proposal(pid) for pid in waiting}
    state = raw(client)
    where = [(state, k) for m in (keys.every_key, r"\{deliberate\}*") for k in _keys(state, m)]
    if queue is not None:
        jobs = raw(queue.connection)
        where += [(jobs, k) for k in _keys(jobs, "rq:*", queue.name)]
    found = Found()
    wanted = {v: forms(v) for v in values}
    for server, key in where:
        if _allowed(keys, key) or key in pending:
            continue
        text = redis_text(server, key)
        for value, shapes in wanted.items():
            if any(s in text for s in shapes):
                found.where.append(f"{value!r} in {key}")
    return found
