"""Rule matching time per mutation: with the 10 rules that matter, and with the same 10 among
10,000 unrelated ones. The baseline is measured in the same run: the 10-rule book. Target:
the 10,010-rule book costs at most 1.5x the 10-rule one.

Per mutation, the engine's pure work is timed: find the rules whose key pattern matches
(``RuleIndex.match``) and check each one's trigger and condition (``check_rule``). The
unrelated rules mix exact keys and glob patterns with many different literal prefixes, as a
large deployment would. A linear scan (fnmatch on every rule) is timed too, to show what
the index saves. Rounds alternate between the books so that both see the same machine.

Then expressions: 10 rules whose ``if.expr`` reads the state all hold for one mutation, over
a state of ``--state-keys`` keys (2,000), checked with one CEL context for the record
(``Activation``, as the engine does) against one context per rule (as it did: the state
converted to CEL's values for every rule), in alternating rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from fnmatch import fnmatchcase

from core.state.mutation import Mutation
from core.state.mutation_log import LogRecord
from rules.dsl import Rule
from rules.engine.conditions import Activation, check_rule
from rules.index import RuleIndex
from rules.variables import StateView

RELATED = [
    {"key": "scene.name", "op": "set"},
    {"key": "stream.state", "op": "set", "to": "off"},
    {"key": "decision.*", "op": "set"},
    {"key": "artifact.*"},
    {"key": "vision.dead", "op": "set"},
    {"key": "entity.task.*"},
    {"key": "clip.delete"},
    {"key": "obs.connected", "to": True},
    {"key": "stream.end"},
    {"key": "scene.*", "op": "delete"},
]
KEYS = [
    "scene.name",
    "stream.state",
    "decision.db-engine",
    "artifact.plan",
    "vision.dead",
    "entity.task.t1",
    "clip.delete",
    "obs.connected",
    "stream.end",
    "chat.message",
]


def rule(index: int, when: dict[str, object]) -> Rule:
    return Rule.model_validate(
        {
            "id": f"r{index}",
            "when": when,
            "if": {"state": {"obs.connected": True}},
            "then": [{"action": "log.write", "args": {"message": "{{ mutation.key }}"}}],
        }
    )


def unrelated(count: int) -> list[Rule]:
    rules = []
    for i in range(count):
        pattern = (f"noise{i}.*", f"metrics.{i}.value", f"n{i % 97}.x{i}*", f"svc{i}.?")[i % 4]
        rules.append(rule(1000 + i, {"key": pattern}))
    return rules


def records() -> list[LogRecord]:
    out = []
    for i, key in enumerate(KEYS):
        m = Mutation.model_validate(
            {
                "op": "set",
                "key": key,
                "value": "off" if key == "stream.state" else True,
                "actor": {"kind": "user", "id": "bench"},
            }
        )
        out.append(LogRecord(f"{i}-0", m, 1, 0, None, None))
    return out


def per_mutation_ns(match: object, recs: list[LogRecord], state: StateView, reps: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(reps):
        for record in recs:
            for r in match(record.mutation.key):  # type: ignore[operator]
                check_rule(r, record, state)
    return (time.perf_counter_ns() - start) / (reps * len(recs))


def expression_rules(count: int) -> list[Rule]:
    return [
        Rule.model_validate(
            {
                "id": f"x{i}",
                "when": {"key": "scene.name"},
                "if": {"expr": f'state["k{i}"] == {i} && mutation.value == true'},
                "then": [{"action": "log.info", "args": {"message": "x"}}],
            }
        )
        for i in range(count)
    ]


def per_record_ns(rules: list[Rule], record: LogRecord, state: StateView, shared: bool) -> float:
    start = time.perf_counter_ns()
    activation = Activation(record, state) if shared else None
    for r in rules:
        if not check_rule(r, record, state, activation=activation).held:
            raise SystemExit(f"{r.id} should hold")
    return time.perf_counter_ns() - start


def expressions(state_keys: int, rounds: int) -> dict[str, dict[str, float]]:
    rules, record = expression_rules(10), records()[0]
    state = StateView.of({f"k{i}": i for i in range(state_keys)})
    times: dict[str, list[float]] = {"a context per rule": [], "a context per record": []}
    for _ in range(rounds):
        times["a context per rule"].append(per_record_ns(rules, record, state, shared=False))
        times["a context per record"].append(per_record_ns(rules, record, state, shared=True))
    medians = {name: statistics.median(values) for name, values in times.items()}
    base = medians["a context per rule"]
    return {
        name: {"median_us": round(v / 1000, 2), "ratio": round(v / base, 2)}
        for name, v in medians.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unrelated", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--reps", type=int, default=200, help="passes over the keys per round")
    parser.add_argument("--state-keys", type=int, default=2_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    related = [rule(i, when) for i, when in enumerate(RELATED)]
    noise = unrelated(args.unrelated)
    small, large = RuleIndex(related), RuleIndex(related + noise)
    everything = related + noise
    recs = records()
    state = StateView.of({"obs.connected": True})
    assert [len(small.match(k)) for k in KEYS] == [len(large.match(k)) for k in KEYS]

    def scan(key: str) -> list[Rule]:
        return [r for r in everything if fnmatchcase(key, r.when.key)]

    times: dict[str, list[float]] = {"10 rules": [], "10 + unrelated": [], "linear scan": []}
    for _ in range(args.rounds):
        times["10 rules"].append(per_mutation_ns(small.match, recs, state, args.reps))
        times["10 + unrelated"].append(per_mutation_ns(large.match, recs, state, args.reps))
        times["linear scan"].append(per_mutation_ns(scan, recs, state, max(1, args.reps // 100)))
    medians = {name: statistics.median(values) for name, values in times.items()}
    base = medians["10 rules"]
    result = {
        name: {"median_us": round(v / 1000, 2), "ratio": round(v / base, 2)}
        for name, v in medians.items()
    }
    exprs = expressions(args.state_keys, args.rounds)
    if args.json:
        print(json.dumps(result | {"expressions": exprs}))
        return
    print(f"rule matching per mutation ({len(KEYS)} keys, {args.rounds} rounds, median):")
    for name, row in result.items():
        label = name.replace("unrelated", f"{args.unrelated} unrelated")
        print(f"  {label:<28} {row['median_us']:>9.2f} µs   ratio {row['ratio']:.2f}")
    print(
        f"Headline: {args.unrelated} unrelated rules / 10 rules = "
        f"{result['10 + unrelated']['ratio']:.2f} (target <= 1.5)"
    )
    print(f"10 rules with an expression holding for one mutation, {args.state_keys} state keys:")
    for name, row in exprs.items():
        print(f"  {name:<28} {row['median_us']:>9.2f} µs   ratio {row['ratio']:.2f}")


if __name__ == "__main__":
    main()
