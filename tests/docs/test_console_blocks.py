"""Every ```console block of the README and of docs/ gives the output it shows: an example
that stops matching fails here, naming its file and line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.docs.console_blocks import ROOT, Block, blocks_of, normalise, run_block
from tests.docs.forked import Forked

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
BLOCKS = [block for page in PAGES for block in blocks_of(page)]


@pytest.fixture(scope="module")
def forked() -> Iterator[Forked]:
    """One fork server for the blocks this process runs: each ``deliberate`` of theirs a
    process of its own, without the start-up of a new interpreter."""
    server = Forked()
    yield server
    server.stop()


@pytest.mark.parametrize("block", BLOCKS, ids=[block.name for block in BLOCKS])
def test_the_block_prints_what_it_shows(block: Block, tmp_path: Path, forked: Forked) -> None:
    printed = run_block(block, tmp_path, commands=forked.bin)
    assert len(printed) == len(block.commands), f"{block.name}: the shell stopped early"
    for (command, shown), said in zip(block.commands, printed, strict=True):
        assert normalise(said) == normalise(shown), f"{block.name}: $ {command}"


def test_there_are_blocks_to_run() -> None:
    assert len(BLOCKS) >= 3
