"""The Slack adapter: Slack's events, clicks and slash commands in, the runtime's events out
as threaded messages, message updates and ephemeral notices. It translates; the core decides.

A click is answered in three ways. What it committed replaces the buttons of the message it
came from (``chat.update``, saying what and by whom; see ``closing.py``). What only the
clicker needs to know (not allowed, stale, already done) reaches them alone
(``chat.postEphemeral``). A new reply (an action that asks the assistant again) goes into the
thread, and so do the buttons that come next."""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from bot.answers import answer
from bot.click_outcome import ClickOutcome
from bot.deliveries import Deliveries
from core.deliberation.messages import ID_PATTERN, ActionClicked, UserSaid
from core.deliberation.view import View
from core.runtime.runner import Event, Runtime

from .blocks import escape, fallback_text, mention, view_blocks
from .buttons import ButtonRef, parse_button
from .closing import ClosedMessages
from .roles import SlackPeople
from .threads import PLATFORM, Said, read_said, thread_of

if TYPE_CHECKING:
    from bot.app import App

__all__ = ["SlackAdapter"]

log = logging.getLogger("deliberate.slack")
TROUBLE = "Something went wrong on our side; nothing was changed. Please try again."


@dataclass(frozen=True)
class Click:
    """Where a click came from: the button's session, the clicker, and the message (a
    public one has ``message``; an ephemeral one only a ``response_url``)."""

    ref: ButtonRef
    user: str
    label: str
    message: dict[str, Any] | None
    response_url: str | None


class SlackAdapter:
    def __init__(self, app: App, runtime: Runtime, client: WebClient) -> None:
        self.app = app
        self.runtime = runtime
        self.client = client
        self.people = SlackPeople(app.config.roles, client)
        self.deliveries = Deliveries(app.redis, app.store.workspace)
        ttl = app.config.sessions.ttl_sec
        self.closed = ClosedMessages(app.redis, app.store.workspace, client, ttl)

    # --- messages ------------------------------------------------------------------------

    def on_event(self, event: dict[str, Any], bot_user_id: str | None, *, mention: bool) -> None:
        """A ``message`` or ``app_mention`` event. A turn is a mention, a direct message, or
        a message in a thread whose session is live; each message is handled once, however
        often and under whichever event type Slack delivers it."""
        said = read_said(event, bot_user_id)
        if said is None:
            return
        delivery = f"{said.channel}:{said.ts}"
        try:
            if not (mention or said.direct or self._in_thread(said)):
                return
            if not self.deliveries.claim(PLATFORM, delivery):
                log.debug("slack message %s was handled already", delivery)
                return
            msg = UserSaid(text=said.text, actor=self.people.actor(said.user))
            events = self.runtime.send(said.session_id, msg)
        except Exception:
            log.exception("slack message %s failed", delivery)
            self._release(delivery)
            self._tell(said.channel, said.thread_ts, said.user, TROUBLE)
            return
        self._post(said.session_id, said.user, events)

    def _in_thread(self, said: Said) -> bool:
        return said.thread_ts != said.ts and self.runtime.sessions.exists(said.session_id)

    def _release(self, delivery: str) -> None:
        """The same message's other delivery (its ``app_mention`` twin) may still take it."""
        try:
            self.deliveries.release(PLATFORM, delivery)
        except Exception:
            log.exception("cannot release slack message %s", delivery)

    # --- clicks --------------------------------------------------------------------------

    def on_click(self, body: dict[str, Any]) -> None:
        """A ``block_actions`` payload (already acknowledged)."""
        user = str((body.get("user") or {}).get("id") or "")
        container = body.get("container") or {}
        channel = str((body.get("channel") or {}).get("id") or container.get("channel_id") or "")
        action = (body.get("actions") or [{}])[0]
        try:
            ref = parse_button(str(action.get("action_id") or ""), action.get("value"))
        except ValueError as exc:
            self._tell(channel, container.get("thread_ts"), user, f"{exc}; nothing was changed.")
            return
        if thread_of(ref.session)[0] != channel or not user:
            text = "This button belongs to another conversation; nothing was changed."
            self._tell(channel, container.get("thread_ts"), user, text)
            return
        label = str((action.get("text") or {}).get("text") or ref.action)
        public = None if container.get("is_ephemeral") else body.get("message")
        click = Click(ref, user, label, public, body.get("response_url"))
        try:
            events = self.runtime.send(ref.session, self._clicked(click, body, action))
        except Exception:
            log.exception("slack click %s on %s failed", ref.action, ref.session)
            self._tell(channel, thread_of(ref.session)[1], user, TROUBLE)
            return
        self._after_click(click, events)

    def _clicked(self, click: Click, body: dict[str, Any], action: dict[str, Any]) -> ActionClicked:
        return ActionClicked(
            action=click.ref.action,
            target_id=click.ref.target_id,
            expected_version=click.ref.version,
            click_id=_click_id(body, action, click.user),
            actor=self.people.actor(click.user),
        )

    def _after_click(self, click: Click, events: list[Event]) -> None:
        outcome = ClickOutcome(events)
        line = outcome.closing_line(f"user:{click.user}", click.label, mention, escape)
        shown = line is not None and self._close(click, line)
        for view in outcome.follow_ups(shown):
            self._post(click.ref.session, click.user, [view])

    def _close(self, click: Click, line: str) -> bool:
        """True when the public message now says ``line``; a clicked ephemeral message is
        replaced, and the outcome still goes to the thread."""
        if click.message is not None:
            return self.closed.close(thread_of(click.ref.session)[0], click.message, line)
        if click.response_url:
            self.closed.replace_ephemeral(click.response_url, line)
        return False

    # --- slash command -------------------------------------------------------------------

    def on_command(self, text: str) -> str:
        """``/deliberate TEXT``: the answer, as mrkdwn for the asker alone."""
        try:
            text = answer(self.app, text, max_chars=2900)
        except Exception:  # the asker should hear something rather than nothing
            log.exception("slack /deliberate %r failed", text)
            return TROUBLE
        return f"```\n{escape(text)}\n```"

    # --- posting -------------------------------------------------------------------------

    def _post(self, session: str, user: str, events: list[Event]) -> None:
        channel, thread_ts = thread_of(session)
        for event in events:
            if not isinstance(event, View):
                continue  # a click's outcome: shown by closing the clicked message
            text, blocks = fallback_text(event), view_blocks(event)
            try:
                if event.ephemeral:
                    self.client.chat_postEphemeral(
                        channel=channel, user=user, thread_ts=thread_ts, text=text, blocks=blocks
                    )
                else:
                    self.client.chat_postMessage(
                        channel=channel, thread_ts=thread_ts, text=text, blocks=blocks
                    )
            except (SlackApiError, SlackClientError, OSError) as error:
                log.error("cannot post to Slack channel %s: %s", channel, error)

    def _tell(self, channel: str, thread_ts: str | None, user: str, text: str) -> None:
        if not (channel and user):
            return
        try:
            self.client.chat_postEphemeral(
                channel=channel, user=user, thread_ts=thread_ts, text=escape(text)
            )
        except (SlackApiError, SlackClientError, OSError) as error:
            log.error("cannot tell %s in %s: %s", user, channel, error)


def _click_id(body: dict[str, Any], action: dict[str, Any], user: str) -> str:
    """Slack's id of this interaction: a redelivered payload has the same one, a second click
    another."""
    raw = str(body.get("trigger_id") or f"{user}-{action.get('action_ts')}")
    click_id = f"{PLATFORM}-{raw}"
    if re.match(ID_PATTERN, click_id):
        return click_id
    return f"{PLATFORM}-" + hashlib.blake2s(raw.encode(), digest_size=16).hexdigest()
