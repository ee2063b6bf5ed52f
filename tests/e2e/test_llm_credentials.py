"""Rejected credentials are not retried, and stop the run instead of failing every scenario."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.e2e.llm_scripts import NESTED_PLUGINS
from tests.support.fake_openai import FakeOpenAIServer, error

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-test-rejected-987654321"


def test_a_401_is_not_retried_and_stops_the_run(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.add_handler("agent", error(401, "Incorrect API key provided"))
        args = json.dumps({"api_base": server.base_url, "api_key": KEY})
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--tau2-scenarios",
                "restaurant__party_order,restaurant__pizza_pepperoni",
                "--tau2-agent-model",
                "openai/agent",
                f"--tau2-agent-args={args}",
                f"--tau2-results-dir={tmp_path / 'results'}",
            ],
            cwd=REPO,
            env=dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", **NESTED_PLUGINS),
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        requests = len(server.requests_for("agent"))
    out = done.stdout + done.stderr
    assert requests == 1, out[-3000:]  # one call, no retries, no second scenario
    assert "1 error" in out and "Interrupted: stopping the run" in out, out[-3000:]
    assert KEY not in out
