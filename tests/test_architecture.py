"""The house stays readable. import-linter holds the layers of ``pyproject.toml`` on the
imports it sees; this holds what it does not: a module loaded by name (``importlib`` or
``__import__``: every string in such a module that names one of our modules counts as an
import of it, the command table of ``bot.main`` included), no import cycle between our
modules (imports inside functions and under TYPE_CHECKING count), no import that runs up
between bot's rooms or across rooms of one floor, loaded by name or not. A room holds one
concept: size does not decide where rooms split, but a module past ``SOFT_LINES`` or a
folder past ``SOFT_MODULES`` is named in a warning (a second look), and one past twice that
fails."""

from __future__ import annotations

import ast
import tomllib
import warnings
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "rules", "connectors", "bot")
SOFT_LINES = 400
SOFT_MODULES = 15
BOT_LAYERS = "bot's rooms in layers"


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
    """Each of our modules and ours it imports: as grimp reads them, and by name."""
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    own = {m for m in graph.modules if m.split(".")[0] in PACKAGES}
    loaded = loaded_by_name(own)
    return {
        # a module importing its own package's __init__ is how Python loads it, not a cycle
        m: (
            {o for o in graph.find_modules_directly_imported_by(m) if o in own}
            | loaded.get(m, set())
        )
        - {p for p in own if m.startswith(p + ".")}
        for m in own
    }


def loaded_by_name(own: set[str]) -> dict[str, set[str]]:
    """The modules of ours each module may load by name: in a module that calls
    ``import_module`` or ``__import__``, each string that is one of our modules' names."""
    found: dict[str, set[str]] = {}
    for module in own:
        path = _path_of(module)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = {
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
        }
        if not calls & {"import_module", "__import__"}:
            continue
        named = {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in own
        }
        if named:
            found[module] = named
    return found


def _path_of(module: str) -> Path:
    base = ROOT.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def bot_layers() -> list[list[str]]:
    """The rooms of bot, top floor first, each floor's rooms apart from each other."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [contract] = [
        c for c in config["tool"]["importlinter"]["contracts"] if c["name"].startswith(BOT_LAYERS)
    ]
    return [[room.strip() for room in floor.split("|")] for floor in contract["layers"]]


def room_of(module: str, layers: list[list[str]]) -> tuple[int, str] | None:
    """The floor (0: the top) and room ``module`` is in (None: in none, the package itself)."""
    for floor, rooms in enumerate(layers):
        for room in rooms:
            if module == room or module.startswith(room + "."):
                return floor, room
    return None


def upward(imports: dict[str, set[str]], layers: list[list[str]]) -> list[str]:
    """Every import between bot's rooms that runs up a floor or across a floor's rooms."""
    found = []
    for module, others in sorted(imports.items()):
        here = room_of(module, layers)
        for other in sorted(others):
            there = room_of(other, layers)
            if here is None or there is None or here[1] == there[1]:
                continue
            if there[0] < here[0] or there[0] == here[0]:
                found.append(f"{module} -> {other}")
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_our_modules() -> None:
    assert cycles(own_imports()) == []


def test_loads_by_name_count_as_imports() -> None:
    """``bot.main`` loads each command's module by name: the table's names are its imports."""
    imports = own_imports()
    assert {"bot.cli.state", "bot.web.command", "bot.cli.trace"} <= imports["bot.main"]


def test_the_room_finder_finds_an_import_that_runs_up() -> None:
    layers = [["bot.main"], ["bot.cli", "bot.web"], ["bot.app"]]
    imports = {
        "bot.app": {"bot.cli.state"},  # up a floor
        "bot.web.command": {"bot.cli"},  # across a floor
        "bot.cli.state": {"bot.app", "bot.cli.args"},  # down, and within its room
        "bot.main": {"bot.web.command"},
    }
    assert upward(imports, layers) == ["bot.app -> bot.cli.state", "bot.web.command -> bot.cli"]


def test_no_import_runs_up_between_bots_rooms() -> None:
    layers = bot_layers()
    imports = own_imports()
    rooms = {room for floor in layers for room in floor}
    # every room of bot is on a floor
    assert {m.split(".")[1] for m in imports if m.count(".") >= 1 and m.startswith("bot.")} <= {
        r.split(".")[1] for r in rooms
    }
    assert upward(imports, layers) == []


def _long_modules() -> dict[str, int]:
    return {
        str(path.relative_to(ROOT)): lines
        for pkg in PACKAGES
        for path in (ROOT / pkg).rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > SOFT_LINES
    }


def _crowded_folders() -> dict[str, int]:
    return {
        str(folder.relative_to(ROOT)): count
        for pkg in PACKAGES
        for folder in [ROOT / pkg, *(ROOT / pkg).rglob("*")]
        if folder.is_dir()
        and (count := len([p for p in folder.glob("*.py") if p.name != "__init__.py"]))
        > SOFT_MODULES
    }


def test_a_long_module_or_a_crowded_room_is_named_and_a_far_too_large_one_fails() -> None:
    long, crowded = _long_modules(), _crowded_folders()
    for path, lines in long.items():
        warnings.warn(f"{path}: {lines} lines: does it hold one concept?", stacklevel=1)
    for folder, count in crowded.items():
        warnings.warn(f"{folder}: {count} modules: is it one room?", stacklevel=1)
    assert {p: n for p, n in long.items() if n > 2 * SOFT_LINES} == {}
    assert {f: n for f, n in crowded.items() if n > 2 * SOFT_MODULES} == {}


RESOLVING = {"slack_team", "discord_server", "discord_dm", "actor_of", "tenant", "actor"}
INSIDES = {"gateway", "sessions", "policy"}  # the core's parts behind Runtime and its queries
ADAPTERS = ("bot/slack", "bot/discord")


NOT_THE_CORE = {"self", "config", "discord"}  # ``x.config.sessions``, ``discord.gateway``


def _base_name(node: ast.expr) -> str:
    """``b`` of ``a.b.c``'s ``.c``; ``a`` of ``a.c``."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _calls_and_reaches(path: Path) -> tuple[set[str], set[str]]:
    """The names ``path`` calls as a method (``x.name(...)``) or a function, and the
    attributes it reads off another object (``x.name``): not its own (``self.name``), nor a
    setting's (``config.name``) or the Discord library's."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    called: set[str] = set()
    reached: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):  # imported under another name, called by it
            called.update(alias.name for alias in node.names)
        if isinstance(node, ast.Call):
            func = node.func
            called.add(func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", ""))
            named = node.args[1] if getattr(func, "id", "") == "getattr" and node.args[1:] else None
            if isinstance(named, ast.Constant) and isinstance(named.value, str):
                reached.add(named.value)  # getattr(app, "gateway")
        if isinstance(node, ast.Attribute) and _base_name(node.value) not in NOT_THE_CORE:
            reached.add(node.attr)
    return called, reached


def _adapter_modules() -> list[Path]:
    return sorted(p for folder in ADAPTERS for p in (ROOT / folder).rglob("*.py"))


def test_the_finder_sees_a_tenant_resolved_and_an_inside_reached(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from bot.discord.roles import actor_of as who\n"
        "t = w.tenancy.discord_server(1)\n"
        "p = app.gateway.proposals.get('x')\n"
        "s = getattr(runtime, 'sessions')\n"
        "ttl = app.config.sessions.ttl_sec\n"
    )
    called, reached = _calls_and_reaches(module)
    assert called & RESOLVING == {"actor_of", "discord_server"}
    assert reached & INSIDES == {"gateway", "sessions"}


def test_each_platform_resolves_the_tenant_and_the_actor_in_one_place() -> None:
    """A request's tenant and person are worked out by its Visit (``visit.py``), once; the
    functions that do it are defined elsewhere (``origin.py``, ``roles.py``) but called
    only there."""
    callers = {
        str(p.relative_to(ROOT)): sorted(_calls_and_reaches(p)[0] & RESOLVING)
        for p in _adapter_modules()
    }
    assert {p: names for p, names in callers.items() if names} == {
        "bot/discord/visit.py": ["actor_of", "discord_dm", "discord_server"],
        "bot/slack/origin.py": ["slack_team"],  # Origin.tenant itself, which visit.py calls
        "bot/slack/visit.py": ["actor", "tenant"],
    }


def test_no_adapter_reaches_into_the_gateway_the_sessions_or_the_policy() -> None:
    """What the adapters need of the core they get through ``Runtime.send``/``click``, its
    queries and the chat room's helpers, never by reading the core's parts."""
    reaching = {
        str(p.relative_to(ROOT)): sorted(_calls_and_reaches(p)[1] & INSIDES)
        for p in _adapter_modules()
    }
    assert {p: names for p, names in reaching.items() if names} == {}
