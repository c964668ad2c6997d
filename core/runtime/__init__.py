"""Running the loop: the runtime loads a session, calls the pure update, saves it with a
version check (``sessions`` and its CAS script), runs the commands (classify, generate, commit)
and feeds their results back. It keeps the write-only transcripts, the trace of every message
and the history of beat evaluations (their rows, ``StreamAppend``, written with the session's
save), and words each outcome for people.

Its parts are imported from their modules (``runner``: ``Runtime``; ``sessions``;
``transcripts``; ``trace_events``; ``beat_history``; ``stream_appends``; ``outcome_notes``),
not from here: the config reads ``sessions.DEFAULT_SESSION_TTL_SEC``, and a command that never
converses should not load the loop, the classifier and its patterns with it."""
