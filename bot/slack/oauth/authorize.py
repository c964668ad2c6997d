"""How each Slack request is authorized with its team's installation: Bolt's
``InstallationStoreAuthorize``, which finds the team's newest installation in Redis (and
refreshes a rotating token that expires soon) at every request, and asks Slack what the
token is (``auth.test``: its bot user, team and org) once per token, not at every request.

Without its cache, Bolt calls ``auth.test`` for every event, click and command before it
acknowledges it: a Web API round trip (a new HTTPS connection to slack.com) inside Slack's
three seconds, and one more call per event against the app's rate limits. Bolt's own cache
is a dict that keeps every token it ever saw, and a rotating token is a new one every twelve
hours; ``CheckedTokens`` keeps the most recently used ``KEPT_TOKENS``.

The cache never answers for a team on its own: the installation is read first at every
request, so an uninstalled team (``app_uninstalled``, ``tokens_revoked``) has no token to
look up and is refused at once, and a refreshed token is a new key, checked once."""

from __future__ import annotations

import threading
from logging import Logger
from typing import TYPE_CHECKING

from slack_bolt.authorization import AuthorizeResult
from slack_bolt.authorization.authorize import InstallationStoreAuthorize

if TYPE_CHECKING:
    from slack_sdk import WebClient
    from slack_sdk.oauth.installation_store import InstallationStore

__all__ = ["KEPT_TOKENS", "CheckedTokens", "store_authorize"]

KEPT_TOKENS = 4096  # teams a process serves before the least recent is checked again


class CheckedTokens(dict[str, AuthorizeResult]):
    """What ``auth.test`` said of each token, for the ``size`` most recently used tokens.

    Bolt asks ``token in cache`` and then reads ``cache[token]``, from several threads at
    once: the read answers what the question found in the same thread, so that another
    thread evicting the entry in between cannot make it a KeyError."""

    def __init__(self, size: int = KEPT_TOKENS) -> None:
        super().__init__()
        self.size = size
        self._lock = threading.Lock()
        self._found = threading.local()

    def __contains__(self, token: object) -> bool:
        result = None
        if isinstance(token, str):
            with self._lock:
                result = super().pop(token, None)
                if result is not None:
                    super().__setitem__(token, result)  # the most recently used now
        self._found.last = (token, result)
        return result is not None

    def __getitem__(self, token: str) -> AuthorizeResult:
        last = getattr(self._found, "last", None)
        if last is not None and last[0] == token and last[1] is not None:
            result: AuthorizeResult = last[1]
            return result
        with self._lock:
            return super().__getitem__(token)

    def __setitem__(self, token: str, result: AuthorizeResult) -> None:
        with self._lock:
            super().pop(token, None)
            super().__setitem__(token, result)
            while len(self) > self.size:
                super().pop(next(iter(self)))  # the least recently used


def store_authorize(
    *,
    logger: Logger,
    installation_store: InstallationStore,
    client_id: str,
    client_secret: str,
    token_rotation_expiration_minutes: int,
    client: WebClient,
    kept: int = KEPT_TOKENS,
) -> InstallationStoreAuthorize:
    """Bolt's authorize from the installation store, each token checked once (through the
    request's client). ``client``: the one token refreshes go through (Bolt's default is
    slack.com's)."""
    authorize = InstallationStoreAuthorize(
        logger=logger,
        installation_store=installation_store,
        client_id=client_id,
        client_secret=client_secret,
        token_rotation_expiration_minutes=token_rotation_expiration_minutes,
        client=client,
        cache_enabled=True,
    )
    authorize.authorize_result_cache = CheckedTokens(kept)
    return authorize
