"""How often the web may be asked for what costs: counts kept in Redis, so that every web
process and thread shares them, each in a window that starts at its first count and ends
``window_sec`` later (the key's own expiry: the server's clock, no process's).

- ``too_often``: one more look at a page that reads much (Trace, State) by one person in one
  workspace (``core.rate_limits.over_limit``); past the limit, 429 with ``Retry-After``.
- ``SignInGuard``: wrong tokens (the operator's, the metrics'), counted per address and per
  token. Past either limit every try is refused until the window passes, the right token's
  too: a guess that happens to be right must not tell the guesser so."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from flask import Response, render_template, request

from bot.web.context import person, web
from core.rate_limits import over_limit, rate_key, seconds_left
from core.redis.client import RedisClient

__all__ = [
    "SignInGuard",
    "address_of",
    "refused_tries",
    "signin_guard",
    "too_often",
    "wrong_tokens",
]


def _key(what: str, who: str) -> str:
    """A web count's key (``who`` hashed)."""
    return rate_key(f"web:{what}", who)


def too_often(
    redis: RedisClient, what: str, workspace: str, per_minute: int
) -> tuple[str, int, dict[str, str]] | None:
    """The 429 page (``Retry-After``) when the person of this request has opened more than
    ``per_minute`` ``what`` pages (``trace``, ``state``) of ``workspace`` this minute; None
    when they may open this one, which is counted."""
    asker = person()
    who = f"{workspace}\0{asker.platform}:{asker.user_id}"
    wait = over_limit(redis, what, who, per_minute)
    if wait is None:
        return None
    message = f"Too many {what} pages a minute: try in {wait} s."
    return (
        render_template("error.html", status=429, message=message),
        429,
        {"Retry-After": str(wait)},
    )


def address_of(remote: str) -> str:
    """What one sender is counted as: its IPv4 address, or its IPv6 /64 (one host may hold a
    whole /64: counted per address, it would never run out)."""
    try:
        ip = ipaddress.ip_address(remote)
    except ValueError:
        return remote
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


@dataclass(frozen=True)
class SignInGuard:
    """Wrong tokens from one address (``per_address``) and at one token from anywhere
    (``per_token``) in ``window_sec``. ``token`` is the token tried for (the operator's, the
    metrics'), counted by its hash: a new token starts a new count."""

    redis: RedisClient
    per_address: int
    per_token: int
    window_sec: int

    def _keys(self, remote: str, token: str) -> tuple[str, str]:
        return _key("signin-address", address_of(remote)), _key("signin-token", token)

    def refused(self, remote: str, token: str) -> int | None:
        """The seconds to wait when the address or the token is past its limit (nothing is
        counted), else None: then the token may be checked."""
        by_address, by_token = self._keys(remote, token)
        with self.redis.pipeline(transaction=True) as pipe:
            for key in (by_address, by_token):
                pipe.get(key)
                pipe.pttl(key)
            address_count, address_left, token_count, token_left = pipe.execute()
        waits = [
            seconds_left(int(left), self.window_sec)
            for count, left, limit in (
                (address_count, address_left, self.per_address),
                (token_count, token_left, self.per_token),
            )
            if count is not None and int(count) >= limit
        ]
        return max(waits) if waits else None

    def failed(self, remote: str, token: str) -> None:
        """Count a wrong token from ``remote``, against the address and the token. (Tries
        checked at once may each pass ``refused`` before any is counted: as many more as
        the web serves at once, threads times processes, may be checked in a window.)"""
        with self.redis.pipeline(transaction=True) as pipe:
            for key in self._keys(remote, token):
                pipe.set(key, 0, ex=self.window_sec, nx=True)
                pipe.incr(key)
            pipe.execute()


def signin_guard() -> SignInGuard:
    """The guard of this web application's settings."""
    settings = web().settings
    return SignInGuard(
        web().base.redis,
        settings.signin_per_address,
        settings.signin_per_token,
        settings.signin_window_sec,
    )


def wrong_tokens(token: str, right: bool) -> int | None:
    """A try for ``token`` (the operator's, the metrics') from this request's address: None
    when it may go on (counted when not ``right``); else the seconds every try must wait,
    the right token's too, as the address or the token is past its limit."""
    guard, remote = signin_guard(), request.remote_addr or ""
    wait = guard.refused(remote, token)
    if wait is None and not right:
        guard.failed(remote, token)
    return wait


def refused_tries(wait: int) -> Response:
    """The plain 429 a request with a token gets while tries wait (``wrong_tokens``)."""
    said = f"too many wrong tokens: every try is refused for {wait} s more, the right token too\n"
    return Response(said, 429, {"Retry-After": str(wait)}, content_type="text/plain")
