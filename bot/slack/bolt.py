"""The Bolt app: Slack's request verification, retries and acknowledgements are Bolt's; each
listener hands its payload to the adapter.

Every request is acknowledged by the thread that received it, before any work
(``process_before_response`` on: a listener returns at once), and the work (a turn, a click,
a command) is handed to the listener pool, to run after. Bolt's own way (the listener in
its pool, the receiving thread waiting for its ``ack()``) made a click, a command or a form
wait behind the turns already queued there (five threads by default, each turn holding one
while it talks to the model and to Slack), and Slack gives up after three seconds. Bolt's
lazy listeners would do it too, at the cost of a deep copy of every request. The pool is
``LISTENER_THREADS`` threads: turns mostly wait on the network. A submitted form is
checked before it is acknowledged: a refusal is the acknowledgement (the modal shows it),
and an accepted one's modal closes before its click is handled.

Before any listener, a middleware makes the request's ``Visit`` (``visit.py``: where it came
from, its tenant, who acts) and keeps it in Bolt's context, as Bolt keeps the team and the
user it read: each listener hands it on, and nothing works them out again."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from slack_bolt import Ack, App, BoltContext, Respond
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk import WebClient

from .adapter import SlackAdapter
from .buttons import ACTION_ID
from .forms import FORM, Unfit, refusal_view
from .manifest.scopes import COMMAND
from .origin import Origin, origin_of_click, origin_of_command, origin_of_event, user_of
from .settings import SlackSettings
from .visit import Visit

__all__ = ["COMMAND", "EVENTS", "LISTENER_THREADS", "VISIT", "build_bolt_app", "listener_pool"]

EVENTS = ("app_mention", "message")  # what the listeners below take; the manifest subscribes
LISTENER_THREADS = 32  # turns, clicks and commands handled at once by a process
VISIT = "deliberate_visit"  # where the middleware keeps the request's Visit in Bolt's context
log = logging.getLogger("deliberate.slack")


def build_bolt_app(
    adapter: SlackAdapter,
    settings: SlackSettings,
    *,
    executor: Executor | None = None,
    oauth: OAuthSettings | None = None,
) -> App:
    """``adapter.client`` must be ``settings.web_client()``'s: with a bot token Bolt checks
    it with ``auth.test`` now, and the listeners post with it. With ``oauth`` (installations
    in Redis) each request is authorized with its team's installation, the install link and
    the redirect are served beside the events, and an uninstall or a revoked token removes
    the installation."""
    logger = logging.getLogger("deliberate.slack.bolt")
    pool = executor or listener_pool()
    with _without(logger, warning_client_prioritized_and_token_skipped()):
        bolt = App(
            client=adapter.client,
            signing_secret=settings.signing_secret,
            # Socket Mode requests come over the app's own websocket, unsigned
            request_verification_enabled=not settings.socket_mode,
            process_before_response=True,  # each listener returns at once (see above)
            listener_executor=pool,
            logger=logger,
            oauth_settings=oauth,
        )
    if oauth is not None:
        bolt.enable_token_revocation_listeners()

    client = adapter.client

    @bolt.use
    def _visit(body: dict[str, Any], context: BoltContext, next: Callable[[], None]) -> None:
        """The request's Visit, once, for whichever listener takes it."""
        context[VISIT] = adapter.visits.of(_origin(body, context, client), user_of(body))
        next()

    @bolt.event("app_mention")
    def _mention(event: dict[str, Any], context: BoltContext) -> None:
        _later(pool, adapter.on_event, event, _visit_in(context), mention=True)

    @bolt.event("message")
    def _message(event: dict[str, Any], context: BoltContext) -> None:
        _later(pool, adapter.on_event, event, _visit_in(context), mention=False)

    @bolt.action(ACTION_ID)
    def _click(ack: Ack, body: dict[str, Any], context: BoltContext) -> None:
        ack()
        _later(pool, adapter.on_click, body, _visit_in(context))

    @bolt.view(FORM)
    def _submitted(ack: Ack, body: dict[str, Any], context: BoltContext) -> None:
        visit = _visit_in(context)
        form = adapter.check_form(body, visit)
        if isinstance(form, str):  # for the submitter alone, in place of the form
            ack(response_action="update", view=refusal_view(form))
        elif isinstance(form, Unfit):  # under the box, the form open as typed
            ack(response_action="errors", errors=form.errors())
        else:
            ack()  # the modal closes
            _later(pool, adapter.on_form, form, visit)

    @bolt.command(COMMAND)
    def _command(ack: Ack, respond: Respond, command: dict[str, Any], context: BoltContext) -> None:
        ack()  # at once: `why` may read far back in the log, and Slack waits 3 seconds
        _later(pool, _answer, adapter, respond, command, _visit_in(context))

    return bolt


def _origin(body: dict[str, Any], context: BoltContext, client: WebClient) -> Origin:
    """Where the request comes from, read the way its kind of payload says it: an event
    (in a shared channel, the person's team as the event names it), a click or a submitted
    form (which name the person's team), a slash command (typed in the person's own)."""
    event = body.get("event")
    if body.get("type") == "event_callback" and isinstance(event, dict):
        return origin_of_event(body, event, context, client)
    if "command" in body:
        return origin_of_command(context, client)
    return origin_of_click(body, context, client)


def _visit_in(context: BoltContext) -> Visit:
    visit = context.get(VISIT)
    if not isinstance(visit, Visit):  # the middleware runs before every listener
        raise LookupError("no Visit in the request's context")
    return visit


def _answer(adapter: SlackAdapter, respond: Respond, command: dict[str, Any], visit: Visit) -> None:
    """``/deliberate TEXT``, answered for the asker alone."""
    text = str(command.get("text") or "")
    channel = str(command.get("channel_id") or "")
    if text.strip().lower() == "show":  # the channel's newest conversation, buttons too
        shown, blocks = adapter.on_show(visit, channel)
        respond(
            text=shown,
            blocks=blocks,
            response_type="ephemeral",
            unfurl_links=False,  # no preview of a page someone's words link to
            unfurl_media=False,
        )
        return
    answer = adapter.on_command(text, visit)
    respond(text=answer, response_type="ephemeral", unfurl_links=False, unfurl_media=False)


def _later(pool: Executor, work: Callable[..., None], *args: Any, **kwargs: Any) -> None:
    """``work`` in the pool; what it raises is logged (a future nobody reads would keep it)."""

    def run() -> None:
        try:
            work(*args, **kwargs)
        except Exception:
            log.exception("slack: %s failed", getattr(work, "__name__", "a listener"))

    pool.submit(run)


def listener_pool() -> ThreadPoolExecutor:
    """Where the turns, clicks and commands run once acknowledged."""
    return ThreadPoolExecutor(max_workers=LISTENER_THREADS, thread_name_prefix="slack-listener")


@contextmanager
def _without(logger: logging.Logger, message: str) -> Iterator[None]:
    """``logger`` without ``message`` for a while. Bolt warns that ``token`` goes unused
    beside ``client`` whenever SLACK_BOT_TOKEN is in the environment (it reads the variable
    itself when no token is given, and cannot be told not to): the client is the one made
    from that very variable (``SlackSettings``), so the warning has nothing to say here."""

    def keep(record: logging.LogRecord) -> bool:
        return record.getMessage() != message

    logger.addFilter(keep)
    try:
        yield
    finally:
        logger.removeFilter(keep)
