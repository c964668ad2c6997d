"""Whether a rule's action steps give their connector arguments it takes, checked against the
connector's own argument schema (its ``args`` model: a URL with a host, a Slack or Discord
channel id of the right form, every required field), as the worker checks them before a
run. ``written_problems`` checks what a rule file spells out (``rules check``: a template's
value is known only once rendered, so a field a template gives is left to the run);
``rendered_problems`` checks what the templates rendered to (``rules test``). Each problem
is the field and what is wrong with it, in plain words, never the value (it may be a
secret's, or a webhook's URL, itself a secret)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from core.field_errors import Loc, plain_problems
from rules.connector_api import ActionRegistry, ConnectorAction
from rules.dsl import Rule
from rules.templates import is_template

__all__ = ["Problem", "rendered_problems", "written_problems"]

Problem = tuple[Loc, str]  # where (a path in the config, or in a step's args) and what


def rendered_problems(action: ConnectorAction, rendered: Any) -> list[Problem]:
    """What ``action``'s schema refuses in ``rendered`` (a step's arguments as rendered for
    one mutation): each field (in the arguments) and why; none when it takes them."""
    try:
        action.args.model_validate(rendered)
    except ValidationError as exc:
        return plain_problems(exc, action.args)
    return []


def written_problems(
    rules: Sequence[Rule], registry: ActionRegistry, skipped: Callable[[Rule, int], bool]
) -> list[Problem]:
    """What the schemas refuse in the arguments the rules write out, each at its path in
    the config (``rules[i].then[j].args.FIELD``); ``skipped``: a step the run skips (an
    optional ``${NAME:-}`` it uses is not set), not checked."""
    found: list[Problem] = []
    for index, rule in enumerate(rules):
        for number, step in enumerate(rule.then):
            if step.action is None or step.action not in registry or skipped(rule, number):
                continue
            here = ("rules", index, "then", number, "args")
            for loc, said in rendered_problems(registry.get(step.action), step.args):
                if not _templated(step.args, loc):
                    found.append((here + loc, said))
    return found


def _templated(args: Any, loc: Loc) -> bool:
    """Whether the value at ``loc`` in ``args`` (or one holding it) is a template: known
    only once rendered."""
    value = args
    for part in loc:
        if isinstance(value, str):
            break
        inside = dict(enumerate(value)) if isinstance(value, list) else value
        if not isinstance(inside, dict) or part not in inside:
            return False
        value = inside[part]
    return isinstance(value, str) and is_template(value)
