"""What loading the plugin imports: nothing that only later steps need. Each process of a run
(and an xdist controller, which runs no scenario) pays for the plugin's imports before its first
model request; the rest comes on first use or while the first requests are out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
LATER = ("jsonschema", "jinja2", "litellm", "deepdiff", "scipy", "numpy")
"""Tool calls, report.html, litellm routes, DB diffs, statistics (intervals at a run's end, compare)."""


def test_loading_the_plugin_leaves_later_steps_imports_for_later() -> None:
    code = f"import sys, pytest_tau2.plugin\nprint(sorted(m for m in {LATER!r} if m in sys.modules))\n"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
