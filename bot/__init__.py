"""The platform adapters (``bot.slack``, ``bot.discord``, the console), the ``deliberate``
command line (``bot.cli``) and the composition root (``bot.app``), with the infrastructure
only they use: the Redis connection, JSON log lines, delivery claims. It translates events in
and views out; it decides nothing."""

__all__: list[str] = []
