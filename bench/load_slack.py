"""The Slack side of ``load.py``: the tests' local Slack Web API (``tests/servers/slack_api``),
keeping only what the run times; the teams installed through the bot's own install link and
Slack's redirect, as a browser does; and the people of every team, each sender thread one
person at a time, talking in threads and clicking the bot's buttons over signed HTTP.

A visit to a team is one conversation in a thread of its own, five requests, each signed as
Slack signs them (``X-Slack-Signature`` over the timestamp and the body):

1. a message that mentions the bot, delivered twice as Slack delivers it to an app that
   subscribes to both (a ``message`` event and an ``app_mention``, each with its own event
   id, in turn to the next replica): one turn, answered in the thread;
2. chatter in the channel, outside any thread, which the bot must leave alone;
3. a reply in the thread, which is a turn (answered);
4. a click on "Use this" (``ConfirmCurrent``) of that answer, its button's value as the
   local Slack received it: a commit, answered by ``chat.update`` of the clicked message.

Every request goes to the next replica in turn, as a load balancer in front of them would
send it. Acknowledged: the HTTP response. Answered: the local Slack receiving the bot's post
in the thread, or its update of the clicked message."""

from __future__ import annotations

import http.client
import itertools
import json
import random
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
from load_procs import ROOT  # noqa: F401  (puts the repository on sys.path first)
from slack_sdk.signature import SignatureVerifier

from tests.bot.slack.rig import block_actions, event_callback
from tests.servers.http import Request, Response
from tests.servers.slack_api import BotIdentity, SlackServer

SIGNING_SECRET = "10ad7e5710ad7e5710ad7e5710ad7e57"
BOT_USER = "U0TESTBOT"
INSTALL_COOKIE = "slack-app-oauth-state"
STEPS = 5  # requests per visit
IDEAS = ("postgres for the event store", "a weekly demo on fridays", "rust for the parser")


def team_id(n: int) -> str:
    return f"T{n:08d}"


class Arrivals:
    """What the bot sent, by key, each with the moment it arrived; a sender waits for the
    ``count``-th of a key (an Event per waiter, so one post wakes one sender)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[tuple[str, str], list[tuple[float, dict[str, Any]]]] = {}
        self._waiters: dict[tuple[str, str], tuple[int, threading.Event]] = {}

    def add(self, key: tuple[str, str], item: dict[str, Any]) -> None:
        with self._lock:
            items = self._items.setdefault(key, [])
            items.append((time.monotonic(), item))
            waiter = self._waiters.get(key)
            if waiter is not None and len(items) >= waiter[0]:
                waiter[1].set()

    def wait(
        self, key: tuple[str, str], count: int, timeout: float
    ) -> tuple[float, dict[str, Any]] | None:
        """The ``count``-th arrival under ``key`` (when, what), or None at the deadline."""
        event = threading.Event()
        with self._lock:
            if len(self._items.get(key, ())) < count:
                self._waiters[key] = (count, event)
            else:
                event.set()
        event.wait(timeout)
        with self._lock:
            self._waiters.pop(key, None)
            items = self._items.get(key, [])
            return items[count - 1] if len(items) >= count else None

    def forget(self, key: tuple[str, str]) -> None:
        with self._lock:
            self._items.pop(key, None)


class BenchSlack(SlackServer):
    """The local Slack Web API, OAuth and all, keeping what the run waits for rather than
    every request (hundreds of thousands of them): posts by thread, updates by message."""

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency  # seconds added to every Web API answer: Slack is far away
        self.api_calls: Counter[str] = Counter()  # by method, counted as they come
        super().__init__(token="xoxb-load-bench-unused")
        # socketserver listens with a backlog of 5: the bot's replicas open a connection per
        # Web API call, and a full backlog costs a refused SYN and a 1 s retry
        self._httpd.socket.listen(1024)
        self._httpd.handle_error = _quiet  # type: ignore[method-assign]  # a bot gone mid-reply
        self.calls = deque(maxlen=64)  # type: ignore[assignment]
        self.threads = Arrivals()  # (channel, thread ts) -> the bot's posts in it
        self.updated = Arrivals()  # (channel, message ts) -> the bot's updates of it
        self.ephemerals_by_text: Counter[str] = Counter()
        self._codes_issued = itertools.count(1)

    def _record(self, request: Request) -> None:
        return  # kept by what the run waits for, not by request

    def _authed(
        self, name: str, method: Callable[[dict[str, Any], BotIdentity], Response]
    ) -> Callable[[Request], Response]:
        answer = super()._authed(name, method)

        def counted(request: Request) -> Response:
            self.api_calls[name] += 1
            if self.latency:
                time.sleep(self.latency)  # the round trip to Slack, not a wait for a result
            return answer(request)

        return counted

    def _post_message(self, fields: dict[str, Any], bot: BotIdentity) -> Response:
        problem = self._channel_problem(fields)
        if problem is not None:
            return problem
        ts = self._next_ts()
        message: dict[str, Any] = {"type": "message", "user": bot.user_id, "bot_id": bot.bot_id}
        message |= {"text": fields.get("text"), "ts": ts}
        for name in ("thread_ts", "blocks"):
            if fields.get(name):
                message[name] = _listed(fields[name])
        self.threads.add((str(fields["channel"]), str(fields.get("thread_ts") or ts)), message)
        return Response(200, {"ok": True, "channel": fields["channel"], "ts": ts})

    def _update(self, fields: dict[str, Any], bot: BotIdentity) -> Response:
        problem = self._channel_problem(fields)
        if problem is not None:
            return problem
        self.updated.add((str(fields["channel"]), str(fields.get("ts"))), dict(fields))
        return Response(200, {"ok": True, "channel": fields["channel"], "ts": fields.get("ts")})

    def _post_ephemeral(self, fields: dict[str, Any], bot: BotIdentity) -> Response:
        self.ephemerals_by_text[str(fields.get("text"))[:80]] += 1
        return Response(200, {"ok": True, "message_ts": self._next_ts()})

    def install_code(self, team: str) -> str:
        code = f"code-{team}-{next(self._codes_issued)}"
        self.add_install_code(code, BotIdentity(team, f"Team {team}", user_id=BOT_USER))
        return code


def _listed(value: Any) -> Any:
    """slack_sdk sends ``blocks`` as a JSON string in form bodies, a list in JSON ones."""
    if isinstance(value, str) and value.startswith("["):
        return json.loads(value)
    return value


def install(base_url: str, slack: BenchSlack, team: str, http: httpx.Client) -> None:
    """The team installs the app: the install link, Slack's authorize page (skipped: the
    code is the one the local Slack will exchange), the redirect back with code and state."""
    link = http.get(f"{base_url}/slack/install")
    if link.status_code != 302:
        raise RuntimeError(f"install link answered {link.status_code}: {link.text[:200]}")
    [state] = parse_qs(urlsplit(link.headers["location"]).query)["state"]
    back = http.get(
        f"{base_url}/slack/oauth_redirect",
        params={"code": slack.install_code(team), "state": state},
        headers={"Cookie": f"{INSTALL_COOKIE}={state}"},
    )
    if back.status_code != 200:
        raise RuntimeError(f"the redirect answered {back.status_code}: {back.text[:200]}")


@dataclass
class Tally:
    """What the senders measured: each request's replica, kind, status and seconds to the
    HTTP answer; each answer's kind and seconds (None: it never came); baselines."""

    acks: list[tuple[int, str, int, float]] = field(default_factory=list)
    answers: list[tuple[str, float | None]] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)  # signed url_verification
    pings: list[float] = field(default_factory=list)  # Redis PING from here
    failures: Counter[str] = field(default_factory=Counter)


class Replicas:
    """The replicas' addresses; ``next()`` the one the next request goes to (round-robin,
    as a load balancer)."""

    def __init__(self, urls: list[str]) -> None:
        self.hosts = [urlsplit(u) for u in urls]
        self._turn = itertools.count()

    def next(self) -> int:
        return next(self._turn) % len(self.hosts)


class Sender:
    """One person after another, each visit to the next team; one keep-alive connection per
    replica."""

    def __init__(self, traffic: SlackTraffic) -> None:
        self.traffic = traffic
        self.signer = SignatureVerifier(SIGNING_SECRET)
        self.connections: dict[int, http.client.HTTPConnection] = {}

    def post(self, kind: str, body: str, content_type: str) -> int:
        """Sign and send ``body`` to the next replica; its status (0: no answer)."""
        replica = self.traffic.replicas.next()
        stamp = str(int(time.time()))
        headers = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": self.signer.generate_signature(timestamp=stamp, body=body),
        }
        start = time.perf_counter()
        try:
            connection = self._connection(replica)
            connection.request("POST", "/slack/events", body.encode(), headers)
            answer = connection.getresponse()
            answer.read()
            status = answer.status
        except (OSError, http.client.HTTPException) as error:
            self.connections.pop(replica, None)
            self.traffic.tally.failures[f"{kind}: {type(error).__name__}"] += 1
            status = 0
        took = time.perf_counter() - start
        if kind == "baseline":
            self.traffic.tally.baseline.append(took)
        else:
            self.traffic.tally.acks.append((replica, kind, status, took))
            if not 200 <= status < 300:
                self.traffic.tally.failures[f"{kind}: HTTP {status}"] += 1
        return status

    def _connection(self, replica: int) -> http.client.HTTPConnection:
        connection = self.connections.get(replica)
        if connection is None:
            host = self.traffic.replicas.hosts[replica]
            connection = http.client.HTTPConnection(
                host.hostname or "127.0.0.1", host.port, timeout=self.traffic.ack_timeout
            )
            self.connections[replica] = connection
        return connection

    def event(self, kind: str, team: str, event: dict[str, Any]) -> None:
        body = event_callback(event, f"Ev{self.traffic.next_ts().replace('.', '')}", team)
        body["authorizations"][0]["user_id"] = BOT_USER
        self.post(kind, json.dumps(body), "application/json")

    def answered(
        self, kind: str, arrivals: Arrivals, key: tuple[str, str], count: int, sent: float
    ) -> dict[str, Any] | None:
        got = arrivals.wait(key, count, self.traffic.answer_timeout)
        if got is None:
            self.traffic.tally.answers.append((kind, None))
            self.traffic.tally.failures[f"{kind}: no answer in {self.traffic.answer_timeout}s"] += 1
            return None
        self.traffic.tally.answers.append((kind, got[0] - sent))
        return got[1]

    def visit(self, n: int) -> None:
        traffic, slack = self.traffic, self.traffic.slack
        team = team_id(n % traffic.teams)
        channel, user = f"C{team[1:]}", f"U{team[1:]}A"
        root = traffic.next_ts()
        text = f"<@{BOT_USER}> what if we used {IDEAS[n % len(IDEAS)]}"
        said = _message(team, channel, user, root, text)
        sent = time.monotonic()
        self.event("mention", team, said)
        twin = {k: v for k, v in said.items() if k != "channel_type"} | {"type": "app_mention"}
        self.event("mention twin", team, twin)
        thread = (channel, root)
        first = self.answered("turn", slack.threads, thread, 1, sent)
        self.event("chatter", team, _message(team, channel, user, traffic.next_ts(), "lunch?"))
        reply = "make it smaller, team only"
        sent = time.monotonic()
        self.event("reply", team, _message(team, channel, user, traffic.next_ts(), reply, root))
        second = self.answered("turn", slack.threads, thread, 2, sent) if first else None
        self.click(team, channel, user, second or first)
        slack.threads.forget(thread)

    def baseline(self) -> None:
        """A signed ``url_verification`` (Bolt checks the signature and answers the challenge:
        no listener, no Redis) to the next replica, and a Redis PING from here."""
        self.post("baseline", '{"type": "url_verification", "challenge": "c"}', "application/json")
        self.traffic.tally.pings.append(self.traffic.ping())

    def click(self, team: str, channel: str, user: str, message: dict[str, Any] | None) -> None:
        if message is None:
            return
        try:
            payload = block_actions(message, "ConfirmCurrent", user, None, None, channel)
        except AssertionError:
            self.traffic.tally.failures["click: the answer had no Use this button"] += 1
            return
        payload["team"] = {"id": team, "domain": team.lower()}
        payload["user"]["team_id"] = team
        payload["response_url"] = f"{self.traffic.slack.url}/actions/{team}/1/r3sp0nse"
        sent = time.monotonic()
        self.post("click", urlencode({"payload": json.dumps(payload)}), _FORM)
        key = (channel, str(message["ts"]))
        self.answered("click", self.traffic.slack.updated, key, 1, sent)
        self.traffic.slack.updated.forget(key)

    def close(self) -> None:
        for connection in self.connections.values():
            connection.close()


_FORM = "application/x-www-form-urlencoded"


def _message(
    team: str, channel: str, user: str, ts: str, text: str, thread_ts: str | None = None
) -> dict[str, Any]:
    event = {
        "type": "message",
        "channel": channel,
        "user": user,
        "text": text,
        "ts": ts,
        "event_ts": ts,
        "channel_type": "channel",
        "team": team,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


class SlackTraffic:
    """``senders`` threads visiting ``teams`` teams in turn until ``events`` requests have
    been sent (at least one visit each)."""

    def __init__(
        self,
        slack: BenchSlack,
        urls: list[str],
        teams: int,
        events: int,
        ping: Callable[[], float],
        *,
        answer_timeout: float = 30.0,
        ack_timeout: float = 30.0,
    ) -> None:
        self.slack, self.replicas, self.teams = slack, Replicas(urls), teams
        self.visits = max(1, events // STEPS)
        self.ping = ping
        self.answer_timeout, self.ack_timeout = answer_timeout, ack_timeout
        self.tally = Tally()
        self._visit = itertools.count()
        self.started = 0
        self._ts_lock = threading.Lock()
        self._ts = time.time()

    def next_ts(self) -> str:
        with self._ts_lock:
            self._ts = max(time.time(), self._ts + 0.000001)
            return f"{self._ts:.6f}"

    def reached(self) -> int:
        """Teams the traffic has reached so far."""
        return min(self.started, self.teams)

    def run(self, senders: int) -> float:
        """Send it all, the baselines beside it; the seconds it took."""
        threads = [threading.Thread(target=self._send, daemon=True) for _ in range(senders)]
        done = threading.Event()
        baselines = threading.Thread(target=self._baselines, args=(done,), daemon=True)
        start = time.monotonic()
        for thread in [*threads, baselines]:
            thread.start()
        for thread in threads:
            thread.join()
        took = time.monotonic() - start
        done.set()
        baselines.join()
        return took

    def _baselines(self, done: threading.Event) -> None:
        """Baselines at moments that do not follow the traffic's own steps (a sender's next
        request comes as the bot finishes the last one): every 10-30 ms."""
        sender, pace = Sender(self), random.Random(7)
        try:
            while not done.wait(pace.uniform(0.01, 0.03)):
                sender.baseline()
        finally:
            sender.close()

    def _send(self) -> None:
        sender = Sender(self)
        try:
            while (n := next(self._visit)) < self.visits:
                self.started = max(self.started, n + 1)
                sender.visit(n)
        finally:
            sender.close()


def _quiet(request: object, client_address: object) -> None:
    """socketserver prints a traceback for each connection a client dropped (the bot
    stopping at the end of a run): nothing the run measures."""
