"""The rule engine's side: reading the mutation log as a consumer group, checking the triggers
and conditions of the rules a key matches (the book's index), ``for`` timers and signals, and
admitting runs onto the queue as their mode and cooldown allow.

Its parts are imported from their modules (``engine``: ``Engine``; ``consumer``: the group
and ``ensure_group``; ``conditions``; ``admission``; ``signals``; ``timers``), not from here:
a command that only makes sure the group exists should not load RQ with it."""
