"""``/deliberate state``, ``log`` and ``why`` as Slack posts them, each counted for the person
who typed it in their team's workspace (issue 41: any member could make the bot read pages of
state and thousands of log records as often as they liked)."""

from __future__ import annotations

from bot.chat.answers import READS_PER_MINUTE
from tests.bot.slack.rig import SlackBot


def test_a_member_past_the_limit_is_told_to_wait_and_another_is_answered(bot: SlackBot) -> None:
    for n in range(READS_PER_MINUTE):
        said = str(bot.command(("state", "log", "why decision.db")[n % 3], user="U0EAGER")["text"])
        assert "Too many" not in said, (n, said)
    refused = str(bot.command("state decision.", user="U0EAGER")["text"])
    assert "Too many state, log and why answers a minute: ask again in" in refused
    assert "Too many" not in str(bot.command("state", user="U0CALM")["text"])
