"""The Python-object agent: examples/python_agent runs as documented and passes, offline.

The example folder is copied to a temporary directory (so the run writes nothing into the
repository) and run the way its README says: ``pytest -v`` inside it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.llm_scripts import REPO_ROOT, Recorded, import_probe, probe_records, run_pytest, subprocess_env

EXAMPLE = REPO_ROOT / "examples" / "python_agent"
SCENARIOS = ("restaurant__drinks_question", "restaurant__phone_order")


@pytest.fixture(scope="module")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    tmp = tmp_path_factory.mktemp("python_agent")
    project = tmp / "python_agent"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", ".benchmarks", "tau2-results"))
    probe_args, probe_env, probe_out = import_probe(tmp)
    run = run_pytest(probe_args, tmp, cwd=project, env=subprocess_env(**probe_env), timeout=120)
    return Recorded(run, probe=probe_records(probe_out))


def _debug(recorded: Recorded) -> str:
    run = recorded.run
    return f"exit {run.returncode}\n{run.stdout[-5000:]}\n{run.stderr[-3000:]}"


def test_example_runs_and_passes(example_run: Recorded) -> None:
    run = example_run.run
    assert run.returncode == 0, _debug(example_run)
    for scenario in SCENARIOS:
        assert f"test_pizza_agent.py::test_scenario[{scenario}] PASSED" in run.stdout, _debug(example_run)
    assert "Success rate: 2/2 (100.0%) of 2 scenarios" in run.stdout
    assert "rootdir: " in run.stdout and "configfile: pytest.ini" in run.stdout  # its own project


def test_example_agent_placed_the_order_and_hung_up(example_run: Recorded) -> None:
    run = example_run.run
    metrics = run.metrics("restaurant__phone_order")
    assert metrics["is_action_match"] is True and metrics["clean_exit"] is True
    assert metrics["stop_reason"] == "exit" and metrics["tool_errors"] == 0
    transcript = run.transcript("restaurant__phone_order")
    calls = [c["name"] for m in transcript for c in (m.get("tool_calls") or [])]
    assert calls == ["GetMenuTool", "PlaceOrderTool", "EndConversationTool"]
    # No model anywhere: no token usage, no litellm.
    assert all(side["calls"] == 0 for side in metrics["token_usage"].values())
    assert {r["litellm"] for r in example_run.probe} == {False}


def test_example_drinks_question_places_no_order(example_run: Recorded) -> None:
    metrics = example_run.run.metrics("restaurant__drinks_question")
    assert metrics["is_successful"] is True
    said = " ".join(m["content"] or "" for m in example_run.run.transcript("restaurant__drinks_question"))
    assert "Cola" in said and "Lemonade" in said


def test_metrics_name_the_python_agent_actually_used(example_run: Recorded) -> None:
    metrics = example_run.run.metrics("restaurant__phone_order")
    assert "PizzaPhoneAgent" in metrics["agent"], metrics["agent"]


def test_example_readme_command_is_what_we_ran() -> None:
    readme = (EXAMPLE / "README.md").read_text("utf-8")
    assert "cd examples/python_agent\npytest -v" in readme
    for path in (
        "conftest.py",
        "pizza_agent.py",
        "pizza_scenarios.py",
        "test_pizza_agent.py",
        "pytest.ini",
        "data/restaurant/orders.json",
    ):
        assert (EXAMPLE / path).is_file(), path
        assert Path(path).name in readme


def test_the_example_keeps_pytests_cache_so_lf_works(tmp_path: Path) -> None:
    """Issue 24.17: the project users copy must not disable the cache provider (``--lf``,
    ``--ff`` and ``--sw`` silently did nothing there)."""
    assert "cacheprovider" not in (EXAMPLE / "pytest.ini").read_text("utf-8")
    project = tmp_path / "python_agent"
    shutil.copytree(
        EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", ".benchmarks", "tau2-results", ".pytest_cache")
    )
    env = subprocess_env()
    first = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-k", "drinks_question", "-p", "no:randomly"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    assert (project / ".pytest_cache").is_dir()
    again = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "--lf", "-p", "no:randomly"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "run-last-failure: no previously failed tests" in again.stdout, again.stdout[-3000:]
