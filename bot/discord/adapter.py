"""The Discord adapter: messages and clicks in, the runtime's events out as messages, edits
of the clicked message and ephemeral replies. It translates; the core decides. Everything
that blocks (Redis, the model) runs in a worker thread, never on discord.py's event loop.

A click is answered in three ways. What it committed replaces the clicked message's buttons
(greyed out) and says what and by whom. What only the clicker needs to know (not allowed,
stale, already done) is an ephemeral reply. A new reply (an action that asks the assistant
again) goes into the channel, and so do the buttons that come next. A button that asks for
something first (a new value, a reason) opens a form, and its click goes, answered the same
ways, when the form is submitted (see ``forms``).

The tenant and the person acting are worked out once per request (``visit.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import discord
from redis.exceptions import RedisError

from bot.chat.answers import answer_person
from bot.chat.break_glass import COMMAND as GLASS_COMMAND
from bot.chat.break_glass import barred, break_glass_command, reason_problem
from bot.chat.click_outcomes import closing_line, follow_ups
from bot.chat.deliveries import Deliveries
from bot.chat.notices import (
    NOT_SHOWN,
    TROUBLE,
    UNCHANGED,
    UNCONFIRMED,
)
from bot.chat.requests import request_of
from bot.chat.workspaces import Workspaces
from bot.proposals.refs import Shown, keep_shown, proposals_in
from connectors.discord_markdown import code_block, escape
from core.deliberation.messages import ActionClicked, ShowRequested, TopicSet, UserSaid
from core.deliberation.view import View
from core.runtime.clicked import Clicked
from core.state.limits import Unacknowledged

from .buttons import ButtonRef, DeliberateButton
from .closing import Closing
from .forms import form_for, prefill_for, read_form
from .render import MAX_CONTENT, NO_PINGS, expired_line, render
from .turns import PLATFORM, Listening, replies, session_id, turn_text
from .visit import Visit, visit_of_interaction, visit_of_message

__all__ = ["DiscordAdapter"]

log = logging.getLogger("deliberate.discord")
NOT_LISTENING = "Deliberate does not take part in this channel; nothing was changed."
ELSEWHERE = "This button belongs to another conversation"
ANSWER_CHARS = 1900  # Discord's 2000, less the code block around it
Interaction = discord.Interaction[Any]


class DiscordAdapter:
    """Every event goes to its tenant's workspace: a server's own, or a direct message's
    private one; one the bot does not serve changes nothing."""

    def __init__(self, workspaces: Workspaces, listening: Listening) -> None:
        self.workspaces = workspaces
        self.listening = listening
        self.closing = Closing(workspaces)

    # --- messages ------------------------------------------------------------------------

    async def on_message(self, message: discord.Message, me: discord.ClientUser) -> None:
        """A turn is handled once, however often the gateway delivers it (a resumed session
        replays events; two processes may overlap in a deploy)."""
        text = turn_text(message, me, self.listening)
        if text is None:
            return
        visit = visit_of_message(self.workspaces, message)
        if visit.tenant is None:
            return  # a server or a DM the bot does not serve: not a word, nothing stored
        delivery = str(message.id)
        who = visit.person
        said = request_of(text, who) or UserSaid(
            text=text, actor=who, replying=replies(message, me)
        )
        deliveries = None
        try:
            app = await asyncio.to_thread(visit.app)
            deliveries = Deliveries(app.redis, app.store.workspace)
            if not await asyncio.to_thread(deliveries.claim, PLATFORM, delivery):
                return
            await _typing(message.channel)
            runtime = await asyncio.to_thread(visit.runtime)
            events = await asyncio.to_thread(runtime.send, session_id(message.channel.id), said)
        except Unacknowledged as exc:  # the turn committed, or not: not handled again
            log.warning("discord message %s: %s", delivery, exc)
            await self._send(message.channel, UNCONFIRMED, reply_to=message)
            return
        except Exception:
            log.exception("discord message %s failed", delivery)
            if deliveries is not None:
                await asyncio.to_thread(_release, deliveries, delivery)
            await self._send(message.channel, TROUBLE, reply_to=message)
            return
        for event in events:
            if isinstance(event, View):
                await self._show(event, message.channel, reply_to=message, visit=visit)

    def _visit(self, interaction: Interaction) -> Visit:
        return visit_of_interaction(self.workspaces, interaction)

    # --- clicks --------------------------------------------------------------------------

    async def on_click(self, interaction: Interaction, ref: ButtonRef | None, label: str) -> None:
        if ref is not None and ref.asks is not None:  # its form first; the click goes with it
            return await self._open_form(interaction, ref)
        await self._act(interaction, ref, label)

    async def on_form(self, interaction: Interaction) -> None:
        """A form submitted: the click it was opened for, with what was typed."""
        try:
            submitted = read_form(dict(interaction.data or {}))
        except ValueError as refusal:
            return await self._refuse(interaction, str(refusal))
        unfit = reason_problem(submitted.note) if submitted.ref.asks == "glass" else None
        if unfit is not None:  # said before anything is sent: nothing to undo
            return await self._refuse(interaction, unfit)
        await self._act(interaction, submitted.ref, submitted.label, submitted.note)

    async def _act(
        self, interaction: Interaction, ref: ButtonRef | None, label: str, note: str | None = None
    ) -> None:
        try:  # first, within Discord's 3 seconds: the answer comes as an edit or a follow-up
            await interaction.response.defer()
        except discord.HTTPException as error:
            log.warning("cannot acknowledge click %s: %s", interaction.id, error)
            return
        try:
            await self._clicked(interaction, ref, label, note)
        except Unacknowledged as exc:
            log.warning("discord click %s: %s", interaction.id, exc)
            await self._followup(interaction, UNCONFIRMED)
        except Exception:  # after the defer: the clicker hears of it, never a timeout
            log.exception("discord click %s failed", interaction.id)
            await self._followup(interaction, TROUBLE)

    async def _clicked(
        self, interaction: Interaction, ref: ButtonRef | None, label: str, note: str | None
    ) -> None:
        visit = self._visit(interaction)
        if visit.tenant is None:
            return await self._deny(interaction, visit.refusal)
        if ref is None:
            return await self._deny(interaction, "This button's data is not valid")
        if ref.channel_id != interaction.channel_id:
            return await self._deny(interaction, ELSEWHERE)
        if ref.ask:
            return await self._ask(interaction, ref, label)
        glass = ref.asks == "glass"  # its reason: never an Apply without one
        clicked = ActionClicked(
            action=ref.action,
            target_id=ref.target_id,
            expected_version=ref.version,
            click_id=f"{PLATFORM}-{interaction.id}",  # a form's: its submission's
            actor=visit.person,
            note=None if glass else note,
            break_glass=(note or "") if glass else None,
        )
        runtime = await asyncio.to_thread(visit.runtime)
        outcome = await asyncio.to_thread(runtime.click, ref.session, clicked)
        try:
            await self._after_click(interaction, visit, outcome, label)
        except Exception:  # handled, but not shown: say so, not "nothing was changed"
            log.exception("discord click %s: showing its outcome failed", interaction.id)
            await self._followup(interaction, NOT_SHOWN)

    async def _after_click(
        self, interaction: Interaction, visit: Visit, outcome: Clicked, label: str
    ) -> None:
        clicker = f"user:{interaction.user.id}"
        line = closing_line(outcome, clicker, label, _mention, escape, expired_line)
        closed = line is not None and await self.closing.close(interaction, visit.served, line)
        for view in follow_ups(outcome, closed):
            await self._show(view, interaction.channel, interaction=interaction, visit=visit)

    async def _ask(self, interaction: Interaction, ref: ButtonRef, label: str) -> None:
        """Discord buttons have no confirm dialog: the first click asks, for the clicker
        alone, with the button that acts."""
        sure = ref.model_copy(update={"ask": False}).custom_id()
        buttons = discord.ui.View(timeout=None)
        buttons.add_item(
            DeliberateButton.made(f"Yes: {label}"[:80], discord.ButtonStyle.danger, sure)
        )
        text = f"**{escape(label)}** changes shared state. Sure?"
        await self._followup(interaction, text, buttons)

    async def _open_form(self, interaction: Interaction, ref: ButtonRef) -> None:
        """The form, as the click's answer (within Discord's 3 seconds); refused at once where
        its click would be, before anyone types."""
        visit = self._visit(interaction)
        if visit.tenant is None:
            return await self._refuse(interaction, visit.refusal + UNCHANGED)
        if ref.channel_id != interaction.channel_id:
            return await self._refuse(interaction, ELSEWHERE + UNCHANGED)
        try:
            app = await asyncio.to_thread(visit.app)
            runtime = await asyncio.to_thread(visit.runtime)
            prefill = await asyncio.to_thread(prefill_for, runtime.queries, ref)
            who, glass = visit.person, ref.asks == "glass"
            why = await asyncio.to_thread(barred, app, ref.target_id, who) if glass else None
        except Exception:  # the form opens all the same, empty (the click checks it all)
            log.exception("discord click %s: cannot read what its form shows", interaction.id)
            prefill, why = "", None
        if why is not None:  # not the form, where it could not be used
            return await self._refuse(interaction, why)
        try:
            await interaction.response.send_modal(form_for(ref, prefill))
        except discord.HTTPException as error:
            log.warning("cannot open the form of click %s: %s", interaction.id, error)

    async def _deny(self, interaction: Interaction, why: str) -> None:
        await self._followup(interaction, why + UNCHANGED)

    # --- /deliberate ---------------------------------------------------------------------

    async def on_command(self, interaction: Interaction, text: str) -> None:
        """``/deliberate state|log|why|pending|help``, and ``breakglass PROPOSAL@REVISION REASON``
        (``bot.chat.break_glass``): answered for the asker alone."""
        try:
            await interaction.response.defer(ephemeral=True, thinking=True)
        except discord.HTTPException as error:
            log.warning("cannot acknowledge /deliberate %s: %s", interaction.id, error)
            return
        try:
            reply = await asyncio.to_thread(self._answer, interaction, text)
        except Exception:  # the asker should hear something rather than nothing
            log.exception("discord /deliberate %r failed", text)
            reply = TROUBLE
        shown = code_block(reply, MAX_CONTENT)
        try:  # the "thinking…" message becomes the answer
            await interaction.edit_original_response(content=shown, allowed_mentions=NO_PINGS)
        except discord.HTTPException as error:
            log.error("cannot answer /deliberate %s: %s", interaction.id, error)

    async def on_session(self, interaction: Interaction, topic: str | None) -> None:
        """``/deliberate show`` (``topic`` None) and ``/deliberate topic NAME``, on this
        channel's session: the view goes to the asker alone (show) or to the channel (a
        new topic, which everyone should see), and the asker always hears back."""
        try:
            await interaction.response.defer(ephemeral=True, thinking=True)
        except discord.HTTPException as error:
            log.warning("cannot acknowledge /deliberate %s: %s", interaction.id, error)
            return
        visit = self._visit(interaction)
        if visit.tenant is None or interaction.channel_id is None:
            return await self._followup(interaction, visit.refusal + ".")
        if not self.listening.covers(interaction.channel):
            return await self._followup(interaction, NOT_LISTENING)
        actor = visit.person
        msg = ShowRequested(actor=actor) if topic is None else TopicSet(topic=topic, actor=actor)
        try:
            runtime = await asyncio.to_thread(visit.runtime)
            session = session_id(interaction.channel_id)
            events = await asyncio.to_thread(runtime.send, session, msg)
        except Exception:
            log.exception("discord /deliberate %s failed", "show" if topic is None else "topic")
            return await self._followup(interaction, TROUBLE)
        views = [event for event in events if isinstance(event, View)]
        for view in views:
            await self._show(view, interaction.channel, interaction=interaction, visit=visit)
        if not any(view.ephemeral for view in views):  # the answer went to the channel
            await self._followup(interaction, "Done: see the channel.")

    def _answer(self, interaction: Interaction, text: str) -> str:
        visit = self._visit(interaction)
        if visit.tenant is None:
            return f"{visit.refusal}."
        actor, app = visit.person, visit.app()
        command, _, rest = text.strip().partition(" ")
        if command == GLASS_COMMAND:  # a change: the gateway checks the role
            return break_glass_command(app, actor, rest).text
        return answer_person(app, text, actor, max_chars=ANSWER_CHARS)

    # --- sending -------------------------------------------------------------------------

    async def _show(
        self,
        view: View,
        channel: Any,
        *,
        reply_to: discord.Message | None = None,
        interaction: Interaction | None = None,
        visit: Visit | None = None,
    ) -> None:
        """``view``'s messages; those that show a proposal's buttons are kept, in
        ``visit``'s tenant, so that they close when it expires (``bot.proposals``)."""
        proposals = proposals_in(view) if visit is not None else []
        for part in render(view):
            if view.ephemeral and interaction is not None:
                await self._followup(interaction, part.content, part.buttons)
                continue
            sent = await self._send(channel, part.content, part.buttons, reply_to=reply_to)
            reply_to = None  # the first part answers the message; the rest follow it
            if sent is not None and part.buttons is not None and proposals and visit:
                await asyncio.to_thread(self._remember, visit, proposals, sent)

    def _remember(self, visit: Visit, proposals: list[str], sent: discord.Message) -> None:
        channel, message = str(sent.channel.id), str(sent.id)
        tenant = visit.served
        server = None if tenant.private else tenant.id  # a DM's tenant is its person
        shown = Shown(
            platform=PLATFORM, channel=channel, message=message, text=sent.content, team=server
        )
        try:
            keep_shown(visit.app(), proposals, shown)
        except RedisError as error:
            log.error("cannot keep discord message %s: %s", shown.ref, error)

    async def _send(
        self,
        channel: Any,
        content: str,
        buttons: discord.ui.View | None = None,
        *,
        reply_to: discord.Message | None = None,
    ) -> discord.Message | None:
        extra: dict[str, Any] = {"view": buttons} if buttons is not None else {}
        if reply_to is not None:
            extra["reference"] = reply_to.to_reference(fail_if_not_exists=False)
        try:
            sent: discord.Message = await channel.send(content, allowed_mentions=NO_PINGS, **extra)
        except discord.HTTPException as error:
            log.error("cannot post to Discord channel %s: %s", getattr(channel, "id", "?"), error)
            return None
        return sent

    async def _refuse(self, interaction: Interaction, why: str) -> None:
        """``why``, to the person alone, as the interaction's answer (nothing acknowledged it)."""
        try:
            await interaction.response.send_message(why, ephemeral=True, allowed_mentions=NO_PINGS)
        except discord.HTTPException as error:
            log.warning("cannot answer interaction %s: %s", interaction.id, error)

    async def _followup(
        self, interaction: Interaction, content: str, buttons: discord.ui.View | None = None
    ) -> None:
        extra: dict[str, Any] = {"view": buttons} if buttons is not None else {}
        try:
            await interaction.followup.send(
                content, ephemeral=True, allowed_mentions=NO_PINGS, **extra
            )
        except discord.HTTPException as error:
            log.error("cannot reply to interaction %s: %s", interaction.id, error)


def _release(deliveries: Deliveries, delivery: str) -> None:
    try:
        deliveries.release(PLATFORM, delivery)
    except RedisError:
        log.exception("cannot release discord message %s", delivery)


async def _typing(channel: Any) -> None:
    """ "Deliberate is typing…" for the next ten seconds, if Discord lets it."""
    with contextlib.suppress(discord.HTTPException, AttributeError):
        await channel.typing()


def _mention(actor: str) -> str:
    """``moderator:80351110224678912`` as a Discord mention; any other actor as text."""
    ident = actor.partition(":")[2]
    return f"<@{ident}>" if ident.isdigit() else escape(actor)
