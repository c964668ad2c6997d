"""A workspace's own perception weights in Redis (``core.perception.team``): one string, read
with the session at a send's start (one round trip for both), taught by a click's lesson
(WATCH, read, write: two clicks at once both count), cleared by ``deliberate perception
reset``. The clock is the server's, so every process decays the table alike.

What Redis holds that is not a table (an old or a damaged value, bytes that are no UTF-8
text) is read as no table and never overwritten by a lesson: ``status`` says so, and
``reset`` clears it. A process keeps the table it last read or wrote for a second
(``FRESH_SEC``): a turn within it starts without reading (a lesson taught in another
process reaches this one's turns within that second). A table is ASCII (numbers and
names), so it is read by a script that hands back any other byte as no table: a client
decoding replies as text would fail on it before any check of ours could run."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from redis.exceptions import WatchError

from core.deliberation.commands import Teach
from core.deliberation.session import Session
from core.perception.team import Lesson, TeamWeights
from core.redis.client import watch_broken
from core.runtime.sessions import SessionStore
from core.runtime.stream_appends import StreamAppend
from core.runtime.trace_events import TraceEvents
from core.state.keys import WorkspaceKeys
from core.state.scripts import server_ms, time_ms

if TYPE_CHECKING:
    from core.redis.client import RedisClient, RedisPipeline

__all__ = ["TeamStore", "parsed"]

# what the key holds, or "!" (no table) when it holds what no table is: another type than a
# string, more than MAX_BYTES, a byte past ASCII
MAX_BYTES = 256 * 1024  # a full table is some 115 KB
FRESH_SEC = 1.0  # how long a process reads with the table it last read or wrote
_HELD = (
    "local t = redis.call('TYPE', KEYS[1])['ok'] local v = false "
    "if t == 'string' then v = redis.call('GET', KEYS[1]) "
    f"if string.len(v) > {MAX_BYTES} or string.find(v, '[\\128-\\255]') then v = '!' end "
    "elseif t ~= 'none' then v = '!' end "
)
_READ = _HELD + "return v"
# whether a value is held, the same value ('' for none: a Lua table ends at its first nil),
# and the server's clock
_READ_AT = _HELD + "return {v and 1 or 0, v or '', redis.call('TIME')}"


def parsed(raw: object) -> TeamWeights | None:
    """The table ``raw`` (what Redis holds) says; an empty one when nothing is held; None
    when what is held is no table."""
    if raw is None:
        return TeamWeights()
    try:
        return TeamWeights.model_validate_json(raw if isinstance(raw, str | bytes) else str(raw))
    except ValidationError:
        return None


class TeamStore:
    def __init__(self, client: RedisClient, workspace: str) -> None:
        self.redis = client
        self.key = WorkspaceKeys(workspace).team_weights
        # the table last read or written here (None: no table), and when (monotonic)
        self._kept: tuple[float, TeamWeights | None] | None = None

    def kept(self) -> tuple[bool, TeamWeights | None]:
        """Whether this store read or wrote the table less than ``FRESH_SEC`` ago, and that
        table, decayed as it was then (None: no table; a second is nothing to a fortnight's
        half-life)."""
        kept = self._kept
        if kept is None or time.monotonic() - kept[0] >= FRESH_SEC:
            return False, None
        return True, kept[1]

    def forget(self) -> None:
        """Keep no table: the next turn reads it (as it does once ``FRESH_SEC`` passed)."""
        self._kept = None

    def _keep(self, team: TeamWeights | None) -> TeamWeights | None:
        """``team`` decayed by this process's clock, kept."""
        decayed = _now(team)
        self._kept = (time.monotonic(), decayed)
        return decayed

    def read(self, client: RedisClient | RedisPipeline) -> Any:
        """What Redis holds here (``parsed`` reads it), asked of ``client`` (a pipeline:
        queued)."""
        return client.execute_command("EVAL", _READ, 1, self.key)  # type: ignore[no-untyped-call]

    def along(self, sessions: SessionStore, session_id: str) -> tuple[Session, TeamWeights | None]:
        """The session and, read with it in one round trip, the table (None: none), decayed
        by this process's clock (a fortnight's half-life forgives a server's)."""
        session, raw = sessions.load_with(session_id, self.read)
        return session, self._keep(parsed(raw))

    def load(self) -> TeamWeights | None:
        """The table as it stands now (decayed), or None when Redis holds no table here."""
        team = parsed(self.read(self.redis))
        return None if team is None else team.at(server_ms(self.redis, self.key))

    def learn(
        self, lesson: Lesson, told: Callable[[TeamWeights | None], StreamAppend] | None = None
    ) -> TeamWeights | None:
        """The table after ``lesson``, written (with the row ``told`` makes of it, in the
        same transaction); None (and nothing written but that row) when what Redis holds
        here is no table."""
        with self.redis.pipeline(transaction=True) as pipe:  # (a cluster client: False)
            while True:
                try:
                    pipe.watch(self.key)
                    held, raw, now = pipe.execute_command("EVAL", _READ_AT, 1, self.key)
                    team = parsed(raw if int(held) else None)
                    taught = None if team is None else team.learned(lesson, time_ms(now))
                    if taught is not None and taught is team:  # taught already: a lesson
                        pipe.unwatch()  # sent again (its answer lost), or nothing to teach
                        self._keep(taught)
                        return taught
                    pipe.multi()
                    if taught is not None:
                        pipe.set(self.key, taught.model_dump_json())
                    if told is not None:
                        row = told(taught)
                        fields: dict[Any, Any] = dict(row.fields)
                        pipe.xadd(row.stream, fields, maxlen=row.keep, approximate=True)
                    pipe.execute()
                    self._keep(taught)
                    return taught
                except WatchError as error:
                    if (cut := watch_broken(error)) is not None:
                        raise cut from error  # Redis went away, not a conflict

    def teach(self, cmd: Teach, session_id: str, trace: TraceEvents) -> TeamWeights | None:
        """The table after the lesson ``cmd`` gives (None: what Redis holds is none, and
        nothing was written), told on ``trace`` in the same transaction (a click's lesson is
        the last thing its send does: no save follows to take the row along)."""
        was = f"not {cmd.read_as.value}" if cmd.was is None else cmd.was.value
        said: dict[str, Any] = {"was": was, "read_as": cmd.read_as.value}

        def told(taught: TeamWeights | None) -> StreamAppend:
            what = {"lessons": taught.lessons} if taught else {"skipped": "unreadable"}
            return trace.row(cmd.correlation_id, session_id, "perception.taught", said | what)

        return self.learn(Lesson(cmd.marks, cmd.was, cmd.read_as, cmd.correlation_id), told)

    def reset(self) -> tuple[bool, TeamWeights | None]:
        """Clear the table: whether Redis held anything here, and the table it was (None:
        what it held was no table)."""
        with self.redis.pipeline(transaction=True) as pipe:
            self.read(pipe)
            pipe.delete(self.key)
            raw, _ = pipe.execute()
        self._keep(TeamWeights())
        return raw is not None, parsed(raw)


def _now(team: TeamWeights | None) -> TeamWeights | None:
    """``team`` decayed by this process's clock (a fortnight's half-life forgives a
    server's)."""
    return None if team is None else team.at(int(time.time() * 1000))
