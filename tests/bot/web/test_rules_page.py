"""The Rules page over real HTTP, after the real rule engine handled real commits: each
rule with its evaluations, fired or skipped and why, each linking to its trace; the trace
page draws a turn's steps in order, masks secrets and says when an id is unknown."""

from __future__ import annotations

from pathlib import Path

import httpx
from redis import Redis

from tests.bot.web.conftest import OPERATOR_TOKEN, serve_site
from tests.rules.rig import make_rig

RULES = """
  - id: big_numbers
    description: Note a number above five
    when: {key: "test.n", op: set}
    if: {expr: "mutation.value > 5"}
    then:
      - mutate: {op: set, key: test.noticed, value: "{{ mutation.value }}"}
"""
BEARER = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}


def test_each_rule_shows_what_it_did_and_why_and_links_to_the_trace(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    rig = make_rig(tmp_path, redis_client, workspace, RULES)
    small = rig.commit("set", "test.n", 3)
    big = rig.commit("set", "test.n", 9)
    rig.work()
    site = serve_site(rig.app)
    try:
        page = httpx.get(f"{site.base}/w/{workspace}/rules", headers=BEARER).text
        section = page.split('id="rule-big_numbers"')[1].split("</section>")[0]
        assert "Note a number above five" in section
        assert section.count(">fired<") == 1 and section.count(">skipped<") == 1
        assert "<td>if.expr is false</td>" in section  # why it was skipped
        assert "the trigger and the condition hold" in section and ">done<" in section
        for done in (small, big):
            assert f"/w/{workspace}/trace/{done.mutation.correlation_id}" in section
        trace = httpx.get(
            f"{site.base}/w/{workspace}/trace/{big.mutation.correlation_id}", headers=BEARER
        ).text
        labels = [part.split("</span>")[0] for part in trace.split('class="stage">')[1:]]
        assert labels[0] == "mutation" and "rule" in labels
        assert labels.index("mutation") < labels.index("rule")
    finally:
        site.served.stop()


def test_a_trace_masks_secrets_and_an_unknown_id_is_a_404(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    rig = make_rig(tmp_path, redis_client, workspace, RULES)
    done = rig.commit("set", "secret.stream-key", "live_sk_0123456789", who="admin:root")
    site = serve_site(rig.app)
    try:
        trace = httpx.get(
            f"{site.base}/w/{workspace}/trace/{done.mutation.correlation_id}", headers=BEARER
        )
        assert trace.status_code == 200 and "secret.stream-key" in trace.text
        assert "live_sk_0123456789" not in trace.text
        missing = httpx.get(f"{site.base}/w/{workspace}/trace/0123456789abcdef", headers=BEARER)
        assert missing.status_code == 404 and "nothing has the id 0123456789abcdef" in missing.text
        odd = httpx.get(f"{site.base}/w/{workspace}/trace/%3Cscript%3E", headers=BEARER)
        assert odd.status_code == 404 and "<script>" not in odd.text
    finally:
        site.served.stop()


def test_why_a_rule_on_a_secret_key_did_not_fire_never_shows_its_value(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    rules = """
  - id: key_rotated
    when: {key: "secret.*", op: set}
    if: {expr: "mutation.value == 'rotate-me'"}
    then:
      - mutate: {op: set, key: test.noticed, value: "{{ mutation.value }}"}
"""
    rig = make_rig(tmp_path, redis_client, workspace, rules)
    rig.commit("set", "secret.stream-key", "live_sk_0123456789", who="admin:root")
    rig.work()
    [evaluated] = rig.evaluations("evaluated")
    assert evaluated["data"]["fired"] is False
    site = serve_site(rig.app)
    try:
        page = httpx.get(f"{site.base}/w/{workspace}/rules", headers=BEARER).text
        section = page.split('id="rule-key_rotated"')[1].split("</section>")[0]
        assert ">skipped<" in section and "about a secret key" in section
        assert "live_sk_0123456789" not in page
    finally:
        site.served.stop()
