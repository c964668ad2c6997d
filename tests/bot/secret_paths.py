"""A workspace where secret values travel every path there is, and the places they may be
found afterwards: the ``vault.*`` keys are secret (``vault.choice`` quotes a refused value
in its schema's message), a moderator's click, an edit in a form, a stale Apply, a
discard, an Undo, an expiry, the web Inbox, the CLI and rules of every trigger and
condition kind read them (and ``echo_rules`` send them to a webhook that quotes them back).
``leaks`` scans every Redis key of the workspace (the queue's jobs and the web's sessions too)
for a value in any of its ``shapes`` (and base64): it may stand in a secret key's entry, the
mutation log (which keeps values: replay rebuilds state from it) and the checkpoint (a copy of
the entries), and nowhere else."""

from __future__ import annotations

import base64
import contextlib
import html
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import markupsafe
from redis import Redis, RedisCluster
from rq import Queue

from bot.redis.connection import connection_url
from connectors.remote_errors import EXCERPT_CHARS
from core.redaction import LONG
from core.redis.client import RedisClient
from core.state.keys import WorkspaceKeys

__all__ = [
    "RULES",
    "VAULT",
    "Found",
    "echo_rules",
    "forms",
    "found_in",
    "leaks",
    "quoting",
    "redis_text",
    "shapes",
]

VAULT = """\
    - pattern: "vault.glass"
      description: a secret whose proposal a person holding incident may apply at once
      type: string
      secret: true
      agent: propose
      writers: [moderator, admin]
      approval: {quorum: 2, break_glass: {role: incident}}
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


# rules that send a secret to a webhook that answers 422 quoting what it got: upper-cased
# first; as written, at the 200th character of the body (where the error's excerpt is cut);
# and in base64 (standard and URL-safe), the value at any of the three byte alignments
def echo_rules(echo_url: str, encoded_url: str) -> str:
    return f"""\
  - id: echoed_loud
    when: {{key: vault.token, op: set}}
    then:
      - action: http.post
        args: {{url: "{echo_url}", json: {{loud: "{{{{ mutation.value | upper }}}}"}}}}
  - id: echoed_at_the_cut
    when: {{key: vault.token, op: set}}
    then:
      - action: http.post
        args:
          url: "{echo_url}"
          json: {{pad: "{"x" * (EXCERPT_CHARS - 27)}", raw: "{{{{ mutation.value }}}}"}}
  - id: echoed_encoded
    when: {{key: vault.token, op: set}}
    then:
      - action: http.post
        args:
          url: "{encoded_url}"
          json:
            pad: "{{{{ 'x' * ((mutation.value | length) % 3) }}}}"
            raw: "{{{{ mutation.value }}}}"
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


def _long(value: str) -> bool:
    return len("".join(value.split())) >= LONG


def shapes(value: str) -> set[str]:
    """How ``value`` or a telling part of it can stand in a text, each in every ``forms``:
    as written, with its blanks run together, and, for a value of ``LONG`` characters or more
    (blanks aside), upper-cased and its first two thirds (what a cut would leave)."""
    together = " ".join(value.split())
    found = {value, together}
    if _long(value):
        found |= {value.upper(), together.upper(), together[: max(LONG, 2 * len(together) // 3)]}
    return {f for shape in found for f in forms(shape) if f.strip()}


_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{12,}")


def decoded(text: str) -> list[bytes]:
    """Every run of base64 characters in ``text`` decoded, from each of its first four
    characters, standard and URL-safe."""
    found: list[bytes] = []
    for run in _BASE64_RUN.findall(text):
        for start in range(4):
            part = run[start:]
            part = part[: len(part) - len(part) % 4]
            for decode in (base64.b64decode, base64.urlsafe_b64decode):
                with contextlib.suppress(ValueError):
                    found.append(decode(part))
    return found


def found_in(text: str, value: str, encoded: list[bytes] | None = None) -> bool:
    """Whether ``value`` stands in ``text`` in any of its ``shapes`` (in it as written, or
    with its blanks run together), or, a long value, base64-encoded (``encoded``: ``text``
    already ``decoded``)."""
    together = " ".join(text.split())
    if any(s in text or " ".join(s.split()) in together for s in shapes(value)):
        return True
    if not _long(value):
        return False
    wanted = [f.encode() for f in forms(value)]
    return any(w in raw for raw in encoded or decoded(text) for w in wanted)


def quoting(value: str, limit: int) -> str:
    """A reason that quotes ``value`` in every shape: upper-cased, in base64 (standard and
    URL-safe), broken across two lines, its blanks doubled, and as written across the cut
    at ``limit`` characters."""
    half = len(value) // 2
    said = [
        "no:",
        value.upper(),
        base64.b64encode(value.encode()).decode(),
        base64.urlsafe_b64encode(value.encode()).decode(),
        value[:half] + "\n" + value[half:],
        value.replace(" ", "  "),
    ]
    head = " | ".join(said) + " | "
    return head + "n" * max(0, limit - len(head) - half) + value


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
    values = list(values)
    for server, key in where:
        if _allowed(keys, key) or key in pending:
            continue
        text = redis_text(server, key)
        encoded = decoded(text)
        for value in values:
            if found_in(text, value, encoded):
                found.where.append(f"{value!r} in {key}")
    return found
