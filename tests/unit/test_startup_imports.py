"""What loading the plugin imports: nothing that only later steps need. Each process of a run
(and an xdist controller, which runs no scenario) pays for the plugin's imports before its first
model request; the rest comes on first use or while the first requests are out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
LATER = ("jsonschema", "jinja2", "litellm", "deepdiff", "scipy", "numpy", "pandas", "mcp")
"""Tool calls, report.html, litellm routes, DB diffs, resampling statistics, dataframes, MCP agents."""


def test_loading_the_plugin_leaves_later_steps_imports_for_later() -> None:
    code = f"import sys, pytest_tau2.plugin\nprint(sorted(m for m in {LATER!r} if m in sys.modules))\n"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


NEVER_IN_AN_ORDINARY_RUN = (
    "scipy",
    "numpy",
    "pandas",
    "mcp",
    "litellm",
    "pytest_tau2.tau2_format.upstream_runs",
    "pytest_tau2.domains.tau2_banking_knowledge.retrieval",
    "pytest_tau2.domains.tau2_airline.scenario",
    "pytest_tau2.domains.tau2_telecom.scenario",
)
"""What a one-trial offline sweep of retail never needs: its summary's Wilson interval is closed
form, the bootstrap (numpy) runs only with several trials, litellm only for a call it must carry or
price, the MCP SDK only for an MCP agent, upstream's result models only for a replay of upstream
runs, banking's retrieval (and its sandbox) only for a banking scenario that runs; and, given as
node ids, the other domains' scenarios are not generated at all (issue 41)."""

PROBE = """
import json, os, sys

def pytest_unconfigure(config):
    names = {names!r}
    with open(os.environ["IMPORT_PROBE_OUT"], "w", encoding="utf-8") as fh:
        json.dump(sorted(name for name in names if name in sys.modules), fh)
"""


def test_an_ordinary_sweep_imports_no_statistics_stack(tmp_path: Path) -> None:
    (tmp_path / "import_probe.py").write_text(PROBE.format(names=NEVER_IN_AN_ORDINARY_RUN), "utf-8")
    out = tmp_path / "imported.json"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(tmp_path)]),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "IMPORT_PROBE_OUT": str(out),
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "import_probe",
         *(f"scenarios/test_scenarios.py::test_scenario[tau2_retail__{i}]" for i in (1, 2)),
         f"--tau2-results-dir={tmp_path / 'results'}"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout
    assert (tmp_path / "results").is_dir()
    assert out.read_text("utf-8") == "[]"
