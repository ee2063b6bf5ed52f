"""Fault matrix, options and tracebacks: values no run can use are usage errors naming the option,
and no credential shows in a usage error or in a traceback, even with ``pytest -l``.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.e2e.fault_matrix import assert_no_secret, junit_outcome
from tests.e2e.llm_scripts import SECRET, PytestRun, run_pytest

PASSWORD = "urlpass-Zq8xW3vLk0pY"


def _debug(run: PytestRun) -> str:
    return f"exit {run.returncode}\n--- stdout (tail)\n{run.stdout[-4000:]}\n--- stderr\n{run.stderr[-2000:]}"


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--tau2-llm-timeout", "nan", "must be a finite number, got 'nan'"),
        ("--tau2-agent-timeout", "inf", "must be a finite number, got 'inf'"),
        ("--tau2-max-duration", "-5", "must be at least 0.001, got -5.0"),
        ("--tau2-concurrency", "-1", "must be at least 1, got -1"),
    ],
)
def test_unusable_option_values_are_usage_errors(tmp_path: Path, option: str, value: str, message: str) -> None:
    run = run_pytest(["-k", "restaurant__menu_question", f"{option}={value}"], tmp_path)
    assert run.returncode == 4, _debug(run)
    ini = "tau2_" + option.removeprefix("--tau2-").replace("-", "_")
    assert f"ERROR: {option} (ini {ini}) {message}" in run.stderr, _debug(run)
    assert not (run.results_dir / "restaurant__menu_question").exists()  # nothing ran


def test_a_usage_error_does_not_echo_a_key_of_any_shape(tmp_path: Path) -> None:
    broken = json.dumps({"api_key": SECRET, "api_base": f"http://u:{PASSWORD}@127.0.0.1:9/v1"})[:-1] + ", oops"
    run = run_pytest(
        ["-k", "restaurant__menu_question", "--tau2-agent-model", "openai/agent", f"--tau2-agent-args={broken}"],
        tmp_path,
    )
    assert run.returncode == 4, _debug(run)
    assert "ERROR: --tau2-agent-args: expected a JSON object" in run.stderr, _debug(run)
    assert '"api_key": "***"' in run.stderr and "http://u:***@127.0.0.1:9/v1" in run.stderr
    assert_no_secret(run, SECRET, PASSWORD)


# ---- a traceback with every local shown (pytest -l) --------------------------------------------------------------

PROJECT = {
    "pytest.ini": "[pytest]\n",
    "lab_scenarios.py": """
        from pytest_tau2 import Scenario, SuccessSignal, register_eval_scenario


        @register_eval_scenario
        class Hello(Scenario):
            name = "tracelab__hello"
            description = "Say hello."
            success_signals = (SuccessSignal.CLEAN_EXIT,)
    """,
    "conftest.py": """
        import pytest

        from pytest_tau2.llm import ModelConfig


        @pytest.fixture
        def tau2_agent(tau2_settings):
            config = ModelConfig.from_option(
                tau2_settings.agent_model, tau2_settings.agent_args, option_name="--tau2-agent-args"
            )
            raise RuntimeError(f"the custom agent for {config.model} failed to start")
    """,
    "test_lab.py": """
        import lab_scenarios  # noqa: F401
        from pytest_tau2 import test_scenario  # noqa: F401
    """,
}


@pytest.fixture(scope="module")
def traceback_run(tmp_path_factory: pytest.TempPathFactory) -> PytestRun:
    project = tmp_path_factory.mktemp("traceback")
    for name, text in PROJECT.items():
        (project / name).write_text(textwrap.dedent(text), "utf-8")
    args = json.dumps({"api_key": SECRET, "api_base": f"http://u:{PASSWORD}@127.0.0.1:9/v1", "temperature": 0})
    return run_pytest(
        [
            "-l",
            "--tb=long",
            "-p",
            "no:xdist",
            "--tau2-agent-model",
            "openai/agent",
            f"--tau2-agent-args={args}",
            f"--tau2-agent-url=ws://bot:{PASSWORD}@127.0.0.1:9",
        ],
        project,
        cwd=project,
    )


def test_a_traceback_with_locals_masks_settings_and_model_configs(traceback_run: PytestRun) -> None:
    run = traceback_run
    assert "test_lab.py::test_scenario[tracelab__hello] ERROR" in run.stdout, _debug(run)
    assert "RuntimeError: the custom agent for openai/agent failed to start" in run.stdout
    # The locals really are printed, masked.
    assert "tau2_settings = Settings(" in run.stdout and "config     = ModelConfig(model='openai/agent'" in run.stdout
    # The header names the conftest's agent fixture, not the URL; the URL is saved masked.
    assert "ws://bot:***@127.0.0.1:9" in (run.results_dir / "run.json").read_text("utf-8")
    assert junit_outcome(run, "tracelab__hello") == "error"
    assert_no_secret(run, SECRET, PASSWORD)
