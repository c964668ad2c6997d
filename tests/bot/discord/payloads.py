"""Gateway payloads of the shapes Discord documents (GUILD_CREATE, MESSAGE_CREATE,
INTERACTION_CREATE for components, submitted modals and application commands), for our server
and another:

- GUILD: #deliberation (CHANNEL) with a thread (THREAD), and #general (OTHER); roles:
  Moderators (by name in the config), Stage crew (by id), Managers (manage_guild); people:
  ALICE (no role), SAM (Moderators), RIA (Stage crew), MIA (Managers);
- ELSEWHERE, someone else's server that added the bot: its own #deliberation (FAR), its own
  role named "Moderators" (FAR_MODS) held by EVE, and its owner STRANGER, who holds every
  permission there;
- DM: a direct message channel."""

from __future__ import annotations

import itertools
from typing import Any

import discord

from tests.servers import discord_shapes as shapes
from tests.servers.discord_api import BOT_ID

GUILD = "1300000000000000001"
CHANNEL, OTHER, THREAD, DM = (
    "1300000000000000010",
    "1300000000000000011",
    "1300000000000000012",
    "1300000000000000050",
)
MODERATORS, CREW, MANAGERS = "1300000000000000020", "1300000000000000021", "1300000000000000022"
ELSEWHERE, FAR, FAR_MODS = "1300000000000000101", "1300000000000000110", "1300000000000000120"
GUILD_OF = {CHANNEL: GUILD, OTHER: GUILD, THREAD: GUILD, FAR: ELSEWHERE}
ALICE, SAM, RIA, MIA, OWNER = (
    "1400000000000000001",
    "1400000000000000002",
    "1400000000000000003",
    "1400000000000000004",
    "1400000000000000009",
)
EVE, STRANGER = "1400000000000000005", "1400000000000000006"
ROLES_OF = {ALICE: [], SAM: [MODERATORS], RIA: [CREW], MIA: [MANAGERS], EVE: [FAR_MODS]}
EVERYONE_CAN = discord.Permissions(
    view_channel=True, send_messages=True, read_message_history=True, use_application_commands=True
)
ROLE_PERMISSIONS = {
    GUILD: EVERYONE_CAN,
    MODERATORS: discord.Permissions.none(),
    CREW: discord.Permissions.none(),
    MANAGERS: discord.Permissions(manage_guild=True),
    ELSEWHERE: EVERYONE_CAN,
    FAR_MODS: discord.Permissions.none(),
}
_ids = itertools.count(1_500_000_000_000_000_000)


def next_id() -> str:
    return str(next(_ids))


def user(user_id: str) -> dict[str, Any]:
    return shapes.user(user_id, f"user{user_id[-2:]}")


def permissions_of(user_id: str) -> discord.Permissions:
    """What Discord computes for a member without channel overwrites: the roles' union (a
    server's owner holds every permission)."""
    if user_id == STRANGER:
        return discord.Permissions.all()
    value = EVERYONE_CAN.value
    for role in ROLES_OF.get(user_id, []):
        value |= ROLE_PERMISSIONS[role].value
    return discord.Permissions(value)


def member(user_id: str, *, with_user: bool = True) -> dict[str, Any]:
    data = shapes.member(ROLES_OF.get(user_id, []))
    if with_user:
        data["user"] = user(user_id)
    return data


def _role(role_id: str, name: str, position: int) -> dict[str, Any]:
    return shapes.role(role_id, name, position, ROLE_PERMISSIONS[role_id].value)


def _channel(channel_id: str, name: str, position: int) -> dict[str, Any]:
    return shapes.channel(channel_id, GUILD_OF[channel_id], name, position)


def thread() -> dict[str, Any]:
    return {
        "id": THREAD,
        "type": 11,
        "guild_id": GUILD,
        "parent_id": CHANNEL,
        "owner_id": ALICE,
        "name": "which database",
        "last_message_id": None,
        "rate_limit_per_user": 0,
        "message_count": 0,
        "member_count": 1,
        "thread_metadata": {
            "archived": False,
            "auto_archive_duration": 1440,
            "archive_timestamp": "2026-11-01T00:00:00+00:00",
            "locked": False,
        },
    }


def guild_create(guild: str = GUILD) -> dict[str, Any]:
    ours = guild == GUILD
    roles = [
        _role(GUILD, "@everyone", 0),
        _role(MODERATORS, "Moderators", 1),
        _role(CREW, "Stage crew", 2),
        _role(MANAGERS, "Managers", 3),
    ]
    theirs = [_role(ELSEWHERE, "@everyone", 0), _role(FAR_MODS, "Moderators", 1)]
    channels = [_channel(CHANNEL, "deliberation", 0), _channel(OTHER, "general", 1)]
    return shapes.guild(
        guild,
        "Stream team" if ours else "Somewhere else",
        OWNER if ours else STRANGER,
        roles=roles if ours else theirs,
        channels=channels if ours else [_channel(FAR, "deliberation", 0)],
        threads=[thread()] if ours else [],
        member_count=5,
    )


def message_create(
    content: str,
    *,
    author: str = ALICE,
    channel: str = CHANNEL,
    mention_bot: bool = True,
    message_id: str | None = None,
    bot: bool = False,
) -> dict[str, Any]:
    """A person's message; with ``mention_bot`` it starts with the bot's mention."""
    direct = channel == DM
    data = shapes.message(
        message_id or next_id(),
        channel,
        user(author) | ({"bot": True} if bot else {}),
        f"<@{BOT_ID}> {content}" if mention_bot else content,
        mentions_bot=mention_bot,
    )
    if not direct:
        data |= {"guild_id": GUILD_OF[channel], "member": member(author, with_user=False)}
    return data


def interaction_base(user_id: str, channel: str, kind: int) -> dict[str, Any]:
    interaction_id = next_id()
    data: dict[str, Any] = {
        "id": interaction_id,
        "application_id": BOT_ID,
        "type": kind,
        "token": f"interaction-token-{interaction_id}",
        "version": 1,
        "channel_id": channel,
        "locale": "en-US",
        "entitlements": [],
        "attachment_size_limit": 10 * 1024 * 1024,
        "app_permissions": str(discord.Permissions.text().value),
    }
    if channel == DM:
        data |= {"channel": {"id": DM, "type": 1}, "user": user(user_id), "context": 1}
        data["authorizing_integration_owners"] = {"0": BOT_ID}
        return data
    ch = thread() if channel == THREAD else _channel(channel, "deliberation", 0)
    guild = GUILD_OF[channel]
    data |= {"guild_id": guild, "guild_locale": "en-US", "channel": ch, "context": 0}
    data["member"] = member(user_id) | {"permissions": str(permissions_of(user_id).value)}
    data["authorizing_integration_owners"] = {"0": guild}
    return data


def component(message: dict[str, Any], custom_id: str, user_id: str) -> dict[str, Any]:
    """A click on the button ``custom_id`` of ``message`` (as Discord stored it)."""
    data = interaction_base(user_id, message["channel_id"], 3)
    data["message"] = message
    data["data"] = {"custom_id": custom_id, "component_type": 2}
    return data


def modal_submit(
    message: dict[str, Any], custom_id: str, typed: dict[str, str], user_id: str
) -> dict[str, Any]:
    """A modal opened by a click on ``message`` submitted, with ``typed`` in its text inputs
    (by their custom_id), each in its Label as Discord sends them back."""
    data = interaction_base(user_id, message["channel_id"], 5)
    data["message"] = message
    labels = [
        {
            "type": 18,
            "id": 2 * n + 1,
            "component": {"type": 4, "id": 2 * n + 2, "custom_id": input_id, "value": value},
        }
        for n, (input_id, value) in enumerate(typed.items())
    ]
    data["data"] = {"custom_id": custom_id, "components": labels}
    return data


def text_inputs(modal: dict[str, Any]) -> list[dict[str, Any]]:
    """A modal's text inputs (in Labels or action rows), as it was sent."""
    found: list[dict[str, Any]] = []
    for component in modal["components"]:
        found += component["components"] if component["type"] == 1 else [component["component"]]
    return found


def command(
    subcommand: str, user_id: str, channel: str = CHANNEL, **options: str
) -> dict[str, Any]:
    """``/deliberate SUBCOMMAND option:value …``."""
    data = interaction_base(user_id, channel, 2)
    given = [{"name": name, "type": 3, "value": value} for name, value in options.items()]
    data["data"] = {
        "id": "1600000000000000001",
        "name": "deliberate",
        "type": 1,
        "options": [{"name": subcommand, "type": 1, "options": given}],
    }
    return data


def action_row(*custom_ids: str) -> dict[str, Any]:
    buttons = [{"type": 2, "style": 2, "label": "b", "custom_id": c} for c in custom_ids]
    return {"type": 1, "components": buttons}


def custom_ids(message: dict[str, Any]) -> list[str]:
    return [b["custom_id"] for row in message.get("components") or [] for b in row["components"]]


def custom_id_of(message: dict[str, Any], action: str) -> str:
    return next(c for c in custom_ids(message) if c.split(":")[1] == action)
