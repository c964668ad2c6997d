"""Prompt size per model call over a 50-turn conversation, against a baseline computed from the
same run: the same conversation replayed as a transcript.

The conversation goes through the real runtime (``app.runtime(model)``) with the real
``openai`` client pointed at a local OpenAI-compatible server (``tests/openai_server.py``), so
every request is measured as it was sent. The server answers from a script: each classify call
gets the turn's act as a valid TurnInterpretation, each generate call a valid ExecutorOutput
that grows working memory (a summary, constraints, open questions, a candidate on brainstorm
and refine turns); two turns are followed by a "Use this" click (ConfirmCurrent), which pins
the decision in working memory.

"ours" is the characters of the messages of the turn's generate call (sum of their contents).
"replay" is what a transcript-replay design would send at the same turn: the same system
prompt, every earlier user and assistant message (the replies as shown), and this turn's input.
Turn 1 and turn 50 are both brainstorm turns, so the headline ratio compares like with like;
the task prompts differ in length by task, so a table compares each task's first and last call.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from offsite import ALICE, CONVERSATION, TOPIC, Step

from bot.app import App, build_app
from bot.redis.connection import connect
from core.config.core_config import load_config
from core.deliberation.messages import ActionClicked, UserSaid
from core.deliberation.view import View
from core.llm.prompts import ROLE as EXECUTOR_ROLE
from core.runtime.events import OutcomeEvent
from core.runtime.sessions import SessionStore
from core.state.keys import WorkspaceKeys

if TYPE_CHECKING:
    from core.redis.client import RedisClient

ROOT = Path(__file__).resolve().parent.parent
LOCAL_REDIS = "redis://127.0.0.1:6379/15"
TARGET = 1.2


def label(step: Step) -> str:
    """What the scripted model answers to the turn's classify call."""
    target = "new_topic" if step.act == "tangent" else "current_candidate"
    return json.dumps({"act_type": step.act, "target": target, "confidence": 0.9})


def executor_output(step: Step) -> str:
    """What the scripted model answers to the turn's generate call."""
    delta: dict[str, Any] = {}
    if step.summary:
        delta["summary"] = step.summary
    for name, item in (
        ("add_constraints", step.constraint),
        ("add_open_questions", step.question),
        ("resolve_questions", step.resolves),
        ("add_rejected_ideas", step.rejected),
    ):
        if item:
            delta[name] = [item]
    body = {"reply": step.reply, "candidate": step.candidate, "context_state_delta": delta}
    return json.dumps(body)


def is_generate(request: dict[str, Any]) -> bool:
    return str(request["messages"][0]["content"]).startswith(EXECUTOR_ROLE)


def chars(request: dict[str, Any]) -> int:
    return sum(len(m.get("content") or "") for m in request["messages"])


def full_chars(request: dict[str, Any]) -> int:
    """Everything the model reads in a call: the messages, the tool definitions and the
    response schema (all of it counts as prompt tokens)."""
    extra = [json.dumps(request[k]) for k in ("tools", "response_format") if k in request]
    return chars(request) + sum(len(e) for e in extra)


@dataclass
class Call:
    """The generate call of one turn, measured, next to the transcript replay's size."""

    turn: int
    task: str
    ours: int
    full: int  # ours plus the tool definitions and response schema sent with it
    replay: int
    system: int
    user_input: int
    memory: int  # working memory as sent (JSON), within the budget
    candidate: int
    classify: int  # the turn's classify call, for reference


def measure(request: dict[str, Any], classify: dict[str, Any], n: int, replay: int) -> Call:
    system, user = (m["content"] for m in request["messages"])
    payload = json.loads(user)
    state = payload["context_state"]
    memory = json.dumps(state.get("context_state", {}), ensure_ascii=False)
    return Call(
        turn=n,
        task=CONVERSATION[n - 1].act,
        ours=chars(request),
        full=full_chars(request),
        replay=replay,
        system=len(system),
        user_input=len(payload["user_input"]),
        memory=len(memory),
        candidate=len(state.get("candidate") or ""),
        classify=chars(classify),
    )


def replay_size(system: str, n: int) -> int:
    """Transcript replay at turn ``n``: the system prompt, every earlier user and assistant
    message, and this turn's input."""
    earlier = CONVERSATION[: n - 1]
    return (
        len(system)
        + sum(len(s.text) + len(s.reply) for s in earlier)
        + len(CONVERSATION[n - 1].text)
    )


def start_server() -> Any:
    """``tests/openai_server.py``'s server, answering each request from the conversation."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.openai_server import OpenAIServer

    server = OpenAIServer()
    by_text = {step.text: step for step in CONVERSATION}
    plain = server._answer

    def answer(request: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
        said = json.loads(request["messages"][1]["content"])["user_input"]
        step = by_text[said]
        server.reply(executor_output(step) if is_generate(request) else label(step))
        return plain(request)

    server._answer = answer  # type: ignore[method-assign]
    return server.start()


@dataclass
class Run:
    calls: list[Call]
    tools_chars: int  # tools and response_format of a generate request: the same every turn
    schema_chars: int


def run(app: App, server: Any, session_id: str) -> Run:
    import openai

    from core.llm.chat import ChatModel

    client = openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0)
    runtime = app.runtime(ChatModel(client, "bench-model"))
    sessions = SessionStore(app.redis, app.store.workspace)
    calls: list[Call] = []
    first = len(server.requests)
    for n, step in enumerate(CONVERSATION, start=1):
        before = len(server.requests)
        events = runtime.send(session_id, UserSaid(text=step.text, actor=ALICE, topic=TOPIC))
        sent = server.requests[before:]
        [generate] = [r for r in sent if is_generate(r)]
        [classify] = [r for r in sent if not is_generate(r)]
        [view] = [e for e in events if isinstance(e, View)]
        # the scripted answers were taken, not a fallback: the reply shown is the script's,
        # and the loop acted on the scripted act
        interpretation = sessions.load(session_id).interaction.last_interpretation
        if view.text != step.reply or interpretation is None or interpretation.act_type != step.act:
            raise SystemExit(f"turn {n}: the scripted model answer was not used")
        system = generate["messages"][0]["content"]
        calls.append(measure(generate, classify, n, replay_size(system, n)))
        if step.click:
            click(runtime, session_id, view, n)
    last = server.requests[first:][-1]
    tools = json.dumps(last.get("tools", []))
    schema = json.dumps(last.get("response_format", {}))
    return Run(calls, len(tools), len(schema))


def click(runtime: Any, session_id: str, view: View, n: int) -> None:
    assert view.candidate is not None, f"turn {n}: nothing on the table to click"
    msg = ActionClicked(
        action="ConfirmCurrent",
        target_id=view.candidate.id,
        expected_version=view.candidate.version,
        click_id=f"bench-{uuid.uuid4().hex}",
        actor=ALICE,
    )
    outcomes = [e for e in runtime.send(session_id, msg) if isinstance(e, OutcomeEvent)]
    if [o.outcome for o in outcomes] != ["committed"]:
        raise SystemExit(f"turn {n}: the click did not commit: {outcomes}")


def redis_client() -> RedisClient:
    url = os.environ.get("REDIS_URL")
    if url:
        return connect(url)
    try:
        return connect(LOCAL_REDIS)
    except Exception:  # no server on this machine: the embedded one
        return connect()


def with_budget(app: App, budget: int) -> App:
    deliberation = app.config.deliberation.model_copy(update={"context_budget_chars": budget})
    app.config = app.config.model_copy(update={"deliberation": deliberation})
    return app


def conversation(client: RedisClient, budget: int | None, keep: bool) -> Run:
    workspace = f"bench-{uuid.uuid4().hex[:8]}"
    server = start_server()
    try:
        app = build_app(workspace, client=client)
        if budget is not None:
            app = with_budget(app, budget)
        return run(app, server, "bench:prompt-size")
    finally:
        server.stop()
        if not keep:
            names = list(client.scan_iter(match=WorkspaceKeys(workspace).every_key, count=1000))
            if names:
                client.delete(*names)


def report(result: Run, at: list[int], budget: int) -> None:
    calls = result.calls
    one = calls[0]
    print(
        f"{len(calls)}-turn conversation through the runtime, real openai client, local "
        f"scripted server; budget {budget} characters for the candidate and working memory. "
        "Characters of the "
        "messages of each turn's generate call (system + user), and of the full request "
        "(messages + tool definitions + response schema); replay = the same system "
        "prompt + every earlier user and assistant message + this turn's input, computed "
        "from the same turns.\n"
    )
    print(
        "| turn | task | messages (chars) | messages(t)/(1) | full request (chars) "
        "| full(t)/(1) | transcript replay (chars) | replay(t)/replay(1) | replay / messages |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for t in at:
        c = calls[t - 1]
        print(
            f"| {t} | {c.task} | {c.ours} | **{c.ours / one.ours:.2f}** | {c.full} | "
            f"**{c.full / one.full:.2f}** | {c.replay} | {c.replay / one.replay:.2f} | "
            f"{c.replay / c.ours:.2f} |"
        )
    last = calls[-1]
    for name, ratio in (
        ("messages", last.ours / one.ours),
        ("full request", last.full / one.full),
    ):
        verdict = "met" if ratio <= TARGET else "MISSED"
        print(
            f"\nHeadline, {name}: turn {last.turn} / turn 1 = **{ratio:.2f}** against the "
            f"target <= {TARGET} ({verdict})."
        )
    print(
        f"Turns 1 and {last.turn} are both {one.task} turns (like with like). "
        f"replay({last.turn})/messages({last.turn}) = **{last.replay / last.ours:.2f}**; with "
        f"the same tools and schema sent beside the replay, full replay / full ours = "
        f"**{(last.replay + last.full - last.ours) / last.full:.2f}**."
    )
    tail = calls[9:]
    print(
        f"Largest call over the whole run: {max(c.ours for c in calls)} chars "
        f"({max(c.ours for c in calls) / one.ours:.2f}x turn 1); from turn 10 to turn "
        f"{last.turn}, ours stays within {min(c.ours for c in tail)}-"
        f"{max(c.ours for c in tail)} chars while replay grows "
        f"{calls[9].replay} -> {last.replay}.\n"
    )
    print("Same task at its first and last turn (task prompts differ in length by task):\n")
    print("| task | first turn | ours | last turn | ours | last / first |")
    print("|---|---|---|---|---|---|")
    for task in dict.fromkeys(c.task for c in calls):
        same = [c for c in calls if c.task == task]
        a, b = same[0], same[-1]
        print(f"| {task} | {a.turn} | {a.ours} | {b.turn} | {b.ours} | {b.ours / a.ours:.2f} |")
    print(f"\nWhat the generate call carries, turn 1 against turn {last.turn}:\n")
    print(f"| part | turn 1 | turn {last.turn} | difference |")
    print("|---|---|---|---|")
    parts = [
        ("system prompt (role + task)", one.system, last.system),
        ("user_input", one.user_input, last.user_input),
        ("working memory (JSON, within the budget)", one.memory, last.memory),
        ("candidate", one.candidate, last.candidate),
    ]
    for name, start, end in parts:
        print(f"| {name} | {start} | {end} | {end - start:+d} |")
    framing = [c.ours - c.system - c.user_input - c.memory - c.candidate for c in (one, last)]
    print(f"| JSON framing | {framing[0]} | {framing[1]} | {framing[1] - framing[0]:+d} |")
    print(f"| **total** | {one.ours} | {last.ours} | {last.ours - one.ours:+d} |")
    print(
        f"\nThe same at every turn, counted in the full request only: each generate request sends "
        f"{result.tools_chars} chars of tool definitions and {result.schema_chars} chars of "
        f"response_format schema. The classify call of each turn: {one.classify} chars at "
        f"turn 1, {last.classify} at turn {last.turn}."
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--at", default="1,10,25,50", help="turns to show in the table (default: 1,10,25,50)"
    )
    parser.add_argument(
        "--budgets",
        default="300,150",
        help="also replay the conversation with these working-memory budgets (characters) and "
        "print the headline ratio for each; empty for none (default: 300,150)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the bench workspaces")
    parser.add_argument("--json", action="store_true", help="print every call as JSON lines too")
    args = parser.parse_args()
    at = [int(t) for t in args.at.split(",") if t]
    client = redis_client()
    budget: int = load_config().deliberation.context_budget_chars
    result = conversation(client, None, args.keep)
    report(result, at, budget)
    others = [int(b) for b in args.budgets.split(",") if b]
    if others:
        print("\nThe same conversation with other working-memory budgets (configured first):\n")
        n = len(CONVERSATION)
        print(
            f"| budget (chars) | messages(1) | messages({n}) | ratio | largest / messages(1) "
            f"| full({n})/full(1) |"
        )
        print("|---|---|---|---|---|---|")
        for b, r in [(budget, result), *((b, conversation(client, b, args.keep)) for b in others)]:
            one, last, top = r.calls[0].ours, r.calls[-1].ours, max(c.ours for c in r.calls)
            full = r.calls[-1].full / r.calls[0].full
            print(f"| {b} | {one} | {last} | {last / one:.2f} | {top / one:.2f} | {full:.2f} |")
    if args.json:
        for call in result.calls:
            print(json.dumps(call.__dict__))


if __name__ == "__main__":
    main()
