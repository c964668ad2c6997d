"""``/metrics`` (Prometheus) and ``/health``.

``/metrics`` shows, for every workspace, the sums of what every process counted
(``core.metrics``: each Slack, Discord, console and worker process adds its counts to Redis
within a second) and what is measured as it is asked: proposals pending, the mutation log's
length, the rules' queue depth, and one Redis round trip. With ``DELIBERATE_METRICS_TOKEN``
set it wants ``Authorization: Bearer TOKEN`` (else 401); without, it answers loopback
clients only (else 403)."""

from __future__ import annotations

import hmac
import logging
import threading
from collections.abc import Iterator

from flask import Blueprint, Response, current_app, request
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector, CollectorRegistry
from redis.exceptions import RedisError
from rq import Queue

from bot.web.context import Web, web
from bot.web.rate_limits import refused_tries, wrong_tokens
from bot.web.settings import is_loopback
from core.metrics import COUNTERS, HISTOGRAMS, Gauges, read_workspace, round_trip_sec

__all__ = ["PREFIX", "Scrape", "blueprint", "health", "plain"]

PREFIX = "deliberate_"
REGISTRY = "deliberate.metrics"  # the app's registry, in its extensions
WORKSPACE = "workspace"

blueprint = Blueprint("metrics", __name__)
_log = logging.getLogger("deliberate.web")
_made = threading.Lock()


def health() -> tuple[str, int]:
    """200 while Redis answers, 503 when it does not (the platform's router asks)."""
    try:
        web().base.redis.ping()
    except Exception as exc:  # any failure to answer is "not healthy"
        return f"redis does not answer: {exc}\n", 503
    return "ok\n", 200


@blueprint.get("/metrics")
def metrics() -> Response:
    refused = _refused()
    if refused is not None:
        return refused
    try:
        body = generate_latest(_registry())
    except RedisError as exc:
        return plain(f"redis does not answer: {exc}\n", 503)
    return Response(body, 200, content_type=CONTENT_TYPE_LATEST)


def _refused() -> Response | None:
    """Why this request may not see the metrics (None: it may)."""
    token = web().settings.metrics_token
    if token:
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() == "bearer":  # a try, counted as the operator token's are
            right = hmac.compare_digest(given.strip().encode(), token.encode())
            wait = wrong_tokens(token, right)
            if wait is not None:
                return refused_tries(wait)
            if right:
                return None
        refused = plain("/metrics wants Authorization: Bearer DELIBERATE_METRICS_TOKEN\n", 401)
        refused.headers["WWW-Authenticate"] = 'Bearer realm="deliberate metrics"'
        return refused
    if is_loopback(request.remote_addr or ""):
        return None
    return plain(
        "/metrics answers loopback clients only; set DELIBERATE_METRICS_TOKEN to let a "
        "scraper elsewhere in with it as a Bearer token\n",
        403,
    )


def plain(text: str, status: int) -> Response:
    """A short answer for a machine or a terminal (``text`` ends with its newline)."""
    return Response(text, status, mimetype="text/plain")


def _registry() -> CollectorRegistry:
    """This app's registry (each app its own: tests serve several in one process)."""
    found: CollectorRegistry | None = current_app.extensions.get(REGISTRY)
    if found is None:
        with _made:
            found = current_app.extensions.get(REGISTRY)
            if found is None:
                found = CollectorRegistry()
                found.register(Scrape(web()))
                current_app.extensions[REGISTRY] = found
    return found


class Scrape(Collector):
    """Everything ``/metrics`` shows, read from Redis when it is asked."""

    def __init__(self, site: Web) -> None:
        self.site = site
        self._queues: dict[str, Queue | None] = {}

    def collect(self) -> Iterator[Metric]:
        redis = self.site.base.redis
        read = {name: read_workspace(redis, name) for name in self.site.workspaces()}
        for counter in COUNTERS:
            family = CounterMetricFamily(
                PREFIX + counter.name, counter.help, labels=[WORKSPACE, *counter.labels]
            )
            for workspace, (counts, _) in read.items():
                for values, value in sorted(counts.series(counter).items()):
                    family.add_metric([workspace, *values], value)
            yield family
        for histogram in HISTOGRAMS:
            timed = HistogramMetricFamily(
                PREFIX + histogram.name, histogram.help, labels=[WORKSPACE, *histogram.labels]
            )
            for workspace, (counts, _) in read.items():
                for values, seen in sorted(counts.histogram(histogram).items()):
                    buckets = [(le, float(n)) for le, n in seen.buckets]
                    timed.add_metric([workspace, *values], buckets, seen.sum_sec)
            yield timed
        yield from self._gauges({workspace: gauges for workspace, (_, gauges) in read.items()})

    def _gauges(self, read: dict[str, Gauges]) -> Iterator[Metric]:
        pending = GaugeMetricFamily(
            f"{PREFIX}proposals_pending",
            "Proposals waiting for a person, their deadline still ahead.",
            labels=[WORKSPACE],
        )
        log = GaugeMetricFamily(
            f"{PREFIX}log_length",
            "Records in the workspace's mutation log (compaction trims it behind a checkpoint).",
            labels=[WORKSPACE],
        )
        for workspace, now in read.items():
            pending.add_metric([workspace], now.pending_proposals)
            log.add_metric([workspace], now.log_length)
        yield pending
        yield log
        yield self._queue_depths()
        yield GaugeMetricFamily(
            f"{PREFIX}redis_roundtrip_seconds",
            "How long one PING to Redis took, measured during this scrape.",
            value=round_trip_sec(self.site.base.redis),
        )

    def _queue_depths(self) -> GaugeMetricFamily:
        depth = GaugeMetricFamily(
            f"{PREFIX}queue_depth",
            "Rule runs waiting on the workspace's RQ queue for a worker.",
            labels=[WORKSPACE, "queue"],
        )
        for workspace in self.site.base.rule_workspaces():
            queue = self._queue(workspace)
            if queue is not None:
                depth.add_metric([workspace, queue.name], queue.count)
        return depth

    def _queue(self, workspace: str) -> Queue | None:
        """The queue the workspace's rule runs wait on (None: none this process can read,
        such as a cluster's without ``DELIBERATE_QUEUE_URL``)."""
        if workspace not in self._queues:
            try:
                self._queues[workspace] = self.site.app_for(workspace).queue()
            except ValueError as exc:
                _log.warning("metrics: no queue depth for %s: %s", workspace, exc)
                self._queues[workspace] = None
        return self._queues[workspace]
