"""``CheckedTokens``: Bolt's cache of what ``auth.test`` said of each bot token, bounded to
the most recently used, and safe for Bolt's "is it there, then read it" from many threads."""

from __future__ import annotations

import threading

from slack_bolt.authorization import AuthorizeResult

from bot.slack.oauth.authorize import CheckedTokens


def said(team: str) -> AuthorizeResult:
    return AuthorizeResult(enterprise_id=None, team_id=team, bot_token=f"xoxb-{team}")


def test_it_keeps_the_most_recently_used_tokens() -> None:
    tokens = CheckedTokens(size=2)
    tokens["xoxb-a"], tokens["xoxb-b"] = said("A"), said("B")
    assert "xoxb-a" in tokens  # used: now the newest
    tokens["xoxb-c"] = said("C")
    assert "xoxb-b" not in tokens
    assert "xoxb-a" in tokens and tokens["xoxb-a"].team_id == "A"
    assert "xoxb-c" in tokens and tokens["xoxb-c"].team_id == "C"
    assert len(tokens) == 2


def test_what_a_thread_found_it_reads_even_if_another_evicted_it_since() -> None:
    tokens = CheckedTokens(size=1)
    tokens["xoxb-a"] = said("A")
    assert "xoxb-a" in tokens

    other = threading.Thread(target=tokens.__setitem__, args=("xoxb-b", said("B")))
    other.start()
    other.join()

    assert dict.__contains__(tokens, "xoxb-a") is False  # gone from the cache
    assert tokens["xoxb-a"].team_id == "A"  # what this thread's question found


def test_a_token_not_there_is_not_there() -> None:
    tokens = CheckedTokens()
    assert "xoxb-never" not in tokens
    tokens["xoxb-a"] = said("A")
    assert "xoxb-never" not in tokens
