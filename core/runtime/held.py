"""What one ``Runtime.send`` holds between the messages it updates: the session as it last
left it and as Redis last had it, the messages waiting for a save, and the rows that save
writes (``runner.py`` says how a send saves)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.deliberation.messages import Msg
from core.deliberation.session import Session
from core.perception.team import TeamWeights
from core.runtime.stream_appends import StreamAppend

__all__ = ["Held"]


@dataclass
class Held:
    """What a send holds between its messages.

    ``session``: the session as its last update left it (None: not yet read); ``saved``:
    as Redis held it when last read or saved (what the next save's version check is made
    against); ``waiting``: the messages updated since but not saved (each waits for the
    save of the message its reading comes back as); ``rows``: the trace rows appended
    meanwhile (the audits of model calls: ``TraceEvents.held``); ``always``: the rows the
    next save writes whatever it finds (each message's trace row, those audits); ``along``:
    those it writes only with the session (transcript lines, beat evaluations); ``traced``:
    the messages whose trace row is taken (one updated again is not traced twice);
    ``rewound``: the messages to update again, on what a save found (from then on, none
    waits: each is saved before it is read, so a send is rewound once at most); by mutation
    id what the Undo its last save asked for must know (sent with the save)."""

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
    team: TeamWeights | None = None  # the workspace's own weights, read with the session
