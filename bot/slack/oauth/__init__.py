"""Slack as an installable app: Bolt's OAuth flow with its installations and its one-time
``state`` values kept in Redis, so one deployment serves many Slack teams (and Enterprise Grid
orgs), each through its own bot token.

    config = OAuthConfig.from_env(os.environ)   # None when SLACK_CLIENT_ID is unset
    if config is not None:
        bolt = App(
            client=config.web_client(),
            signing_secret=...,
            oauth_settings=config.settings(redis),  # or oauth_settings(os.environ, redis)
        )
        bolt.enable_token_revocation_listeners()   # app_uninstalled, tokens_revoked

The App's client must be ``config.web_client()`` (no token; ``SLACK_API_URL``): Bolt calls
``oauth.v2.access`` and ``auth.test`` through it and copies its base URL into each request's
client. ``GET /slack/install`` sends the installer to Slack's authorize page,
``GET /slack/oauth_redirect`` stores the installation (Bolt's WSGI handler serves both beside
``/slack/events``). Bolt refreshes a rotating bot token before it expires and the store saves
the new one. Nothing here logs a token."""

from .installations import RedisInstallationStore
from .settings import DEFAULT_SCOPES, INSTALL_PATH, REDIRECT_PATH, OAuthConfig, oauth_settings
from .states import RedisOAuthStateStore

__all__ = [
    "DEFAULT_SCOPES",
    "INSTALL_PATH",
    "REDIRECT_PATH",
    "OAuthConfig",
    "RedisInstallationStore",
    "RedisOAuthStateStore",
    "oauth_settings",
]
