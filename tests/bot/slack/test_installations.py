"""The installation store in the real Redis behaves as slack_sdk's own stores do (their
tests' cases, ported), keeps what it is given exactly, never logs a token, and, over any
sequence of saves and deletes, finds what slack_sdk's SQL store would find."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis import Redis
from slack_sdk.oauth.installation_store import Bot, Installation

from bot.slack.oauth import RedisInstallationStore
from bot.slack.oauth.keys import TAG, OAuthKeys
from tests.bot.slack.oauth_rig import forget, new_client_id
from tests.logs import logged


@pytest.fixture
def store(redis_client: Redis) -> Iterator[RedisInstallationStore]:
    client_id = new_client_id()
    yield RedisInstallationStore(redis_client, client_id)
    forget(redis_client, client_id)


def an_installation(**fields: Any) -> Installation:
    data: dict[str, Any] = {
        "app_id": "A111",
        "enterprise_id": "E111",
        "team_id": "T111",
        "user_id": "U111",
        "bot_id": "B111",
        "bot_token": "xoxb-111",
        "bot_scopes": ["chat:write"],
        "bot_user_id": "U222",
    }
    return Installation(**(data | fields))


# --- slack_sdk's own cases (tests/slack_sdk/oauth/installation_store/test_sqlalchemy.py) ---


def test_save_and_find(store: RedisInstallationStore) -> None:
    store.save(an_installation())

    assert store.find_bot(enterprise_id="E111", team_id="T111") is not None
    assert store.find_bot(enterprise_id="E111", team_id="T222") is None
    assert store.find_bot(enterprise_id=None, team_id="T111") is None
    store.delete_bot(enterprise_id="E111", team_id="T222")
    assert store.find_bot(enterprise_id="E111", team_id="T222") is None

    assert store.find_installation(enterprise_id="E111", team_id="T111") is not None
    assert store.find_installation(enterprise_id="E111", team_id="T222") is None
    assert store.find_installation(enterprise_id=None, team_id="T111") is None
    assert store.find_installation(enterprise_id="E111", team_id="T111", user_id="U111")
    assert store.find_installation(enterprise_id="E111", team_id="T111", user_id="U222") is None
    assert store.find_installation(enterprise_id="E111", team_id="T222", user_id="U111") is None

    store.delete_installation(enterprise_id="E111", team_id="T111", user_id="U111")
    assert store.find_installation(enterprise_id="E111", team_id="T111", user_id="U111") is None
    assert store.find_installation(enterprise_id="E111", team_id="T111") is None

    store.save(an_installation())
    store.delete_all(enterprise_id="E111", team_id="T111")
    assert store.find_installation(enterprise_id="E111", team_id="T111") is None
    assert store.find_installation(enterprise_id="E111", team_id="T111", user_id="U111") is None
    assert store.find_bot(enterprise_id="E111", team_id="T111") is None


def test_org_installation(store: RedisInstallationStore) -> None:
    org = an_installation(
        app_id="AO111",
        enterprise_id="EO111",
        team_id=None,
        user_id="UO111",
        bot_id="BO111",
        bot_token="xoxb-O111",
        bot_user_id="UO222",
        is_enterprise_install=True,
    )
    store.save(org)

    assert store.find_bot(enterprise_id="EO111", team_id=None) is not None
    assert store.find_bot(enterprise_id="EO111", team_id="TO222", is_enterprise_install=True)
    assert store.find_bot(enterprise_id="EO111", team_id="TO222") is None
    assert store.find_bot(enterprise_id=None, team_id="TO111") is None
    store.delete_bot(enterprise_id="EO111", team_id="TO222")  # no such install: nothing goes
    assert store.find_bot(enterprise_id="EO111", team_id=None) is not None
    store.delete_bot(enterprise_id="EO111", team_id=None)
    assert store.find_bot(enterprise_id="EO111", team_id=None) is None

    assert store.find_installation(enterprise_id="EO111", team_id=None) is not None
    found = store.find_installation(
        enterprise_id="EO111", team_id="T111", is_enterprise_install=True
    )
    assert found is not None and found.bot_token == "xoxb-O111"
    assert store.find_installation(enterprise_id="EO111", team_id="T222") is None
    assert store.find_installation(enterprise_id="EO111", team_id=None, user_id="UO111")

    store.delete_all(enterprise_id="EO111", team_id=None)
    assert store.find_installation(enterprise_id="EO111", team_id=None) is None
    assert store.find_installation(enterprise_id="EO111", team_id=None, user_id="UO111") is None


def test_save_and_find_token_rotation(store: RedisInstallationStore) -> None:
    first = an_installation(
        bot_token="xoxe.xoxb-1-initial",
        bot_refresh_token="xoxe-1-initial",
        bot_token_expires_in=43200,
    )
    store.save(first)
    bot = store.find_bot(enterprise_id="E111", team_id="T111")
    assert bot is not None and bot.bot_refresh_token == "xoxe-1-initial"

    refreshed = Installation(**first.to_dict_for_copying())  # as slack_sdk's TokenRotator does
    refreshed.bot_token = "xoxe.xoxb-1-refreshed"
    refreshed.bot_refresh_token = "xoxe-1-refreshed"
    store.save(refreshed)

    bot = store.find_bot(enterprise_id="E111", team_id="T111")
    assert bot is not None and bot.bot_token == "xoxe.xoxb-1-refreshed"
    assert bot.bot_refresh_token == "xoxe-1-refreshed"
    found = store.find_installation(enterprise_id="E111", team_id="T111")
    assert found is not None and found.bot_refresh_token == "xoxe-1-refreshed"
    _, history = store.keys.team("E111", "T111")
    assert store.redis.hlen(history) == 2  # the installation and its bot, each rewritten


# --- many installers, history, user installs --------------------------------------


def test_the_newest_install_is_the_latest_and_each_installer_keeps_theirs(
    store: RedisInstallationStore,
) -> None:
    store.save(an_installation(user_id="U1", bot_token="xoxb-1", installed_at=1000.5))
    store.save(an_installation(user_id="U2", bot_token="xoxb-2", installed_at=2000.25))

    latest = store.find_installation(enterprise_id="E111", team_id="T111")
    assert latest is not None and (latest.user_id, latest.bot_token) == ("U2", "xoxb-2")
    first = store.find_installation(enterprise_id="E111", team_id="T111", user_id="U1")
    assert first is not None and first.user_id == "U1"
    assert first.bot_token == "xoxb-2"  # the newest bot's token, as bolt-python#664 wants

    store.delete_installation(enterprise_id="E111", team_id="T111", user_id="U2")
    fallback = store.find_installation(enterprise_id="E111", team_id="T111")
    assert fallback is not None and fallback.user_id == "U1"
    bot = store.find_bot(enterprise_id="E111", team_id="T111")
    assert bot is not None and bot.bot_token == "xoxb-2"  # bots go with delete_bot


def test_an_older_installation_saved_again_does_not_become_the_latest(
    store: RedisInstallationStore,
) -> None:
    old = an_installation(user_id="U1", bot_token="xoxb-1", installed_at=1000.0)
    store.save(old)
    store.save(an_installation(user_id="U2", bot_token="xoxb-2", installed_at=2000.0))

    old.user_token = "xoxp-rotated"  # a rotation of U1's own token
    store.save(old)

    latest = store.find_installation(enterprise_id="E111", team_id="T111")
    assert latest is not None and latest.user_id == "U2"
    mine = store.find_installation(enterprise_id="E111", team_id="T111", user_id="U1")
    assert mine is not None and mine.user_token == "xoxp-rotated"


def test_a_user_installation_without_a_bot_token_gets_the_newest_bots(
    store: RedisInstallationStore,
) -> None:
    store.save(an_installation(user_id="U1", bot_token="xoxb-1", installed_at=1000.0))
    store.save(
        an_installation(
            user_id="U2",
            bot_token=None,
            bot_id=None,
            bot_user_id=None,
            bot_scopes="",
            user_token="xoxp-2",
            user_scopes=["search:read"],
            installed_at=2000.0,
        )
    )

    latest = store.find_installation(enterprise_id="E111", team_id="T111")
    assert latest is not None and latest.user_id == "U2" and latest.user_token == "xoxp-2"
    assert (latest.bot_token, latest.bot_id, latest.bot_user_id) == ("xoxb-1", "B111", "U222")
    bot = store.find_bot(enterprise_id="E111", team_id="T111")
    assert bot is not None and bot.bot_token == "xoxb-1"


def test_a_bot_refreshed_alone_is_saved(store: RedisInstallationStore) -> None:
    """Bolt's bot-only path: find_bot, rotate, save_bot."""
    store.save(an_installation(bot_token="xoxe.xoxb-1-a", bot_refresh_token="xoxe-1-a"))
    bot = store.find_bot(enterprise_id="E111", team_id="T111")
    assert bot is not None
    refreshed = Bot(**bot.to_dict_for_copying())
    refreshed.bot_token, refreshed.bot_refresh_token = "xoxe.xoxb-1-b", "xoxe-1-b"

    store.save_bot(refreshed)

    again = store.find_bot(enterprise_id="E111", team_id="T111")
    assert again is not None and again.bot_token == "xoxe.xoxb-1-b"
    assert again.bot_refresh_token == "xoxe-1-b"
    store.save_bot(Bot(**(refreshed.to_dict_for_copying() | {"bot_token": None})))  # no token
    kept = store.find_bot(enterprise_id="E111", team_id="T111")
    assert kept is not None and kept.bot_token == "xoxe.xoxb-1-b"


# --- what is kept, where, and what is logged ----------------------------------------


def test_records_are_json_under_the_apps_own_tagged_keys(
    store: RedisInstallationStore, redis_client: Redis
) -> None:
    store.save(an_installation())
    other = RedisInstallationStore(redis_client, new_client_id())

    assert other.find_installation(enterprise_id="E111", team_id="T111") is None
    keys = list(redis_client.scan_iter(match=store.keys.every_key))
    assert sorted(keys) == sorted(store.keys.team("E111", "T111"))
    assert all(key.startswith(f"{TAG}:{store.client_id}:") for key in keys)
    latest, _ = store.keys.team("E111", "T111")
    record = json.loads(redis_client.hget(latest, "installation") or "")
    assert record["team_id"] == "T111" and record["bot_token"] == "xoxb-111"


def test_ids_cannot_reach_into_another_teams_keys() -> None:
    keys = OAuthKeys("111.222")
    shapes = [
        ("E1", "T1"),
        ("E1:T1", None),
        (None, "E1:T1"),
        ("E1", "T1:latest"),
        ("E1%3AT1", None),
    ]
    named = [keys.team(enterprise, team) for enterprise, team in shapes]
    assert len({key for pair in named for key in pair}) == 2 * len(shapes)


def test_installed_values_come_back_exactly(store: RedisInstallationStore) -> None:
    original = an_installation(
        enterprise_name="Acme",
        team_name="Acme HQ",
        bot_scopes=["chat:write", "commands"],
        bot_refresh_token="xoxe-1-r",
        bot_token_expires_at=1_900_000_000,
        user_token="xoxp-1",
        user_scopes="search:read,users:read",
        incoming_webhook_url="https://hooks.example/1",
        token_type="bot",
        installed_at=1_700_000_000.123456,
        custom_values={"plan": "pro", "seats": 12},
    )
    store.save(original)

    found = store.find_installation(enterprise_id="E111", team_id="T111")

    assert found is not None
    assert found.to_dict_for_copying() == original.to_dict_for_copying()
    assert found.installed_at == original.installed_at


def test_no_token_reaches_the_log(store: RedisInstallationStore) -> None:
    secrets = ["xoxe.xoxb-1-s3cret", "xoxe-1-s3cret", "xoxp-s3cret"]
    with logged("deliberate.slack.oauth") as logs:
        installation = an_installation(
            bot_token=secrets[0], bot_refresh_token=secrets[1], user_token=secrets[2]
        )
        store.save(installation)
        store.save_bot(installation.to_bot())
        store.find_installation(enterprise_id="E111", team_id="T111", user_id="U111")
        store.delete_installation(enterprise_id="E111", team_id="T111", user_id="U111")
        store.delete_bot(enterprise_id="E111", team_id="T111")
        store.delete_all(enterprise_id="E111", team_id="T111")

    assert logs.records and not any(secret in logs.text() for secret in secrets)


# --- any sequence, against slack_sdk's SQL store's semantics ---------------------------

TEAMS = [("E1", "T1"), (None, "T1"), ("E1", None)]  # a team in a grid, a team, an org
USERS = ["U1", "U2"]


@dataclass
class SqlRows:
    """slack_sdk's SQLAlchemyInstallationStore as plain rows: what it would find."""

    installations: dict[tuple[Any, ...], Installation] = field(default_factory=dict)
    bots: dict[tuple[Any, ...], Bot] = field(default_factory=dict)

    def save(self, i: Installation) -> None:
        self.installations[(i.enterprise_id, i.team_id, i.user_id, i.installed_at)] = i
        self.save_bot(i.to_bot())

    def save_bot(self, b: Bot) -> None:
        if b.bot_token is not None:
            self.bots[(b.enterprise_id, b.team_id, b.installed_at)] = b

    def find_bot(self, e: str | None, t: str | None) -> Bot | None:
        rows = [b for (be, bt, _), b in self.bots.items() if (be, bt) == (e, t)]
        return max(rows, key=lambda b: b.installed_at, default=None)

    def find_installation(self, e: str | None, t: str | None, u: str | None) -> dict[str, Any]:
        rows = [
            i
            for (ie, it, iu, _), i in self.installations.items()
            if (ie, it) == (e, t) and u in (None, iu)
        ]
        found = max(rows, key=lambda i: i.installed_at, default=None)
        if found is None:
            return {}
        seen = _seen(found)
        bot = self.find_bot(e, t)
        if (u is not None or found.bot_token is None) and bot and bot.bot_token != found.bot_token:
            seen |= {"bot_token": bot.bot_token, "bot_refresh_token": bot.bot_refresh_token}
        return seen

    def delete_bot(self, e: str | None, t: str | None) -> None:
        self.bots = {k: b for k, b in self.bots.items() if k[:2] != (e, t)}

    def delete_installation(self, e: str | None, t: str | None, u: str | None) -> None:
        self.installations = {
            k: i
            for k, i in self.installations.items()
            if not (k[:2] == (e, t) and u in (None, k[2]))
        }


def _seen(i: Installation | None) -> dict[str, Any]:
    if i is None:
        return {}
    return {
        "user_id": i.user_id,
        "installed_at": i.installed_at,
        "bot_token": i.bot_token,
        "bot_refresh_token": i.bot_refresh_token,
    }


@st.composite
def operations(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    stamps = iter(draw(st.lists(st.integers(1, 10_000), min_size=12, max_size=12, unique=True)))
    ops: list[tuple[Any, ...]] = []
    for serial in range(draw(st.integers(1, 12))):
        kind = draw(
            st.sampled_from(
                [
                    "save",
                    "save",
                    "rotate",
                    "save_bot",
                    "delete_bot",
                    "delete_installation",
                    "delete_all",
                ]
            )
        )
        team, user = draw(st.sampled_from(TEAMS)), draw(st.sampled_from([*USERS, None]))
        with_bot = draw(st.booleans())
        ops.append((kind, team, user, with_bot, next(stamps) + 0.5, serial))
    return ops


def _apply(op: tuple[Any, ...], store: RedisInstallationStore, rows: SqlRows) -> None:
    kind, (e, t), user, with_bot, at, serial = op
    if kind == "save" and user is not None:
        installation = Installation(
            enterprise_id=e,
            team_id=t,
            user_id=user,
            bot_token=f"xoxb-{serial}" if with_bot else None,
            bot_id="B1" if with_bot else None,
            bot_user_id="U0BOT" if with_bot else None,
            bot_refresh_token=f"xoxe-1-{serial}" if with_bot else None,
            is_enterprise_install=t is None,
            installed_at=at,
        )
        store.save(installation)
        rows.save(installation)
    elif kind == "rotate":  # Bolt's TokenRotator: the newest installation, new tokens
        found = store.find_installation(enterprise_id=e, team_id=t, user_id=user)
        if found is not None and found.bot_token is not None:
            rotated = Installation(**found.to_dict_for_copying())
            rotated.bot_token, rotated.bot_refresh_token = f"xoxb-r{serial}", f"xoxe-r{serial}"
            store.save(rotated)
            rows.save(rotated)
    elif kind == "save_bot":
        bot = store.find_bot(enterprise_id=e, team_id=t)
        if bot is not None:
            refreshed = Bot(**bot.to_dict_for_copying())
            refreshed.bot_token = f"xoxb-b{serial}"
            store.save_bot(refreshed)
            rows.save_bot(refreshed)
    elif kind == "delete_bot":
        store.delete_bot(enterprise_id=e, team_id=t)
        rows.delete_bot(e, t)
    elif kind == "delete_installation":
        store.delete_installation(enterprise_id=e, team_id=t, user_id=user)
        rows.delete_installation(e, t, user)
    elif kind == "delete_all":
        store.delete_all(enterprise_id=e, team_id=t)
        rows.delete_bot(e, t)
        rows.delete_installation(e, t, None)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=operations())
def test_any_sequence_finds_what_slack_sdks_sql_store_finds(
    redis_client: Redis, ops: list[tuple[Any, ...]]
) -> None:
    store = RedisInstallationStore(redis_client, new_client_id())
    rows = SqlRows()
    try:
        for op in ops:
            _apply(op, store, rows)
            for e, t in TEAMS:
                _check(store, rows, e, t, team=t, org=False)
            _check(store, rows, "E1", None, team="T9", org=True)  # any workspace of the org
    finally:
        forget(redis_client, store.client_id)


def _check(
    store: RedisInstallationStore,
    rows: SqlRows,
    e: str | None,
    t: str | None,
    team: str | None,
    org: bool,
) -> None:
    """What the store finds for ``team`` (``org``: as an org-wide install's request) is what
    the rows of (e, t) give."""
    bot = store.find_bot(enterprise_id=e, team_id=team, is_enterprise_install=org)
    expected = rows.find_bot(e, t)
    assert (bot and bot.bot_token) == (expected and expected.bot_token)
    for user in [*USERS, None]:
        found = store.find_installation(
            enterprise_id=e, team_id=team, user_id=user, is_enterprise_install=org
        )
        assert _seen(found) == rows.find_installation(e, t, user), (e, t, user)
