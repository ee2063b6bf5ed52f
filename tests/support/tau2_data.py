"""The suite's tau2 data folder, and the CI rule: a test that needs it fails instead of skipping.

Tests that read the pinned tau2 data skip when it is absent, so a contributor without a copy
can run the rest. In CI such a skip would hide a broken data path behind a green run. With
the ``CI`` environment variable set (``CI=true``: GitHub Actions, GitLab CI and ``.ci/run``
set it), this plugin turns those skips into failures that say why:

- a test (or a ``skipif`` mark) that skips for missing data fails;
- a test module that skips at import (``pytest.skip(..., allow_module_level=True)``) is
  replaced by one failing item, ``<module>::tau2_data_required``, so the rest of the run goes
  on and the module still shows up red.

A skip is "for missing tau2 data" when its reason says so: it names ``tau2 ... data``, as
every such skip in this suite does ("no tau2 data under ...", "pinned tau2 data not found
at ...", "no tau2 retail data under ..."). Write new ones with :func:`skip_reason`.

Registered from ``tests/conftest.py`` (``pytest_plugins``); load it in a nested run with
``-p tests.support.tau2_data``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR") or REPO.parent / "shared" / "tau2-data")
"""``TAU2_DATA_DIR``, else ``../shared/tau2-data`` beside the clone (where the scripts look)."""

MISSING_DATA = re.compile(r"\btau2(?: [a-z]+)? data\b", re.IGNORECASE)
"""What a skip reason says when the test needs the tau2 data."""


def ci() -> bool:
    """True when the ``CI`` environment variable is set to anything but empty/0/false/no."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def has_data(*domains: str) -> bool:
    """The data folder holds ``tau2/domains/<domain>`` for every domain named (or ``tau2/domains``)."""
    root = DATA_DIR / "tau2" / "domains"
    return all((root / d).is_dir() for d in domains) if domains else root.is_dir()


def skip_reason(*domains: str) -> str:
    what = f"tau2 {'/'.join(domains)} data" if domains else "tau2 data"
    return f"no {what} under {DATA_DIR} (set TAU2_DATA_DIR)"


def requires_data(*domains: str) -> pytest.MarkDecorator:
    """``skipif`` mark for tests that read the tau2 data (failing under CI, see the module doc)."""
    return pytest.mark.skipif(not has_data(*domains), reason=skip_reason(*domains))


def _missing_data_reason(longrepr: Any) -> str | None:
    """The skip reason when it is about missing tau2 data (a skip's longrepr is (path, line, reason))."""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2]).removeprefix("Skipped: ")
        return reason if MISSING_DATA.search(reason) else None
    return None


def _failure_text(reason: str) -> str:
    return f"CI is set, so a test that needs the tau2 data fails instead of skipping: {reason}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    reason = _missing_data_reason(report.longrepr) if report.skipped and ci() else None
    if reason is not None:
        report.outcome = "failed"
        report.longrepr = _failure_text(reason)
    return report


class DataRequired(pytest.Item):
    """Stands in for a module that skipped at import for missing data: fails with the reason."""

    def __init__(self, *, reason: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reason = reason

    def runtest(self) -> None:
        pytest.fail(_failure_text(self.reason), pytrace=False)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, self.name


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    report = yield
    reason = _missing_data_reason(report.longrepr) if report.outcome == "skipped" and ci() else None
    if reason is None or not isinstance(collector, pytest.Module):
        return report
    item = DataRequired.from_parent(collector, name="tau2_data_required", reason=reason)
    return pytest.CollectReport(collector.nodeid, "passed", None, [item])
