"""The bot token of each installation, for a process no Slack request brings one to (the
worker, closing an expired proposal's messages and telling its requester). It is found as
Bolt finds a request's (``InstallationStoreAuthorize``): the team's newest installation in
Redis (the org's, when the app was installed org-wide), a rotating token swapped for a new
one with slack_sdk's ``TokenRotator`` when it expires within two hours, and the refreshed
installation saved whole, as Bolt saves it, so the bot finds the new pair too. Each token is
checked with ``auth.test`` once (it also says whom the token speaks for).

An installation that is not found (the team uninstalled the app, its token was revoked, a
message kept before installations were noted) is said once in the log and skipped: nothing
is sent for it, and it is looked for again only ``MISSING_RECHECK_SEC`` later, so a team
that left costs a Redis read a while, not a request per message. A token Slack refuses
later (``forget``) counts as not found from then on. Nothing here logs a token."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError, SlackTokenRotationError
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.token_rotation import TokenRotator

from bot.proposals.refs import Install
from core.recently_used import Recent

from .installations import RedisInstallationStore

if TYPE_CHECKING:
    from core.redis.client import RedisClient

    from .settings import OAuthConfig

__all__ = ["MISSING_RECHECK_SEC", "InstalledBot", "InstalledBots"]

MISSING_RECHECK_SEC = 600.0
ROTATE_BEFORE_MIN = 120  # Bolt's token_rotation_expiration_minutes
log = logging.getLogger("deliberate.slack.oauth")


@dataclass(frozen=True)
class InstalledBot:
    """An installation's bot token, and whom it speaks for (as ``auth.test`` said)."""

    token: str
    team: str | None
    enterprise: str | None


class InstalledBots:
    """``client``: the client without a token that ``auth.test`` and token refreshes go
    through (``OAuthConfig.web_client()``)."""

    def __init__(
        self,
        config: OAuthConfig,
        redis: RedisClient,
        client: WebClient,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.clock = clock
        self.store = RedisInstallationStore(redis, config.client_id)
        self.rotator = TokenRotator(
            client_id=config.client_id, client_secret=config.client_secret, client=client
        )
        self._lock = threading.Lock()
        self._missing: dict[Install, float] = {}
        self._checked: Recent[InstalledBot] = Recent()

    def find(self, install: Install) -> InstalledBot | None:
        """The bot token of ``install``, or None (said once) when it has none."""
        if install.team is None and install.enterprise is None:
            self._miss(install, "a message kept without its team")
            return None
        with self._lock:
            since = self._missing.get(install)
        if since is not None and self.clock() - since < MISSING_RECHECK_SEC:
            return None
        try:
            installed = self._installation(install)
        except SlackTokenRotationError as error:  # another process may have refreshed it
            log.warning("slack: cannot refresh the token of %s: %s", _named(install), error)
            return None
        except (SlackClientError, OSError) as error:  # Slack unreachable: next time
            log.warning("slack: cannot refresh the token of %s: %s", _named(install), error)
            return None
        token = installed.bot_token if installed is not None else None
        if not token:
            self._miss(install, "uninstalled")
            return None
        found = self._checked.get(token) or self._check(install, token)
        if found is None:
            return None
        with self._lock:
            if self._missing.pop(install, None) is not None:
                log.info("slack: %s is installed again", _named(install))
        return found

    def forget(self, install: Install, token: str) -> None:
        """Slack refused ``token``: ``install`` has none until it is found again."""
        self._checked.drop(token)
        self._miss(install, "Slack refuses its token")

    def _installation(self, install: Install) -> Installation | None:
        """The newest installation, its bot token refreshed (and saved) when it rotates and
        expires soon, as Bolt's authorize does before a request."""
        installed = self.store.find_installation(
            enterprise_id=install.enterprise,
            team_id=install.team,
            is_enterprise_install=install.org_install,
        )
        if installed is None or installed.bot_refresh_token is None:
            return installed
        refreshed = self.rotator.perform_token_rotation(
            installation=installed, minutes_before_expiration=ROTATE_BEFORE_MIN
        )
        if refreshed is None:
            return installed
        self.store.save(refreshed)
        return refreshed

    def _check(self, install: Install, token: str) -> InstalledBot | None:
        try:
            said = self.client.auth_test(token=token)
        except SlackApiError as error:
            self._miss(install, f"Slack refuses its token: {error.response.get('error')}")
            return None
        except (SlackClientError, OSError) as error:
            log.warning("slack: cannot check the token of %s: %s", _named(install), error)
            return None
        team = None if install.org_install else str(said.get("team_id") or "") or None
        org = str(said.get("enterprise_id") or "") or None
        return self._checked.put(token, InstalledBot(token, team, org))

    def _miss(self, install: Install, why: str) -> None:
        with self._lock:
            first = install not in self._missing
            self._missing[install] = self.clock()
        if first:
            log.warning(
                "slack: no bot token for %s (%s): its messages are left as they are",
                _named(install),
                why,
            )


def _named(install: Install) -> str:
    if install.team is None and install.enterprise is None:
        return "an unknown team"
    if install.org_install or install.team is None:
        return f"org {install.enterprise}"
    return f"team {install.team}" + (f" (org {install.enterprise})" if install.enterprise else "")
