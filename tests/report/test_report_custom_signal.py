"""A signal of the user's own, registered with ``register_signal`` in the project's conftest, in
report.html opened in headless Chromium: the table's failed-signal column, the signal filter, the
scenario panel's signal list and the overview's rates all read the signal table, so the custom
signal shows like a built-in one.

The project is a user's repository in a temporary folder: the Pizza Palace scenarios
(scenarios/restaurant.py) and a conftest that registers ``no_mushrooms`` (no recorded action
orders mushrooms), informational everywhere but in one extra scenario that whitelists it and
fails it. One offline ``python -m pytest`` run writes the report; the same folder's report built
here, where the signal is not registered (``pytest-tau2 report`` of someone else's results),
still names it by its metrics.json field.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.report.html import write_report
from pytest_tau2.scoring.signals import SIGNALS

REPO = Path(__file__).resolve().parents[2]
STRICT = "restaurant__pepperoni_mushrooms_strict"

CONFTEST = """
import json

from pytest_tau2 import register_eval_scenario
from pytest_tau2.scoring.signals import Check, ScoringInput, SignalResult, SignalSpec, register_signal

import restaurant_scenarios


def no_mushrooms(inp: ScoringInput) -> SignalResult:
    ok = "mushroom" not in json.dumps(inp.final.actions).lower()
    return SignalResult(ok, [Check("no_mushrooms", "no_mushrooms", ok, "" if ok else "the order has mushrooms")])


NO_MUSHROOMS = register_signal(
    SignalSpec("no_mushrooms", "is_mushroom_free", "Mushroom-free order", "bool", no_mushrooms,
               "no recorded action orders mushrooms", "never")
)


@register_eval_scenario
class StrictPepperoni(restaurant_scenarios.PepperoniWithMushrooms):
    name = "restaurant__pepperoni_mushrooms_strict"
    success_signals = (*restaurant_scenarios.PepperoniWithMushrooms.success_signals, NO_MUSHROOMS.signal)
"""


@dataclass
class Project:
    results: Path
    report: Path


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Project:
    """One offline run of the project (asks for the browser first: without one, nothing runs)."""
    root = tmp_path_factory.mktemp("custom-signal")
    (root / "data" / "restaurant").mkdir(parents=True)
    (root / "data" / "restaurant" / "orders.json").write_text('{"orders": []}', "utf-8")
    (root / "restaurant_scenarios.py").write_text((REPO / "scenarios" / "restaurant.py").read_text("utf-8"), "utf-8")
    (root / "conftest.py").write_text(CONFTEST, "utf-8")
    (root / "test_scenarios.py").write_text("from pytest_tau2 import test_scenario  # noqa: F401\n", "utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAU2_", "PYTEST_"))}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    results = root / "out"
    command = [sys.executable, "-m", "pytest", "-p", "tau2", "-p", "no:cacheprovider", "-q",
               f"--tau2-results-dir={results}"]  # fmt: skip
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]  # the strict scenario fails, by design
    assert f"FAILED test_scenarios.py::test_scenario[{STRICT}]" in done.stdout, done.stdout[-3000:]
    assert "6 passed" in done.stdout, done.stdout[-3000:]
    assert (results / "report.html").is_file(), done.stdout[-2000:]
    return Project(results, results / "report.html")


def test_a_custom_signal_is_in_the_table_the_filter_and_the_panel(project: Project, open_report: Any) -> None:
    page = open_report(project.report)
    overview = page.page.inner_text("#overview")
    assert "Mushroom-free order" in overview  # its pass rate, gating in one scenario and informational in six

    row = page.page.inner_text(f'#scenario-body tr[data-key="{STRICT}"]')
    assert "no_mushrooms" in row  # the failed-signal column names it by its key
    tag = page.page.locator(f'#scenario-body tr[data-key="{STRICT}"] .tag.bad')
    assert tag.get_attribute("title") == "Mushroom-free order: no recorded action orders mushrooms"

    options = page.page.eval_on_selector_all("#f-signal option", "os => os.map(o => [o.value, o.title])")
    assert ["no_mushrooms", "Mushroom-free order: no recorded action orders mushrooms"] in options
    page.page.select_option("#f-signal", "no_mushrooms")
    assert page.rows() == [STRICT]
    page.page.click("#f-reset")

    page.open_panel(STRICT)
    signal = page.page.inner_text('#panel-body #signals [data-signal="no_mushrooms"]')
    assert "Mushroom-free order" in signal and "✗" in signal and "gating" in signal
    assert "the order has mushrooms" in page.page.inner_text('#panel-body [data-check="no_mushrooms"]')
    assert "is_mushroom_free" not in page.page.inner_text("#panel-body")  # shown as a signal, not an "other field"
    page.close_panel()

    page.open_panel("restaurant__pizza_pepperoni")
    signal = page.page.inner_text('#panel-body #signals [data-signal="no_mushrooms"]')
    assert "✓" in signal and "informational" in signal
    built_in = page.page.inner_text('#panel-body #signals [data-signal="clean_exit"]')
    assert "Clean exit" in built_in and "gating" in built_in
    assert page.errors == []


def test_a_report_built_where_the_signal_is_not_registered_names_its_field(
    project: Project, open_report: Any, tmp_path: Path
) -> None:
    assert "no_mushrooms" not in SIGNALS  # this process never loaded the project's conftest
    page = open_report(write_report([project.results], tmp_path / "report.html"))
    assert "is_mushroom_free" in page.page.inner_text(f'#scenario-body tr[data-key="{STRICT}"]')
    page.page.select_option("#f-signal", "is_mushroom_free")
    assert page.rows() == [STRICT]
    page.open_panel(STRICT)
    signal = page.page.inner_text('#panel-body #signals [data-signal="is_mushroom_free"]')
    assert "✗" in signal and "gating" in signal  # success_breakdown says it gated
    assert page.errors == []
