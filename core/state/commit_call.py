"""commit.lua's side of a commit as the store sees it: the keys and arguments a mutation is
sent with, and what the script's reply says of it (``StateStore.commit``, ``commit_on``;
the script's header says what each one is)."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Any

from core.errors import StoreError
from core.state.codec import entry_meta, readable_entry
from core.state.commit_result import Committed, FirstCommit, Rejected, RejectReason, first_result
from core.state.keys import WorkspaceKeys
from core.state.limits import CommitLimits
from core.state.mutation import Mutation, Op, whole_ms
from core.state.value_json import MAX_BYTES, dumps

__all__ = ["RESULT_FIELDS", "commit_call", "first_run", "outcome_of", "ttl_ms", "unsaved"]

RESULT_FIELDS = ("value", "updatedAt", "updatedBy", "expiresAt", "meta")
_VERSION = re.compile(r"v[0-9]+")


def commit_call(
    keys: WorkspaceKeys,
    mutation: Mutation,
    limits: CommitLimits,
    idempotency_ttl_ms: int,
    prev_max_bytes: int,
    token: str = "",
    deadline: int | None = None,
    say_prev: bool = False,
) -> tuple[list[str], list[Any]]:
    """commit.lua's keys and arguments for ``mutation`` (its first 8 keys, 18 arguments):
    ``token``, the save it is made on (KEYS[9], ``StateStore.commit_on``; "" for none); the
    request's own id (ARGV[18]) drawn here, the same for each time these arguments are sent
    again: a duplicate whose first run had it is this request's (``outcome_of``). Two more
    when asked: ``say_prev``, the reply says what the key held before (ARGV[19]);
    ``deadline``, epoch ms of the server's clock at or past which it is refused as expired
    (ARGV[20])."""
    rate = limits.rate
    names = [
        keys.entry(mutation.key),
        keys.versions,
        keys.index,
        keys.log,
        keys.idempotency(mutation.id),
        keys.rate_window(mutation.key, mutation.actor.identity),
        keys.chain,
        keys.timed,
    ]
    args: list[Any] = [
        mutation.key,
        mutation.op.value,
        "" if mutation.op is Op.DELETE else mutation.value_json,
        "" if mutation.expected_version is None else mutation.expected_version,
        "" if mutation.ttl_sec is None else ttl_ms(mutation.ttl_sec),
        mutation.to_json(),
        mutation.actor.json_text,
        dumps(entry_meta(mutation)),
        idempotency_ttl_ms,
        rate.max if rate else 0,
        rate.window_ms if rate else 0,
        mutation.id,
        min(limits.max_bytes or MAX_BYTES, MAX_BYTES),
        limits.max_items,
        prev_max_bytes,
        "" if mutation.for_sec is None else whole_ms(mutation.for_sec),
        token,
        os.urandom(8).hex(),
    ]
    if say_prev or deadline is not None:
        args += ["1" if say_prev else "", "" if deadline is None else deadline]
    return names, args


def first_run(record: str) -> tuple[str, str]:
    """The log id and the version (``v<n>``) an idempotency record names, as commit.lua
    reads it: "<logId>\nv<version>\n<request>" (the request's id is the script's to
    compare); an older release's "<logId>\nv<version>", or "<logId>\n<value>" before
    that, whose value (which may hold lines) stands where the version does."""
    log_id, _, rest = record.partition("\n")
    version, _, _ = rest.partition("\n")
    return log_id, version if _VERSION.fullmatch(version) else rest


def ttl_ms(ttl_sec: float) -> int:
    """A ttl in whole milliseconds, at least one (replay computes expiry the same way)."""
    return whole_ms(ttl_sec)


def unsaved(reply: list[Any]) -> bool:
    """Whether ``reply`` says a commit made on a save (KEYS[9]) did not run: its save did not
    land, and nothing was written."""
    return bool(reply[0] == "unsaved")


def outcome_of(mutation: Mutation, reply: list[Any]) -> Committed | Rejected:
    """What commit.lua's ``reply`` (but "unsaved": ``StateStore.answered``) says of
    ``mutation``."""
    status = reply[0]
    if status == "ok":
        _, version, value, ts, expires, log_id, *said = reply
        meta = entry_meta(mutation)
        expires_at = _int(expires)
        if not said or said[0] is None or said[0] is False:  # (not asked, or not kept whole)
            return Committed(mutation, int(version), log_id, int(ts), value, expires_at, meta)
        prev = str(said[0]) or None  # ('' : absent)
        made = (mutation, int(version), log_id, int(ts), value, expires_at, meta)
        return Committed(*made, prev_json=prev, prev_said=True)
    if status == "duplicate":  # the first commit's result, rebuilt (first_result)
        _, log_id, version, ts, logged, expires, prev, prev_sha1, *now = reply
        now_version, now_value, now_expires, mine = now
        first = FirstCommit(
            log_id,
            str(version),
            logged or None,
            ts or None,
            expires or None,
            prev or None,
            not prev_sha1,
            int(now_version),
            now_value or None,
            now_expires or None,
        )
        outcome = first_result(mutation, first)
        # this request's own first run, landed, its answer lost on the way: this commit
        return replace(outcome, duplicate=False) if mine == 1 else outcome
    if status == "conflict":
        version = int(reply[1])
        fields = dict(zip(RESULT_FIELDS, reply[2:7], strict=True))
        latest = readable_entry(mutation.key, version, fields, [])
        return Rejected(
            mutation,
            RejectReason.CONFLICT,
            f"{mutation.key} is at version {version}, not {mutation.expected_version}",
            latest=latest,
            version=version,
        )
    if status == "expired":
        message = f"{mutation.key} was not changed: past the deadline it was asked by"
        return Rejected(mutation, RejectReason.EXPIRED, message, at=int(reply[1]))
    if status == "not_found":
        message = f"{mutation.key} is not set"
        return Rejected(mutation, RejectReason.NOT_FOUND, message, version=int(reply[1]))
    if status == "type":
        return Rejected(mutation, RejectReason.TYPE, str(reply[1]))
    if status == "schema":
        return Rejected(mutation, RejectReason.SCHEMA, str(reply[1]))
    if status == "rate_limited":
        wait = int(reply[1])
        return Rejected(
            mutation,
            RejectReason.RATE_LIMITED,
            f"too many changes to {mutation.key}; try again in {wait / 1000:.1f}s",
            retry_after_ms=wait,
        )
    raise StoreError(f"commit script answered {reply!r}")


def _int(text: str | None) -> int | None:
    return int(text) if text else None
