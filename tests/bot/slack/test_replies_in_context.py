"""A turn's context says whether it replies to someone (issue 42), as Slack's events tell: a
message in a thread another person started (``parent_user_id``), or one naming a person; a
person going on in their own thread, naming only the bot, or typing "<@U...>" as text (not
Slack's mark), replies to nobody. Kept in the
session's last turns as a feature (never the words)."""

from __future__ import annotations

from bot.app import App
from core.runtime.sessions import SessionStore
from tests.bot.slack.rig import CHANNEL, SlackBot, mention, message


def test_a_reply_in_someone_elses_thread_or_naming_a_person_is_a_reply(
    bot: SlackBot, team_app: App
) -> None:
    root = mention("We need a database for billing. Ideas?")  # Alice starts the thread
    bot.event(root)
    bot.replies(1)
    thread = {"thread_ts": root["ts"]}
    said = [
        message("postgres with a replica", user="U0BOB", parent_user_id="U0ALICE", **thread),
        message("and nightly backups", parent_user_id="U0ALICE", **thread),  # her own
        message("<@U0CAROL> what do you think", parent_user_id="U0ALICE", **thread),
        message("<@U0TESTBOT> or mysql", parent_user_id="U0ALICE", **thread),  # the bot only
        message("&lt;@U0FAKE&gt; typed", parent_user_id="U0ALICE", **thread),  # not Slack's
    ]
    for n, event in enumerate(said, start=2):
        bot.event(event)
        bot.replies(n)
    bot.listeners.idle()
    sessions = SessionStore(team_app.redis, team_app.store.workspace)
    recent = sessions.load(f"slack:{CHANNEL}:{root['ts']}").interaction.recent
    assert [(t.who, t.replying) for t in recent] == [
        ("user:U0BOB", True),
        ("user:U0ALICE", False),
        ("user:U0ALICE", True),
        ("user:U0ALICE", False),
        ("user:U0ALICE", False),
    ]
