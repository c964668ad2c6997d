"""The Slack bot in HTTP mode, through the real Bolt app and the real slack-sdk client:
signed requests in, Web API calls out to a local Slack server, state in the real Redis."""

from __future__ import annotations

import json
import time
from typing import Any

import openai

from bot.app import App
from bot.slack.buttons import parse_button
from core.llm.chat import ChatModel
from core.runtime.sessions import SessionStore
from core.state.actor import ActorKind
from tests.bot.slack.rig import CHANNEL, SlackBot, button, event_callback, mention, message, new_ts
from tests.factories import mutation
from tests.model_script import kind, label, output, proposing, user_payload
from tests.openai_server import OpenAIServer, Reply
from tests.polling import wait_for
from tests.servers.slack_api import POST_MESSAGE, SlackServer

IDEA = "what if we used postgres for the event store"


def started(bot: SlackBot) -> tuple[dict, dict]:  # type: ignore[type-arg]
    """A thread the bot replied in: (the mention, the reply)."""
    root = mention(IDEA)
    bot.event(root)
    return root, bot.replies()[-1]


def closing_line(update: dict) -> str:  # type: ignore[type-arg]
    return str(update["blocks"][-1]["elements"][0]["text"])


def shown(answer: dict[str, Any]) -> str:
    """A slash command's answer as Slack displays it (its control characters unescaped)."""
    text = str(answer["text"])
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def test_a_mention_gets_a_threaded_reply_with_buttons(bot: SlackBot) -> None:
    said = mention(IDEA)
    assert bot.event(said).status_code == 200
    [reply] = bot.replies()
    assert reply["channel"] == CHANNEL and reply["thread_ts"] == said["ts"]
    kinds = [block["type"] for block in reply["blocks"]]
    assert kinds[0] == "section" and kinds[-1] == "actions"
    context = next(b for b in reply["blocks"] if b["type"] == "context" and "mode:" in str(b))
    assert "CandidateReady" in context["elements"][0]["text"]
    use = button(reply, "ConfirmCurrent")
    assert use["style"] == "primary" and use["text"]["text"] == "Use this"
    ref = parse_button(use["action_id"], use["value"])
    assert ref.session == f"slack:{CHANNEL}:{said['ts']}" and ref.version == 1


def test_unsigned_badly_signed_and_stale_requests_are_refused(bot: SlackBot, team_app: App) -> None:
    said = mention(IDEA)
    body = json.dumps(event_callback(said, "Ev0SIGNED"))
    assert bot.post(body, "application/json", secret="not-the-secret").status_code == 401
    stale = int(time.time()) - 10 * 60
    assert bot.post(body, "application/json", timestamp=stale).status_code == 401
    unsigned = bot.http.post(bot.url, content=body, headers={"Content-Type": "application/json"})
    assert unsigned.status_code == 401
    bot.listeners.idle()
    assert bot.listeners.futures == [] and bot.slack.messages == []
    sessions = SessionStore(team_app.redis, team_app.store.workspace)
    assert not sessions.exists(f"slack:{CHANNEL}:{said['ts']}")
    assert bot.post(body, "application/json").status_code == 200  # the same, signed
    [reply] = bot.replies()
    assert bot.click(reply, "ConfirmCurrent", secret="not-the-secret").status_code == 401
    assert bot.click(reply, "ConfirmCurrent", timestamp=stale).status_code == 401
    form = "command=%2Fdeliberate&text=state&user_id=U0ALICE&channel_id=C0TEAM"
    assert bot.post(form, "application/x-www-form-urlencoded", timestamp=stale).status_code == 401
    bot.listeners.idle()
    assert len(team_app.log) == 0 and bot.slack.updates == [] and bot.slack.responses == []


def test_messages_in_the_bots_threads_are_turns_and_nothing_else_is(bot: SlackBot) -> None:
    root, _ = started(bot)
    bot.event(message("make it smaller, team only", thread_ts=root["ts"]))
    bot.replies(2)
    bot.event(message("unrelated chatter in the channel"))
    bot.event(message("a thread the bot is not in", thread_ts=new_ts()))
    bot.event(message("the bot itself", user="U0TESTBOT", thread_ts=root["ts"]))
    other_bot = message("beep", thread_ts=root["ts"], bot_id="B0OTHER", subtype="bot_message")
    bot.event(other_bot)
    bot.event(message("an edit", thread_ts=root["ts"], subtype="message_changed"))
    bot.listeners.idle()
    assert len(bot.slack.messages) == 2
    assert {m["thread_ts"] for m in bot.slack.messages} == {root["ts"]}


def test_a_message_delivered_twice_and_retried_is_one_turn(bot: SlackBot, team_app: App) -> None:
    root, _ = started(bot)
    said = message("<@U0TESTBOT> and on a friday", thread_ts=root["ts"])
    as_mention = {k: v for k, v in said.items() if k != "channel_type"} | {"type": "app_mention"}
    bot.event(said, event_id="Ev0MESSAGE")
    bot.event(as_mention, event_id="Ev0MENTION")
    bot.event(said, event_id="Ev0MESSAGE", retry=1)
    bot.listeners.idle()
    assert len(bot.slack.messages) == 2
    session = SessionStore(team_app.redis, team_app.store.workspace).load(
        f"slack:{CHANNEL}:{root['ts']}"
    )
    assert session.interaction.turn_count == 2


def test_a_click_commits_and_updates_the_message_it_came_from(bot: SlackBot, team_app: App) -> None:
    _, reply = started(bot)
    response = bot.click(reply, "ConfirmCurrent")
    assert response.status_code == 200  # acknowledged before the commit
    [update] = bot.slack.wait_until(lambda: bot.slack.updates)
    assert update["ts"] == reply["ts"] and update["channel"] == CHANNEL
    assert all(block["type"] != "actions" for block in update["blocks"])
    line = closing_line(update)
    assert line.startswith("✅ Committed: set decision.") and line.endswith("by <@U0ALICE>")
    [record] = team_app.log.latest(5)
    assert record.mutation.key.startswith("decision.")
    assert (record.mutation.actor.id, record.mutation.actor.platform) == ("U0ALICE", "slack")
    bot.listeners.idle()
    assert bot.slack.ephemerals == []


def test_a_double_click_and_a_redelivered_click_commit_once(bot: SlackBot, team_app: App) -> None:
    _, reply = started(bot)
    bot.click(reply, "ConfirmCurrent", trigger_id="1111.2222.same")
    bot.click(reply, "ConfirmCurrent", trigger_id="1111.2222.same")  # Slack sent it again
    bot.click(reply, "ConfirmCurrent", user="U0BOB")  # a second person, at once
    bot.listeners.idle()
    assert len(team_app.log) == 1
    assert len(bot.slack.updates) == 1
    assert len(bot.slack.ephemerals) == 2  # the other two are told, and only them
    assert {e["user"] for e in bot.slack.ephemerals} <= {"U0ALICE", "U0BOB"}


def test_a_stale_button_shows_the_clicker_the_current_one(bot: SlackBot, team_app: App) -> None:
    root, first = started(bot)
    bot.event(message("make it postgres 16 with logical replication", thread_ts=root["ts"]))
    second = bot.replies(2)[-1]
    old, new = (button(m, "ConfirmCurrent")["value"] for m in (first, second))
    assert old != new  # the candidate moved on
    bot.click(first, "ConfirmCurrent")
    [notice] = bot.ephemerals()
    assert notice["user"] == "U0ALICE" and notice["thread_ts"] == root["ts"]
    assert "This suggestion changed; here is the current one." in notice["text"]
    assert button(notice, "ConfirmCurrent")["value"] == new
    bot.listeners.idle()
    assert len(team_app.log) == 0 and bot.slack.updates == []


def test_forged_buttons_are_refused_and_change_nothing(bot: SlackBot, team_app: App) -> None:
    _, reply = started(bot)
    real = json.loads(button(reply, "ConfirmCurrent")["value"])
    moved = real | {"s": "slack:C0OTHER:1700000000.000100"}
    elsewhere = json.dumps(moved, separators=(",", ":"))  # spelled as the bot spells it
    bot.click(reply, "ConfirmCurrent", value=elsewhere)
    bot.click(reply, "ConfirmCurrent", value="{not json")
    bot.click(reply, "ConfirmCurrent", value=json.dumps(real | {"role": "admin"}))
    notices = bot.ephemerals(3)
    assert all("nothing was changed" in n["text"] for n in notices)
    assert any("another conversation" in n["text"] for n in notices)
    bot.listeners.idle()
    assert len(team_app.log) == 0 and bot.slack.updates == []


def test_an_agent_proposal_is_applied_only_by_a_moderator(
    team_app: App, slack_api: SlackServer, openai_server: OpenAIServer
) -> None:
    openai_server.answer_with = proposing("stream.state", "off")
    client = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
    bot = SlackBot(team_app, slack_api, ChatModel(client, "m", timeout_sec=5))
    bot.start()
    try:
        bot.event(mention("end the stream"))
        [reply] = bot.replies()
        apply = button(reply, "ApplyProposal")
        assert apply["text"]["text"] == "Apply: set stream.state = off"
        assert apply["confirm"]["confirm"]["text"] == "Do it"  # protected: Slack asks first
        bot.click(reply, "ApplyProposal", user="U0ALICE")
        [denial] = bot.ephemerals()
        assert denial["user"] == "U0ALICE" and "protected" in denial["text"]
        bot.listeners.idle()
        assert team_app.store.get("stream.state") is None and bot.slack.updates == []
        bot.click(reply, "ApplyProposal", user="U0MIA")  # a moderator by user group
        [update] = slack_api.wait_until(lambda: slack_api.updates)
        assert closing_line(update).endswith("by <@U0MIA>")
        entry = team_app.store.get("stream.state")
        assert entry is not None and entry.value == "off"
        assert entry.updated_by.kind is ActorKind.MODERATOR
    finally:
        bot.stop()


def test_the_slash_command_answers_the_asker_alone(bot: SlackBot, team_app: App) -> None:
    team_app.gateway.propose(mutation("set", "decision.db", "postgres", reason="team call"))
    team_app.gateway.propose(mutation("set", "secret.stream-key", "sk-live-123", "admin:root"))
    before = len(team_app.log)
    state = bot.command("state")
    assert state["response_type"] == "ephemeral"
    assert 'decision.db = "postgres"' in state["text"] and "sk-live-123" not in state["text"]
    assert "secret.stream-key = (secret)" in state["text"]
    assert 'set decision.db "postgres" -> v1' in shown(bot.command("log decision.db"))
    why = shown(bot.command("why decision.db"))
    assert "by user:alice, reason: team call" in why
    assert "/deliberate why KEY" in bot.command("help")["text"]
    assert "why needs a KEY" in bot.command("why")["text"]
    assert "Unknown subcommand 'frobnicate'" in bot.command("frobnicate")["text"]
    assert len(team_app.log) == before


def test_a_rate_limited_post_waits_out_retry_after(bot: SlackBot) -> None:
    bot.slack.rate_limit_next(retry_after=1)
    started(bot)
    [limited, posted] = bot.slack.requests_to("POST", POST_MESSAGE)
    assert posted.received_at - limited.received_at >= 1.0


def test_an_action_that_asks_again_closes_the_message_and_replies_in_the_thread(
    bot: SlackBot, team_app: App
) -> None:
    root, reply = started(bot)
    bot.click(reply, "AlternativeCurrent")
    [update] = bot.slack.wait_until(lambda: bot.slack.updates)
    assert closing_line(update) == "↪ <@U0ALICE> chose *Try another angle*"
    [_, another] = bot.replies(2)
    assert another["thread_ts"] == root["ts"] and "other angle" in another["text"]
    assert len(team_app.log) == 0  # asking again commits nothing


def test_a_direct_message_is_a_turn(bot: SlackBot) -> None:
    said = message(IDEA, channel="D0ALICE", channel_type="im")
    bot.slack.channels = None  # any channel exists, the DM included
    bot.event(said)
    [reply] = bot.replies()
    assert (reply["channel"], reply["thread_ts"]) == ("D0ALICE", said["ts"])


def slow_expand(request: dict[str, Any]) -> Reply:
    """The model: a candidate for every turn, and slow to expand one (a click's generation
    has no user input)."""
    if kind(request) == "classify":
        return label("brainstorm")
    if user_payload(request)["user_input"] == "":
        return Reply(output("Expanded.", "Postgres, expanded").content, delay=1.5)
    return output("How about postgres?", "Postgres")


def expanding(openai_server: OpenAIServer) -> bool:
    """The model has been asked to expand (``slow_expand`` holds its answer for 1.5 s)."""
    asked = [r for r in openai_server.requests if kind(r) != "classify"]
    return any(user_payload(r)["user_input"] == "" for r in asked)


def test_two_clicks_on_one_message_at_once_both_show(
    team_app: App, slack_api: SlackServer, openai_server: OpenAIServer
) -> None:
    openai_server.answer_with = slow_expand
    client = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
    bot = SlackBot(team_app, slack_api, ChatModel(client, "m", timeout_sec=5))
    bot.start()
    try:
        _, reply = started(bot)
        bot.click(reply, "ExpandCurrent", user="U0BOB")  # its update lands last
        wait_for(lambda: expanding(openai_server), "the expansion's model call")  # not a guess
        bot.click(reply, "ConfirmCurrent")
        bot.listeners.idle()
        assert len(slack_api.updates) == 2 and len(team_app.log) == 1
        [message] = [m for m in slack_api.messages if m["ts"] == reply["ts"]]
        lines = [b["elements"][0]["text"] for b in message["blocks"] if b["type"] == "context"]
        assert any(line.startswith("✅ Committed: set decision.") for line in lines)
        assert "↪ <@U0BOB> chose *Expand*" in lines
    finally:
        bot.stop()


def test_a_click_on_an_ephemeral_notice_commits_and_tells_the_thread(
    bot: SlackBot, team_app: App
) -> None:
    root, first = started(bot)
    bot.event(message("make it postgres 16 with logical replication", thread_ts=root["ts"]))
    bot.replies(2)
    bot.click(first, "ConfirmCurrent")  # stale: the notice carries the current button
    [notice] = bot.ephemerals()
    notice_message = {"ts": "1700000099.000100", "thread_ts": root["ts"], **notice}
    bot.click(notice_message, "ConfirmCurrent", ephemeral=True)
    [replaced] = bot.slack.wait_until(lambda: bot.slack.responses)
    assert replaced["replace_original"] is True and replaced["text"].startswith("✅ Committed")
    outcome = bot.replies(3)[-1]
    assert outcome["thread_ts"] == root["ts"] and outcome["text"].startswith("Committed: set")
    assert len(team_app.log) == 1


def test_a_protected_action_is_refused_to_a_member_and_done_for_a_moderator(
    bot: SlackBot, team_app: App
) -> None:
    _, reply = started(bot)
    bot.click(reply, "ConfirmCurrent", as_action="EndStream")
    [denial] = bot.ephemerals()
    assert denial["user"] == "U0ALICE" and "stream.state is protected" in denial["text"]
    bot.listeners.idle()
    assert team_app.store.get("stream.state") is None and bot.slack.updates == []
    bot.click(reply, "ConfirmCurrent", as_action="EndStream", user="U0SAM")  # by user id
    [update] = bot.slack.wait_until(lambda: bot.slack.updates)
    assert "set stream.state" in closing_line(update)
    assert closing_line(update).endswith("by <@U0SAM>")
    entry = team_app.store.get("stream.state")
    assert entry is not None and entry.value == "off"


def test_a_rate_limited_click_is_told_to_the_clicker_alone(bot: SlackBot, team_app: App) -> None:
    root, reply = started(bot)
    bot.click(reply, "ConfirmCurrent", as_action="Shout")
    bot.slack.wait_until(lambda: bot.slack.updates)
    next_steps = bot.replies(2)[-1]  # the message closed; the buttons that remain come after
    assert next_steps["text"] == "What next?" and button(next_steps, "ConfirmCurrent")
    bot.event(message("make it postgres 16 with logical replication", thread_ts=root["ts"]))
    second = bot.replies(3)[-1]
    bot.click(second, "ConfirmCurrent", as_action="Shout")
    [refusal] = bot.ephemerals()
    assert refusal["user"] == "U0ALICE"
    assert refusal["text"].startswith("Not done: too many changes to shout.last; try again in")
    bot.listeners.idle()
    assert len(team_app.log) == 1 and len(bot.slack.updates) == 1


def test_an_answer_quoting_backticks_stays_in_its_code_block(bot: SlackBot, team_app: App) -> None:
    """A value holding three backticks ended the answer's code block where it stood, and
    what followed was read as mrkdwn (bold, italics, strikethrough): every two backticks are
    spelled apart now, so the block's own fences are the only three in a row."""
    said = "````*bold* _it_ ~gone~ ``"
    team_app.gateway.propose(mutation("set", "decision.db", said, reason="team call"))
    text = bot.command("state")["text"]
    assert text.startswith("```\n") and text.endswith("\n```") and text.count("```") == 2, text
    assert f'decision.db = "{said}"' in text.replace("\u200b", ""), text  # (shown as typed)
