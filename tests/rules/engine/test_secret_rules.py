"""Rules that read a secret key, as reproduced: its value was kept in the evaluation's
``why`` (``to:``, ``from:``, ``if.state``, ``if.expr``), in the arguments a run planned and
in a step's error, and the Rules and Trace pages and ``rules why`` printed it. Each is now
kept as ``(secret)``, while the run itself gets the real value."""

from __future__ import annotations

import json
from pathlib import Path

from redis import Redis

from core.gateway.outcome import SECRET
from tests.bot.secret_paths import RULES, VAULT
from tests.rules.rig import make_rig

TOKEN, OTHER = "sk_live_51HxTOKEN", "other-S3CRET-value"


def test_a_rules_records_show_a_secret_value_masked_and_its_run_gets_it(
    tmp_path: Path, server_redis: Redis, workspace: str
) -> None:
    rig = make_rig(tmp_path, server_redis, workspace, RULES, keys=VAULT)
    rig.commit("set", "vault.other", OTHER, who="admin:root")
    rig.commit("set", "vault.token", TOKEN, who="admin:root")
    rig.commit("set", "test.tick", 1)
    rig.work()
    rows = rig.evaluations()
    kept = json.dumps(rows)
    assert TOKEN not in kept and OTHER not in kept
    why = {r["data"]["rule"]: r["data"].get("why") for r in rows if r["event"] == "evaluated"}
    assert why["to_a_value"] == f'to: is "{SECRET}", not "nope"'
    assert why["state_equals"] == f'if.state: vault.token is "{SECRET}", not "nope"'
    assert why["expression_of_it"] == "if.expr is a string, not true or false"
    [planned] = [
        r for r in rows if r["data"].get("rule") == "copies_the_token" and "steps" in r["data"]
    ]
    assert planned["data"]["steps"][0]["args"]["message"] == f"rotated to {SECRET}"
    assert planned["data"]["steps"][1]["mutate"]["value"] == SECRET
    [failed] = [r for r in rows if r["event"] == "action.failed"]
    assert failed["data"]["rule"] == "bad_arguments_quote_it"  # said without the input
    assert failed["data"]["error"] == (
        "bad arguments: level: expected one of 'debug', 'info', 'warning' or 'error'"
    )
    # the run itself had the value: the mutation it derived holds it
    assert rig.app.store.get("vault.copy").value == TOKEN  # type: ignore[union-attr]
