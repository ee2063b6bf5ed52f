"""Infrastructure faults and turn limits with real models over loopback HTTP.

- A model call that hangs past ``--tau2-llm-timeout`` on every retry makes the item a pytest
  *error* (not a failure); the run goes on to the next scenario, which passes, and both the
  terminal summary and all_summary.txt count one infrastructure error.
- ``--tau2-max-turns 2`` stops a conversation with ``stop_reason: max_turns``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.llm_scripts import (
    SECRET,
    PytestRun,
    Recorded,
    ScriptedModels,
    Tasks,
    import_probe,
    model_options,
    node,
    probe_records,
    run_pytest,
    shared_once,
    subprocess_env,
)
from tests.support.fake_openai import FakeOpenAIServer, hang

HANG = "66"
NEXT = "69"
MAX_TURNS = "5"
TIMEOUT_S = 1
RETRIES = 1


def name(task_id: str) -> str:
    return f"tau2_retail__{task_id}"


agent_requests = ScriptedModels.agent_requests


def _debug(run: PytestRun) -> str:
    return f"exit {run.returncode}\n--- stdout (tail)\n{run.stdout[-5000:]}\n--- stderr (tail)\n{run.stderr[-3000:]}"


# ---- 5. a hang past the timeout is an infrastructure error -----------------------------------------------


def _produce_hang(tmp: Path) -> Recorded:
    models = ScriptedModels(Tasks.load("retail"))
    # Every attempt of the agent's first call hangs far longer than the timeout.
    models.agent_script(HANG).faults[0] = [hang(60.0)] * (RETRIES + 1)
    with FakeOpenAIServer() as server:
        models.install(server)
        run = run_pytest(
            [
                node(name(HANG)),
                node(name(NEXT)),
                *model_options(server),
                "--tau2-llm-timeout",
                str(TIMEOUT_S),
                "--tau2-llm-retries",
                str(RETRIES),
            ],
            tmp,
        )
        return Recorded.of(run, server)


@pytest.fixture(scope="module")
def hang_run(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return shared_once(tmp_path_factory, "llm_hang", _produce_hang)


def test_hang_is_an_error_and_the_run_goes_on(hang_run: Recorded) -> None:
    run = hang_run.run
    assert run.returncode == 1, _debug(run)
    assert run.outcome_line(name(HANG)) == "ERROR", _debug(run)
    assert run.outcome_line(name(NEXT)) == "PASSED", _debug(run)
    assert re.search(r"\b1 passed\b.*\b1 error\b", run.stdout.splitlines()[-1]), run.stdout.splitlines()[-1]
    # The error names the cause, in the setup phase of the item.
    assert f"ERROR at setup of test_scenario[{name(HANG)}]" in run.stdout
    assert "InfrastructureError" in run.stdout


def test_hang_was_retried_once_with_the_timeout(hang_run: Recorded) -> None:
    requests = agent_requests(hang_run.requests, HANG, 0)
    assert len(requests) == RETRIES + 1
    assert agent_requests(hang_run.requests, HANG) == requests  # it never got further
    case = hang_run.run.testcase(name(HANG))
    # Two ~1 s timeouts and one backoff, not the 60 s the server would have hung (the bound leaves a
    # loaded machine room; the request count above is the exact check).
    assert float(case.get("time")) < 40, case.get("time")


def test_hang_metrics_record_the_infrastructure_error(hang_run: Recorded) -> None:
    run = hang_run.run
    metrics = run.metrics(name(HANG))
    error = metrics["infrastructure_error"]
    assert f"failed after {RETRIES + 1} attempts" in error and "openai/agent" in error
    assert "Timeout" in error, error
    assert metrics["stop_reason"] == "error" and metrics["is_successful"] is False
    assert metrics["token_usage"]["agent"]["calls"] == 0
    case = run.testcase(name(HANG))
    assert [e.tag for e in case if e.tag in ("error", "failure")] == ["error"]
    assert run.properties(name(HANG))["infrastructure_error"] == error


def test_hang_is_counted_as_an_infrastructure_error_in_the_summaries(hang_run: Recorded) -> None:
    run = hang_run.run
    headline = "Success rate: 1/2 (50.0%) of 2 scenarios (1 infrastructure errors counted as not successful)"
    assert run.summary().splitlines()[0] == headline
    assert headline in run.stdout
    assert run.metrics(name(NEXT))["is_successful"] is True


def test_hang_output_holds_no_api_key(hang_run: Recorded) -> None:
    run = hang_run.run
    assert SECRET not in run.stdout + run.stderr
    assert SECRET not in run.files_text()


# ---- 7. max_turns ------------------------------------------------------------------------------------------------


def _produce_max_turns(tmp: Path) -> Recorded:
    models = ScriptedModels(Tasks.load("retail"))
    probe_args, probe_env, probe_out = import_probe(tmp)
    with FakeOpenAIServer() as server:
        models.install(server)
        run = run_pytest(
            [node(name(MAX_TURNS)), *model_options(server), "--tau2-max-turns", "2", *probe_args],
            tmp,
            # Through litellm: these runs show litellm is loaded where models are called (the default
            # OpenAI wire path never loads it for these unpriced models: test_wire_parity_sweep.py).
            env=subprocess_env(TAU2_LLM_TRANSPORT="litellm", **probe_env),
        )
        return Recorded.of(run, server, probe_records(probe_out))


@pytest.fixture(scope="module")
def max_turns_run(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return shared_once(tmp_path_factory, "llm_max_turns", _produce_max_turns)


def test_max_turns_stops_the_conversation(max_turns_run: Recorded) -> None:
    run = max_turns_run.run
    assert run.outcome_line(name(MAX_TURNS)) == "FAILED", _debug(run)
    metrics = run.metrics(name(MAX_TURNS))
    assert metrics["stop_reason"] == "max_turns"
    assert metrics["clean_exit"] is False and metrics["is_successful"] is False
    assert len(agent_requests(max_turns_run.requests, MAX_TURNS)) == 2
    assert "stop_reason: max_turns" in run.stdout


def test_litellm_is_imported_when_a_model_is_used(max_turns_run: Recorded) -> None:
    """The positive control of the offline check in test_llm_parallel: the probe sees litellm."""
    records = max_turns_run.probe
    assert {r["stage"]: r["litellm"] for r in records} == {"collection_finish": True, "unconfigure": True}
