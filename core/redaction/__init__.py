"""Secrets struck out of text: one ``Redactor`` that every writer of text leaving a secret's
entry calls before it cuts, joins or normalises anything, the shapes a value takes in text
(``forms``), and what counts as showing nothing in a person's words (``invisible``). A leaf:
it imports nothing of the application, so that the core, the rules and the connectors can
all use it."""

from core.redaction.forms import LONG, MIN_INSIDE
from core.redaction.invisible import readable, visible
from core.redaction.redactor import SECRET, Redactor

__all__ = ["LONG", "MIN_INSIDE", "SECRET", "Redactor", "readable", "visible"]
