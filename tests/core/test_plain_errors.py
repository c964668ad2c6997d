"""What went wrong in a condition or a template, in words (``core.errors.plainly``)."""

from __future__ import annotations

import pytest

from core.errors import plainly


@pytest.mark.parametrize(
    ("raised", "said"),
    [
        (KeyError("topic"), "no 'topic' to read: it is not set"),
        (ZeroDivisionError("division by zero"), "division by zero"),
        (ZeroDivisionError(), "a division by zero"),
        (OverflowError(), "a number too large"),
        (IndexError(), "an index or key that is not there"),
        (KeyError(), "an index or key that is not there"),
        (TypeError(), "a value of the wrong type"),
        (ValueError("  "), "an invalid value"),
        (TypeError("can't compare str and int"), "can't compare str and int"),
    ],
)
def test_said_without_a_class_name(raised: BaseException, said: str) -> None:
    assert plainly(raised) == said
    assert type(raised).__name__ not in plainly(raised)
