"""Every workspace that holds data, to the operator, and no more to anyone else. As
reported: the operator token read only the workspaces the web process listed, so
``/w/rulesdemo`` (written with ``--workspace``) was a 404. Now the operator opens any
workspace holding data (even one written after the listing was read), finds each on the
listing page with what it is, and switches between them from the header; a person signed in
through Slack still opens only their own workspace, and is told of no other."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from bot.chat.people import person
from core.redis.client import RedisClient
from core.state.store import StateStore
from tests.bot.web.conftest import MOD, OPERATOR_TOKEN, Site
from tests.bot.web.sessions import csrf_of, person_in, signed_in
from tests.conftest import delete_workspace
from tests.factories import mutation

PAGES = ("inbox", "state", "log", "rules")


@pytest.fixture
def written(redis_client: RedisClient) -> Iterator[str]:
    """A workspace nobody configured and no event reached, its state written as
    ``deliberate --workspace NAME state set`` writes it."""
    name = f"rulesdemo-{uuid.uuid4().hex[:8]}"
    StateStore(redis_client, name).commit(mutation("set", "decision.db", "postgres"))
    yield name
    delete_workspace(redis_client, name)


@pytest.fixture
def operator(site: Site) -> Iterator[httpx.Client]:
    """The operator, signed in on the sign-in page with the token."""
    with httpx.Client(base_url=site.base) as browser:
        token = csrf_of(browser, "/signin")
        landed = browser.post("/signin/token", data={"token": OPERATOR_TOKEN, "csrf_token": token})
        assert landed.status_code == 302
        yield browser


def test_the_operator_opens_a_workspace_that_only_holds_data(
    site: Site, written: str, operator: httpx.Client
) -> None:
    for page in PAGES:
        answer = operator.get(f"/w/{written}/{page}")
        assert answer.status_code == 200, (page, answer.status_code)
    assert "postgres" in operator.get(f"/w/{written}/state").text
    for home in (f"/w/{written}", f"/w/{written}/"):  # its own address opens its Inbox
        answer = operator.get(home)
        assert (answer.status_code, answer.headers["location"]) == (302, f"/w/{written}/inbox")
    header = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    with httpx.Client(base_url=site.base, headers=header) as monitor:
        assert monitor.get(f"/w/{written}/log").status_code == 200


def test_the_operator_opens_one_written_after_the_listing_was_read(
    site: Site, operator: httpx.Client, redis_client: RedisClient
) -> None:
    assert operator.get("/workspaces").status_code == 200  # the listing is read, and kept
    later = f"later-{uuid.uuid4().hex[:8]}"
    try:
        assert operator.get(f"/w/{later}/state").status_code == 404  # nothing there yet
        StateStore(redis_client, later).commit(mutation("set", "decision.db", "mysql"))
        assert operator.get(f"/w/{later}/state").status_code == 200
    finally:
        delete_workspace(redis_client, later)


def test_no_one_opens_a_workspace_that_holds_nothing(site: Site, operator: httpx.Client) -> None:
    for name in (f"nothing-{uuid.uuid4().hex[:8]}", "-bad-name", "x" * 65):
        assert operator.get(f"/w/{name}/inbox").status_code == 404, name
        assert operator.get(f"/w/{name}").status_code == 404, name


def test_the_listing_and_the_switcher_name_every_workspace_to_the_operator(
    site: Site, written: str, operator: httpx.Client
) -> None:
    own = site.app.store.workspace
    listing = operator.get("/workspaces")
    assert listing.status_code == 200
    assert "data only" in _row(listing.text, written)
    assert "holds data only" in _row(listing.text, written)
    mine = _row(listing.text, own)
    assert "configured" in mine and "slack team T0WEB0001" in mine
    page = operator.get(f"/w/{own}/log").text
    switcher = page.split('<details class="switch">', 1)[1].split("</details>", 1)[0]
    assert f'href="/w/{written}/inbox"' in switcher and f"<strong>{own}</strong>" in switcher
    assert operator.get("/", follow_redirects=False).status_code == 200  # more than one: a list


def test_a_member_opens_only_their_own_workspace_and_is_told_of_no_other(
    site: Site, written: str
) -> None:
    own = site.app.store.workspace
    moderator = person("slack", MOD, ("moderator",))
    with signed_in(site, person_in(own, moderator)) as member:
        for page in PAGES:
            assert member.get(f"/w/{own}/{page}").status_code == 200, page
            refused = member.get(f"/w/{written}/{page}")
            assert refused.status_code == 404, (page, refused.status_code)
            assert "postgres" not in refused.text
        assert member.get(f"/w/{written}").status_code == 404
        listing = member.get("/workspaces")
        assert listing.status_code == 200 and written not in listing.text
        assert f'href="/w/{own}/inbox"' in listing.text
        assert written not in member.get(f"/w/{own}/state").text  # nor in the header
        assert '<details class="switch">' not in member.get(f"/w/{own}/state").text
        answer = member.get("/", follow_redirects=False)
        assert answer.status_code == 302 and answer.headers["location"] == f"/w/{own}/inbox"


def _row(html: str, name: str) -> str:
    """The listing's table row whose link is ``name``'s."""
    for row in html.split("<tbody>", 1)[1].split("<tr>"):
        if f'href="/w/{name}/inbox"' in row:
            return row.split("</tr>", 1)[0]
    raise AssertionError(f"no row for {name}")
