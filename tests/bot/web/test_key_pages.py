"""The State page and ``/deliberate state`` read a page of the key index, never all of it
(issue 41: with 20,000 keys the page read every entry, 1.4 s; ``/deliberate state`` took
1.5 s to show 30 lines): 20,000 keys committed through the store, the entries each read
counts on a counting client (each HGETALL names the entry's key), the next page starts after
the last key shown, a prefix is kept; and the State page is rate-limited per person (8 at
once past the limit: 429 with ``Retry-After``)."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from bot.app import App
from bot.chat.answers import MAX_LINES, answer
from bot.chat.people import person
from bot.web.settings import WebSettings
from bot.web.site import create_app
from bot.web.state_page import PAGE
from core.state.actor import Actor
from core.state.keys import WorkspaceKeys
from core.state.mutation import Mutation, Op
from tests.bot.web.conftest import MOD, OPERATOR_TOKEN, Site, serve_site
from tests.bot.web.sessions import person_in, signed_in
from tests.round_trips import Trips

KEYS = 20_000
BEARER = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}

ASKER = "slack:U0ASKER"  # who asks /deliberate (each counted in their workspace)


def key(n: int) -> str:
    return f"k.{n:05d}"


def fill(app: App, keys: int) -> None:
    """``keys`` keys, each committed by the store."""
    who = Actor.parse("user:filler")
    for n in range(keys):
        app.store.commit(Mutation(op=Op.SET, key=key(n), value=n, actor=who))


def entries_read(app: App, trips: Trips) -> int:
    return trips.mentions(f"{WorkspaceKeys(app.store.workspace).tag}:entry:")


def shown_keys(page: str) -> list[str]:
    return re.findall(r'<td class="mono">(k\.\d{5})</td>', page)


def test_20000_keys_are_read_a_page_at_a_time_by_the_state_page_and_chat(
    counted: tuple[App, Trips],
) -> None:
    app, trips = counted
    fill(app, KEYS)
    web = create_app(app, WebSettings(operator_token=OPERATOR_TOKEN), env={}).test_client()
    url = f"/w/{app.store.workspace}/state"
    with trips.counting():
        page = web.get(url, headers=BEARER)
    assert entries_read(app, trips) == PAGE  # (all 20,000 before)
    assert page.status_code == 200
    assert shown_keys(page.text) == [key(n) for n in range(PAGE)]
    assert f"({KEYS - PAGE} more keys)" in page.text
    assert f'href="{url}?after={key(PAGE - 1)}"' in page.text
    with trips.counting():
        after = web.get(url, query_string={"after": key(PAGE - 1)}, headers=BEARER)
    assert shown_keys(after.text) == [key(n) for n in range(PAGE, 2 * PAGE)]
    assert entries_read(app, trips) == PAGE and f'href="{url}"' in after.text  # ← First

    with trips.counting():
        said = answer(app, "state", asker=ASKER).splitlines()
    assert entries_read(app, trips) == MAX_LINES  # (all 20,000 before)
    assert [line.split(" = ")[0] for line in said[:-1]] == [key(n) for n in range(MAX_LINES)]
    command = f"/deliberate state --after {key(MAX_LINES - 1)}"
    assert said[-1] == f"… and {KEYS - MAX_LINES} more: {command}"
    with trips.counting():
        on = answer(app, command.removeprefix("/deliberate "), asker=ASKER).splitlines()
    assert on[0] == f"{key(MAX_LINES)} = {MAX_LINES}  (v1, user:filler)"
    assert entries_read(app, trips) == MAX_LINES


def test_the_next_page_keeps_the_prefix_and_the_last_page_offers_none(web_app: App) -> None:
    fill(web_app, 2 * PAGE + 50)
    web = create_app(web_app, WebSettings(operator_token=OPERATOR_TOKEN), env={}).test_client()
    url = f"/w/{web_app.store.workspace}/state"
    first = web.get(url, query_string={"prefix": "k.001"}, headers=BEARER).text
    assert shown_keys(first) == [key(n) for n in range(100, 100 + PAGE)]
    assert 'rel="next"' not in first  # k.00100 to k.00199: all of them
    first = web.get(url, query_string={"prefix": "k.00"}, headers=BEARER).text
    assert (
        f"?after={key(PAGE - 1)}&amp;prefix=k.00" in first and f"({PAGE + 50} more keys)" in first
    )
    last = web.get(url, query_string={"prefix": "k.00", "after": key(200)}, headers=BEARER)
    assert shown_keys(last.text) == [key(n) for n in range(201, 2 * PAGE + 50)]
    assert 'rel="next"' not in last.text
    # a cursor before the prefix starts at the prefix; one past it shows nothing
    before = web.get(url, query_string={"prefix": "k.00", "after": "a"}, headers=BEARER).text
    assert shown_keys(before) == shown_keys(first)
    past = web.get(url, query_string={"prefix": "k.00", "after": "z"}, headers=BEARER).text
    assert shown_keys(past) == [] and "No key starting with “k.00” comes after z." in past
    chat = answer(web_app, "state k.002", asker=ASKER).splitlines()
    assert [line.split(" = ")[0] for line in chat[:-1]] == [key(n) for n in range(200, 230)]
    assert chat[-1] == "… and 20 more: /deliberate state k.002 --after k.00229"
    tail = answer(web_app, "state k.00 --after k.00240", asker=ASKER).splitlines()
    assert [line.split(" = ")[0] for line in tail] == [key(n) for n in range(241, 250)]
    assert (
        answer(web_app, "state k.00 --after z", asker=ASKER)
        == "No key starting with 'k.00' comes after z."
    )


@pytest.mark.parametrize("after", ["-x", "k.1 k.2", "k" * 201, "ké", "k\u202e"])
def test_an_after_that_is_no_key_is_a_400(site: Site, after: str) -> None:
    answer_ = httpx.get(
        f"{site.base}/w/{site.app.store.workspace}/state", params={"after": after}, headers=BEARER
    )
    assert answer_.status_code == 400 and "after: state key" in answer_.text


def test_chat_state_shows_what_fits_and_goes_on_from_the_last_line_shown(app: App) -> None:
    """Long values: fewer than 30 lines fit in Discord's 1,900 characters; the command on
    the last line goes on from the last key shown, so that nothing is skipped."""
    who = Actor.parse("user:ann")
    for n in range(40):
        app.store.commit(Mutation(op=Op.SET, key=f"note.{n:02d}", value="x" * 200, actor=who))
    seen: list[str] = []
    text = answer(app, "state note.", max_chars=1900, asker=ASKER)
    while True:
        assert len(text) <= 1900
        *lines, last = text.splitlines()
        if not last.startswith("… and "):
            seen += [line.split(" = ")[0] for line in [*lines, last]]
            break
        seen += [line.split(" = ")[0] for line in lines]
        assert len(lines) < MAX_LINES and last.endswith(f"--after {seen[-1]}")
        text = answer(app, last.split(": /deliberate ", 1)[1], max_chars=1900, asker=ASKER)
    assert seen == [f"note.{n:02d}" for n in range(40)]


@pytest.mark.parametrize("rest", ["--after", "a b", "--before x", "a --after -b"])
def test_chat_state_refuses_what_it_cannot_read(app: App, rest: str) -> None:
    said = answer(app, f"state {rest}", asker=ASKER)
    assert said.startswith(("state takes a PREFIX", "--after needs the KEY", "state key"))
    assert "/deliberate state [PREFIX] [--after KEY]" in said


def test_eight_state_pages_at_once_past_a_persons_limit_get_429(web_app: App) -> None:
    site = serve_site(web_app, WebSettings(operator_token=OPERATOR_TOKEN, state_per_minute=4))
    url = f"/w/{web_app.store.workspace}/state"
    moderator = person_in(web_app.store.workspace, person("slack", MOD, ("moderator",)))
    try:
        with signed_in(site, moderator) as browser, ThreadPoolExecutor(8) as pool:
            answers: list[Any] = list(pool.map(lambda _: browser.get(url), range(8)))
            assert sorted(a.status_code for a in answers) == [200] * 4 + [429] * 4
            refused = next(a for a in answers if a.status_code == 429)
            assert 1 <= int(refused.headers["Retry-After"]) <= 60
            assert "Too many state pages a minute" in refused.text
            # signing in again starts no new count; the operator's count is their own
            with signed_in(site, moderator) as again:
                assert again.get(url).status_code == 429
        assert httpx.get(f"{site.base}{url}", headers=BEARER).status_code == 200
    finally:
        site.served.stop()
