"""The chat adapters' ``/deliberate`` command: ``state [PREFIX]``, ``log [KEY]``, ``why KEY``,
``pending`` and ``help``, answered as plain text for the asker alone. Values of ``secret``
keys are never shown in chat. Both Slack and Discord render what this returns; neither
decides anything."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pydantic import JsonValue

from bot.chat.notices import GUESTS_MAY_NOT_READ
from bot.proposals.deadlines import deadlines_of
from bot.reports.by_mutation import by_mutation, grouped_lines
from bot.reports.explain import (
    last_change,
    origin,
    proposal_lines,
    unsearched,
)
from core.deliberation.sentences import short
from core.gateway.outcome import SECRET
from core.rate_limits import over_limit
from core.state.actor import Actor, ActorKind
from core.state.codec import UnreadableEntry
from core.state.keys import validate_state_key
from core.state.mutation_log import LogRecord, MutationLog
from core.state.scripts import server_ms

if TYPE_CHECKING:
    from bot.app import App

__all__ = ["HELP", "KEY_SCAN", "answer", "answer_person", "may_read"]

HELP = """\
/deliberate state [PREFIX] [--after KEY]
                            live state, 30 keys at a time in key order, e.g.
                            /deliberate state decision. (--after KEY: the keys after KEY)
/deliberate log [KEY]       the newest committed changes (of KEY)
/deliberate why KEY         who set KEY and why: the mutation, its actor and reason, the rule
                            that derived it, and what rules did with its changes
/deliberate pending         the proposals that wait for people: who proposed each, for
                            whom, its deadline, its approvals so far and whom it awaits
/deliberate show            what is on the table, with its buttons (Slack: in this channel's
                            newest conversation; in a thread, say "show" to the bot)
/deliberate topic NAME      name what this conversation decides (Discord; in a Slack thread,
                            say "topic: NAME" to the bot)
/deliberate breakglass ID@REVISION REASON  apply a pending proposal at once, as pending
                            lists it (ID@REVISION: the value you saw), skipping its
                            approvals, if you hold its key's break-glass role; the reason
                            is logged, announced and listed for review
/deliberate help            this text
Answers are shown to you alone. State changes only through buttons, breakglass and rules."""

MAX_LINES = 30
MAX_PROPOSALS = 8  # four lines each
KEY_SCAN = 2000  # the most log records ``log KEY`` and ``why KEY`` read: any member may ask
VALUE_CHARS = 120
# the answers that read much (a page of the key index, up to KEY_SCAN log records) one person
# may ask for in one workspace a minute, counted together, as the web counts its pages
READS_PER_MINUTE = 60
_READS = frozenset({"state", "log", "why"})


def may_read(app: App, asker: Actor) -> bool:
    """Whether ``asker`` may read the workspace's state in chat: a guest only where the
    workspace lets guests read (``guests.read``)."""
    return asker.kind is not ActorKind.GUEST or app.policy.config.guests.read


def answer_person(app: App, text: str, asker: Actor, *, max_chars: int = 2800) -> str:
    """``answer`` for a person in chat: one who may not read hears so."""
    if not may_read(app, asker):
        return GUESTS_MAY_NOT_READ
    return answer(app, text, asker=asker.identity, max_chars=max_chars)


def answer(app: App, text: str, *, asker: str, max_chars: int = 2800) -> str:
    """The answer to ``/deliberate TEXT`` asked by ``asker`` (a person's identity,
    ``platform:id``), at most ``max_chars`` long; past ``READS_PER_MINUTE`` answers that read
    much, the seconds to wait instead."""
    command, _, rest = text.strip().partition(" ")
    handler = _COMMANDS.get(command.lower() or "help")
    if handler is None:
        return _fit(f"Unknown subcommand {command!r}.\n\n{HELP}", max_chars)
    if command.lower() in _READS:
        who = f"{app.store.workspace}\0{asker}"
        wait = over_limit(app.redis, "chat-read", who, READS_PER_MINUTE)
        if wait is not None:
            return f"Too many state, log and why answers a minute: ask again in {wait} s."
    try:
        if command.lower() == "state":  # a page: as many keys as fit, and where to go on
            return _fit(_state(app, rest.strip(), max_chars), max_chars)
        return _fit(handler(app, rest.strip()), max_chars)
    except ValueError as exc:
        return _fit(f"{exc}\n\n{HELP}", max_chars)
    except UnreadableEntry as exc:  # planted past the limits: say which, and that's all
        return _fit(str(exc), max_chars)


def _state(app: App, rest: str, max_chars: int = 2800) -> str:
    """``[PREFIX] [--after KEY]``: the next ``MAX_LINES`` keys of the index (only those are
    read), as many as fit in ``max_chars``, and the command that shows the ones after."""
    prefix, after = _state_args(rest)
    skipped: list[UnreadableEntry] = []
    page = app.store.page(prefix, after, MAX_LINES, skipped)
    now = server_ms(app.redis, app.store.keys.versions)
    timed = app.store.timed(page.entries)  # changes for a while: when they revert
    lines = [
        f"{e.key} = {_value(app, e.key, e.value)}  (v{e.version}, {e.updated_by})"
        + (f"; {timed[e.key].phrase(now)}" if e.key in timed else "")
        for e in page.entries
    ]
    if not lines and page.after is None:
        starting = f" starting with {prefix!r}" if prefix else ""
        if after:
            return f"No key{starting} comes after {after}."
        return f"No keys start with {prefix!r}." if prefix else "No keys are set."
    unread = [f"(skipped {s.key}: {s.why})" for s in skipped]
    command = " ".join(["/deliberate state", *([prefix] if prefix else []), "--after"])
    shown = len(lines)
    while True:
        cut = shown < len(lines)
        last = page.entries[shown - 1].key if cut else page.after
        more = page.more + len(lines) - shown
        tail = [f"… and {more} more: {command} {last}"] if last is not None else []
        text = "\n".join(lines[:shown] + unread + tail)
        if len(text) <= max_chars or shown <= 1:
            return text
        shown -= 1


def _state_args(rest: str) -> tuple[str, str]:
    """PREFIX and the KEY of ``--after KEY`` (a key starts with a letter or a digit, never
    with "-")."""
    words = rest.split()
    after = ""
    if "--after" in words:
        at = words.index("--after")
        if at + 1 >= len(words):
            raise ValueError("--after needs the KEY to list the keys after")
        after = validate_state_key(words[at + 1])
        words = words[:at] + words[at + 2 :]
    if len(words) > 1 or any(w.startswith("-") for w in words):
        raise ValueError(f"state takes a PREFIX and --after KEY, not {rest!r}")
    return (words[0] if words else ""), after


def _log(app: App, key: str) -> str:
    log = app.log
    if not key:
        records = log.latest(MAX_LINES)
        lines = [_log_line(app, r) for r in records] or ["The log is empty."]
        if not records or log.starts_at(records[0].log_id):
            lines += _compacted(log)
        return "\n".join(lines + _skipped(log))
    key = validate_state_key(key)
    if app.store.version(key) == 0:
        return f"{key} was never written."
    history = log.of_key(key, MAX_LINES, scan=KEY_SCAN)
    lines = [_log_line(app, record) for record in history.records]
    if not history.complete:
        lines.append(unsearched(app, key, history))
    elif not lines:
        lines.append(f"No mutation of {key} is left in the log.")
        lines += _compacted(log)
    elif history.records[0].version > 1:
        lines += _compacted(log)
    return "\n".join(lines + _skipped(log))


def _compacted(log: MutationLog) -> list[str]:
    """A line saying the log's start was compacted away, when it was."""
    mark = log.compacted()
    return [] if mark is None else [f"({mark})"]


def _skipped(log: MutationLog) -> list[str]:
    """A line for each record that could not be read, so a gap is never silent."""
    return [f"(skipped {s.log_id}: {s.why})" for s in log.skipped]


def _log_line(app: App, record: LogRecord) -> str:
    m = record.mutation
    value = "" if m.value is None else f" {_value(app, m.key, m.value)}"
    when = datetime.fromtimestamp(record.ts / 1000, UTC).strftime("%m-%d %H:%M:%SZ")
    return f"{when}  {m.actor}  {m.op.value} {m.key}{value} -> v{record.version}"


def _why(app: App, key: str) -> str:
    if not key:
        raise ValueError("why needs a KEY, e.g. /deliberate why scene.name")
    key = validate_state_key(key)
    version = app.store.version(key)
    if version == 0:
        return f"{key} was never written."
    reveal = not app.policy.is_secret(key)
    history = app.log.of_key(key, 1, scan=KEY_SCAN)
    if history.records:
        lines = [origin(app, history.records[-1], reveal=reveal)]
    else:
        lines = [last_change(app, key, version, history, reveal=reveal)]
    rows = app.evaluations.for_key(key, 10)
    lines.extend(grouped_lines(by_mutation(app.log, rows)))
    return "\n".join(lines)


def _pending(app: App, rest: str) -> str:
    """The ``MAX_PROPOSALS`` soonest due (only they are read), and how many wait."""
    box = app.gateway.proposals
    proposals = box.listed(limit=MAX_PROPOSALS)
    if not proposals:
        return "No proposal waits for anyone."
    now = server_ms(app.redis, app.store.keys.versions)
    waiting = max(box.waiting(), len(proposals))
    lines = [f"{waiting} waiting, soonest deadline first:"]
    for p in proposals:
        reveal = not app.policy.is_secret(p.mutation.key)
        named = f"{p.id}@{p.revision}"  # (what breakglass names it by)
        lines += proposal_lines(
            app.policy, p, deadlines_of(app, p, now), reveal=reveal, named=named
        )
    more = waiting - len(proposals)
    if more > 0:
        lines.append(f"… and {more} more (`deliberate proposals` lists them all)")
    return "\n".join(lines)


def _help(app: App, rest: str) -> str:
    return HELP


def _in_conversation(app: App, rest: str) -> str:
    # a slash command does not say which thread it was typed in: the thread's own words do
    return 'In the thread, say "topic: NAME" to the bot.'


_COMMANDS: dict[str, Callable[[App, str], str]] = {
    "state": _state,
    "log": _log,
    "why": _why,
    "pending": _pending,
    "help": _help,
    "topic": _in_conversation,
}


def _value(app: App, key: str, value: JsonValue) -> str:
    if app.policy.is_secret(key):
        return SECRET
    return short(value, VALUE_CHARS)


def _fit(text: str, max_chars: int) -> str:
    return text if len(text) <= max_chars else text[: max_chars - 2] + "\n…"
