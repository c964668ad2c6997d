"""What a page of the web inspector's Log costs on a 100,000-record log, through real HTTP
(waitress, Flask, httpx): the newest page, a page deep in the log (by its cursor), a page of
one key among 50 (a filter that finds its 50 rows in the first few hundred records), a
filter that matches nothing (it reads its bounded 5,000 records, then says so), and a time
window in the middle of the log (its bounds are stream ids: no scan).

A fresh workspace gets ``--records`` commits; each page is then timed in rounds that
alternate with two baselines: the raw ``XREVRANGE`` of 50 records through redis-py (what a
page must at least read) and ``GET /health`` (one HTTP round trip with a Redis ``PING``).
Medians of the rounds' medians, each as a ratio to both."""

from __future__ import annotations

import argparse
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
from timing import median_ms
from waitress import wasyncore
from waitress.server import create_server

from bot.app import App, build_app
from bot.web.settings import WebSettings
from bot.web.site import create_app
from core.state.actor import Actor
from core.state.keys import WorkspaceKeys
from core.state.mutation import Mutation, Op

TOKEN = "bench-operator-token-0123456789"


def fill(app: App, records: int) -> None:
    """``records`` changes of 50 keys, then one of ``decision.rare``."""
    who = Actor.parse("user:bench")
    started = time.monotonic()
    for i in range(records):
        app.store.commit(Mutation(op=Op.SET, key=f"decision.k{i % 50}", value=i, actor=who))
        if (i + 1) % 20_000 == 0:
            print(f"  filled {i + 1} records ({time.monotonic() - started:.0f} s)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000, help="log length (100000)")
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds (7)")
    parser.add_argument("--reps", type=int, default=5, help="requests per round and page (5)")
    args = parser.parse_args()

    app = build_app(f"bench-{uuid.uuid4().hex[:8]}")
    ws = app.store.workspace
    server: Any = create_server(
        create_app(app, WebSettings(operator_token=TOKEN), env={}),
        host="127.0.0.1",
        port=0,
        threads=4,
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    web = httpx.Client(
        base_url=f"http://127.0.0.1:{server.effective_port}",
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    try:
        fill(app, args.records)
        ids = [row[0] for row in app.redis.xrange(app.store.keys.log, count=1)]
        middle = app.redis.xrevrange(app.store.keys.log, count=args.records // 2)[-1][0]
        ms = int(str(middle).split("-")[0])
        minute = datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S")

        def page(**query: str) -> Callable[[], object]:
            def get() -> object:
                answer = web.get(f"/w/{ws}/log", params=query)
                assert answer.status_code == 200 and '<table class="log">' in answer.text
                return answer

            return get

        def nothing() -> object:
            answer = web.get(f"/w/{ws}/log", params={"key": "decision.never"})
            assert answer.status_code == 200 and "Looked through 5000 records" in answer.text
            return answer

        pages: dict[str, Callable[[], object]] = {
            "XREVRANGE 50": lambda: app.redis.xrevrange(app.store.keys.log, count=50),
            "GET /health": lambda: web.get("/health"),
            "newest page": page(),
            "deep page (cursor)": page(before=str(middle)),
            "one key of 50": page(key="decision.k7"),
            "key matching nothing": nothing,
            "time window": page(since=minute, until=minute),
        }
        assert ids
        medians: dict[str, list[float]] = {name: [] for name in pages}
        order = list(pages)
        for round_ in range(args.rounds):
            turn = round_ % len(order)
            for name in order[turn:] + order[:turn]:
                medians[name].append(median_ms(pages[name], args.reps))
    finally:
        web.close()
        server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
        thread.join(5)
        server.task_dispatcher.shutdown()
        names = list(app.redis.scan_iter(match=WorkspaceKeys(ws).every_key))
        if names:
            app.redis.delete(*names)
    raw = statistics.median(medians["XREVRANGE 50"])
    health = statistics.median(medians["GET /health"])
    print(
        f"{args.records} log records; {args.rounds} rounds x {args.reps} requests, median of "
        "the rounds' medians"
    )
    for name in pages:
        median = statistics.median(medians[name])
        ratios = f"{median / raw:7.1f} x XREVRANGE  {median / health:6.1f} x /health"
        print(f"  {name:22} {median:8.2f} ms  {ratios}")


if __name__ == "__main__":
    main()
