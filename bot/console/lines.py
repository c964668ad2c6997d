"""The console's lines: each a turn, unless it is a command (``HELP`` lists them). ``N``
alone or ``/click N`` clicks button N; a button that asks for something (where a platform
opens a form) is clicked with it, Edit by ``/edit [N] VALUE``, Discard by
``/reject [N] [REASON]`` (or its number alone); ``/breakglass N REASON`` clicks Apply N
breaking the glass (an ``ApplyProposal`` click carrying ``break_glass``: applied at once).

A button keeps its number with the session (``ButtonNumbers``): "Add to doc" stays 4 after
a click made other buttons come and go and after a resume, and a number whose button is no
longer offered is refused as stale, never given to another button."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from bot.chat.people import LOCAL, local_person
from bot.console.numbers import ButtonNumbers
from bot.console.rendering import PLAIN, Out, Palette, event_json, json_line, render_view
from bot.reports.render import Masking, entry_line, timed_fields
from bot.screen import one_line
from core.config.roles import RoleBinding
from core.deliberation.actions import ACTION_NAME, PROPOSAL_ACTIONS, ActionType
from core.deliberation.messages import ActionClicked, ShowRequested, TopicSet, UserSaid
from core.deliberation.topics import MAX_TOPIC
from core.deliberation.view import Button, View
from core.redaction import readable
from core.runtime.events import Event, FromPeople
from core.runtime.runner import Runtime
from core.state.actor import Actor
from core.state.scripts import server_ms
from core.state.store import StateStore
from core.state.value_json import lone_surrogate

__all__ = ["HELP", "Console"]

HELP = """\
Type a message to think out loud. Commands:
  N                click button N (a line that is only a button's number); a button keeps
                   its number with the session (a resume too), and a number no button had
                   is sent as a message
  /click N [yes]   click button N ("yes" where a button asks to be sure); Undo, under what
                   a click committed, restores what was there before
  /edit [N] VALUE  apply the proposal with VALUE instead (N: its Edit button, needed only
                   when more than one is shown); VALUE as JSON unless the proposed one is text
  /reject [N] [REASON]
                   discard the proposal (N: its Discard button), saying why: the reason is
                   kept with it and the assistant takes it into account
  /breakglass N REASON
                   apply the proposal of Apply button N at once, whatever approvals it
                   awaits: only a person holding the key's break-glass role, with a reason
  /do ACTION [yes] do an action (e.g. ConfirmCurrent, SwitchScene) on what is on the table
  /show            what is on the table now, with its buttons (after --session, say)
  /topic NAME      name what this session decides (the decision key follows it)
  /as KIND:ID      speak and click as someone else (e.g. /as moderator:sam); /as local:NAME
                   is NAME with the roles the config binds to local:NAME
  /state [PREFIX]  show canonical state
  /help            this text
  /quit, /exit     leave (the session stays: come back with --session)
In a terminal: Up and Down recall earlier lines, Ctrl-C clears the line, a second Ctrl-C or
Ctrl-D leaves; Ctrl-C while a reply is on its way stops the console (exit code 130)."""

_GLASS_USAGE = "type /breakglass N REASON (N: the proposal's Apply button); nothing was changed"
_EDIT_USAGE = "Edit asks for the new value: type /edit {n} VALUE (proposed: {now!r})"


class Console:
    def __init__(
        self,
        runtime: Runtime,
        session_id: str,
        actor: Actor,
        out: Out,
        *,
        as_json: bool = False,
        topic: str | None = None,
        palette: Palette = PLAIN,
        roles: Mapping[str, RoleBinding] | None = None,
    ) -> None:
        """``roles``: the config's role bindings, which ``/as local:NAME`` reads."""
        self.runtime = runtime
        self.roles = roles or {}
        self.session_id = session_id
        self.actor = actor
        self.out = out
        self.as_json = as_json
        self.topic = topic
        self.palette = palette
        sessions = runtime.sessions
        self.numbers = ButtonNumbers(
            sessions.redis, runtime.gateway.store.workspace, session_id, sessions.ttl_ms
        )
        # what was shown when the session was last left: a resumed console clicks those
        self.buttons: list[Button] = self.numbers.shown()

    @property
    def store(self) -> StateStore:
        return self.runtime.gateway.store

    def handle(self, line: str) -> bool:
        """Handle one line; False once the person wants to leave."""
        text = line.strip()
        if not text:
            return True
        lone = lone_surrogate(text)
        if lone is not None:  # a byte that is not UTF-8 (read as U+DC80-U+DCFF), or half a pair
            self._problem(f"the line holds {lone}, not text (not UTF-8?); nothing was done")
            return True
        if text.isascii() and text.isdigit() and self.numbers.label(int(text)) is not None:
            # the number of a button shown (now or before): a click, as /click N; any other
            # number is an answer ("how many replicas?" "2")
            return self._click(text)
        if not text.startswith("/"):
            self._send(UserSaid(text=text[:4000], actor=self.actor, topic=self.topic))
            return True
        command, _, rest = text.partition(" ")
        handler = self._commands().get(command)
        if handler is None:
            self._problem(f"unknown command {command}; /help lists them")
            return True
        return handler(rest.strip())

    def _commands(self) -> dict[str, Callable[[str], bool]]:
        return {
            "/click": self._click,
            "/edit": self._edit,
            "/reject": self._reject,
            "/breakglass": self._break_glass,
            "/do": self._do,
            "/as": self._as,
            "/state": self._state,
            "/show": self._show_table,
            "/topic": self._topic,
            "/help": self._help,
            "/quit": lambda _: False,
            "/exit": lambda _: False,
        }

    def _send(self, msg: FromPeople) -> None:
        events = self.runtime.send(self.session_id, msg)
        for event in events:
            # a notice's buttons (a stale click's current ones) replace the old ones; a notice
            # without buttons ("already done") leaves them
            if isinstance(event, View) and (event.buttons or not event.ephemeral):
                self.buttons = event.buttons
                self.numbers.remember(self.buttons)
            self._show(event)

    def _click(self, rest: str) -> bool:
        number, _, sure = rest.partition(" ")
        given = int(number) if number.isascii() and number.isdigit() else None
        was = None if given is None else self.numbers.label(given)
        if not self.buttons and was is None:
            self._problem("no buttons to click")
            return True
        if given is None:
            self._problem("/click takes the number of a button shown, e.g. /click 1")
            return True
        button = self.numbers.find(given, self.buttons)
        if button is None:
            self._problem(
                f'button {number} ("{was}") is no longer offered: nothing was done'
                if was
                else f"no button {number} is shown"
            )
            return True
        if button.confirm and sure != "yes":
            self._problem(f'"{button.label}" asks to be sure: type /click {number} yes')
            return True
        if button.asks == "value":
            self._problem(_EDIT_USAGE.format(n=number, now=button.prefill[:80]))
            return True
        self._press(button.action, button)
        return True

    def _edit(self, rest: str) -> bool:
        """``/edit [N] VALUE``: the Edit button N (the one shown, without N) with VALUE."""
        button, value = self._asking("value", rest)
        if button is not None and not value:
            self._problem(_EDIT_USAGE.format(n=self.numbers.of(button), now=button.prefill[:80]))
        elif button is not None:
            self._press(button.action, button, note=value)
        return True

    def _reject(self, rest: str) -> bool:
        """``/reject [N] [REASON]``: the Discard button N (the one shown, without N)."""
        button, reason = self._asking("reason", rest)
        if button is not None:
            self._press(button.action, button, note=reason or None)
        return True

    def _break_glass(self, rest: str) -> bool:
        """``/breakglass N REASON``: the Apply button N, applied at once for REASON (the
        gateway checks the role; a reason is asked for here first)."""
        number, _, reason = rest.partition(" ")
        given = int(number) if number.isascii() and number.isdigit() else None
        was = None if given is None else self.numbers.label(given)
        button = None if given is None else self.numbers.find(given, self.buttons)
        if given is None:
            self._problem(_GLASS_USAGE)
        elif button is None:
            self._problem(
                f'button {given} ("{was}") is no longer offered: nothing was done'
                if was
                else f"no button {given} is shown"
            )
        elif button.action != ActionType.APPLY_PROPOSAL:
            self._problem(f'button {given} is "{button.label}", not a proposal\'s Apply')
        elif not readable(reason):  # (nothing that shows is no reason)
            self._problem(f"breaking the glass needs a reason, said with it: {_GLASS_USAGE}")
        else:
            self._press(button.action, button, break_glass=reason)
        return True

    def _asking(self, asks: str, rest: str) -> tuple[Button | None, str]:
        """The button asking for ``asks`` that ``rest`` names by its number first (or else
        the only one shown, all of ``rest`` then being what is typed in), and what is. A
        number alone after /edit is the new value, unless it is a button's."""
        kind, command = ("Edit", "/edit") if asks == "value" else ("Discard", "/reject")
        first, _, after = rest.partition(" ")
        given = int(first) if first.isascii() and first.isdigit() else None
        was = None if given is None else self.numbers.label(given)
        if given is not None and (was is not None or after or asks == "reason"):
            button = self.numbers.find(given, self.buttons)
            if button is not None and button.asks == asks:
                return button, after.strip()
            if was is None:
                what = "value" if asks == "value" else "reason"
                self._problem(
                    f"no button {given} is shown (a {what} that starts with a number goes "
                    f"after the button's number: {command} N …)"
                )
            elif button is None:
                self._problem(f'button {given} ("{was}") is no longer offered: nothing was done')
            else:
                self._problem(f'button {given} is "{was}", not {kind}')
            return None, ""
        offered = [b for b in self.buttons if b.asks == asks]
        if len(offered) == 1:
            return offered[0], rest
        numbers = ", ".join(str(self.numbers.of(b)) for b in offered)
        many = f"{len(offered)} {kind} buttons are shown ({numbers}): {command} N …"
        self._problem(many if offered else f"no {kind} button is shown")
        return None, ""

    def _do(self, rest: str) -> bool:
        action, _, sure = rest.partition(" ")
        if not re.match(ACTION_NAME, action):
            self._problem("/do takes an action type in CamelCase, e.g. /do ConfirmCurrent")
            return True
        if action == ActionType.EDIT_PROPOSAL:
            self._problem("an edit needs the new value: /edit VALUE")
            return True
        shown = next((b for b in self.buttons if b.action == action), None)
        if shown is not None and shown.confirm and sure != "yes":
            self._problem(f'"{shown.label}" asks to be sure: type /do {action} yes')
            return True
        self._press(action, shown)
        return True

    def _press(
        self,
        action: str,
        button: Button | None,
        note: str | None = None,
        break_glass: str | None = None,
    ) -> None:
        target, version = (button.target_id, button.target_version) if button else self._now(action)
        click = ActionClicked(
            action=action,
            target_id=target,
            expected_version=version,
            click_id=f"console-{uuid.uuid4().hex}",
            actor=self.actor,
            note=None if note is None else note[:4000],
            break_glass=None if break_glass is None else break_glass[:4000],
        )
        self._send(click)

    def _now(self, action: str) -> tuple[str, int]:
        """What an action not on a button acts on: the current candidate, or the oldest
        pending proposal at the revision this session last showed (an edit made elsewhere
        since refuses it). With neither, the click still goes to the loop, which says why it
        cannot be done."""
        interaction = self.runtime.queries.interaction(self.session_id)
        if action in PROPOSAL_ACTIONS:
            pending = interaction.pending_proposals
            return (pending[0].id, pending[0].revision) if pending else ("none", 0)
        candidate = interaction.candidate
        return (candidate.id, candidate.version) if candidate else ("none", 0)

    def _as(self, rest: str) -> bool:
        """``/as KIND:ID`` (a kind's roles alone), or ``/as local:NAME`` (NAME's bound roles,
        as a Slack or Discord member gets theirs)."""
        try:
            if rest.startswith(f"{LOCAL}:"):
                self.actor = local_person(self.roles, rest)
            else:
                self.actor = Actor.parse(rest, platform=self.actor.platform)
        except ValueError as exc:
            self._problem(str(exc))
            return True
        self._say({"event": "actor", "actor": str(self.actor)}, f"(you are now {self.actor})")
        return True

    def _state(self, rest: str) -> bool:
        entries = self.store.entries(rest)
        timed = self.store.timed(entries)  # a change for a while: when it reverts
        # a secret key's value as (secret), as chat's /deliberate state shows it
        entries = list(map(Masking(self.runtime.queries.is_secret).entry, entries))
        if self.as_json:
            for e in entries:
                data = e.model_dump(mode="json", by_alias=True) | timed_fields(timed.get(e.key))
                self.out(json_line({"event": "state"} | data))
        else:
            now = server_ms(self.store.redis, self.store.keys.versions)
            shown = (entry_line(e, now, timed.get(e.key)) for e in entries)
            self.out("\n".join(shown) or "(no state yet)")
        return True

    def _show_table(self, _: str) -> bool:
        self._send(ShowRequested(actor=self.actor))
        return True

    def _topic(self, rest: str) -> bool:
        name = " ".join(rest.split())
        if not 1 <= len(name) <= MAX_TOPIC:
            self._problem(
                f"/topic takes a name of 1 to {MAX_TOPIC} characters, e.g. /topic billing database"
            )
            return True
        self._send(TopicSet(topic=name, actor=self.actor))
        return True

    def _help(self, _: str) -> bool:
        self._say({"event": "help", "text": HELP}, HELP)
        return True

    def _problem(self, message: str) -> None:
        text = self.palette.paint(self.palette.error, one_line(f"! {message}"))
        self._say({"event": "error", "message": message}, text)

    def _say(self, data: dict[str, Any], text: str) -> None:
        self.out(json_line(data) if self.as_json else text)

    def _show(self, event: Event) -> None:
        if self.as_json:
            self.out(json_line(event_json(event, self.numbers.of)))
        elif isinstance(event, View):  # an outcome's text is in the view that follows it
            timed = event.expires_at is not None or event.reverts_at is not None
            now = server_ms(self.store.redis, self.store.keys.versions) if timed else None
            self.out(render_view(event, self.palette, self.numbers.of, now))
