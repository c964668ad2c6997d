"""Debian's chromium, headless, driven by Playwright for Python (its own browser is never
downloaded: the launch names /usr/bin/chromium). The flags are those a closed network needs:
no background networking, no component updates, no sync, a fresh profile per launch. A
machine without chromium fails the test that needs it, naming the package (``.ci/run``
installs it)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser, sync_playwright

__all__ = ["CHROMIUM_ARGS", "chromium"]

CHROMIUM_ARGS = [
    "--no-sandbox",  # the tests may run as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def chromium() -> Iterator[Browser]:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    assert path is not None, "no chromium here: apt-get install chromium (Debian's package)"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
