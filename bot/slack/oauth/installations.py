"""slack_sdk's ``InstallationStore`` kept in Redis: what Bolt's OAuth flow saves when a team
(or an Enterprise Grid org) installs the app, and where Bolt finds each request's bot token.

It behaves as slack_sdk's SQL stores do (``SQLAlchemyInstallationStore``):

- ``find_bot`` and ``find_installation`` with ``is_enterprise_install`` (or without a team)
  look up the org-wide install: enterprise id, no team.
- ``find_installation`` gives the team's newest installation, or with ``user_id`` that
  installer's newest. When it gives a user's installation, or one without a bot token, the
  team's newest bot (token, ids, scopes, refresh token, expiry) replaces the installation's
  own if they differ (bolt-python#664).
- ``delete_installation(user_id=U)`` removes U's installations, so the latest falls back to the
  next newest (slack_sdk's file store would keep U's as the latest). ``delete_bot``,
  ``delete_installation`` and ``delete_all`` take the ids as given: Bolt passes the request's,
  whose team is None for an org-wide install.
- A saved installation with the ``installed_at`` of one already kept replaces it: that is how
  a rotated token (Bolt's ``token_rotation_expiration_minutes``) is saved. Earlier installs stay
  as history, as the library's stores keep them.

Each write is a WATCH/MULTI transaction over the team's two hashes (``records.py`` says what
they hold); each read is one command. Tokens are secrets: nothing here logs them."""

from __future__ import annotations

import logging
from collections.abc import Callable
from logging import Logger
from typing import TYPE_CHECKING, Any

from redis.exceptions import WatchError
from slack_sdk.oauth.installation_store.installation_store import InstallationStore
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.models.installation import Installation

from core.redis.client import watch_broken

from .keys import OAuthKeys
from .records import (
    BOT,
    BOT_PREFIX,
    INSTALLATION,
    bot_field,
    bot_json,
    installation_field,
    installation_json,
    installation_prefix,
    latest_index,
    load_bot,
    load_installation,
    user_field,
)

if TYPE_CHECKING:
    from core.redis.client import RedisClient, RedisPipeline

__all__ = ["RedisInstallationStore"]

History = dict[str, str]


class RedisInstallationStore(InstallationStore):
    """The installations of the Slack app ``client_id`` (its keys: ``keys.py``)."""

    def __init__(self, redis: RedisClient, client_id: str, *, logger: Logger | None = None) -> None:
        self.redis = redis
        self.client_id = client_id
        self.keys = OAuthKeys(client_id)
        self._logger = logger or logging.getLogger("deliberate.slack.oauth")

    @property
    def logger(self) -> Logger:
        return self._logger

    # --- writes ------------------------------------------------------------------------

    def save(self, installation: Installation) -> None:
        records = {installation_field(installation): installation_json(installation)}
        bot = installation.to_bot()
        if bot.bot_token is not None:
            records[bot_field(bot)] = bot_json(bot)
        self._change(installation.enterprise_id, installation.team_id, _with(records))
        self.logger.info(
            "Slack installation saved",
            extra={"fields": _where(installation.enterprise_id, installation.team_id)},
        )

    def save_bot(self, bot: Bot) -> None:
        if bot.bot_token is None:
            return  # as the library's stores: a bot without a token is no bot
        self._change(bot.enterprise_id, bot.team_id, _with({bot_field(bot): bot_json(bot)}))
        self.logger.debug(
            "Slack bot saved", extra={"fields": _where(bot.enterprise_id, bot.team_id)}
        )

    def delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        self._change(enterprise_id, team_id, _without(BOT_PREFIX))
        self.logger.info("Slack bot deleted", extra={"fields": _where(enterprise_id, team_id)})

    def delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        self._change(enterprise_id, team_id, _without(installation_prefix(user_id)))
        where = _where(enterprise_id, team_id) | {"slack_user": user_id}
        self.logger.info("Slack installation deleted", extra={"fields": where})

    def delete_all(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        self.redis.delete(*self.keys.team(enterprise_id, team_id))
        self.logger.info(
            "Slack installations deleted", extra={"fields": _where(enterprise_id, team_id)}
        )

    def _change(
        self, enterprise_id: str | None, team_id: str | None, change: Callable[[History], History]
    ) -> None:
        """Rewrite the team's history with ``change`` and its latest index from the result,
        atomically (retried if another write came between the read and the write)."""
        latest, history = self.keys.team(enterprise_id, team_id)

        def rewrite(pipe: RedisPipeline) -> None:
            kept = {_text(f): _text(r) for f, r in pipe.hgetall(history).items()}
            changed: dict[Any, Any] = change(kept)
            pipe.multi()
            pipe.delete(latest, history)
            if changed:
                pipe.hset(history, mapping=changed)
                index: dict[Any, Any] = latest_index(changed)
                pipe.hset(latest, mapping=index)

        with self.redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(history)
                    rewrite(pipe)
                    pipe.execute()
                    return
                except WatchError as error:  # another write came between: again
                    if (cut := watch_broken(error)) is not None:
                        raise cut from error  # Redis went away, not a conflict

    # --- reads -------------------------------------------------------------------------

    def find_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> Bot | None:
        latest, _ = self.keys.team(enterprise_id, _team(team_id, is_enterprise_install))
        record = self.redis.hget(latest, BOT)
        return load_bot(_text(record)) if record else None

    def find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        latest, _ = self.keys.team(enterprise_id, _team(team_id, is_enterprise_install))
        field = INSTALLATION if user_id is None else user_field(user_id)
        record, newest_bot = self.redis.hmget(latest, [field, BOT])
        if not record:
            return None
        installation = load_installation(_text(record))
        if newest_bot and (user_id is not None or installation.bot_token is None):
            _take_bot(installation, load_bot(_text(newest_bot)))
        return installation


def _team(team_id: str | None, is_enterprise_install: bool | None) -> str | None:
    return None if is_enterprise_install else team_id


def _take_bot(installation: Installation, bot: Bot) -> None:
    if bot.bot_token == installation.bot_token:
        return
    installation.bot_id = bot.bot_id
    installation.bot_user_id = bot.bot_user_id
    installation.bot_token = bot.bot_token
    installation.bot_scopes = bot.bot_scopes
    installation.bot_refresh_token = bot.bot_refresh_token
    installation.bot_token_expires_at = bot.bot_token_expires_at


def _with(records: History) -> Callable[[History], History]:
    def change(history: History) -> History:
        return history | records

    return change


def _without(prefix: str) -> Callable[[History], History]:
    def change(history: History) -> History:
        return {field: record for field, record in history.items() if not field.startswith(prefix)}

    return change


def _where(enterprise_id: str | None, team_id: str | None) -> dict[str, Any]:
    return {"slack_enterprise": enterprise_id, "slack_team": team_id}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
