"""What one ``Runtime.send`` holds between the messages it updates: the session as it last
left it and as Redis last had it, the messages waiting for a save, the rows that save
writes, and a save on its way, not heard of yet (``runner.py`` says how a send saves)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.deliberation.messages import Msg
from core.deliberation.session import Session
from core.gateway.reverts import Planned
from core.perception.team import TeamWeights
from core.redis.client import INTERRUPTED
from core.runtime.events import Event
from core.runtime.on_save import CommitOnSave
from core.runtime.sessions import Saving, Stored
from core.runtime.stream_appends import StreamAppend
from core.state.scripts import Sent

__all__ = ["Held", "Pending"]

Patiently = Callable[[Callable[[], Stored]], Stored]  # a call made again while cut off


@dataclass
class Pending:
    """A save sent whose answer the send has not read yet (it goes on meanwhile: see
    ``runner.py``): ``saving``; ``msg``, the message it saves and ``waiting``, those that
    waited for it; ``events``, how many events the send had when it was sent (those after
    came of it)."""

    saving: Saving
    msg: Msg
    waiting: list[Msg]
    events: int


@dataclass
class Held:
    """What a send holds between its messages.

    ``session``: the session as its last update left it (None: not yet read); ``saved``:
    as Redis held it when last read or saved (what the next save's version check is made
    against); ``waiting``: the messages updated since but not saved, each come of the one
    before it (by a reading or an answer made in this process: they wait for the save of
    the message the last comes back as; updated again, the first makes the others again);
    ``rows``: the trace rows appended meanwhile (the audits of model calls:
    ``TraceEvents.held``); ``always``: the rows the next save writes whatever it finds
    (each message's trace row, those audits); ``along``: those it writes only with the
    session (transcript lines, beat evaluations); ``traced``:
    the messages whose trace row is taken (one updated again is not traced twice);
    ``rewound``: the messages to update again, on what a save found (from then on, none
    waits: each is saved before it is read, so a send is rewound once at most); by mutation
    id what the Undo its last save asked for must know (sent with the save); ``pending``: a
    save sent, its answer not read yet; ``cut``: after a pending save found that someone saved
    first, how many of the send's events stand (the others came of what was not saved);
    ``commits``: each commit the send sent, as (what, mutation id) (one whose answer was cut
    off is unconfirmed); ``on_save``: by mutation id, a click's commit made on its save, what
    it came to heard with the save (``on_save.py``)."""

    session: Session | None = None
    saved: Session | None = None
    waiting: list[Msg] = field(default_factory=list)
    rows: list[StreamAppend] = field(default_factory=list)
    always: list[StreamAppend] = field(default_factory=list)
    along: list[StreamAppend] = field(default_factory=list)
    traced: dict[int, Msg] = field(default_factory=dict)  # (kept: an id is never reused)
    rewound: list[Msg] = field(default_factory=list)
    may_wait: bool = True
    looked_up: dict[str, Any] = field(default_factory=dict)
    early: dict[str, Sent] = field(default_factory=dict)  # an Undo's lookup, sent as it came
    known: dict[str, Planned] = field(default_factory=dict)  # or its revert, as it came
    team: TeamWeights | None = None  # the workspace's own weights, read with the session
    pending: Pending | None = None
    cut: int | None = None
    commits: list[tuple[str, str]] = field(default_factory=list)  # (what, mutation id) sent
    on_save: dict[str, CommitOnSave] = field(default_factory=dict)  # made on a save: heard

    def sent(self, msg: Msg, shown: int, saving: Saving) -> bool:
        """The save of ``msg`` sent, what it came to read later (``pending``); ``shown``: the
        send's events so far. It is kept as pending before it goes: a send stopped as it
        goes hears it all the same (made again, with its token). False: it could not be
        sent (a connection cut off: the caller makes it at once instead)."""
        kept = (self.always, self.along, self.session, self.saved)
        self.pending = Pending(saving, msg, self.waiting, shown)
        self.always, self.along, self.waiting = [], [], []
        self.session = self.saved = saving.session
        try:
            saving.send()
        except INTERRUPTED:
            self.always, self.along, self.session, self.saved = kept
            self.waiting, self.pending = self.pending.waiting, None
            return False
        return True

    def settled(self, patiently: Patiently) -> bool:
        """Whether the save not heard of yet (if any) was made (an answer cut off: the save
        made again, ``patiently``, with its token; an error: still pending). False: someone
        saved first; what it saved is to be updated again (``rewound``), on what they saved,
        and what came of it dropped (the events from ``cut`` on)."""
        pending = self.pending
        if pending is None:
            return True
        try:
            stored = pending.saving.stored()
        except INTERRUPTED:
            stored = patiently(pending.saving.again)
        self.pending = None
        self.session = self.saved = stored.session
        if stored.saved:
            return True
        self.rewound = pending.waiting[:1] or [pending.msg]  # (the rest come of the first)
        self.waiting, self.along, self.may_wait = [], [], False
        self.cut = pending.events
        return False

    def rewind(self, events: list[Event], queue: deque[Msg]) -> None:
        """Put the messages to update again (``rewound``) at the front of ``queue``; after a
        save heard of late found the session moved, drop what came of what it saved first
        (``events`` from ``cut`` on, and the queue: all of it came of that)."""
        if self.cut is not None:
            del events[self.cut :]
            queue.clear()
            self.cut = None
        queue.extendleft(reversed(self.rewound))
        self.rewound = []
