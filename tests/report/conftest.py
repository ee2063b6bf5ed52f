"""Fixtures of the HTML report tests: real results folders and a headless Chromium.

The browser is Debian's ``chromium`` (``scripts/install-browser.sh`` installs it), driven by
playwright's Python package with ``executable_path``: playwright never downloads a browser
here. Without one the browser tests skip, saying why; with ``CI`` set they fail instead,
so a CI run cannot go green without having looked at the page.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.tau2_data import ci

BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome")
LOCAL = ("file:", "data:", "about:")
"""URL schemes a self-contained page may load; any other request is recorded as an error."""


def chromium_path() -> tuple[str | None, str]:
    """The browser to drive, or None and why there is none."""
    configured = os.environ.get("TAU2_CHROMIUM")
    if configured:
        if os.access(configured, os.X_OK):
            return configured, ""
        return None, f"TAU2_CHROMIUM={configured} is not an executable file"
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found, ""
    return None, "no Chromium on PATH (bash scripts/install-browser.sh installs Debian's, as root)"


def no_browser(reason: str) -> None:
    if ci():
        pytest.fail(f"CI is set, so the HTML report's browser tests fail instead of skipping: {reason}", pytrace=False)
    pytest.skip(f"HTML report browser tests need a headless Chromium: {reason}")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per test module (pages are cheap, browser start-up is not)."""
    executable, why = chromium_path()
    if executable is None:
        no_browser(why)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        no_browser("the playwright package is missing (pip install -e '.[test]')")
    with sync_playwright() as playwright:
        try:
            instance = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        except Exception as exc:  # a broken install: say what failed to start
            no_browser(f"{executable} did not start: {exc}")
        yield instance
        instance.close()


class Page:
    """A report opened in the browser, with the page's script errors collected."""

    def __init__(self, page: Any, errors: list[str]) -> None:
        self.page = page
        self.errors = errors

    def rows(self) -> list[str]:
        """The scenario keys of the table's visible rows, top to bottom."""
        script = "rows => rows.map(r => r.dataset.key)"
        return list(self.page.eval_on_selector_all("#scenario-body tr[data-key]", script))

    def shown(self) -> str:
        return str(self.page.inner_text("#shown-count"))

    def open_panel(self, key: str) -> str:
        self.page.click(f'#scenario-body tr[data-key="{key}"]')
        self.page.wait_for_selector("#panel-body #checks")
        return str(self.page.inner_text("#panel-body"))

    def close_panel(self) -> None:
        self.page.keyboard.press("Escape")
        self.page.wait_for_selector("#panel", state="hidden")

    def screenshot(self, path: Path, *, full_page: bool = False) -> Path:
        self.page.screenshot(path=str(path), full_page=full_page)
        assert path.stat().st_size > 10_000, f"{path} is suspiciously small"
        return path


@pytest.fixture
def open_report(browser: Any) -> Iterator[Any]:
    """``open_report(path, hash="") -> Page``; every page opened is closed after the test."""
    pages: list[Any] = []

    def open_(path: Path, hash: str = "", *, width: int = 1400, height: int = 1000) -> Page:
        page = browser.new_page(viewport={"width": width, "height": height})
        pages.append(page)
        page.set_default_timeout(10_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.on("request", lambda req: None if req.url.startswith(LOCAL) else errors.append(f"network: {req.url}"))
        page.goto(path.resolve().as_uri() + hash)
        page.wait_for_function("window.tau2 !== undefined")
        return Page(page, errors)

    yield open_
    for page in pages:
        page.close()
