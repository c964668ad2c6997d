"""The console adapter: the loop in a terminal. It turns lines into messages (``lines``) and
events into text or JSON lines (``rendering``); it decides nothing. Buttons keep their
numbers with the session (``numbers``); ``terminal`` is the line editor a person types in."""

from bot.console.lines import HELP, Console
from bot.console.numbers import ButtonNumbers
from bot.console.rendering import COLOURS, PLAIN, Out, Palette, event_json, render_view

__all__ = [
    "COLOURS",
    "HELP",
    "PLAIN",
    "ButtonNumbers",
    "Console",
    "Out",
    "Palette",
    "event_json",
    "render_view",
]
