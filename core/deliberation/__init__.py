"""The deliberation loop, pure: no I/O, no store, no model client.

Messages in, commands out (``update/``, one module per message kind), over a session's
interaction state and working memory (``memory``); typed actions, the beat library and its
evaluator, the view an adapter renders, and every sentence the core says to people about a
click (``sentences``, used as a module).

Its parts are imported from their modules (``update.loop``: ``Loop``; ``actions``; ``beats``;
``memory``; ``messages``; ``view``; ...), not from here: the config reads the actions, beats and
loop settings, and a command that never converses should not load the rest of the loop."""
