"""CEL checked where it is written: a name its place never gives, a field its value never
has, or a function CEL lacks is refused at load, with the file, line and field; what a real
evaluation can read is never refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cel
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.app import load_app_config
from core.cel.checks import cel_problem
from core.errors import ConfigError
from tests.conftest import write_config

NAMES = {"state": None, "mutation": frozenset({"key", "value"})}


@pytest.mark.parametrize(
    ("expr", "problem"),
    [
        ("mutaton.key == 'a'", "CEL reads unknown names ['mutaton']; it may read mutation, state"),
        ("mutation.kye == 'a'", "CEL reads mutation.kye, which mutation never has"),
        ("has(mutation.vlaue)", "CEL reads mutation.vlaue, which mutation never has"),
        ("mutation.key.split('.').size() > 1", "CEL has no function ['split']"),
        ("mutation.key ==", "CEL does not compile"),
    ],
)
def test_what_fails_every_evaluation_is_named(expr: str, problem: str) -> None:
    found = cel_problem(expr, NAMES)
    assert found is not None and found.startswith(problem), found


@pytest.mark.parametrize(
    "expr",
    [
        "mutation.key == 'mutation.kye'",  # inside a string: not a read
        'mutation.key == "a \\" mutaton.x"',
        "state.anything.deeper == 1",  # state's fields are whatever its keys are
        "[1, 2].exists(x, x > 1) && [3].map(y, y * 2).size() == 1",
        "mutation.value.kye == 1",  # a value's own fields are its own
        "size(mutation.key) > 0 && mutation.key.startsWith('a')",
    ],
)
def test_what_an_evaluation_can_read_passes(expr: str) -> None:
    assert cel_problem(expr, NAMES) is None


@given(st.sampled_from(["key", "value"]), st.text(min_size=1).filter(lambda t: "'" not in t))
def test_a_known_field_compared_to_any_text_passes(field: str, text: str) -> None:
    """Whatever a string literal holds (names, dots, quotes of the other kind) is never
    read as a name or a field."""
    expr = f"mutation.{field} == '{text.replace(chr(92), '')}'"
    try:
        cel.compile(expr)
    except ValueError:
        return  # not CEL at all (e.g. a newline in the literal): nothing to compare
    assert cel_problem(expr, NAMES) is None


def test_a_beat_reading_what_the_state_never_has_fails_the_load(tmp_path: Path) -> None:
    """``size(stat.pending) > 0`` loaded and never fired."""
    for when, said in [
        ("size(stat.pending_proposals) > 0", "CEL reads unknown names ['stat']"),
        ("size(state.pending) > 0", "CEL reads state.pending, which state never has"),
    ]:
        path = write_config(tmp_path, f"beats:\n  - id: b\n    when: '{when}'\n")
        with pytest.raises(ConfigError) as caught:
            load_app_config(path)
        (issue,) = [str(i) for i in caught.value.issues]
        assert issue.startswith(f"{path}:3: beats[0].when: {said}"), issue


def test_the_config_reads_cel_without_the_librarys_command_line() -> None:
    """``core.cel.library`` loads the library's extension alone: loading a config with CEL in
    it imports neither the library's command line nor what only that imports (prompt_toolkit,
    typer), and an ``import cel`` afterwards gets the same extension. Nor discord.py: the
    Discord connector imports it with its first message."""
    probe = (
        "import sys\n"
        "from bot.app import load_app_config\n"
        "from core.cel.library import cel as ours\n"
        "load_app_config(None)\n"
        "assert ours.compile('1 + 2').execute() == 3\n"
        "heavy = {'cel.cli', 'prompt_toolkit', 'typer', 'discord'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
        "import cel\n"
        "assert cel.Context is ours.Context and cel.compile is ours.compile\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True, timeout=120)
