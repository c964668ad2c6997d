"""Anyone may open the install link, and each visit stores a one-time state in the shared
Redis for ten minutes: the states outstanding are capped (``max_install_states``, small
here), beyond which the link answers 503 with a page saying so, and logs it. Through the
real Bolt app in HTTP mode, as in test_oauth_flow."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from redis import Redis

from bot.slack.oauth import INSTALL_PATH
from bot.slack.oauth.keys import OAuthKeys
from tests.bot.slack.oauth_rig import OAuthRig, forget
from tests.logs import logged
from tests.servers.slack_api import BotIdentity, SlackServer

CAP = 3


@pytest.fixture
def rig(redis_client: Redis, slack: SlackServer) -> Iterator[OAuthRig]:
    running = OAuthRig(redis_client, slack, max_install_states=CAP).start()
    yield running
    running.stop()
    forget(redis_client, slack.client_id)


def stored_states(redis: Redis, client_id: str) -> list[str]:
    keys = OAuthKeys(client_id)
    pattern = keys.state("*").replace("{", "\\{").replace("}", "\\}")
    return sorted(str(k) for k in redis.scan_iter(match=pattern, count=1000))


def assert_refused(answer: httpx.Response) -> None:
    assert answer.status_code == 503
    assert answer.headers["content-type"].startswith("text/html")
    assert "Too many installs in progress" in answer.text
    assert 0 < int(answer.headers["retry-after"]) <= 600
    assert "set-cookie" not in answer.headers and "location" not in answer.headers


def test_past_the_cap_the_install_link_is_refused_with_a_page_and_a_log_line(
    rig: OAuthRig, redis_client: Redis
) -> None:
    states = [rig.install_link()[1] for _ in range(CAP)]
    with logged("deliberate.slack.oauth") as logs:
        refused = rig.http.get(INSTALL_PATH)

    assert_refused(refused)
    assert "Slack install refused: too many install links outstanding" in logs.text()
    keys = OAuthKeys(rig.slack.client_id)
    assert stored_states(redis_client, rig.slack.client_id) == sorted(keys.state(s) for s in states)
    assert redis_client.zcard(keys.states) == CAP
    assert 0 < redis_client.pttl(keys.states) <= 600_000  # the index goes with its states


def test_a_flood_of_install_links_stores_no_more_than_the_cap(
    rig: OAuthRig, redis_client: Redis
) -> None:
    """Fifty anonymous visits at once, eight at a time."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda _: rig.http.get(INSTALL_PATH), range(50)))

    assert sorted(a.status_code for a in answers) == [302] * CAP + [503] * (50 - CAP)
    assert len(stored_states(redis_client, rig.slack.client_id)) == CAP


def test_a_completed_install_makes_room_for_another(rig: OAuthRig) -> None:
    rig.slack.add_install_code("c0de-second", BotIdentity("T0SECOND", "Second"))
    states = [rig.install_link()[1] for _ in range(CAP)]
    assert_refused(rig.http.get(INSTALL_PATH))

    assert rig.redirect("c0de-second", states[0]).status_code == 200

    rig.install_link()  # a 302 again
    assert_refused(rig.http.get(INSTALL_PATH))


def test_expired_states_make_room_and_leave_the_index(rig: OAuthRig, redis_client: Redis) -> None:
    keys = OAuthKeys(rig.slack.client_id)
    states = [rig.install_link()[1] for _ in range(CAP)]
    for state in states[:2]:  # their ten minutes long past
        redis_client.pexpireat(keys.state(state), 1)
        redis_client.zadd(keys.states, {state: 1})

    _, fresh = rig.install_link()

    assert sorted(str(s) for s in redis_client.zrange(keys.states, 0, -1)) == sorted(
        [states[2], fresh]
    )
