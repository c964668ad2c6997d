"""CEL expressions checked where they are written, against what their place gives them.

A name nobody gives (``mutaton``), a field its value never has (``mutation.kye``) or a
function CEL lacks (``split``) fails at every evaluation: a rule that never runs, a beat that
never fires, an approval never met. ``cel_problem`` says so at load, for the config's error
to name the file, line and field. The ``cel`` library gives the names and functions an
expression uses, not its syntax tree: a field read is found in the source with its string
literals blanked, and a comprehension's own variable (``approvals.filter(a, …)``) by its
macro."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from core.cel.library import cel

__all__ = ["BUILT_IN", "Names", "bound_names", "cel_problem", "compiled"]

# named functions the CEL library has built in (operators are named `_+_`, `@in`, `!_`)
BUILT_IN = frozenset(
    [
        "size",
        "contains",
        "startsWith",
        "endsWith",
        "matches",
        "int",
        "uint",
        "double",
        "string",
        "bytes",
        "timestamp",
        "duration",
        "type",
        "dyn",
        "getFullYear",
        "getMonth",
        "getDayOfYear",
        "getDayOfMonth",
        "getDate",
        "getDayOfWeek",
        "getHours",
        "getMinutes",
        "getSeconds",
        "getMilliseconds",
    ]
)

# each name a place gives, with the fields its value may have (None: any, as a map's keys)
Names = Mapping[str, frozenset[str] | None]

# the variable a comprehension macro binds: `approvals.filter(a, ...)` binds `a`
_BOUND = re.compile(r"\.\s*(?:all|exists|exists_one|filter|map)\s*\(\s*([A-Za-z_]\w*)\s*,")
# a string or bytes literal, raw or not, in any of CEL's quotes
_STRING = re.compile(r"""(?s)[rRbB]{0,2}(\"\"\"|'''|"|')(?:\\.|(?!\1).)*?\1""")
_FIELD = r"(?<![\w.])({names})\s*\.\s*([A-Za-z_]\w*)"


@lru_cache(maxsize=512)
def compiled(expr: str) -> Any:
    """``expr`` compiled (ValueError when it does not), once per text."""
    return cel.compile(expr)


def bound_names(expr: str) -> set[str]:
    return set(_BOUND.findall(_STRING.sub('""', expr)))


def cel_problem(expr: str, names: Names) -> str | None:
    """What is wrong with ``expr`` where ``names`` is what it may read, or None."""
    try:
        program = compiled(expr)
    except ValueError as exc:
        return f"CEL does not compile: {str(exc).splitlines()[0]}"
    called = {f for f in program.functions() if f[0].isalpha()} - BUILT_IN
    if called:
        return f"CEL has no function {sorted(called)}"
    unknown = set(program.variables()) - set(names) - bound_names(expr)
    if unknown:
        known = ", ".join(sorted(names))
        return f"CEL reads unknown names {sorted(unknown)}; it may read {known}"
    return _field_problem(expr, names)


def _field_problem(expr: str, names: Names) -> str | None:
    fixed = {name: fields for name, fields in names.items() if fields is not None}
    if not fixed:
        return None
    pattern = _FIELD.format(names="|".join(re.escape(name) for name in fixed))
    for name, attr in re.findall(pattern, _STRING.sub('""', expr)):
        if attr not in fixed[name]:
            has = ", ".join(sorted(fixed[name]))
            return f"CEL reads {name}.{attr}, which {name} never has (it has {has})"
    return None
