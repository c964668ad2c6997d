"""The ``deliberate`` commands that read and change state, run the bot and the worker, and talk
in the terminal: each a thin entry point over the rooms beneath (``bot.reports``,
``bot.chat``, ``bot.proposals``, ``bot.redis``). ``bot.main`` dispatches to them; exit codes:
0 ok, 1 rejected/conflict/not found, 2 usage or configuration error."""
