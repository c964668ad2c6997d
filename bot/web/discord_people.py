"""Who a Discord sign-in is (OAuth2 with the scopes ``identify guilds guilds.members.read``):
the user (``GET /users/@me``), the servers they are in (``GET /users/@me/guilds``: each with
whether they own it and the permissions they hold there), and in each server the bot serves
their roles (``GET /users/@me/guilds/{id}/member``), named through the bot's token
(``GET /guilds/{id}/roles``, ``DISCORD_TOKEN``) so that a binding by role name counts as in
chat. The roles are then read as the Discord adapter reads them (``core.config.roles``,
``bot.chat.people.person``): ids anywhere, names and permissions in the server's own section, a
talk-only server's members without a bound role as guests, and their direct messages (when
served) as a private workspace with no role. Permissions are the server-wide ones (an owner
or an administrator holds all); a channel's overwrites, which chat applies, are not."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import discord
import httpx
from authlib.integrations.flask_client import OAuth

from bot.chat.people import person
from bot.web.people import SignedIn
from core.config.roles import PERMISSION, Membership, roles_for
from core.config.tenants import Tenancy, Tenant
from core.state.actor import Actor

__all__ = ["DISCORD_API", "register", "signed_in"]

DISCORD_API = "https://discord.com/api"
SCOPES = "identify guilds guilds.members.read"


def _api(env: Mapping[str, str]) -> str:
    return (env.get("DISCORD_API_URL") or DISCORD_API).rstrip("/")


def register(oauth: OAuth, env: Mapping[str, str]) -> None:
    if not (env.get("DISCORD_CLIENT_ID") and env.get("DISCORD_CLIENT_SECRET")):
        return
    api = _api(env)
    oauth.register(
        "discord",
        client_id=env["DISCORD_CLIENT_ID"],
        client_secret=env["DISCORD_CLIENT_SECRET"],
        authorize_url=f"{api}/oauth2/authorize",
        access_token_url=f"{api}/oauth2/token",
        api_base_url=f"{api}/",
        client_kwargs={
            "scope": SCOPES,
            "token_endpoint_auth_method": "client_secret_post",
            "timeout": 10,
        },
    )


def signed_in(
    client: Any, token: dict[str, Any], tenancy: Tenancy, env: Mapping[str, str]
) -> SignedIn:
    """The person ``token`` is, with their actor in each served workspace they belong to."""
    me = _json(client.get("users/@me", token=token))
    user_id = str(me["id"])
    name = str(me.get("global_name") or me.get("username") or user_id)
    access: dict[str, Actor] = {}
    for guild in _json(client.get("users/@me/guilds", token=token)):
        tenant = tenancy.discord_server(str(guild["id"]))
        if tenant is None:
            continue
        member = _json(client.get(f"users/@me/guilds/{tenant.id}/member", token=token))
        access[tenant.workspace] = _actor(tenant, user_id, guild, member, env)
    dm = tenancy.discord_dm(user_id)
    if dm is not None:
        access[dm.workspace] = person("discord", user_id, ())
    return SignedIn("discord", user_id, name, access)


def _actor(
    tenant: Tenant,
    user_id: str,
    guild: Mapping[str, Any],
    member: Mapping[str, Any],
    env: Mapping[str, str],
) -> Actor:
    role_ids = frozenset(str(r) for r in member.get("roles") or [])
    known = _role_names(tenant.id, env)
    names = {known[r] for r in role_ids if r in known}
    held = discord.Permissions(int(guild.get("permissions") or 0))
    if guild.get("owner") or held.administrator:
        held = discord.Permissions.all()
    names |= {f"{PERMISSION}{perm}" for perm, on in held if on}
    roles = roles_for(tenant.bindings, Membership("discord", user_id, role_ids, frozenset(names)))
    return person("discord", user_id, roles, guest=tenant.talk_only and not roles)


def _role_names(guild_id: str, env: Mapping[str, str]) -> dict[str, str]:
    """Role id -> name, read with the bot's token; none without one (then a binding by
    name does not count here, as it would not for a server the bot cannot see)."""
    bot_token = env.get("DISCORD_TOKEN")
    if not bot_token:
        return {}
    answer = httpx.get(
        f"{_api(env)}/guilds/{guild_id}/roles",
        headers={"Authorization": f"Bot {bot_token}"},
        timeout=10,
    )
    if answer.status_code != 200:
        return {}
    return {str(r["id"]): str(r["name"]) for r in answer.json()}


def _json(answer: Any) -> Any:
    answer.raise_for_status()
    return answer.json()
