"""Sessions (a Slack thread, a Discord channel, a console run) in Redis: their interaction
state and working memory, with a TTL, surviving a restart of the bot. Every write compares
versions, so two turns of one session racing each other never lose an update. A save takes
the stream rows the update asked for (``StreamAppend``) and writes them with it, in the one
script (``session_cas.lua``): one round trip for the session, its transcript, the beat log
and the trace."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable, Sequence
from importlib.resources import files
from typing import TYPE_CHECKING, Any, NamedTuple

from redis.exceptions import AskError

from core.deliberation.session import Session
from core.errors import StoreError
from core.recently_used import Recent
from core.redis.client import shard_of
from core.runtime.stream_appends import StreamAppend
from core.state.keys import WorkspaceKeys, validate_session_id
from core.state.scripts import LuaScript, ScriptCall, Sent, together

if TYPE_CHECKING:
    from core.redis.client import RedisClient, RedisPipeline

__all__ = ["DEFAULT_SESSION_TTL_SEC", "Saving", "SessionStore", "Stored"]

DEFAULT_SESSION_TTL_SEC = 7 * 86400
KNOWN = 512  # sessions a process keeps as it last read or saved them (some 40 KB each)
SAVE_LUA = files("core.runtime").joinpath("session_cas.lua").read_text(encoding="utf-8")


class Stored(NamedTuple):
    """What a save came to. ``saved``: the session is ``session`` now (the change saved, or,
    unchanged, found as it was read) and the rows are written. Else someone saved first:
    ``session`` is theirs, as it is now (a fresh one when it expired meanwhile)."""

    saved: bool
    session: Session


class Kept(NamedTuple):
    """A session as a store last read or saved it: the JSON Redis holds of it, and the token
    of the save that wrote that ('' for none: no session)."""

    data: str
    session: Session
    token: str


# what each store last read or saved of a session, by the store's tag and the session's id:
# shared by the stores of a process, so that many workspaces keep no more than ``KNOWN``
_known: Recent[Kept] = Recent(KNOWN)


class SessionStore:
    """A workspace's sessions.

    For the runtime, it keeps what it last read or saved of each (a few hundred a process,
    ``KNOWN``): a send starts from that (``known``), without a read, and its save, which
    checks the version, finds out if someone saved meanwhile; a read that finds the JSON it
    keeps (``read_kept``, ``load_with``) takes the session it keeps, without validating it
    again. What those and ``store_along`` answer is shared with later calls: it is never
    changed in place (the loop does not: ``update`` returns a new session). ``load``,
    ``save`` and ``update`` share nothing: their callers may change what they get."""

    def __init__(
        self, client: RedisClient, workspace: str, ttl_sec: int = DEFAULT_SESSION_TTL_SEC
    ) -> None:
        self.redis = client
        self.keys = WorkspaceKeys(workspace)
        self.ttl_ms = ttl_sec * 1000
        self._save = LuaScript(client, SAVE_LUA)
        self._tag = os.urandom(8).hex()  # (another store, of another server maybe: its own)

    def known(self, session_id: str) -> Session | None:
        """The session as this store last read or saved it (None: it keeps none): no round
        trip, and maybe not what Redis holds now (a save's version check tells)."""
        kept = _known.get(self._tag + validate_session_id(session_id))
        return None if kept is None else kept.session

    def _read(self, held: Sequence[Any], session_id: str) -> Session:
        """The session Redis holds (``held``: its JSON, and the token of the save that wrote
        it), or a fresh one (version 0) when it holds none; the one kept when the JSON is
        what it was kept with."""
        raw, token = held
        data = str(raw) if raw else ""
        kept = _known.get(self._tag + session_id)
        if kept is not None and data and kept.data == data:
            session = kept.session
        else:
            session = _session(data, session_id)
        # (no token: a session saved without one, e.g. by an older version: its version alone)
        _known.put(
            self._tag + session_id, Kept(data, session, str(token) if data and token else "")
        )
        return session

    def token_of(self, read: Session) -> str:
        """The token of the save that wrote ``read``, as this store keeps it ('' when it
        keeps another)."""
        kept = _known.get(self._tag + read.id)
        return kept.token if kept is not None and kept.session is read else ""

    def load(self, session_id: str) -> Session:
        """The saved session, or a fresh one (version 0) when there is none or it expired."""
        raw = self.redis.hget(self.keys.session(validate_session_id(session_id)), "data")
        return _session(raw, session_id)

    def read_kept(self, session_id: str) -> Session:
        """``load``, kept as ``known`` (and shared: see the class)."""
        key = self.keys.session(validate_session_id(session_id))
        return self._read(self.redis.hmget(key, "data", "token"), session_id)

    def load_with(
        self, session_id: str, also: Callable[[RedisClient | RedisPipeline], Any]
    ) -> tuple[Session, Any]:
        """``read_kept``, and what ``also`` asks (of this workspace's keys), in one round trip: a
        pipeline to the server that holds the workspace's slot (a cluster pipeline would ask
        a server for a script's keys first); on a cluster that redirects it (the slot moved
        or migrating), each alone, through the cluster client, which follows either."""
        key = self.keys.session(validate_session_id(session_id))
        try:
            with shard_of(self.redis, key).pipeline(transaction=False) as pipe:
                pipe.hmget(key, "data", "token")
                also(pipe)
                held, value = pipe.execute()
        except AskError:  # (MovedError is one too)
            held, value = self.redis.hmget(key, "data", "token"), also(self.redis)
        return self._read(held, session_id), value

    def exists(self, session_id: str) -> bool:
        """Whether the session was saved and has not expired (a thread the bot takes part in)."""
        return bool(self.redis.exists(self.keys.session(validate_session_id(session_id))))

    def ids_starting(self, prefix: str, limit: int = 1000) -> list[str]:
        """Ids of live sessions starting with ``prefix`` (a scan: at most ``limit`` of them,
        for what a person asks for, never on a turn's path)."""
        start = self.keys.session("")
        pattern = start + re.sub(r"([*?\[\]\\])", r"\\\1", prefix) + "*"
        found = []
        for key in self.redis.scan_iter(match=pattern, count=500):
            found.append(str(key)[len(start) :])
            if len(found) >= limit:
                break
        return found

    def save(self, session: Session) -> Session | None:
        """The saved session (version + 1), or None when another save came first."""
        saved = session.model_copy(update={"version": session.version + 1})
        reply = self._call(session, saved, uuid.uuid4().hex, (), 0).run()
        return saved if int(reply[0]) else None

    def store(
        self,
        read: Session,
        changed: Session,
        token: str,
        rows: Sequence[StreamAppend] = (),
        always: int = 0,
    ) -> Stored:
        """Save ``changed`` (what an update made of ``read``) if nobody saved the session
        since ``read`` was read, and write ``rows`` with it; unchanged, only check that. The
        first ``always`` rows are written whatever the check says. ``token``: the same for
        the same save sent again (its answer lost), which then writes nothing twice."""
        return self.store_along(read, changed, token, rows, always)[0]

    def store_along(
        self,
        read: Session,
        changed: Session,
        token: str,
        rows: Sequence[StreamAppend] = (),
        always: int = 0,
        along: Sequence[ScriptCall] = (),
        then: Callable[[], Sequence[ScriptCall]] | None = None,
    ) -> tuple[Stored, list[Any]]:
        """``store``, with the scripts of ``along`` (of this workspace, and harmless to run
        twice: the save may be sent again) sent in the same round trip (on a cluster that
        redirects it, a slot migrating or moved, each alone), and those ``then`` answers
        (asked for once those are on their way: ``together``): what the save came to, and
        their replies."""
        saved = _saved(read, changed)
        call = self._call(read, saved, token, rows, always)
        reply, *replies = self.together([call, *along], then)
        return self._stored(read, saved, call, reply), replies

    def together(
        self,
        calls: Sequence[ScriptCall],
        then: Callable[[], Sequence[ScriptCall]] | None = None,
    ) -> list[Any]:
        """The replies of ``calls`` (this workspace's scripts, each harmless to make again
        or answering again as it did: a save by its token), sent in one round trip (on a
        cluster that redirects it, a slot migrating or moved, each alone); and of those
        ``then`` answers, asked for once ``calls`` are on their way and sent behind them
        (``core.state.scripts.together``): made meanwhile, they cost no wait of their own."""
        if len(calls) == 1 and then is None:
            return [calls[0].run()]
        try:
            return together(self.redis, calls, then)
        except AskError:  # (MovedError is one too)
            # a cluster's slot migrating (a key of it moved: ASK) or moved (MOVED): each
            # alone, through the cluster client, which follows either
            later = () if then is None else then()
            return [call.run() for call in [*calls, *later]]

    def prepare(
        self,
        read: Session,
        changed: Session,
        token: str,
        rows: Sequence[StreamAppend] = (),
        always: int = 0,
        read_token: str | None = None,
        made: tuple[str, str] | None = None,
    ) -> Saving:
        """``store``, made ready to send (``Saving.send``), what it came to read later
        (``Saving.stored``), while the caller goes on. ``read_token``: the token of the save
        that made ``read`` (None: as this store keeps it), for a ``read`` that a save on its
        way makes (``Saving.session`` and ``Saving.token`` of that one). ``made``: the
        idempotency record of a commit sent before it, and what the record must end with
        (``session_cas.lua``'s ARGV[7]): the save lands only if that commit was made so
        (sent in the same round trip: ``Saving.call``, its reply read by ``Saving.landed``)."""
        saved = _saved(read, changed)
        call = self._call(read, saved, token, rows, always, read_token, made)
        return Saving(self, read, saved, call)

    def saved_as(self, read: Session, changed: Session) -> Session:
        """``changed`` as its save after ``read`` writes it (its version the next)."""
        saved = _saved(read, changed)
        return read if saved is None else saved

    def _stored(self, read: Session, saved: Session | None, call: ScriptCall, reply: Any) -> Stored:
        """What the save script's ``reply`` says the save of ``saved`` (None: unchanged)
        came to; a save made on a commit that did not come (``prepare``'s ``made``: nothing
        written) as not saved, on the session as read."""
        status = int(reply[0])
        if status == 2:
            return Stored(False, read)
        if status == 1:
            if saved is None:
                return Stored(True, read)
            _known.put(self._tag + saved.id, Kept(call.args[1], saved, call.args[3]))
            return Stored(True, saved)
        return Stored(False, self._read(reply[2:4], read.id))

    def _call(
        self,
        read: Session,
        saved: Session | None,
        token: str,
        rows: Sequence[StreamAppend],
        always: int,
        read_token: str | None = None,
        made: tuple[str, str] | None = None,
    ) -> ScriptCall:
        keys = [self.keys.session(validate_session_id(read.id))]
        data = "" if saved is None else saved.model_dump_json()
        if read_token is None:
            read_token = self.token_of(read)
        guard = ""
        if made is not None:
            record, tail = made
            keys.append(record)
            guard = f"{len(keys)}\n{tail}"
        args: list[Any] = [read.version, data, self.ttl_ms, token, always, read_token, guard]
        for row in rows:
            if row.stream not in keys:
                keys.append(row.stream)
            args += row.args(keys.index(row.stream) + 1)
        return ScriptCall(self._save, keys, args)

    def update(
        self, session_id: str, change: Callable[[Session], Session], attempts: int = 50
    ) -> Session:
        """Load, change, save; on a race, start again from what the other writer saved."""
        for _ in range(attempts):
            saved = self.save(change(self.load(session_id)))
            if saved is not None:
                return saved
        raise StoreError(f"session {session_id} kept changing during {attempts} attempts")


class Saving:
    """A save made ready (``SessionStore.prepare``): sent (``send``) and what it came to read
    later (``stored``); or made and answered at once (``again``)."""

    def __init__(
        self, store: SessionStore, read: Session, saved: Session | None, call: ScriptCall
    ) -> None:
        self._store, self._read, self._saved, self._call = store, read, saved, call
        self._sent: Sent | None = None

    @property
    def session(self) -> Session:
        """The session as it is once this save is made (unless someone saved first)."""
        return self._read if self._saved is None else self._saved

    @property
    def token(self) -> str:
        """The token Redis holds with the session once this save is made."""
        return self._store.token_of(self._read) if self._saved is None else self._call.args[3]

    @property
    def call(self) -> ScriptCall:
        """The save's script call, to send with others (``SessionStore.store_along``)."""
        return self._call

    def landed(self, reply: Any) -> Stored | None:
        """What the save sent as ``call`` came to, by its ``reply``: None when it did not
        land (someone saved first, or the commit it was made on came to something else)."""
        if int(reply[0]) != 1:
            return None
        return self._store._stored(self._read, self._saved, self._call, reply)

    def send(self) -> None:
        """Sent (a connection cut off raises: then nothing is to be read)."""
        self._sent = self._call.send()

    def stored(self) -> Stored:
        """What the save sent came to (a connection cut off raises: make it ``again`` to
        hear what it did); asked again, or of a save never sent, it is made ``again``."""
        sent, self._sent = self._sent, None
        if sent is None:
            return self.again()
        return self._store._stored(self._read, self._saved, self._call, sent.reply())

    def again(self) -> Stored:
        """The same save made, and answered, at once: with its token, it answers as it did
        when it was made already."""
        return self._store._stored(self._read, self._saved, self._call, self._call.run())


def _saved(read: Session, changed: Session) -> Session | None:
    """``changed`` as the save of an update of ``read`` writes it (None: unchanged)."""
    if changed is read or changed == read:
        return None
    return changed.model_copy(update={"version": read.version + 1})


def _session(raw: Any, session_id: str) -> Session:
    """The session Redis holds as ``raw``, or a fresh one (version 0) when it holds none."""
    return Session.model_validate_json(str(raw)) if raw else Session(id=session_id)
