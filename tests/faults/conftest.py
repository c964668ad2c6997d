"""Fixtures of the fault tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.embedded import Home


@pytest.fixture
def embedded_home(tmp_path: Path) -> Iterator[Home]:
    """A fresh data directory; whatever server serves it is stopped at teardown."""
    home = Home(tmp_path / "home")
    yield home
    try:
        home.server.stop(force=True)
    finally:
        home.stop_everything()
