"""The Slack adapter: Slack's events, clicks and slash commands in, the runtime's events out
as threaded messages, message updates and ephemeral notices. It translates; the core decides.

A click is answered in three ways. What it committed replaces the buttons of the message it
came from (``chat.update``, saying what and by whom; see ``closing.py``). What only the
clicker needs to know (not allowed, stale, already done) reaches them alone
(``chat.postEphemeral``). A new reply (an action that asks the assistant again) goes into the
thread, and so do the buttons that come next. A button that asks for something first (a new
value, a reason) opens a form, and its click goes when the form is submitted (``forms.py``).

Each request goes to its tenant's workspace (``origin.py`` says which, from the installation
it reached); a team the bot does not serve changes nothing, and a person from another
organisation in a shared channel is a guest there. Both are worked out once per request
(``visit.py``): each handler is given the request's ``Visit``."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from bot.chat.answers import answer_person, may_read
from bot.chat.break_glass import COMMAND as GLASS_COMMAND
from bot.chat.break_glass import barred, reason_problem
from bot.chat.click_outcomes import closing_line, follow_ups
from bot.chat.notices import (
    GUESTS_MAY_NOT_READ,
    NOT_SHOWN,
    TROUBLE,
    UNCHANGED,
    UNCONFIRMED,
    not_served,
)
from bot.chat.requests import request_of
from bot.chat.workspaces import Workspaces
from bot.proposals.expiry import ByPlatform, ExpiredMessages
from bot.proposals.refs import Shown
from connectors.slack import code_block
from core.deliberation.messages import ID_PATTERN, ActionClicked, ShowRequested, UserSaid
from core.deliberation.view import View
from core.runtime.clicked import Clicked
from core.state.limits import Unacknowledged

from .buttons import parse_button
from .closing import SlackCloser
from .forms import (
    NOT_OPENED,
    Submission,
    Unfit,
    form_view,
    new_form,
    read_submission,
)
from .render import escape, expired_line, fallback_text, mention, view_blocks
from .team import Click, Team, close, glass_by_command, post, tell
from .turns import PLATFORM, SESSION, Said, read_said, session_id, thread_of
from .visit import Visit, Visits

__all__ = ["SlackAdapter"]

NO_CONVERSATION = "Nothing is being deliberated in this channel yet: mention the bot to start."
log = logging.getLogger("deliberate.slack")
NOT_SERVED = not_served("workspace")
NO_FORM = "Slack did not open the form (a click answered too late, perhaps)" + UNCHANGED


@dataclass(frozen=True)
class Form:
    """A submitted form found to be one the bot opened, for the person who submitted it."""

    team: Team
    click: Click
    click_id: str
    note: str | None


class SlackAdapter:
    """``client``: the bot token's client (single-team mode); with OAuth, each request
    brings its installation's."""

    def __init__(self, workspaces: Workspaces, client: WebClient) -> None:
        self.workspaces = workspaces
        self.client = client
        self.visits = Visits(workspaces)

    def serve_token_team(self) -> str:
        """Single-team mode: the bot token's own team (or org) is served, listed or not, in
        the workspace of ``--workspace`` unless the config lists it. Its team id;
        SlackClientError when Slack refuses the token."""
        info = self.client.auth_test()
        org = str(info.get("enterprise_id") or "") or None
        unit = str(info.get("team_id") or "") or org  # an org-wide token names no team
        if not unit:
            raise SlackClientError("auth.test named neither a team nor an org for the token")
        tenancy = self.workspaces.tenancy
        tenancy.serve_slack_team(unit, org, workspace=self.workspaces.base.store.workspace)
        return unit

    # --- messages ------------------------------------------------------------------------

    def on_event(self, event: dict[str, Any], visit: Visit, *, mention: bool) -> None:
        """A ``message`` or ``app_mention`` event. A turn is a mention, a direct message, or
        a message in a thread whose session is live; each message is handled once, however
        often and under whichever event type Slack delivers it."""
        said = read_said(event, visit.origin.bot_user_id)
        if said is None or said.user != visit.user:  # (Bolt's user is the event's)
            return
        team = visit.team
        if team is None:
            return  # a team the bot does not serve: not a word, nothing stored
        delivery = f"{said.channel}:{said.ts}"
        try:
            if not (mention or said.direct or _in_thread(team, said)):
                return
            if not team.deliveries.claim(PLATFORM, delivery):
                log.debug("slack message %s was handled already", delivery)
                return
            who = visit.actor
            msg = request_of(said.text, who) or UserSaid(
                text=said.text, actor=who, replying=said.replying
            )
            events = team.runtime.send(said.session_id, msg)
        except Unacknowledged as exc:  # the turn committed, or not: not handled again
            log.warning("slack message %s: %s", delivery, exc)
            tell(team.client, said.channel, said.thread_ts, said.user, UNCONFIRMED)
            return
        except Exception:
            log.exception("slack message %s failed", delivery)
            _release(team, delivery)
            tell(team.client, said.channel, said.thread_ts, said.user, TROUBLE)
            return
        post(team, said.session_id, said.user, events)

    # --- clicks --------------------------------------------------------------------------

    def on_click(self, body: dict[str, Any], visit: Visit) -> None:
        """A ``block_actions`` payload (already acknowledged): whatever goes wrong, the
        clicker hears of it."""
        container = body.get("container") or {}
        channel = str((body.get("channel") or {}).get("id") or container.get("channel_id") or "")
        thread_ts = container.get("thread_ts")

        def handle() -> None:
            self._click(body, visit, channel, thread_ts)

        _answering(visit.client, channel, thread_ts, visit.user, handle)

    def _click(
        self, body: dict[str, Any], visit: Visit, channel: str, thread_ts: str | None
    ) -> None:
        container, user = body.get("container") or {}, visit.user
        team = visit.team
        if team is None:
            return tell(visit.client, channel, thread_ts, user, NOT_SERVED + UNCHANGED)
        action = (body.get("actions") or [{}])[0]
        try:
            ref = parse_button(str(action.get("action_id") or ""), action.get("value"))
        except ValueError as exc:
            return tell(team.client, channel, thread_ts, user, f"{exc}{UNCHANGED}")
        if thread_of(ref.session)[0] != channel or not user:
            text = "This button belongs to another conversation" + UNCHANGED
            return tell(team.client, channel, thread_ts, user, text)
        label = str((action.get("text") or {}).get("text") or ref.action)
        public = None if container.get("is_ephemeral") else body.get("message")
        click = Click(ref, user, label, public, body.get("response_url"))
        if ref.asks == "glass":  # not the form, where it could not be used
            why = barred(team.app, ref.target_id, visit.actor)
            if why is not None:
                return tell(team.client, channel, thread_ts, user, why)
        if ref.asks is not None:  # the click goes once the form is submitted
            return self._ask(team, click, str(body.get("trigger_id") or ""), thread_ts)
        raw = str(body.get("trigger_id") or f"{user}-{action.get('action_ts')}")
        self._send(team, visit, click, _click_id(raw), None)

    def _send(
        self, team: Team, visit: Visit, click: Click, click_id: str, note: str | None
    ) -> None:
        ref = click.ref
        glass = ref.asks == "glass"  # its reason: never an Apply without one
        clicked = ActionClicked(
            action=ref.action,
            target_id=ref.target_id,
            expected_version=ref.version,
            click_id=click_id,
            actor=visit.actor,
            note=None if glass else note,
            break_glass=(note or "") if glass else None,
        )
        outcome = team.runtime.click(ref.session, clicked)
        try:
            self._after_click(team, click, outcome)
        except Exception:  # handled, but not shown: say so, not "nothing was changed"
            log.exception("slack click on %s: showing its outcome failed", ref.session)
            channel, thread_ts = thread_of(ref.session)
            tell(team.client, channel, thread_ts, click.user, NOT_SHOWN)

    def _after_click(self, team: Team, click: Click, outcome: Clicked) -> None:
        clicker = f"user:{click.user}"
        line = closing_line(outcome, clicker, click.label, mention, escape, expired_line)
        shown = line is not None and close(team, click, line)
        for view in follow_ups(outcome, shown):
            post(team, click.ref.session, click.user, [view])
        if outcome.expired is not None:  # its other messages too, without waiting
            closers = ByPlatform({PLATFORM: SlackCloser(team.client)})
            clicked = _shown(click) if shown else None
            ExpiredMessages(team.app, closers).close(click.ref.target_id, clicked)

    # --- forms ---------------------------------------------------------------------------

    def _ask(self, team: Team, click: Click, trigger_id: str, thread_ts: str | None) -> None:
        """Open the form a button asks for: what the proposal would do, and the box (a new
        value starts as the one it would write). Nothing is sent until it is submitted."""
        ref = click.ref
        assert ref.asks is not None
        ts = str(click.message.get("ts")) if click.message is not None else None
        form = new_form(ref, click.user, click.label, ts)
        team.forms.put(form, click.message, click.response_url)
        proposal = team.runtime.queries.proposal(ref.target_id)
        secret = proposal is not None and team.runtime.queries.is_secret(proposal.mutation.key)
        view = form_view(ref.asks, form, proposal, secret)
        try:
            team.client.views_open(trigger_id=trigger_id, view=view)
        except (SlackApiError, SlackClientError, OSError) as error:
            log.warning("slack: cannot open the form of %s: %s", ref.action, error)
            tell(team.client, thread_of(ref.session)[0], thread_ts, click.user, NO_FORM)

    def check_form(self, body: dict[str, Any], visit: Visit) -> Form | Unfit | str:
        """A ``view_submission`` (not yet acknowledged): the form's click, or why it is
        refused (the modal says so; nothing was changed): what was typed does not fit (said
        under the box), or anything else (said in place of the form)."""
        try:
            sent: Submission = read_submission(body)
            team = visit.team
            if team is None:
                return NOT_SERVED + UNCHANGED
            record = team.forms.get(sent.form.form)
        except ValueError as exc:
            return str(exc)
        except Exception:
            log.exception("slack form submission failed")
            return TROUBLE
        if record is None or record.metadata != sent.metadata:
            log.warning("slack: a form submission by %s names no form opened for it", sent.user)
            return NOT_OPENED
        unfit = reason_problem(sent.note) if sent.ref.asks == "glass" else None
        if unfit is not None:
            return Unfit(unfit)
        message, url = sent.message(record), record.response_url
        click = Click(sent.ref, sent.user, sent.form.label, message, url)
        return Form(team, click, _click_id(f"view-{sent.view_id}"), sent.note)

    def on_form(self, form: Form, visit: Visit) -> None:
        """A checked form (acknowledged: its modal is closed): its click, answered as any."""
        channel, thread_ts = thread_of(form.click.ref.session)

        def send() -> None:
            self._send(form.team, visit, form.click, form.click_id, form.note)

        _answering(visit.client, channel, thread_ts, form.click.user, send)

    # --- slash command -------------------------------------------------------------------

    def on_show(self, visit: Visit, channel: str) -> tuple[str, list[dict[str, Any]] | None]:
        """``/deliberate show``: a slash command does not say which thread it was typed in,
        so it shows the channel's newest conversation (its candidate and buttons) to the
        asker; in a thread, "show" said to the bot shows that thread's."""
        try:
            team = visit.team
            if team is None:
                return escape(NOT_SERVED + "."), None
            found = (
                team.runtime.queries.sessions_starting(session_id(channel, "")) if channel else []
            )
            threads = [s for s in found if SESSION.match(s)]
            newest = max(threads, key=lambda s: float(thread_of(s)[1]), default=None)
            if newest is None:
                return escape(NO_CONVERSATION), None
            msg = ShowRequested(actor=visit.actor)
            views = [e for e in team.runtime.send(newest, msg) if isinstance(e, View)]
        except Exception:  # the asker should hear something rather than nothing
            log.exception("slack /deliberate show failed")
            return TROUBLE, None
        if not views:
            return escape(NO_CONVERSATION), None
        return fallback_text(views[-1]), view_blocks(views[-1])

    def on_command(self, text: str, visit: Visit) -> str:
        """``/deliberate TEXT`` from the visit's person: the answer, as mrkdwn for the asker alone,
        from the workspace of the team it was typed in (a guest's only if guests may read);
        ``breakglass PROPOSAL_ID@REVISION REASON`` applies a proposal at once
        (``bot.chat.break_glass``)."""
        try:
            team = visit.team
            if team is None:
                return escape(NOT_SERVED + ".")
            actor = visit.actor
            command, _, rest = text.strip().partition(" ")
            if command.lower() == GLASS_COMMAND:  # a change: the gateway checks the role
                return escape(glass_by_command(team, actor, rest))
            if not may_read(team.app, actor):  # said plainly, as the other refusals
                return escape(GUESTS_MAY_NOT_READ)
            text = answer_person(team.app, text, actor, max_chars=2900)
        except Exception:  # the asker should hear something rather than nothing
            log.exception("slack /deliberate %r failed", text)
            return TROUBLE
        return code_block(text)


def _shown(click: Click) -> Shown | None:
    """The clicked public message, as ``bot.proposals`` keeps it."""
    if click.message is None:
        return None
    channel = thread_of(click.ref.session)[0]
    return Shown(platform=PLATFORM, channel=channel, message=str(click.message.get("ts")))


def _in_thread(team: Team, said: Said) -> bool:
    return said.thread_ts != said.ts and team.runtime.queries.has_session(said.session_id)


def _release(team: Team, delivery: str) -> None:
    """The same message's other delivery (its ``app_mention`` twin) may still take it."""
    try:
        team.deliveries.release(PLATFORM, delivery)
    except Exception:
        log.exception("cannot release slack message %s", delivery)


def _answering(
    client: WebClient, channel: str, thread_ts: str | None, user: str, handle: Callable[[], None]
) -> None:
    """Run a click's handling: whatever goes wrong, the clicker hears of it."""
    try:
        handle()
    except Unacknowledged as exc:
        log.warning("slack click by %s in %s: %s", user, channel, exc)
        tell(client, channel, thread_ts, user, UNCONFIRMED)
    except Exception:
        log.exception("slack click by %s in %s failed", user, channel)
        tell(client, channel, thread_ts, user, TROUBLE)


def _click_id(raw: str) -> str:
    """Slack's id of this interaction (a click's trigger id, a form's view id): a redelivered
    payload has the same one, a second click another."""
    click_id = f"{PLATFORM}-{raw}"
    if re.match(ID_PATTERN, click_id):
        return click_id
    return f"{PLATFORM}-" + hashlib.blake2s(raw.encode(), digest_size=16).hexdigest()
