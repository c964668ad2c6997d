"""Rule arguments as sandboxed Jinja2 templates over ``state``, ``mutation`` and ``actor``.

A template that is one expression keeps its type (``"{{ mutation.value }}"`` of a number is
a number, of a string a string: never re-parsed); anything else renders as text. Templates
compile when the config loads, so a syntax error names the file, line and field. The sandbox
refuses attribute tricks (``__class__``, ``mro``), and undefined names are errors rather
than empty strings.

A connector action may say how people's words are written in its text (``Escape``: Slack's
``&lt;``, Discord's backslashes): every value a template interpolates is escaped so, while
the template's own text is not. ``"<!here> decided: {{ mutation.value }}"`` pings the channel
because its author wrote ``<!here>``; a ``<!channel>`` in the decided value stays text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from itertools import chain, islice
from typing import Any

from jinja2 import StrictUndefined, Template, TemplateError, Undefined, meta, nodes
from jinja2.nativetypes import NativeCodeGenerator
from jinja2.sandbox import ImmutableSandboxedEnvironment
from pydantic import JsonValue

from core.errors import plainly
from rules.variables import NAMES

__all__ = ["Escape", "TemplateFailed", "check_templates", "is_template", "render"]

Escape = Callable[[str], str]  # people's words as a connector's text writes them


def _concat(parts: Iterable[Any], escape: Escape | None = None) -> Any:
    """One part keeps its type; several are joined as text (a value that was not text,
    such as a mapping, escaped once it is: the template's own text parts are strings)."""
    head = list(islice(parts, 2))
    if not head:
        return ""
    if len(head) == 1:
        if isinstance(head[0], Undefined):
            str(head[0])  # raises: an undefined name is an error, not a value
        return head[0]
    wrap = escape or str
    return "".join(p if isinstance(p, str) else wrap(str(p)) for p in chain(head, parts))


class _Environment(ImmutableSandboxedEnvironment):
    code_generator_class = NativeCodeGenerator


def _finalize(escape: Escape | None) -> Callable[[Any], Any]:
    """What every ``{{ … }}`` gives: a string escaped (``escape``), anything else as is."""
    if escape is None:
        return lambda value: value
    # (a Markup, from ``|safe`` or ``|e``, is escaped as the plain text it holds)
    return lambda value: escape(str.__str__(value)) if isinstance(value, str) else value


@lru_cache(maxsize=16)
def _environment(escape: Escape | None) -> _Environment:
    return _Environment(undefined=StrictUndefined, autoescape=False, finalize=_finalize(escape))


_ENV = _environment(None)


class TemplateFailed(ValueError):
    """A template failed to render (an undefined name, a sandbox refusal, a type error)."""


def is_template(text: str) -> bool:
    """Whether ``text`` is rendered (it holds a ``{{ … }}`` or a ``{% … %}``)."""
    return "{{" in text or "{%" in text


@lru_cache(maxsize=4096)
def _compile(text: str, escape: Escape | None = None) -> Template:
    return _environment(escape).from_string(text)


def check_templates(value: JsonValue) -> JsonValue:
    """Compile every template in ``value`` (a pydantic validator's check); raise ValueError
    naming the template's own line on a syntax error, a name no trigger gives ("mutaton")
    or a field the mutation or the actor never has ("mutation.kye"): either would fail at
    every run."""
    for text in _strings(value):
        if is_template(text):
            try:
                _compile(text)
                tree = _ENV.parse(text)
            except TemplateError as exc:
                line = getattr(exc, "lineno", None)
                where = f" (line {line} of the template)" if line and line > 1 else ""
                raise ValueError(f"template does not compile{where}: {exc}") from None
            unknown = meta.find_undeclared_variables(tree) - set(NAMES) - set(_ENV.globals)
            if unknown:
                names = ", ".join(sorted(unknown))
                known = ", ".join(sorted(NAMES))
                raise ValueError(f"template uses {names}, which no trigger gives (only {known})")
            _check_fields(tree)
    return value


# what a mapping answers by attribute in a template (``mutation.items()``)
_MAPPING_METHODS = frozenset({"items", "keys", "values", "get"})


def _check_fields(tree: nodes.Template) -> None:
    """A field read of a name with fixed fields (``mutation.kye``, ``actor["nmae"]``) that the
    name never has: ValueError. A name a ``{% set %}`` or a loop rebinds is not checked."""
    rebound = {n.name for n in tree.find_all(nodes.Name) if n.ctx in ("store", "param")}
    for node in tree.find_all((nodes.Getattr, nodes.Getitem)):
        assert isinstance(node, nodes.Getattr | nodes.Getitem)
        target = node.node
        if not isinstance(target, nodes.Name) or target.name in rebound:
            continue
        fields = NAMES.get(target.name)
        if isinstance(node, nodes.Getattr):
            field, allowed = node.attr, _MAPPING_METHODS
        elif isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
            field, allowed = node.arg.value, frozenset()
        else:
            continue
        if fields is not None and field not in fields | allowed:
            has = ", ".join(sorted(fields))
            raise ValueError(
                f"template reads {target.name}.{field}, which {target.name} never has "
                f"(it has {has})"
            )


def _strings(value: JsonValue) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def render(value: JsonValue, variables: Mapping[str, Any], escape: Escape | None = None) -> Any:
    """``value`` with every template string rendered (the values it interpolates written
    with ``escape``); other values as they are."""
    if isinstance(value, str):
        return _render_text(value, variables, escape) if is_template(value) else value
    if isinstance(value, dict):
        return {k: render(v, variables, escape) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v, variables, escape) for v in value]
    return value


def _render_text(text: str, variables: Mapping[str, Any], escape: Escape | None) -> Any:
    template = _compile(text, escape)
    try:
        parts = template.root_render_func(template.new_context(dict(variables)))
        value = _concat(parts, escape)
        return _json(text, value)
    except TemplateError as exc:
        raise TemplateFailed(f"{text!r}: {exc}") from None
    except (TypeError, ValueError, ArithmeticError, LookupError) as exc:
        raise TemplateFailed(f"{text!r}: {plainly(exc)}") from None


def _json(text: str, value: Any) -> Any:
    """``value`` as plain JSON data (a mapping such as ``state`` becomes a dict), or
    TemplateFailed naming what the template gave instead."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, Mapping):
        return {str(k): _json(text, v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(text, v) for v in value]
    raise TemplateFailed(f"{text!r} gave a {type(value).__name__}, not JSON data")
