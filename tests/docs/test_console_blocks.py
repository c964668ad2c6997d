"""Every ```console block of the README and of docs/ gives the output it shows: an example
that stops matching fails here, naming its file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.console_blocks import ROOT, Block, blocks_of, normalise, run_block

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
BLOCKS = [block for page in PAGES for block in blocks_of(page)]


@pytest.mark.parametrize("block", BLOCKS, ids=[block.name for block in BLOCKS])
def test_the_block_prints_what_it_shows(block: Block, tmp_path: Path) -> None:
    printed = run_block(block, tmp_path)
    assert len(printed) == len(block.commands), f"{block.name}: the shell stopped early"
    for (command, shown), said in zip(block.commands, printed, strict=True):
        assert normalise(said) == normalise(shown), f"{block.name}: $ {command}"


def test_there_are_blocks_to_run() -> None:
    assert len(BLOCKS) >= 3
