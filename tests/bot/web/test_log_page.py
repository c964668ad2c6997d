"""The Log page and its query over real Redis (and real HTTP): every record is on exactly
one page whichever way one walks (a Hypothesis property), filters by key, prefix, actor and
time hold, a filter's bounded scan says where it stopped, a secret never shows, bad filter
input is named and breaks nothing, and hostile text is shown as text."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.app import App
from bot.web.log_query import LogFilter, read_page
from core.gateway.outcome import Outcome
from core.redis.client import RedisClient
from core.state.commit_result import Committed
from tests.bot.web.conftest import OPERATOR_TOKEN, Site
from tests.conftest import delete_workspace
from tests.factories import mutation


def commit(
    app: App, key: str, value: object, who: str = "user:alice", reason: str = ""
) -> Committed:
    done: Outcome = app.gateway.propose(mutation("set", key, value, who, reason=reason))
    assert isinstance(done, Committed), done
    return done


def read(site: Site, **query: str) -> httpx.Response:
    return httpx.get(
        f"{site.base}/w/{site.app.store.workspace}/log",
        params=query,
        headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"},
    )


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(count=st.integers(0, 70), size=st.integers(1, 25), every=st.integers(1, 4))
def test_walking_older_then_newer_meets_every_record_once(
    web_app: App, redis_client: RedisClient, count: int, size: int, every: int
) -> None:
    app = web_app.for_workspace(f"test-{uuid.uuid4().hex[:12]}", rules=False)
    try:
        for i in range(count):
            commit(
                app,
                f"artifact.k{i % 7}" if i % every else f"decision.k{i}",
                ["x"] if i % every else "v",
            )
        wanted = LogFilter(key="decision.*")
        expected = [
            r.log_id for r in app.log.latest(count) if r.mutation.key.startswith("decision.")
        ][::-1]
        pages, cursor = [], None
        while True:
            page = read_page(
                app.log, LogFilter(key="decision.*", before=cursor), page=size, scan=10_000
            )
            pages.append([r.log_id for r in page.records])
            if page.older is None:
                break
            cursor = page.older
        assert [i for p in pages for i in p] == expected
        assert all(len(p) == size for p in pages[:-1])
        assert pages[-1] or not expected  # no empty page at the end, but of an empty log
        if expected:  # and back, newer page by newer page, from the oldest
            collected, after = [], expected[-1]
            while after is not None:
                page = read_page(app.log, LogFilter(key=wanted.key, after=after), page=size)
                assert 0 < len(page.records) <= size or after == expected[0]
                collected = [r.log_id for r in page.records] + collected
                after = page.newer
            assert [*collected, expected[-1]] == expected
    finally:
        delete_workspace(redis_client, app.store.workspace)


def test_filters_by_key_prefix_actor_and_time(site: Site) -> None:
    app = site.app
    commit(app, "decision.db", "postgres", "user:alice")
    middle = commit(app, "decision.cache", "redis", "moderator:U0MOD")
    commit(app, "artifact.notes", ["a"], "user:bob")
    assert "decision.cache" in read(site, key="decision.cache").text
    assert "decision.db" not in read(site, key="decision.cache").text
    prefixed = read(site, key="decision.*").text
    assert "decision.db" in prefixed and "artifact.notes" not in prefixed
    by_actor = read(site, actor="U0MOD").text
    assert "decision.cache" in by_actor and "decision.db" not in by_actor
    ms = int(app.log.latest(3)[1].log_id.split("-")[0])
    minute = datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    timed = read(site, since=minute, until=minute).text
    assert "decision.cache" in timed
    assert middle.version == 1
    later = datetime.fromtimestamp(ms / 1000 + 3600, UTC).strftime("%Y-%m-%dT%H:%M")
    assert "No record matches" in read(site, since=later).text


def test_each_row_links_to_its_trace(site: Site) -> None:
    done = commit(site.app, "decision.db", "postgres")
    page = read(site).text
    assert f"/w/{site.app.store.workspace}/trace/{done.mutation.correlation_id}" in page


def test_a_filter_reads_a_bounded_number_of_records_and_says_so(site: Site) -> None:
    for i in range(30):
        commit(site.app, f"decision.k{i}", "v")
    page = read_page(site.app.log, LogFilter(key="decision.none"), page=10, scan=12)
    assert page.records == [] and page.scanned == 12 and page.scan_ran_out
    assert page.older is not None  # go on from there
    rest = read_page(site.app.log, LogFilter(key="decision.none", before=page.older), scan=100)
    assert rest.scanned == 18 and rest.older is None and not rest.scan_ran_out


def test_a_secret_never_shows(site: Site) -> None:
    commit(site.app, "secret.stream-key", "live_sk_0123456789", "admin:root")
    page = read(site).text
    assert "secret.stream-key" in page and "live_sk_0123456789" not in page
    assert "(secret)" in page


def test_bad_filters_are_named_and_change_nothing(site: Site) -> None:
    commit(site.app, "decision.db", "postgres")
    answer = read(site, key="no spaces<", since="yesterday", before="x")
    assert answer.status_code == 400
    for field in ("key:", "since:", "before:"):
        assert field in answer.text
    assert "decision.db" in answer.text  # the rest of the page still shows
    assert len(site.app.log) == 1


def test_hostile_text_is_shown_as_text(site: Site) -> None:
    commit(site.app, "decision.x", "<script>alert(1)</script>", reason='"><img src=x onerror=1>')
    page = read(site).text
    assert "<script>alert(1)" not in page and "<img src=x" not in page
    assert "&lt;script&gt;" in page
