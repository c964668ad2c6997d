"""The docs/ book builds with mkdocs --strict: a broken link, a missing anchor or a page left
out of the navigation fails here."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

from bot.main import parser as cli_parser
from tests.docs.console_blocks import ROOT


def test_the_book_builds_without_a_warning(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "quickstart" / "index.html").is_file()


def test_the_readme_is_short_and_points_into_the_book() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 250
    for page in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / page).is_file(), page


def test_no_page_cites_an_issue_number_or_a_file_outside_the_repository() -> None:
    for page in [ROOT / "README.md", *(ROOT / "docs").glob("**/*.md")]:
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"\bissues? #?\d+\b", text, re.IGNORECASE), page.name
        assert not re.search(r"(?<![\w&/])#\d+\b", text), page.name  # "#31", not "&#39;"
        assert not re.search(r"\b(from|in|per) the issue\b", text, re.IGNORECASE), page.name
        assert "../shared" not in text, page.name


def _commands(parser: argparse.ArgumentParser, prefix: str = "") -> list[str]:
    """Every command and subcommand of ``parser`` ('state get', 'why', ...), leaves only."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _commands(sub, f"{prefix}{name} ") or [f"{prefix}{name}"]
    return found


def test_the_reference_lists_every_command() -> None:
    """The reference's table says it holds every command: one added without a row there
    fails here."""
    reference = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    rows = [line for line in reference.splitlines() if line.startswith("| `")]
    missing = [
        command
        for command in _commands(cli_parser())
        if not any(re.search(rf"`{re.escape(command)}( |`)", row) for row in rows)
    ]
    assert not missing, f"docs/reference.md has no row for {missing}"


def test_a_command_shown_with_its_output_is_run() -> None:
    """A ``$ command`` with its output in any block but a console one is never run, so
    nothing notices when it stops matching (a ``sh`` block shows commands alone)."""
    for page in [ROOT / "README.md", *(ROOT / "docs").glob("**/*.md")]:
        fence = None
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("```"):
                fence = None if fence is not None else line[3:].strip()
            elif fence is not None and fence not in ("console", "sh") and line.startswith("$ "):
                raise AssertionError(f"{page.name}:{number}: a command in a {fence!r} block")
