"""``deliberate rules check|test|replay|why``: validate rule files, dry-run a mutation (or
the log's past ones) through the rules, and explain how a key came to hold its value. Both
``check`` and ``test`` hold each action's arguments to its connector's own schema: ``check``
those a file spells out, ``test`` what the templates render to; a bad one is named by file,
line, field and rule, and the command fails."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bot.app import App, load_app_config
from bot.commands import SUMMARIES
from bot.commands.args import TIME_HELP, json_object, state_key, when
from bot.commands.exits import EXIT_OK, EXIT_REJECTED, EXIT_USAGE
from bot.reports.by_mutation import by_mutation, grouped_lines
from bot.reports.explain import masked_record, origin
from bot.reports.render import json_line, log_line
from bot.screen import one_line
from connectors.registry import default_registry
from core.config.core_config import CoreConfig, config_paths
from core.config.yaml_source import field_path
from core.errors import ConfigError, ConfigIssue
from core.field_errors import Loc, validation_problems
from core.state.mutation import Mutation
from core.state.mutation_log import LogRecord
from core.state.replay import Replayer, visible
from rules.arguments import rendered_problems, written_problems
from rules.book import RuleBook
from rules.config import RulesConfig
from rules.connector_api import ActionRegistry
from rules.dsl import Rule
from rules.engine.conditions import check_rule, plan_steps
from rules.templates import TemplateFailed, render
from rules.variables import StateView, live_values, masked_variables, variables

__all__ = ["register"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rules = commands.add_parser("rules", help=SUMMARIES["rules"], description=__doc__)
    sub = rules.add_subparsers(dest="rules_command", required=True, metavar="SUBCOMMAND")
    check = sub.add_parser(
        "check",
        help="validate config or rule files",
        description="Validate each file (a config file, or one holding only `rules:`) merged "
        "on the shipped defaults, or without PATH the config --config names, and the "
        "arguments each action step spells out against its connector's schema (a value a "
        "template gives is checked by 'rules test'); exit 2 naming file:line and field for "
        "every problem.",
    )
    check.add_argument("paths", nargs="*", type=Path, metavar="PATH")
    check.set_defaults(handler=_check, offline=True)
    test = sub.add_parser(
        "test",
        help="dry-run a mutation through the rules (nothing is executed)",
        description="Which rules the mutation triggers, which conditions hold, which actions "
        "and derived mutations would run, each action's arguments as rendered checked "
        "against its connector's schema. Nothing is committed, enqueued or sent. Exit 1 "
        "when a rule that would run would fail: in its condition, a template, or an "
        "argument its connector refuses (named by file:line, field and rule).",
    )
    test.add_argument(
        "--mutation",
        required=True,
        metavar="JSON",
        type=json_object,
        help='e.g. \'{"op": "set", "key": "scene.name", "value": "BRB"}\'',
    )
    test.add_argument(
        "--state",
        metavar="JSON",
        type=json_object,
        help="state as {key: value} (default: the live state)",
    )
    test.add_argument("--json", action="store_true", help="one JSON object per rule")
    test.set_defaults(handler=_test)
    _register_replay(sub)
    # `deliberate why KEY` and `deliberate rules why KEY` are the same command
    for parent in (commands, sub):
        why = parent.add_parser(
            "why",
            help=SUMMARIES["why"],
            description="The mutation that set KEY (actor, reason, the rule that derived it "
            "and its cause), then the newest rule evaluations and actions on KEY's changes, "
            "under the mutation that triggered them (its version, who made it and when), "
            "newest first. With --json, one object: lastMutation, evaluations (oldest first) "
            "and mutations (newest first, each with its evaluations).",
        )
        why.add_argument("key", type=state_key, metavar="KEY")
        why.add_argument(
            "--limit", type=int, default=10, help="evaluations and actions to show (default 10)"
        )
        why.add_argument("--json", action="store_true")
        why.set_defaults(handler=_why)


def _register_replay(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    replay = sub.add_parser(
        "replay",
        help="what the rules would have done over past mutations (nothing is executed)",
        description="Walk the log's records from --since to --until and, for each one a rule "
        "watches, dry-run it as 'rules test' does, against the state just before it: which "
        "rules would run and their steps, then a summary. With --config, the rule book "
        "those files give (on the shipped defaults and any --config before 'rules'), to see "
        "what a changed rule book would have done. Nothing is committed, enqueued or sent; "
        "the derived mutations it shows are not replayed in turn.",
    )
    replay.add_argument("--since", required=True, type=when, metavar="TIME", help=TIME_HELP)
    replay.add_argument("--until", type=when, metavar="TIME", help="(default: the newest record)")
    replay.add_argument(
        "--config",
        dest="replay_config",
        type=Path,
        action="append",
        metavar="PATH",
        help="a config file whose rules to replay, merged on top of the shipped defaults; "
        "repeat it to layer several",
    )
    replay.add_argument(
        "--json", action="store_true", help="one JSON object per record, then the summary"
    )
    replay.set_defaults(handler=_replay)


def _check(config: CoreConfig, args: argparse.Namespace) -> int:
    # each file given, on the shipped defaults; else the config the other commands load
    layers = [[path] for path in args.paths] or [config_paths(args.config)]
    registry = default_registry()
    failed = False
    for paths in layers:
        try:
            loaded = load_app_config(paths)
        except ConfigError as exc:
            failed = True
            print(exc, file=sys.stderr)
            continue
        # a tenant's own rules too (its workspace's config: the whole one with its sections
        # on top), each problem once (a rule it takes from the whole config, named there)
        tenants = loaded.tenant_configs()
        issues = _argument_issues(loaded, registry)
        for own in tenants.values():
            said = {str(issue) for issue in issues}
            issues += [i for i in _argument_issues(own, registry) if str(i) not in said]
        for issue in issues:
            print(issue, file=sys.stderr)
        if issues:
            failed = True
            continue
        named = " + ".join(str(path) for path in paths) or "the shipped config"
        theirs = "".join(f"; in {ws}, {len(own.rules)}" for ws, own in sorted(tenants.items()))
        print(f"{named}: OK, {len(loaded.rules)} rules (with the shipped defaults){theirs}")
    return EXIT_USAGE if failed else EXIT_OK


def _argument_issues(loaded: RulesConfig, registry: ActionRegistry) -> list[ConfigIssue]:
    """The action arguments a file spells out that their connector refuses, each at its
    file and line, naming its rule (a step skipped for an unset ``${NAME:-}``: none)."""
    book = RuleBook.from_config(loaded)

    def skipped(rule: Rule, step: int) -> bool:
        return bool(book.unset_env(rule, step))

    return [
        _issue(loaded, path, f"{said} (rule {loaded.rules[int(path[1])].id})")
        for path, said in written_problems(loaded.rules, registry, skipped)
    ]


def _issue(config: CoreConfig, path: Loc, message: str) -> ConfigIssue:
    located = config.located
    if located is None:  # (a config made in code: no file to name)
        return ConfigIssue("the config", None, field_path(path), message)
    return located.issue(path, message)


def _test(app: App, args: argparse.Namespace) -> int:
    data = {"actor": {"kind": "user", "id": "cli"}, **args.mutation}
    try:
        mutation = Mutation.model_validate(data)
    except ValidationError as exc:
        print(f"deliberate: --mutation: {validation_problems(exc, Mutation)}", file=sys.stderr)
        return EXIT_USAGE
    values = args.state if args.state is not None else live_values(app.store)
    prev = values.get(mutation.key)
    record = LogRecord("dry-run", mutation, 0, 0, None, None if prev is None else json.dumps(prev))
    book, registry = app.rules, default_registry()
    matched = book.index.match(mutation.key)
    failing = 0
    for rule in matched:
        report = _dry_run(book, rule.id, record, StateView.of(values))
        refused = _refused_arguments(app, rule, report, record, values, registry)
        failing += (
            bool(refused)
            or report.get("failed", False)
            or any(
                _fails(rule, step["step"], record, values)
                for step in report.get("steps", [])
                if "error" in step and "skipped" not in step
            )
        )
        print(json_line(report) if args.json else _describe(report))
    if not matched and not args.json:
        print(f"no rule watches {mutation.key} ({len(book.rules)} rules loaded)")
    if failing:  # a rule that would fail, in its condition or at a step: as a check, fails
        print(
            f"deliberate: {failing} rule(s) would fail in a condition or at a step",
            file=sys.stderr,
        )
        return EXIT_REJECTED
    return EXIT_OK


def _refused_arguments(
    app: App,
    rule: Rule,
    report: dict[str, Any],
    record: LogRecord,
    values: dict[str, Any],
    registry: ActionRegistry,
) -> int:
    """Hold each action step that would run to its connector's schema, its arguments
    rendered as the worker renders them (the real values; a chat's with a secret key's
    masked), and mark in ``report`` each one refused: ``error`` says why, ``invalid`` names
    each field at its file and line (never its value); how many were."""
    refused = 0
    for step in report.get("steps", []):
        if "action" not in step or "error" in step or "skipped" in step:
            continue
        action = registry.get(step["action"])
        state = StateView.of(values)
        names = (
            masked_variables(record, state, app.rules.is_secret)
            if action.shown_to_people
            else variables(record, state)
        )
        try:
            rendered = render(rule.then[step["step"]].args, names, action.escape)
        except TemplateFailed:  # (the plan rendered it: a secret's real value fails it)
            continue
        problems = rendered_problems(action, rendered)
        if not problems:
            continue
        here = ("rules", app.rules.position(rule.id), "then", step["step"], "args")
        invalid = []
        for loc, said in problems:
            issue = _issue(app.config, here + loc, f"{said} (rule {rule.id})")
            at = f"{issue.file}:{issue.line}" if issue.line else issue.file
            invalid.append({"field": issue.field, "at": at, "message": said})
        step["error"] = "bad arguments: " + "; ".join(
            f"{field_path(loc)}: {said}" for loc, said in problems
        )
        step["invalid"] = invalid
        refused += 1
    return refused


def _fails(rule: Rule, index: int, record: LogRecord, values: dict[str, Any]) -> bool:
    """Whether step ``index`` fails with the real values too (the plan shows a secret as
    "(secret)", on which ``state['secret.n'] + 1`` fails and the run would not)."""
    step = rule.then[index]
    templates = step.args if step.mutate is None else [step.mutate.key, step.mutate.value]
    try:
        render(templates, variables(record, StateView.of(values)))
    except TemplateFailed:
        return True
    return False


def _dry_run(book: RuleBook, rule_id: str, record: LogRecord, state: StateView) -> dict[str, Any]:
    rule = book.by_id[rule_id]
    secrets = book.secrets(record, state)
    check = check_rule(rule, record, state, book.is_secret, lambda t: book.mask(t, secrets))
    report: dict[str, Any] = {"rule": rule.id, "held": check.held, "why": book.mask(check.why)}
    if check.failed:
        report["failed"] = True  # its condition could not be evaluated: at a run, an error
    if check.held:
        steps = book.mask_json(plan_steps(rule, record, state, book.is_secret))
        for step in steps:  # the worker skips these, naming what is unset (rules.worker.steps)
            unset = book.unset_env(rule, step["step"])
            if unset:
                step["skipped"] = f"{', '.join(unset)} {'is' if len(unset) == 1 else 'are'} not set"
        report["steps"] = steps
        notes = []
        if rule.for_ is not None:
            notes.append(f"only if it still holds {rule.for_:g}s later (for)")
        if rule.signal is not None:
            s = rule.signal
            notes.append(f"only at {s.at_least} observations ≥ {s.confidence:g} in {s.within:g}s")
        if rule.cooldown:
            notes.append(f"not within {rule.cooldown:g}s of its last run (cooldown)")
        report["notes"] = notes
    return report


def _describe(report: dict[str, Any]) -> str:
    steps = report.get("steps", [])
    verdict = "WOULD RUN" if report["held"] else "no"
    if steps and all("skipped" in step for step in steps):
        verdict = "WOULD SKIP every step"
    lines = [f"{report['rule']}: {verdict} ({report['why']})"]
    for step in steps:
        if "skipped" in step:
            mutate = step.get("mutate") or {"op": "mutate", "key": ""}
            what = step.get("action") or f"{mutate['op']} {mutate['key']}".strip()
            lines.append(f"  step {step['step'] + 1}: {what}: WOULD SKIP: {step['skipped']}")
        elif "invalid" in step:  # arguments its connector refuses: each where it is written
            lines.append(f"  step {step['step'] + 1}: {step['action']}: WOULD FAIL: bad arguments")
            lines.extend(
                f"    {bad['at']}: {bad['field']}: {bad['message']} (rule {report['rule']})"
                for bad in step["invalid"]
            )
        elif "error" in step:
            lines.append(f"  step {step['step'] + 1}: {step.get('action')}: {step['error']}")
        elif "mutate" in step:
            m = step["mutate"]
            lines.append(f"  step {step['step'] + 1}: {m['op']} {m['key']} {json_line(m['value'])}")
        else:
            lines.append(f"  step {step['step'] + 1}: {step['action']} {json_line(step['args'])}")
    lines.extend(f"  note: {note}" for note in report.get("notes", []))
    return "\n".join(map(one_line, lines))


def _replay(app: App, args: argparse.Namespace) -> int:
    book = app.rules
    if args.replay_config:
        paths = [*config_paths(args.config), *args.replay_config]
        book = RuleBook.from_config(load_app_config(paths).for_workspace(app.store.workspace))
        # a key is secret if either book says so: a replayed book that forgot a key's
        # secrecy must not print its values in the steps it plans
        new, live = book.is_secret, app.rules.is_secret
        book.is_secret = lambda key: live(key) or new(key)
    since = args.since.moment(app.store)
    until = None if args.until is None else args.until.moment(app.store)
    read, fired, first, last = 0, Counter[str](), None, None
    for image, record in Replayer(app.store).history(since, until):
        read, first, last = read + 1, first or record.log_id, record.log_id
        matched = book.index.match(record.mutation.key)
        if not matched:
            continue
        values = {k: e.value for k, e in visible(image, record.ts).items()}
        reports = [_dry_run(book, rule.id, record, StateView.of(values)) for rule in matched]
        fired.update(report["rule"] for report in reports if report["held"])
        shown = replace(record, mutation=app.gateway.secrecy.mutation(record.mutation))
        if args.json:
            print(json_line({"record": shown.to_dict(), "rules": reports}))
        else:
            print(log_line(shown))
            print("\n".join(f"  {line}" for r in reports for line in _describe(r).splitlines()))
    summary = {"records": read, "first": first, "last": last, "fired": dict(fired)}
    print(json_line({"summary": summary}) if args.json else _summary(read, first, last, fired))
    return 0


def _summary(read: int, first: str | None, last: str | None, fired: Counter[str]) -> str:
    if not read:
        return "no record in that window: nothing would have run"
    window = f" ({first} to {last})" if first != last else f" ({first})"
    head = f"{read} record{'s' if read != 1 else ''} read{window}"
    if not fired:
        return f"{head}; no rule would have run"
    runs = ", ".join(f"{rule} {n}" for rule, n in fired.most_common())
    return f"{head}; rules would have run {fired.total()} time(s): {runs}"


def _why(app: App, args: argparse.Namespace) -> int:
    records = app.log.latest(1, key=args.key)
    rows = app.evaluations.for_key(args.key, args.limit)
    groups = by_mutation(app.log, rows)
    secret = app.policy.is_secret(args.key)  # a secret's value stays in the entry and the log
    if args.json:
        last = masked_record(app, records[-1]) if records else None
        mutations = [group.to_dict() for group in groups]
        said = {"key": args.key, "lastMutation": last, "evaluations": rows, "mutations": mutations}
        print(json_line(said))
        return 0 if records or rows else 1
    if not records:
        mark = app.log.compacted()
        print(f"{args.key}: no mutation in the log" + ("" if mark is None else f"; {mark}"))
    else:
        print(origin(app, records[-1], reveal=not secret))
    for line in grouped_lines(groups):
        print(one_line(line))
    return 0 if records or rows else 1
