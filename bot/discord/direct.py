"""A direct message from the bot to one person (``DiscordCloser.dm``: the requester of a change,
told what became of it), through the REST API with the bot's token. Only a member of the
server the change was asked in is written to: ``GET /guilds/{server}/members/{user}`` must
find them, and not a bot. Anyone else (a member of another server a stored proposal names,
an id Discord does not know) gets nothing, and the debug log says why. Then
``POST /users/@me/channels`` opens the DM and a message goes there; a refusal (Discord's
50007: their direct messages are closed to the server's members) is one line in the log."""

from __future__ import annotations

import logging

import httpx

__all__ = ["send_direct"]

log = logging.getLogger("deliberate.discord")


def send_direct(http: httpx.Client, server: str, user_id: str, content: str) -> bool:
    """``content`` (made inert by the caller, mentioning nobody) to ``user_id`` alone, if
    they are a person of ``server``; False when not sent."""
    if not (server.isdigit() and user_id.isdigit()):
        log.debug("discord: no direct message to %r in %r: not ids", user_id, server)
        return False
    try:
        member = http.get(f"/guilds/{server}/members/{user_id}")
        if member.status_code == 404:
            log.debug("discord: no direct message to %s: not a member of %s", user_id, server)
            return False
        if member.is_error:
            why = _why(member)
            log.warning("discord: cannot look up %s for a direct message: %s", user_id, why)
            return False
        if (member.json().get("user") or {}).get("bot"):
            log.debug("discord: no direct message to %s: a bot", user_id)
            return False
        opened = http.post("/users/@me/channels", json={"recipient_id": user_id})
        if opened.is_error:
            log.warning("discord: cannot send %s a direct message: %s", user_id, _why(opened))
            return False
        body = {"content": content, "allowed_mentions": {"parse": []}}
        sent = http.post(f"/channels/{opened.json()['id']}/messages", json=body)
    except (httpx.HTTPError, ValueError, KeyError, TypeError) as error:
        log.warning("discord: cannot send %s a direct message: %s", user_id, error)
        return False
    if sent.is_error:
        log.warning("discord: cannot send %s a direct message: %s", user_id, _why(sent))
        return False
    return True


def _why(answer: httpx.Response) -> str:
    """Discord's error: its message and code (50007: the person does not take DMs)."""
    try:
        error = answer.json()
        return f"{error.get('message')} ({error.get('code')}), HTTP {answer.status_code}"
    except ValueError:
        return f"HTTP {answer.status_code}: {answer.text[:200]}"
