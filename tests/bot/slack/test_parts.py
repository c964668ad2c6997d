"""The Slack adapter's parts on their own: Block Kit rendering, what a button carries, which
messages are turns, who is a moderator, and the settings it starts with."""

from __future__ import annotations

import json
import logging
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.slack.buttons import button_value, parse_button
from bot.slack.origin import user_of
from bot.slack.render import _sections, closed_blocks, escape, mention, view_blocks
from bot.slack.roles import SlackPeople
from bot.slack.settings import SlackSettings
from bot.slack.turns import SESSION as SESSION_ID
from bot.slack.turns import read_said
from core.config.roles import RoleBinding
from core.deliberation.beats import ActionStyle
from core.deliberation.memory import Candidate
from core.deliberation.view import Button, View, ViewKind
from core.state.actor import ActorKind
from tests.servers.slack_api import SlackServer, slack_error

SESSION = "slack:C0TEAM:1700000000.000100"


def a_button(action: str = "ConfirmCurrent", **fields: object) -> Button:
    data: dict[str, object] = {
        "action": action,
        "label": "Use this",
        "style": ActionStyle.PRIMARY,
        "beat": "CandidateReady",
        "target_id": "c0a1b2c3d4e5f",
        "target_version": 2,
    }
    return Button.model_validate(data | fields)


def a_view(text: str = "Here it is.", **fields: object) -> View:
    data: dict[str, object] = {
        "session_id": SESSION,
        "correlation_id": "corr-1",
        "kind": ViewKind.REPLY,
        "text": text,
    }
    return View.model_validate(data | fields)


def texts(blocks: list[dict[str, object]]) -> str:
    return json.dumps(blocks)


def test_text_from_people_and_the_model_cannot_ping_or_link() -> None:
    blocks = view_blocks(a_view("<!channel> look & see <https://evil.example|your bank>"))
    shown = blocks[0]["text"]["text"]  # type: ignore[index]
    assert shown == "&lt;!channel&gt; look &amp; see &lt;https://evil.example|your bank&gt;"
    assert "<!channel>" not in texts(blocks)


def test_a_long_reply_is_split_into_sections_slack_accepts_never_inside_an_entity() -> None:
    text = "a" * 2998 + "&" + "b" * 4000
    sections = [b["text"]["text"] for b in view_blocks(a_view(text)) if b["type"] == "section"]
    assert [len(s) for s in sections] == [2998, 3000, 1005]  # "&amp;" went whole to the next
    assert "".join(sections) == text.replace("&", "&amp;")


def _sections_char_by_char(raw: str, limit: int) -> list[str]:
    """What a section cut was when each character was escaped on its own: the reference."""
    chunks, chunk = [], ""
    for char in raw or " ":
        piece = escape(char)
        if len(chunk) + len(piece) > limit:
            chunks.append(chunk)
            chunk = ""
        chunk += piece
    return [*chunks, chunk]


@given(st.text(alphabet="ab&<> é", max_size=80), st.integers(min_value=5, max_value=12))
def test_sections_are_cut_as_a_character_at_a_time_would_cut_them(raw: str, limit: int) -> None:
    sections = [b["text"]["text"] for b in _sections(raw, limit)]
    assert sections == _sections_char_by_char(raw, limit)
    assert all(len(s) <= limit for s in sections) and "".join(sections) == escape(raw or " ")


def test_the_mode_shows_even_when_no_beat_fired() -> None:
    [_, context] = view_blocks(a_view())
    assert context["elements"][0]["text"] == "mode: *idle* · beat: none"  # type: ignore[index]


def test_buttons_carry_identification_style_and_a_confirm_only_where_asked() -> None:
    candidate = Candidate(id="c0a1b2c3d4e5f", text="Postgres", version=2)
    buttons = [
        a_button(),
        a_button("AlternativeCurrent", label="Try another", style=ActionStyle.DEFAULT),
        a_button("SwitchScene", label="Switch", style=ActionStyle.DANGER, confirm=True),
        a_button(),  # the same action twice still gets action ids of its own
    ]
    view = a_view(buttons=buttons, candidate=candidate, fired=["CandidateReady"], nudge="Lock it?")
    blocks = view_blocks(view)
    assert [b["type"] for b in blocks] == ["section", "section", "context", "context", "actions"]
    assert blocks[1]["text"]["text"] == "> Postgres"  # type: ignore[index]
    elements = blocks[-1]["elements"]
    assert isinstance(elements, list)
    assert len({e["action_id"] for e in elements}) == 4
    assert [e.get("style") for e in elements] == ["primary", None, "danger", "primary"]
    assert ["confirm" in e for e in elements] == [False, False, True, False]
    ref = parse_button(elements[0]["action_id"], elements[0]["value"])
    assert (ref.action, ref.session, ref.target_id, ref.version) == (
        "ConfirmCurrent",
        SESSION,
        "c0a1b2c3d4e5f",
        2,
    )


def test_a_closed_message_loses_its_buttons_and_says_what_happened() -> None:
    blocks = view_blocks(a_view(buttons=[a_button()]))
    once = closed_blocks(blocks, ["↪ <@U0BOB> chose *Expand*"])
    twice = closed_blocks(once, ["↪ <@U0BOB> chose *Expand*", "✅ done — by <@U0ALICE>"])
    assert "actions" not in [b["type"] for b in twice]
    lines = [b["elements"][0]["text"] for b in twice if b.get("block_id", "").startswith("del")]
    assert lines == ["↪ <@U0BOB> chose *Expand*", "✅ done — by <@U0ALICE>"]  # not three
    assert twice[: len(blocks) - 1] == blocks[:-1]


def test_mentions_are_made_only_of_slack_user_ids() -> None:
    assert mention("moderator:U0SAM") == "<@U0SAM>"
    assert mention("automation:rule<!here>") == "automation:rule&lt;!here&gt;"


@given(
    st.from_regex(r"\Aslack:C[A-Z0-9]{1,12}:[0-9]{10}\.[0-9]{6}\Z"),
    st.from_regex(r"\A[\x21-\x7e]{1,100}\Z"),
    st.integers(min_value=0, max_value=2**40),
)
def test_a_button_reads_back_as_it_was_made(session: str, target: str, version: int) -> None:
    button = a_button(target_id=target, target_version=version)
    ref = parse_button("deliberate:ConfirmCurrent:1", button_value(session, button))
    assert (ref.session, ref.target_id, ref.version) == (session, target, version)


VALID = '{"s":"slack:C0TEAM:1700000000.000100","t":"c0a1b2c3d4e5f","v":2}'


@given(st.integers(0, len(VALID)), st.integers(0, 8), st.text(max_size=8))
def test_a_tampered_value_is_refused_or_reads_as_a_whole_button(
    at: int, cut: int, inserted: str
) -> None:
    """Values that differ from a real one in a few characters: a ValueError, or a button
    whose every field is valid (nothing half-read, nothing else raised)."""
    value = VALID[:at] + inserted + VALID[at + cut :]
    try:
        ref = parse_button("deliberate:ConfirmCurrent:1", value)
    except ValueError:
        return
    assert SESSION_ID.match(ref.session) and ref.version >= 0
    assert re.fullmatch(r"[\x21-\x7e]{1,100}", ref.target_id)
    assert set(json.loads(value)) == {"s", "t", "v"}


@given(st.text(max_size=120), st.text(max_size=120))
def test_any_action_id_and_value_give_a_button_or_a_value_error(action_id: str, value: str) -> None:
    try:
        parse_button(action_id, value)
    except ValueError:
        return
    assert re.fullmatch(r"deliberate:[A-Za-z0-9]+(:\d+)?", action_id)


@pytest.mark.parametrize(
    "value",
    [
        '{"s": "slack:C1:1.2", "t": "c1", "v": -1}',
        '{"s": "slack:C1:1.2", "t": "c1", "v": 1, "admin": true}',
        '{"s": "bad session id", "t": "c1", "v": 1}',
        '{"s": "slack:C1", "t": "c1", "v": 1}',
        '{"s": "discord:C1:1.2", "t": "c1", "v": 1}',
        '{"s": "slack:C1:1.2", "t": "has space", "v": 1}',
        '["slack:C1:1.2", "c1", 1]',
    ],
)
def test_tampered_button_values_are_refused(value: str) -> None:
    with pytest.raises(ValueError, match="not valid"):
        parse_button("deliberate:ConfirmCurrent:1", value)
    with pytest.raises(ValueError, match="not one Deliberate made"):
        parse_button("someone-else:ConfirmCurrent", '{"s": "slack:C1:1.2", "t": "c", "v": 1}')


def test_a_turn_is_a_persons_words_without_the_mention() -> None:
    event = {
        "type": "app_mention",
        "user": "U0ALICE",
        "channel": "C0TEAM",
        "ts": "2.0",
        "thread_ts": "1.0",
        "text": "<@U0BOT> use a &lt;small&gt; box &amp; go",
    }
    said = read_said(event, "U0BOT")
    assert said is not None
    assert (said.text, said.session_id) == ("use a <small> box & go", "slack:C0TEAM:1.0")
    assert read_said(event | {"text": "<@U0BOT>  "}, "U0BOT") is None
    assert read_said(event | {"user": "U0BOT"}, "U0BOT") is None
    assert read_said(event | {"bot_id": "B0OTHER"}, "U0BOT") is None
    assert read_said(event | {"subtype": "message_deleted"}, "U0BOT") is None
    assert read_said(event | {"subtype": "thread_broadcast"}, "U0BOT") is not None


def test_moderators_by_user_id_and_by_user_group() -> None:
    bindings = {
        "moderator": RoleBinding(members=["slack:U0SAM"], groups=["slack:mods"]),
        "admin": RoleBinding(groups=["slack:S0ADMINS"]),
    }
    groups = [
        {"id": "S0MODS", "handle": "mods", "users": ["U0MIA"]},
        {"id": "S0ADMINS", "handle": "admins", "users": ["U0ROOT"]},
    ]
    with SlackServer(usergroups=groups) as slack:
        people = SlackPeople(bindings, SlackSettings.from_env(slack.env() | SECRET).web_client())
        assert people.actor("U0SAM").kind is ActorKind.MODERATOR
        assert people.actor("U0MIA").kind is ActorKind.MODERATOR
        root = people.actor("U0ROOT")
        assert root.kind is ActorKind.ADMIN and root.roles == ("admin",)
        alice = people.actor("U0ALICE")
        assert (alice.kind, alice.platform, alice.roles) == (ActorKind.USER, "slack", ())
        assert len(slack.requests_to("POST", "/api/usergroups.list")) == 1  # kept a while


def test_when_slack_cannot_tell_the_groups_nobody_gets_their_role(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bindings = {"moderator": RoleBinding(groups=["slack:mods"])}
    with SlackServer(usergroups=[{"id": "S1", "handle": "mods", "users": ["U0MIA"]}]) as slack:
        slack.route("POST", "/api/usergroups.list", slack_error("missing_scope"))
        people = SlackPeople(bindings, SlackSettings.from_env(slack.env() | SECRET).web_client())
        with caplog.at_level(logging.WARNING, "deliberate.slack"):
            assert people.actor("U0MIA").kind is ActorKind.USER
        assert "missing_scope" in caplog.text


SECRET = {"SLACK_SIGNING_SECRET": "s"}


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({}, "SLACK_BOT_TOKEN is not set"),
        ({"SLACK_BOT_TOKEN": "xoxb-1"}, "set SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING"),
        ({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xoxb-2"}, "app-level token (xapp-"),
    ],
)
def test_settings_name_what_is_missing(env: dict[str, str], problem: str) -> None:
    with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        SlackSettings.from_env(env)


def test_settings_pick_the_mode_and_the_api_url() -> None:
    http = SlackSettings.from_env({"SLACK_BOT_TOKEN": "xoxb-1", **SECRET})
    assert not http.socket_mode and http.api_url == "https://slack.com/api/"
    env = {
        "SLACK_BOT_TOKEN": "xoxb-1",
        "SLACK_APP_TOKEN": "xapp-1",
        "SLACK_API_URL": "http://x/api",
    }
    socket = SlackSettings.from_env(env)
    assert socket.socket_mode and socket.api_url == "http://x/api/"


@pytest.mark.parametrize(
    ("body", "user"),
    [
        ({"type": "event_callback", "event": {"type": "app_mention", "user": "U1"}}, "U1"),
        ({"type": "block_actions", "user": {"id": "U2", "team_id": "T1"}}, "U2"),
        ({"type": "view_submission", "user": {"id": "U3"}}, "U3"),
        ({"command": "/deliberate", "user_id": "U4", "team_id": "T1"}, "U4"),
        ({"type": "event_callback", "event": {"type": "message", "bot_id": "B1"}}, None),
        ({"type": "event_callback", "event": {"user": {"id": "U5"}}}, None),  # not a person's id
        # an installer's id beside the payload's person is not the person
        (
            {"type": "block_actions", "user": {"id": "U6"}, "authorizations": [{"user_id": "U9"}]},
            "U6",
        ),
    ],
)
def test_the_person_acting_is_the_one_the_payload_names(body: dict, user: str | None) -> None:
    assert user_of(body) == user


def test_a_section_limit_shorter_than_an_entity_still_ends() -> None:
    assert "".join(b["text"]["text"] for b in _sections("&&", 3)) == "&amp;&amp;"
