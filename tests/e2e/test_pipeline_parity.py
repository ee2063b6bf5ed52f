"""In process and through a bot, one pipeline: identical verdicts, metrics and summaries.

The same offline sweep (restaurant, and the tau2 retail, airline and telecom oracles) runs
twice through the plugin: once with the agent in process, once with the agent behind the
reference bot (``--tau2-agent-url``). Every metrics.json field must agree, except the ones
that say *how* the run was made (the agent's name, timings).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.bot.server import BotServer
from tests.e2e.conftest import REPO
from tests.e2e.llm_scripts import NESTED_PLUGINS

SWEEP = "restaurant__*,tau2_retail__*,tau2_airline__*,tau2_telecom__*"
HOW_IT_RAN = {"agent", "duration_s", "conversation_duration_s"}


def _sweep(results: Path, *extra: str) -> dict[str, Any]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **NESTED_PLUGINS}
    command = [sys.executable, "-m", "pytest", "-p", "xdist", "-n", "2", "-q", "-p", "no:cacheprovider",
               f"--tau2-scenarios={SWEEP}", f"--tau2-results-dir={results}", "--tau2-prompts=seed",
               *extra]  # fmt: skip
    run = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    return json.loads((results / "all_metrics.json").read_text("utf-8"))


def _summary_without_agent(results: Path) -> list[str]:
    return [line for line in (results / "all_summary.txt").read_text("utf-8").splitlines() if "Agent:" not in line]


@pytest.mark.skipif(not os.environ.get("TAU2_DATA_DIR"), reason="needs the tau2 data (TAU2_DATA_DIR)")
def test_in_process_and_bot_runs_agree_field_by_field(reference_bot: BotServer, tmp_path: Path) -> None:
    local = _sweep(tmp_path / "local")
    remote = _sweep(tmp_path / "remote", f"--tau2-agent-url={reference_bot.url}")
    by_name = {m["scenario"]: m for m in local["scenarios"]}
    assert sorted(by_name) == sorted(m["scenario"] for m in remote["scenarios"])
    domains = {name.split("__")[0] for name in by_name}
    assert {"restaurant", "tau2_retail", "tau2_airline", "tau2_telecom"} <= domains
    for theirs in remote["scenarios"]:
        ours = by_name[theirs["scenario"]]
        for key in sorted(set(ours) | set(theirs)):
            if key not in HOW_IT_RAN:
                assert theirs.get(key) == ours.get(key), f"{theirs['scenario']}: {key} differs"
        assert theirs["agent"].startswith("websocket:") and ours["agent"] == "oracle"
    assert _summary_without_agent(tmp_path / "remote") == _summary_without_agent(tmp_path / "local")
