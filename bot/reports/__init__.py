"""What the command line, the web and the chat show alike: the lines of entries, outcomes,
log records and rule steps (``render``), how a key came to hold its value (``explain``), and
one turn, click or proposal end to end (``trace``)."""
