"""One tenant's side of the Slack adapter for one request (``Team``), where a click came from
(``Click``), and what the adapter sends through them: views posted into a thread, a word for
one person alone, a clicked message closed."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from bot.chat.break_glass import break_glass_command
from bot.chat.click_outcomes import ICONS
from bot.chat.deliveries import Deliveries
from bot.proposals.refs import Install, Shown, ShownMessages, keep_shown, proposals_in
from core.config.tenants import Tenant
from core.deliberation.view import View
from core.runtime.events import Event
from core.runtime.runner import Runtime
from core.state.actor import Actor

from .buttons import ButtonRef
from .closing import ClosedMessages
from .forms import OpenForms
from .render import escape, fallback_text, mention, view_blocks
from .roles import SlackPeople
from .turns import PLATFORM, thread_of

if TYPE_CHECKING:
    from bot.app import App

__all__ = ["Click", "Team", "close", "glass_by_command", "post", "tell"]

log = logging.getLogger("deliberate.slack")


@dataclass(frozen=True)
class Click:
    """Where a click came from: the button's session, the clicker, and the message (a
    public one has ``message``; an ephemeral one only a ``response_url``)."""

    ref: ButtonRef
    user: str
    label: str
    message: dict[str, Any] | None
    response_url: str | None


@dataclass(frozen=True)
class Team:
    """One tenant's side of the adapter, for one request: its workspace's app and runtime,
    the Web API client with its token, and the installation the request reached."""

    tenant: Tenant
    app: App
    runtime: Runtime
    client: WebClient
    people: SlackPeople
    install: Install

    @property
    def deliveries(self) -> Deliveries:
        return Deliveries(self.app.redis, self.app.store.workspace)

    @property
    def closed(self) -> ClosedMessages:
        app = self.app
        return ClosedMessages(
            app.redis, app.store.workspace, self.client, app.config.sessions.ttl_sec
        )

    @property
    def forms(self) -> OpenForms:
        return OpenForms(self.app.redis, self.app.store.workspace)


def close(team: Team, click: Click, line: str) -> bool:
    """True when the public message now says ``line``; a clicked ephemeral message is
    replaced, and the outcome still goes to the thread."""
    if click.message is not None:
        return team.closed.close(thread_of(click.ref.session)[0], click.message, line)
    if click.response_url:
        team.closed.replace_ephemeral(click.response_url, line)
    return False


def glass_by_command(team: Team, actor: Actor, rest: str) -> str:
    """``/deliberate breakglass PROPOSAL_ID@REVISION REASON`` (``bot.chat.break_glass``): the
    answer; once it commits, the messages here that showed the proposal's buttons say so, as
    a click's."""
    broken = break_glass_command(team.app, actor, rest)
    if broken.committed and broken.proposal_id is not None:
        line = f"{ICONS['committed']} {escape(broken.text)} — by {mention(str(actor))}"
        try:
            shown = ShownMessages.in_workspace(team.app)
            for message in shown.of(broken.proposal_id):
                if message.platform == PLATFORM:
                    clicked = {"ts": message.message, "text": message.text}
                    team.closed.close(message.channel, clicked | {"blocks": message.blocks}, line)
        except RedisError as error:
            log.error("cannot close the messages of %s: %s", broken.proposal_id, error)
    return broken.text


def post(team: Team, session: str, user: str, events: list[Event]) -> None:
    channel, thread_ts = thread_of(session)
    for event in events:
        if not isinstance(event, View):
            continue  # a click's outcome: shown by closing the clicked message
        text, blocks = fallback_text(event), view_blocks(event)
        try:
            if event.ephemeral:
                team.client.chat_postEphemeral(
                    channel=channel, user=user, thread_ts=thread_ts, text=text, blocks=blocks
                )
            else:
                sent = team.client.chat_postMessage(
                    channel=channel,
                    thread_ts=thread_ts,
                    text=text,
                    blocks=blocks,
                    unfurl_links=False,  # no preview of a page someone's words link to
                    unfurl_media=False,
                )
                shown = Shown(
                    platform=PLATFORM,
                    channel=channel,
                    message=str(sent.get("ts")),
                    thread=thread_ts,
                    text=text,
                    blocks=blocks,
                    team=team.install.team,
                    enterprise=team.install.enterprise,
                    org_install=team.install.org_install,
                )
                remember(team, proposals_in(event), shown)
        except (SlackApiError, SlackClientError, OSError) as error:
            log.error("cannot post to Slack channel %s: %s", channel, error)


def remember(team: Team, proposals: list[str], shown: Shown) -> None:
    """Keep where ``proposals`` are shown, so that their messages close when they expire
    (a message that cannot be kept is still posted)."""
    try:
        keep_shown(team.app, proposals, shown)
    except RedisError as error:
        log.error("cannot keep slack message %s: %s", shown.ref, error)


def tell(client: WebClient, channel: str, thread_ts: str | None, user: str, text: str) -> None:
    if not (channel and user):
        return
    try:
        client.chat_postEphemeral(
            channel=channel, user=user, thread_ts=thread_ts, text=escape(text)
        )
    except (SlackApiError, SlackClientError, OSError) as error:
        log.error("cannot tell %s in %s: %s", user, channel, error)
