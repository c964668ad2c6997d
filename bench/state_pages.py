"""What the first page of state costs with many keys: the web's State page through real
HTTP (waitress, Flask, httpx, the operator's Bearer token) and ``/deliberate state`` as chat
asks it (``bot.chat.answers.answer``), on a workspace of ``--keys`` keys (20,000 and 200,000 by
default), each committed through the store.

Both read a page of the key index (the State page 100 keys, chat 30), never all of it.
Baselines, timed in rounds that alternate with them: one entry read (``StateStore.get``, one
round trip: what a row costs at least), ``GET /health`` (one HTTP round trip with a Redis
``PING``: what any page costs at least) and the whole read the two made before
(``StateStore.entries()``, every entry, once a round: it is slow). Medians of the rounds'
medians, each as a ratio to the entry and to the whole read."""

from __future__ import annotations

import argparse
import itertools
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
from timing import median_ms
from waitress import wasyncore
from waitress.server import create_server

from bot.app import App, build_app
from bot.chat.answers import MAX_LINES, answer
from bot.web.settings import WebSettings
from bot.web.site import create_app
from bot.web.state_page import PAGE
from core.state.actor import Actor
from core.state.keys import WorkspaceKeys
from core.state.mutation import Mutation, Op

TOKEN = "bench-operator-token-0123456789"


_ASKERS = itertools.count()


def asker() -> str:
    """A new person for each question: each is counted, as chat counts it, and none is held
    back by the limit on how often one person may ask (``bot.chat.answers.READS_PER_MINUTE``)."""
    return f"bench:U{next(_ASKERS)}"


def fill(app: App, keys: int) -> None:
    """``keys`` keys (``k.000000`` on), each committed through the store."""
    who = Actor.parse("user:bench")
    started = time.monotonic()
    for n in range(keys):
        app.store.commit(Mutation(op=Op.SET, key=f"k.{n:06d}", value=n, actor=who))
        if (n + 1) % 20_000 == 0:
            print(f"  filled {n + 1} keys ({time.monotonic() - started:.0f} s)", flush=True)


def measure(keys: int, rounds: int, reps: int) -> dict[str, float]:
    """The median of each measure's round medians, on a fresh workspace of ``keys`` keys
    (deleted afterwards)."""
    app = build_app(f"bench-{uuid.uuid4().hex[:8]}")
    ws = app.store.workspace
    settings = WebSettings(operator_token=TOKEN, state_per_minute=10**9)  # (no limit here)
    server: Any = create_server(
        create_app(app, settings, env={}), host="127.0.0.1", port=0, threads=4
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    web = httpx.Client(
        base_url=f"http://127.0.0.1:{server.effective_port}",
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=600,
    )
    try:
        fill(app, keys)

        def page() -> object:
            got = web.get(f"/w/{ws}/state")
            assert got.status_code == 200 and f"k.{PAGE - 1:06d}" in got.text
            return got

        def chat() -> object:
            said = answer(app, "state", asker=asker())
            assert said.count("\n") == MAX_LINES and "--after" in said
            return said

        measures: dict[str, tuple[Callable[[], object], int]] = {
            "one entry (store.get)": (lambda: app.store.get("k.000007"), reps),
            "GET /health": (lambda: web.get("/health"), reps),
            "whole read (entries())": (app.store.entries, 1),
            "State page, first page": (page, reps),
            "/deliberate state": (chat, reps),
        }
        medians: dict[str, list[float]] = {name: [] for name in measures}
        order = list(measures)
        for round_ in range(rounds):
            turn = round_ % len(order)
            for name in order[turn:] + order[:turn]:
                call, times = measures[name]
                medians[name].append(median_ms(call, times))
    finally:
        web.close()
        server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
        thread.join(5)
        server.task_dispatcher.shutdown()
        names = list(app.redis.scan_iter(match=WorkspaceKeys(ws).every_key, count=10_000))
        for at in range(0, len(names), 10_000):
            app.redis.delete(*names[at : at + 10_000])
    return {name: statistics.median(found) for name, found in medians.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--keys", default="20000,200000", help="workspace sizes, comma-separated (20000,200000)"
    )
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (5)")
    parser.add_argument("--reps", type=int, default=5, help="calls per round and measure (5)")
    args = parser.parse_args()
    sizes = [int(size) for size in args.keys.split(",")]
    found = {}
    for keys in sizes:
        print(f"{keys} keys: filling", flush=True)
        found[keys] = measure(keys, args.rounds, args.reps)
    print(
        f"{args.rounds} rounds x {args.reps} calls (the whole read: 1 a round), median of the "
        "rounds' medians"
    )
    for keys, medians in found.items():
        one, whole = medians["one entry (store.get)"], medians["whole read (entries())"]
        print(f"{keys} keys")
        for name, median in medians.items():
            print(
                f"  {name:24} {median:10.2f} ms  {median / one:8.1f} x one entry  "
                f"{median / whole:7.4f} x whole read"
            )
    for keys, medians in found.items():
        whole = medians["whole read (entries())"]
        print(
            f"Headline, {keys} keys: State page / whole read "
            f"{medians['State page, first page'] / whole:.4f}, /deliberate state / whole read "
            f"{medians['/deliberate state'] / whole:.4f}"
        )


if __name__ == "__main__":
    main()
