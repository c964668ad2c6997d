"""One Slack button, one spelling: ``parse_button`` takes exactly what ``action_id`` and
``button_value`` make (compact JSON, its keys in order, plain decimal numbers, a position on
every action id) and refuses every other way of writing the same button."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.slack.buttons import ButtonRef, action_id, button_value, parse_button
from core.deliberation.beats import ActionStyle
from core.deliberation.view import Button

SESSION = "slack:C0TEAM:1700000000.000100"
ACTION = "deliberate:ConfirmCurrent:1"
VALUE = '{"s":"slack:C0TEAM:1700000000.000100","t":"c0a1b2c3d4e5f","v":7}'


def made(ref: ButtonRef) -> tuple[str, str]:
    """The action id and value the bot sends for the button ``ref`` reads back as."""
    button = Button(
        action=ref.action,
        label="x",
        style=ActionStyle.PRIMARY,
        beat="CandidateReady",
        target_id=ref.target_id,
        target_version=ref.version,
    )
    return action_id(button, ref.position), button_value(ref.session, button)


refs = st.builds(
    ButtonRef,
    action=st.from_regex(r"[A-Z][A-Za-z0-9]{0,39}", fullmatch=True),
    s=st.from_regex(r"slack:[A-Z0-9]{1,40}:[0-9]{1,20}\.[0-9]{1,10}", fullmatch=True),
    t=st.from_regex(r"[\x21-\x7e]{1,100}", fullmatch=True),
    v=st.integers(min_value=0, max_value=2**53),
    position=st.integers(min_value=0, max_value=999),
)


@given(refs)
def test_a_button_reads_back_as_what_it_was_made_from(ref: ButtonRef) -> None:
    assert parse_button(*made(ref)) == ref


SPELLINGS = ["007", "+7", "7.0", "7e0", "true", " 7", "7 ", "\u0667", '"7"', "-0", "0x7", "07"]


@given(refs, st.sampled_from([*SPELLINGS, "", "0"]), st.sampled_from([*SPELLINGS, "", "0"]))
def test_every_accepted_spelling_is_the_one_the_bot_makes(
    ref: ButtonRef, version: str, position: str
) -> None:
    """The version and the position written otherwise: refused, or (only when written as
    the bot writes them) read back as a button that is spelled exactly so again."""
    action_text, value = made(ref)
    data = json.loads(value)
    spelled_value = value.replace(f'"v":{data["v"]}}}', f'"v":{version or data["v"]}}}')
    spelled_action = f"{action_text.rsplit(':', 1)[0]}:{position}" if position else action_text
    try:
        parsed = parse_button(spelled_action, spelled_value)
    except ValueError:
        return
    assert made(parsed) == (spelled_action, spelled_value)


@given(st.integers(0, len(VALUE)), st.integers(0, 4), st.text(' \t0+.\u0667eE-\\/"u', max_size=4))
def test_a_value_edited_near_a_real_one_is_refused_unless_it_is_a_real_one(
    at: int, cut: int, inserted: str
) -> None:
    value = VALUE[:at] + inserted + VALUE[at + cut :]
    try:
        ref = parse_button(ACTION, value)
    except ValueError:
        return
    assert made(ref) == (ACTION, value)


@pytest.mark.parametrize(
    "value",
    [
        '{"s":"slack:C0TEAM:1700000000.000100","t":"c1","v":007}',  # not even JSON
        '{"s":"slack:C0TEAM:1700000000.000100","t":"c1","v":"7"}',
        '{"s":"slack:C0TEAM:1700000000.000100","t":"c1","v":true}',
        '{"s":"slack:C0TEAM:1700000000.000100","t":"c1","v":7.0}',
        '{"s":"slack:C0TEAM:1700000000.000100","t":"c1","v":"+7"}',
        '{"s":"slack:C0TEAM:1700000000.000100","t":"c1","v":"\u0667"}',
        '{"s": "slack:C0TEAM:1700000000.000100", "t": "c1", "v": 7}',
        '{"t":"c1","s":"slack:C0TEAM:1700000000.000100","v":7}',
        '{"s":"slack:C0TEAM:1700000000.000100","t":"c1","v":7} ',
        '{"s":"slack:C0TEAM:1700000000.000100","t":"c1","v":7,"v":7}',
        '{"s":"slack:C0TEAM:1700000000.000100","t":"\\u0063\\u0031","v":7}',
    ],
)
def test_another_spelling_of_a_real_value_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match="not valid"):
        parse_button(ACTION, value)


@pytest.mark.parametrize(
    "action",
    [
        "deliberate:ConfirmCurrent",
        "deliberate:ConfirmCurrent:01",
        "deliberate:ConfirmCurrent:+1",
        "deliberate:ConfirmCurrent:\u0661",
        "deliberate:ConfirmCurrent: 1",
        "deliberate:ConfirmCurrent:1\n",
    ],
)
def test_another_spelling_of_an_action_id_is_refused(action: str) -> None:
    value = '{"s":"slack:C0TEAM:1700000000.000100","t":"c1","v":7}'
    assert parse_button(ACTION, value).version == 7
    with pytest.raises(ValueError):
        parse_button(action, value)
