"""The house stays readable: no import cycle between our modules (imports inside functions and
under TYPE_CHECKING count), no module over 400 lines, no package with more than 15 modules at
one level. import-linter holds the layers; this holds what it does not."""

from __future__ import annotations

from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "rules", "connectors", "bot")
MAX_LINES = 400
MAX_MODULES = 15


def cycles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in imports.get(module, ()):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(imports):
        if module not in index:
            visit(module)
    return found


def own_imports() -> dict[str, set[str]]:
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    own = {m for m in graph.modules if m.split(".")[0] in PACKAGES}
    return {
        # a module importing its own package's __init__ is how Python loads it, not a cycle
        m: {o for o in graph.find_modules_directly_imported_by(m) if o in own}
        - {p for p in own if m.startswith(p + ".")}
        for m in own
    }


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_our_modules() -> None:
    assert cycles(own_imports()) == []


def test_every_module_fits_in_400_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for pkg in PACKAGES
        for path in (ROOT / pkg).rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_no_package_holds_more_than_15_modules_at_one_level() -> None:
    crowded = {
        str(folder.relative_to(ROOT)): count
        for pkg in PACKAGES
        for folder in [ROOT / pkg, *(ROOT / pkg).rglob("*")]
        if folder.is_dir()
        and (count := len([p for p in folder.glob("*.py") if p.name != "__init__.py"]))
        > MAX_MODULES
    }
    assert crowded == {}
