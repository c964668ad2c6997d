"""What the command line and the console put on a person's screen: text no one's words can
steer the terminal with (``controls``: escape sequences, control characters and bidi
overrides taken out, or shown as escapes where they are people's words; line breaks kept out
of a line; JSON that reaches the terminal whole)
and the standard streams that clean every write (``streams``). It imports nothing but the
standard library: ``deliberate`` puts the streams in place before anything else loads."""

from bot.screen.controls import clean, json_safe, one_line, visible
from bot.screen.streams import CleanStream, cleaned, colour_stream, underlying

__all__ = [
    "CleanStream",
    "clean",
    "cleaned",
    "colour_stream",
    "json_safe",
    "one_line",
    "underlying",
    "visible",
]
