"""One Discord button, one spelling: a custom id is read back only when it is exactly the
one ``ButtonRef.custom_id`` makes (no leading zeros, no sign, no other digits)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.discord.buttons import TEMPLATE, ButtonRef

CUSTOM_ID = "dlb:ConfirmCurrent:1300000000000000010:c0b2057fb0607:3"


def read(text: str) -> ButtonRef:
    """What discord.py hands our DynamicItem: the template's match, then ``ButtonRef.of``."""
    match = TEMPLATE.fullmatch(text)
    if match is None:
        raise ValueError("not ours")
    return ButtonRef.of(match)


ids = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters=":"))
refs = st.builds(
    lambda action, channel, target, version, ask: ButtonRef(
        action=action,
        session=read(f"dlb:X:{channel}:t:0").session,
        target_id=target,
        version=version,
        ask=ask,
    ),
    action=st.from_regex(r"[A-Z][A-Za-z0-9]{0,20}", fullmatch=True),
    channel=st.integers(min_value=1, max_value=2**64 - 1),
    target=ids.filter(lambda t: 1 <= len(t) <= 32),
    version=st.integers(min_value=0, max_value=10**9),
    ask=st.booleans(),
)


@given(refs)
def test_a_custom_id_reads_back_as_what_it_was_made_from(ref: ButtonRef) -> None:
    assert read(ref.custom_id()) == ref


@given(
    refs,
    st.sampled_from(["channel", "version"]),
    st.sampled_from(["0", "00", "+", " ", "\u0661", "-"]),
)
def test_a_number_spelled_otherwise_is_refused(ref: ButtonRef, field: str, prefix: str) -> None:
    text = ref.custom_id()
    parts = text.split(":")
    where = 2 if field == "channel" else 4
    parts[where] = prefix + parts[where]
    try:
        parsed = read(":".join(parts))
    except ValueError:
        return
    assert parsed.custom_id() == ":".join(parts)  # never reached: no prefix is canonical


@given(st.integers(0, len(CUSTOM_ID)), st.integers(0, 3), st.text("0+ \u0661:-ask", max_size=3))
def test_an_id_edited_near_a_real_one_is_refused_unless_it_is_a_real_one(
    at: int, cut: int, inserted: str
) -> None:
    text = CUSTOM_ID[:at] + inserted + CUSTOM_ID[at + cut :]
    try:
        ref = read(text)
    except ValueError:
        return
    assert ref.custom_id() == text


@pytest.mark.parametrize(
    "text",
    [
        "dlb:ConfirmCurrent:01300000000000000010:c0b2057fb0607:3",
        "dlb:ConfirmCurrent:1300000000000000010:c0b2057fb0607:03",
        "dlb:ConfirmCurrent:1300000000000000010:c0b2057fb0607:007",
        "dlb:ConfirmCurrent:1300000000000000010:c0b2057fb0607:00",
        "dlb:ConfirmCurrent:00:c0b2057fb0607:3",
    ],
)
def test_leading_zeros_are_refused(text: str) -> None:
    assert read(CUSTOM_ID).version == 3
    with pytest.raises(ValueError):
        read(text)


def test_the_template_takes_ascii_digits_only() -> None:
    assert TEMPLATE.fullmatch(CUSTOM_ID.replace(":3", ":\u0663")) is None
    assert re.fullmatch(r"[0-9]+", "\u0663") is None
