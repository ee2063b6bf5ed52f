"""Overriding one generated tau2 scenario: an explicit class registered under the same name wins."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]  # also in tests/conftest.py; repeated so this module stands alone

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
if not (DATA_DIR / "tau2" / "domains").is_dir():
    pytest.skip(f"no tau2 data under {DATA_DIR} (set TAU2_DATA_DIR)", allow_module_level=True)

CONFTEST = '''
import pytest_tau2.domains.tau2_sources  # noqa: F401  (registers the tau2 sources)
from pytest_tau2 import register_eval_scenario
from pytest_tau2.domains.tau2_retail.scenario import Tau2RetailBaseScenario


def pytest_configure(config):
    config.addinivalue_line("markers", "smoke: our own hand-picked scenarios")


@register_eval_scenario
class Retail57(Tau2RetailBaseScenario):
    """Upstream retail task 57, tagged for our smoke run."""

    name = "tau2_retail__57"
    tau2_id = "57"
    tags = ("smoke",)
    description = "Chitchat only: the agent must not change anything (local override)"
'''


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str) -> pytest.RunResult:
    monkeypatch.setenv("TAU2_DATA_DIR", str(DATA_DIR))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    for name in ("TAU2_AGENT_MODEL", "TAU2_USER_MODEL", "TAU2_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_tau2_items="from pytest_tau2 import test_scenario  # noqa: F401\n")
    return pytester.runpytest_subprocess(
        "-p", "tau2", "-p", "no:cacheprovider", "--strict-markers", f"--tau2-results-dir={pytester.path / 'out'}",
        *args, timeout=120,
    )  # fmt: skip


def test_the_explicit_class_replaces_the_generated_one(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run(pytester, monkeypatch, "-v", "-m", "smoke")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    # every other scenario of the default collection: 114 retail + 50 airline + 114 telecom (base)
    # + 97 banking_knowledge + 10 mock + the restaurant's, minus the one selected
    result.assert_outcomes(passed=1, deselected=384)
    result.stdout.fnmatch_lines(["*test_scenario?tau2_retail__57? PASSED*"])
    folder = pytester.path / "out" / "tau2_retail__57"
    metrics = json.loads((folder / "metrics.json").read_text("utf-8"))
    assert metrics["description"] == "Chitchat only: the agent must not change anything (local override)"
    assert metrics["tau2_id"] == "57"
    assert metrics["is_successful"] is True
    metadata = json.loads((folder / "scenario_config" / "metadata.json").read_text("utf-8"))
    assert metadata["class"] == "conftest.Retail57"


def test_the_override_does_not_add_or_lose_items(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run(pytester, monkeypatch, "--collect-only", "-q", "-k", "tau2_retail")
    items = [line for line in result.outlines if "::test_scenario[" in line]
    assert len(items) == 114
    assert items.count("test_tau2_items.py::test_scenario[tau2_retail__57]") == 1
