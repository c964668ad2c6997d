"""A time no log holds on the command line is one usage error naming the option (exit 2),
never a traceback, and nothing is read or written: before 1970, past 9999-12-31, garbage;
on every option that takes a time (``state get|list --at``, ``rules replay --since|--until``).
The Log page's ``since``/``until`` are checked in ``tests/bot/web/test_bad_input.py``."""

from __future__ import annotations

import pytest

from tests.bot.cli.process import run

TIMES = {
    "0001-01-01": "'0001-01-01' is before 1970, when no log starts",
    "1969-12-31": "'1969-12-31' is before 1970, when no log starts",
    "1969-12-31T23:59:59.999Z": "is before 1970, when no log starts",
    "99999999999999d": "ago is before 1970, when no log starts",
    "9999-12-31T23:59:59.9999999": "is past 9999-12-31",
    "9999999999999999999-0": "is past any log id (9999-12-31)",
    "99999999999999999999-0": "is not a time: give ISO-8601",
    "10000-01-01": "is not a time: give ISO-8601",
    "2026-02-30": "is not a time: give ISO-8601",
    "1e400s": "is not a time: give ISO-8601",
    "-1": "is not a time: give ISO-8601",
    "yesterday": "is not a time: give ISO-8601",
}


@pytest.mark.parametrize("text", list(TIMES))
@pytest.mark.parametrize(
    "argv",
    [
        ["state", "get", "decision.x", "--at"],
        ["state", "list", "--at"],
        ["rules", "replay", "--since"],
        ["rules", "replay", "--since", "1h", "--until"],
    ],
    ids=["get-at", "list-at", "replay-since", "replay-until"],
)
def test_a_time_no_log_holds_is_one_usage_error(
    capsys: pytest.CaptureFixture[str], workspace: str, argv: list[str], text: str
) -> None:
    code, out, err = run(capsys, workspace, *argv, text)
    assert code == 2 and out == "" and "Traceback" not in err
    [line] = err.splitlines()
    assert f"error: argument {argv[-1]}: " in line and TIMES[text] in line, line
