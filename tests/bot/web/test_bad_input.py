"""Bad input on the web is a 400 or a one-line refusal, never a 500, and changes nothing
(issue 41: an edit of ``{"a": 1e999}`` or a lone surrogate answered 500; so did
``?since=0001-01-01`` and ``?until=1969-12-31`` on the Log page): the Inbox's edit form, the
Log page's times, and an entry planted with a lone surrogate on the State page."""

from __future__ import annotations

import httpx
import pytest

from bot.app import App
from core.gateway.outcome import Pending, ProposalStatus
from tests.bot.web.conftest import OPERATOR_TOKEN, Site
from tests.bot.web.test_inbox import MODERATOR, act, client_of, status
from tests.bot.web.test_log_page import commit, read
from tests.core.state.test_poison import NOT_UTF8, plant
from tests.factories import actor, mutation

KEY = "entity.task.launch"


def task_proposed(app: App) -> str:
    """The model proposes a task (an object): the proposal's id."""
    outcome = app.gateway.propose(
        mutation("set", KEY, {"title": "launch"}, actor("agent:assistant"))
    )
    assert isinstance(outcome, Pending), outcome
    return outcome.proposal.id


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ('{"a": 1e999}', "The new value: the new value holds a number too large for JSON"),
        ('{"a": [1, -1e400]}', "The new value: the new value holds a number too large for JSON"),
        ("[NaN]", "The new value: the new value is not JSON (NaN is not a JSON value)"),
        ('{"a": "\\ud800"}', "The new value: the new value holds U+D800, a lone surrogate"),
        ('{"\\udc80": 1}', "The new value: the new value holds U+DC80, a lone surrogate"),
    ],
    ids=["1e999-in", "-1e400-deep", "NaN", "escaped", "escaped-name"],
)
def test_an_edit_json_cannot_carry_is_refused_in_one_line(
    site: Site, value: str, said: str
) -> None:
    pid = task_proposed(site.app)
    with client_of(site, MODERATOR) as mod:
        page = act(mod, site, pid, "edit", value=value)  # (a 303, then the Inbox: not a 500)
    assert said in page and "Nothing was changed." in page
    assert status(site.app, pid) is ProposalStatus.PENDING
    assert site.app.store.version(KEY) == 0 and len(site.app.log) == 0


def test_bytes_that_are_not_utf8_in_the_edit_form_are_no_500(site: Site) -> None:
    """A browser sends UTF-8. Other bytes in a form are never a lone surrogate here:
    werkzeug keeps a percent-escape that is not UTF-8 as its text ("%ED%A0%80"), and reads
    no field of a body of raw bytes that are not (no CSRF token: 400). No 500, nothing
    unreadable."""
    inbox = f"/w/{site.app.store.workspace}/inbox"

    def edit(body: bytes) -> tuple[str, int]:
        pid = task_proposed(site.app)
        with client_of(site, MODERATOR) as mod:
            form = mod.get(inbox).text
            csrf = form.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
            answer = mod.post(
                f"{inbox}/{pid}/edit",
                content=body + f"&revision=0&csrf_token={csrf}".encode(),
                headers={"Content-Type": "application/x-www-form-urlencoded"},
            )
        return pid, answer.status_code

    assert edit(b"value=%7B%22a%22%3A%22%ED%A0%80%22%7D")[1] == 303
    entry = site.app.store.get(KEY)
    assert entry is not None and entry.value == {"a": "%ED%A0%80"}
    pid, code = edit(b'value={"a":"\xed\xa0\x80"}')
    assert code == 400 and status(site.app, pid) is ProposalStatus.PENDING
    assert site.app.store.version(KEY) == 1


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ({"since": "0001-01-01"}, "since: '0001-01-01' is before 1970, when no log starts"),
        ({"until": "1969-12-31"}, "until: '1969-12-31' is before 1970, when no log starts"),
        ({"since": "1969-12-31 23:59:59"}, "since: '1969-12-31 23:59:59' is before 1970"),
        ({"until": "1900-01-01T00:00"}, "until: '1900-01-01T00:00' is before 1970"),
        ({"since": "10000-01-01"}, "since: '10000-01-01' is not a time"),
        ({"since": "2026-02-30"}, "since: '2026-02-30' is not a time"),
        ({"until": "-1"}, "until: '-1' is not a time"),
        ({"since": "1e400"}, "since: '1e400' is not a time"),
        ({"since": "9" * 40}, "is not a time"),
    ],
)
def test_a_time_no_log_holds_is_a_400_naming_it(
    site: Site, query: dict[str, str], said: str
) -> None:
    commit(site.app, "decision.db", "postgres")
    answer = read(site, **query)
    assert answer.status_code == 400 and said.replace("'", "&#39;") in answer.text
    assert "decision.db" in answer.text  # the rest of the page still shows


@pytest.mark.parametrize(
    "query", [{"since": "1970-01-01"}, {"until": "9999-12-31"}, {"since": "0", "until": "9" * 15}]
)
def test_the_first_and_last_times_there_are_read(site: Site, query: dict[str, str]) -> None:
    commit(site.app, "decision.db", "postgres")
    answer = read(site, **query)
    assert answer.status_code == 200 and "decision.db" in answer.text


def test_an_entry_planted_with_a_lone_surrogate_is_named_not_a_500(site: Site) -> None:
    commit(site.app, "decision.fine", "yes")
    commit(site.app, "decision.bad", "soon planted")
    site.app.redis.hset(site.app.store.keys.entry("decision.bad"), "value", '"\\ud800"')
    page = httpx.get(
        f"{site.base}/w/{site.app.store.workspace}/state",
        headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"},
    )
    assert page.status_code == 200 and "decision.fine" in page.text
    assert "Could not read decision.bad: holds U+D800, a lone surrogate: not text" in page.text


@pytest.mark.parametrize("key", ["", "decision.good"], ids=["every-key", "its-key"])
def test_a_log_record_not_utf8_is_named_on_the_log_page_not_a_500(site: Site, key: str) -> None:
    """A record whose bytes are not UTF-8 (planted by hand) failed the page's whole read:
    it is named, and the records beside it still show."""
    planted = plant(site.app.redis, site.app, NOT_UTF8)
    commit(site.app, "decision.after", "still")
    answer = read(site, **({"key": key} if key else {}))
    assert answer.status_code == 200
    assert f"{planted} cannot be read: its mutation field is not UTF-8" in answer.text
    assert "decision.good" in answer.text and ("decision.after" in answer.text) is not bool(key)
