"""The docs/ book builds with mkdocs --strict: a broken link, a missing anchor or a page left
out of the navigation fails here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

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
        assert "../shared" not in text, page.name
