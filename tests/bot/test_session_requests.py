"""What a turn said to the bot on Slack or Discord asks of the session itself: "show" and
"topic: NAME"; anything else is a turn."""

from __future__ import annotations

import pytest

from bot.chat.requests import request_of
from core.deliberation.messages import TopicSet
from tests.factories import actor


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("show", "show_requested"),
        ("  Show! ", "show_requested"),
        ("/show", "show_requested"),
        ("topic: billing DB", "topic_set"),
        ("/topic billing DB", "topic_set"),
        ("show me the options", None),
        ("the topic is hard", None),
        ("topic:", None),
        ("topic: " + "x" * 201, "topic_set"),  # cut to 200: the notice shows what was kept
    ],
)
def test_what_a_turn_asks_of_the_session(text: str, kind: str | None) -> None:
    found = request_of(text, actor("user:ana"))
    assert (found.kind if found else None) == kind
    if isinstance(found, TopicSet):
        assert 1 <= len(found.topic) <= 200
