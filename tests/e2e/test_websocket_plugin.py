"""The plugin end to end: ``pytest --tau2-agent-url`` against one bot, with xdist workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from pytest_tau2.bot.agents import oracle_factory
from pytest_tau2.bot.server import BotServer, ServerThread
from pytest_tau2.bot.session import BotConfig
from pytest_tau2.settings import Settings
from tests.e2e.conftest import REPO, RESTAURANT
from tests.e2e.llm_scripts import NESTED_PLUGINS


def _pytest(url: str, results: Path, *extra: str, workers: int = 2) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **NESTED_PLUGINS}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "xdist",
        "-n",
        str(workers),
        "--tau2-agent-url",
        url,
        "-k",
        "restaurant",
        "--tau2-results-dir",
        str(results),
        "-p",
        "no:cacheprovider",
        "-q",
        *extra,
    ]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def test_xdist_sweep_against_one_bot(reference_bot: BotServer, tmp_path: Path) -> None:
    before = len(reference_bot.finished)
    run = _pytest(reference_bot.url, tmp_path / "results")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "6 passed" in run.stdout
    sessions = reference_bot.finished[before:]
    assert sorted(s.scenario for s in sessions) == sorted(RESTAURANT)
    # Scored from the bot's report: every session ended by the agent's exit, then was asked its summary.
    assert all(s.stop == "exit" and s.received.get("get_scenario_summary") == 1 for s in sessions), sessions
    metrics = json.loads((tmp_path / "results" / "all_metrics.json").read_text())["scenarios"]
    assert sorted(m["scenario"] for m in metrics) == sorted(RESTAURANT)
    assert all(m["agent"].startswith("websocket:ws://127.0.0.1:") and m["clean_exit"] is True for m in metrics)


def test_a_failing_session_is_an_error_and_the_sweep_continues(
    bot_settings: Settings, registry: Any, tmp_path: Path
) -> None:
    served = {name: cls for name, cls in registry.items() if name != "restaurant__party_order"}
    server = BotServer(BotConfig(bot_settings, oracle_factory()), port=0, scenarios=served)
    with ServerThread(server) as url:
        run = _pytest(url, tmp_path / "results", "-rE", workers=0)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "5 passed" in run.stdout and "1 error" in run.stdout
    assert "ERROR scenarios/test_scenarios.py::test_scenario[restaurant__party_order]" in run.stdout
    assert "sent error 'unknown_scenario'" in run.stdout
