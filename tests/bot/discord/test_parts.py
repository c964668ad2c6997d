"""The adapter's parts offline: custom_ids and their limits, the DynamicItem's parsing of a
real interaction, views as messages, and roles from members built by discord.py itself."""

from __future__ import annotations

from typing import Any

import discord
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.discord.buttons import MAX_CUSTOM_ID, TEMPLATE, ButtonRef, DeliberateButton, custom_id
from bot.discord.render import MAX_CONTENT, closed_content, disabled_buttons, render
from bot.discord.roles import actor_of, membership_of
from bot.discord.turns import Listening, channel_of, session_id
from core.config.roles import Membership, RoleBinding, roles_for
from core.config.tenants import Tenant
from core.deliberation.beats import ActionStyle
from core.deliberation.view import Button, View, ViewKind
from core.state.actor import ActorKind
from core.state.mutation import new_id
from tests.bot.discord import payloads
from tests.bot.discord.payloads import ALICE, CHANNEL, CREW, MIA, RIA, SAM
from tests.bot.discord.rig import DiscordBot

SESSION = session_id(int(CHANNEL))
BINDINGS = {
    "moderator": RoleBinding(
        groups=["discord:Moderators", f"discord:{CREW}", "discord:permission:manage_guild"]
    )
}
SERVER = Tenant("discord", payloads.GUILD, "ws", BINDINGS, configured=True)


def button(action: str = "ConfirmCurrent", target: str = "c0b2057fb0607", **more: Any) -> Button:
    fields = {"label": action, "style": ActionStyle.DEFAULT, "beat": "B", "target_version": 3}
    return Button(action=action, target_id=target, **(fields | more))


def view(buttons: list[Button], text: str = "How about postgres?") -> View:
    return View(
        session_id=SESSION, correlation_id="c1", kind=ViewKind.REPLY, text=text, buttons=buttons
    )


# --- custom_ids ----------------------------------------------------------------------------

ids = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters=":"))


@given(
    action=st.from_regex(r"[A-Z][A-Za-z0-9]{0,39}", fullmatch=True),
    channel=st.integers(min_value=1, max_value=2**64 - 1),
    target=ids.filter(lambda t: 1 <= len(t) <= 32),
    version=st.integers(min_value=0, max_value=10**9),
    ask=st.booleans(),
)
def test_a_custom_id_reads_back_as_what_it_carries(
    action: str, channel: int, target: str, version: int, ask: bool
) -> None:
    ref = ButtonRef(
        action=action, session=session_id(channel), target_id=target, version=version, ask=ask
    )
    try:
        text = ref.custom_id()
    except ValueError:  # too long: refused, never cut
        assert len(f"dlb:{action}:{channel}:{target}:{version}") + 4 * ask > MAX_CUSTOM_ID
        return
    assert len(text) <= MAX_CUSTOM_ID
    match = TEMPLATE.fullmatch(text)
    assert match is not None and ButtonRef.of(match) == ref
    assert channel_of(ref.session) == channel


def test_the_longest_real_ids_fit() -> None:
    """The largest snowflake with the longest action name on a candidate (``c`` and 12 hex
    digits), and a proposal's buttons on its mutation id (32 hex digits)."""
    channel = session_id(2**64 - 1)
    on_candidate = button("A" * 40, target="c" + "f" * 12, target_version=10**9)
    on_proposal = button("DiscardProposal", target=new_id(), target_version=0)
    assert len(custom_id(channel, on_candidate, ask=True)) <= MAX_CUSTOM_ID
    assert len(custom_id(channel, on_proposal, ask=True)) <= MAX_CUSTOM_ID


def test_ids_that_do_not_fit_are_refused() -> None:
    with pytest.raises(ValueError, match="100"):
        custom_id(SESSION, button(target="x" * 60, action="A" * 40))
    with pytest.raises(ValueError):
        custom_id(SESSION, button(target="a:b"))  # ":" separates the fields


@pytest.mark.parametrize(
    "text",
    [
        "dlb:confirmCurrent:1300000000000000010:c1:1",  # not an action name
        "dlb:ConfirmCurrent:1300000000000000010:c1:-1",
        "dlb:ConfirmCurrent:13000000000000000100000:c1:1",  # longer than a snowflake
        "dlb:ConfirmCurrent:1300000000000000010:c1",
    ],
)
def test_malformed_custom_ids_are_not_ours(text: str) -> None:
    match = TEMPLATE.fullmatch(text)
    if match is not None:
        with pytest.raises(ValueError):
            ButtonRef.of(match)


def test_the_dynamic_item_parses_a_real_interaction(bot: DiscordBot) -> None:
    """discord.py's own Interaction from the documented payload, and the item it makes."""
    cid = custom_id(SESSION, button())
    message = bot.api.new_message(
        CHANNEL, {"content": "x", "components": [payloads.action_row(cid)]}
    )
    data = payloads.component(message, cid, ALICE)
    interaction = discord.Interaction(data=data, state=bot.client._connection)
    item = discord.ui.Button[discord.ui.View](label="Use this", custom_id=cid)
    match = TEMPLATE.fullmatch(interaction.data["custom_id"])  # type: ignore[index]
    assert match is not None
    made = bot.run(DeliberateButton.from_custom_id(interaction, item, match))
    assert made.ref == ButtonRef(
        action="ConfirmCurrent", session=SESSION, target_id="c0b2057fb0607", version=3
    )
    assert interaction.channel_id == made.ref.channel_id


# --- views as messages ---------------------------------------------------------------------


def test_buttons_go_five_to_a_row_one_per_identity() -> None:
    many = [button(f"Act{n}") for n in range(7)] + [button("Act0")]
    [message] = render(view(many))
    assert message.buttons is not None
    rows = message.buttons.to_components()
    assert [len(row["components"]) for row in rows] == [5, 2]
    assert [b["custom_id"].split(":")[1] for r in rows for b in r["components"]] == [
        f"Act{n}" for n in range(7)
    ]


def test_a_button_that_asks_first_is_marked_and_red() -> None:
    [message] = render(view([button("EndStream", confirm=True), button("Shout")]))
    assert message.buttons is not None
    [ask, plain] = message.buttons.to_components()[0]["components"]
    assert ask["custom_id"].endswith(":ask") and ask["style"] == discord.ButtonStyle.danger.value
    assert not plain["custom_id"].endswith(":ask")


def test_a_long_reply_is_split_and_the_buttons_come_last() -> None:
    text = "\n".join(f"line {n} " + "x" * 90 for n in range(60))
    messages = render(view([button()], text=text))
    assert len(messages) > 1 and all(len(m.content) <= MAX_CONTENT for m in messages)
    assert [m.buttons is not None for m in messages] == [False] * (len(messages) - 1) + [True]
    shown = "\n".join(m.content for m in messages).splitlines()
    assert shown == [*text.splitlines(), "-# mode: idle · beat: none"]  # nothing lost


def test_the_view_shows_the_candidate_nudge_mode_and_beats() -> None:
    shown = View(
        session_id=SESSION,
        correlation_id="c1",
        kind=ViewKind.REPLY,
        text="Sounds good.",
        buttons=[button()],
        nudge='Lock in "postgres"?',
        fired=["ReadyToCommit"],
        candidate={"id": "c1", "text": "postgres 16", "version": 1},  # type: ignore[arg-type]
    )
    [message] = render(shown)
    assert message.content.splitlines() == [
        "Sounds good.",
        "> postgres 16",
        '*Lock in "postgres"?*',
        "-# mode: idle · beat: ReadyToCommit",
    ]


def test_closing_replaces_earlier_lines_and_stays_within_the_limit() -> None:
    once = closed_content("Candidate: x", ["✅ one"])
    twice = closed_content(once, ["✅ one", "↪ two"])
    assert twice.count("✅ one") == 1 and twice.startswith("Candidate: x") and "↪ two" in twice
    assert len(closed_content("y" * 2000, ["✅ done"])) <= MAX_CONTENT


def test_disabled_buttons_keep_rows_labels_and_ids(bot: DiscordBot) -> None:
    cids = [custom_id(SESSION, button(f"Act{n}")) for n in range(3)]
    data = bot.api.new_message(
        CHANNEL, {"content": "x", "components": [payloads.action_row(*cids)]}
    )
    data["components"][0]["components"].append(
        {"type": 2, "style": 5, "label": "docs", "url": "https://example.com"}
    )
    channel = bot.client.get_channel(int(CHANNEL))
    message = discord.Message(state=bot.client._connection, channel=channel, data=data)  # type: ignore[arg-type]
    greyed = disabled_buttons(message)
    assert greyed is not None
    [row] = greyed.to_components()
    assert [b["custom_id"] for b in row["components"]] == cids  # a link is not ours
    assert all(b["disabled"] for b in row["components"])


# --- who is who ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "kind"),
    [
        (ALICE, ActorKind.USER),
        (SAM, ActorKind.MODERATOR),  # the Moderators role, by name
        (RIA, ActorKind.MODERATOR),  # Stage crew, by id
        (MIA, ActorKind.MODERATOR),  # manage_guild, through the Managers role
    ],
)
def test_moderators_by_role_name_role_id_or_permission(
    bot: DiscordBot, who: str, kind: ActorKind
) -> None:
    data = payloads.component(bot.api.new_message(CHANNEL, {"content": "x"}), "dlb:x", who)
    interaction = discord.Interaction(data=data, state=bot.client._connection)
    actor = actor_of(SERVER, interaction.user, interaction.permissions)
    assert (actor.kind, actor.id, actor.platform) == (kind, who, "discord")


def test_membership_names_roles_by_id_and_name_and_permissions(bot: DiscordBot) -> None:
    data = payloads.component(bot.api.new_message(CHANNEL, {"content": "x"}), "dlb:x", MIA)
    interaction = discord.Interaction(data=data, state=bot.client._connection)
    who = membership_of(interaction.user, interaction.permissions)
    assert who.group_ids == {payloads.MANAGERS}  # @everyone is nobody's group
    assert {"Managers", "permission:manage_guild"} <= who.group_names


def test_a_role_named_like_a_bound_role_id_is_not_that_role() -> None:
    """Role names live beside ids in the payload: a role *called* CREW's id is no crew."""
    impostor = Membership("discord", ALICE, frozenset({"1300000000000000099"}), frozenset({CREW}))
    assert roles_for(BINDINGS, impostor) == ()
    crew = Membership("discord", RIA, frozenset({CREW}), frozenset({"Stage crew"}))
    assert roles_for(BINDINGS, crew) == ("moderator",)


def test_listening_names_ids_and_modes() -> None:
    listening = Listening.of(["#Deliberation", " 42 ", ""], "ALL")
    assert listening.channels == {"deliberation", "42"} and listening.mode == "all"
    with pytest.raises(ValueError, match="mentions"):
        Listening.of([], "sometimes")
