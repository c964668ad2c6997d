"""Running the loop: the runtime loads a session, calls the pure update, saves it with a
version check (``sessions`` and its CAS script), runs the commands (classify, generate, commit)
and feeds their results back. It keeps the write-only transcripts, the trace of every message
and the history of beat evaluations (their rows, ``StreamAppend``, written with the session's
save), and words each outcome for people."""

from core.runtime.beat_history import BeatHistory
from core.runtime.outcome_notes import discard_note, note_for
from core.runtime.runner import Event, OutcomeEvent, Runtime
from core.runtime.sessions import DEFAULT_SESSION_TTL_SEC, SessionStore, Stored
from core.runtime.stream_appends import StreamAppend
from core.runtime.trace_events import TraceEvents
from core.runtime.transcripts import Transcripts

__all__ = [
    "DEFAULT_SESSION_TTL_SEC",
    "BeatHistory",
    "Event",
    "OutcomeEvent",
    "Runtime",
    "SessionStore",
    "Stored",
    "StreamAppend",
    "TraceEvents",
    "Transcripts",
    "discard_note",
    "note_for",
]
