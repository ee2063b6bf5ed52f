"""Fault matrix, model layer: malformed replies, a model that stays down, a judge that cannot grade.

Each fault is a real pytest run in a subprocess, its models served by the loopback fake OpenAI
server through litellm. For each: the item's outcome and message, that JUnit and
all_metrics.json hold the same scenarios, and that neither the API key (a key of no provider
shape, so only the given-secret list can mask it) nor a provider key from the environment
appears anywhere the run wrote. See docs/faults.md.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.fault_matrix import assert_counts_agree, assert_no_secret, junit_outcome
from tests.e2e.llm_scripts import (
    SECRET,
    PytestRun,
    Recorded,
    ScriptedModels,
    Tasks,
    model_options,
    node,
    run_pytest,
    shared_once,
    subprocess_env,
)
from tests.support.fake_openai import FakeOpenAIServer, error, hang, raw, text

ENV_KEY = "envkey-0123456789-abcdefXYZ"  # OPENAI_API_KEY of the nested run: masked from the environment
RESTAURANT = (
    "restaurant__margherita_for_two",
    "restaurant__menu_question",
    "restaurant__party_order",
    "restaurant__pepperoni_mushrooms",
    "restaurant__pizza_pepperoni",
)
JUDGE_TIMEOUT = "24"  # one NL assertion; the judge hangs past the timeout
JUDGE_EMPTY = "43"  # the judge answers an empty string
JUDGE_OK = "2"  # graded normally: the run goes on around the faults
JUDGE_401 = ("3", "4")  # the judge's key is rejected: the run stops after the first
ORDINARY = "Noted for the risk-assessment-meeting of the task-force."


def retail(task_id: str) -> str:
    return f"tau2_retail__{task_id}"


def _env() -> dict[str, str]:
    return subprocess_env(OPENAI_API_KEY=ENV_KEY)


def _debug(run: PytestRun) -> str:
    return f"exit {run.returncode}\n--- stdout (tail)\n{run.stdout[-5000:]}\n--- stderr\n{run.stderr[-2000:]}"


# ---- a 200 reply that is not a chat completion --------------------------------------------------------------


def _produce_malformed(tmp: Path) -> Recorded:
    with FakeOpenAIServer() as server:
        body = {"id": "x", "object": "chat.completion", "created": 1, "model": "agent", "choices": []}
        server.add_handler("agent", raw(body))
        args = [node(RESTAURANT[0]), *model_options(server, sides=("agent",)), "--tau2-llm-retries", "1", "-l"]
        return Recorded.of(run_pytest(args, tmp, env=_env()), server)


@pytest.fixture(scope="module")
def malformed(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return shared_once(tmp_path_factory, "faults_malformed", _produce_malformed)


def test_an_empty_choices_reply_is_an_infrastructure_error(malformed: Recorded) -> None:
    run = malformed.run
    assert run.returncode == 1, _debug(run)
    assert run.outcome_line(RESTAURANT[0]) == "ERROR", _debug(run)
    error_text = run.metrics(RESTAURANT[0])["infrastructure_error"]
    assert "failed after 2 attempts (last malformed reply: " in error_text
    assert "the provider answered without a completion (choices: [])" in error_text
    assert "IndexError" not in run.output and "Traceback" not in run.output
    assert junit_outcome(run, RESTAURANT[0]) == "error"
    assert len(malformed.requests) == 2
    assert_counts_agree(run, [RESTAURANT[0]])
    assert_no_secret(run, SECRET, ENV_KEY)


# ---- a model that answers 500 on every call -----------------------------------------------------------------


def _produce_down(tmp: Path) -> Recorded:
    with FakeOpenAIServer() as server:
        server.add_handler("agent", error(500, "the model is down"))
        args = [*map(node, RESTAURANT), *model_options(server, sides=("agent",)), "--tau2-llm-retries", "1"]
        return Recorded.of(run_pytest(args, tmp, env=_env()), server)


@pytest.fixture(scope="module")
def down(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return shared_once(tmp_path_factory, "faults_down", _produce_down)


def test_a_model_that_stays_down_stops_the_run_after_three_scenarios(down: Recorded) -> None:
    run = down.run
    ran, never = RESTAURANT[:3], RESTAURANT[3:]
    assert run.returncode == 2, _debug(run)  # interrupted
    assert [run.outcome_line(s) for s in ran] == ["ERROR"] * 3, _debug(run)
    assert [run.outcome_line(s) for s in never] == ["", ""], _debug(run)
    assert "Stopping the run: 3 calls in a row to this model failed after every retry." in run.stdout
    assert re.search(r"Interrupted: stopping the run", run.stdout), _debug(run)
    assert len(down.requests) == 3 * 2  # two attempts per scenario, none for the two left
    assert "the model is down" in run.metrics(ran[0])["infrastructure_error"]
    assert_counts_agree(run, ran)
    assert_no_secret(run, SECRET, ENV_KEY)


# ---- a judge that cannot grade --------------------------------------------------------------------------------


def _produce_judge(tmp: Path) -> Recorded:
    models = ScriptedModels(Tasks.load("retail"), wrap_up=(ORDINARY,))
    models.judge[JUDGE_TIMEOUT] = hang(30.0)
    models.judge[JUDGE_EMPTY] = text("")
    with FakeOpenAIServer() as server:
        models.install(server)
        tasks = (JUDGE_TIMEOUT, JUDGE_EMPTY, JUDGE_OK)
        args = [
            *(node(retail(t)) for t in tasks),
            *model_options(server, sides=("agent", "user", "judge")),
            "--tau2-llm-retries",
            "1",
            "--tau2-llm-timeout",
            "1",
        ]
        return Recorded.of(run_pytest(args, tmp, env=_env()), server)


@pytest.fixture(scope="module")
def judge_faults(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return shared_once(tmp_path_factory, "faults_judge", _produce_judge)


@pytest.mark.parametrize(
    ("task_id", "needle"),
    [
        (JUDGE_TIMEOUT, "the NL-assertion judge failed, not the agent: LLM call to model 'openai/judge' failed"),
        (JUDGE_EMPTY, "gave no readable verdict, not the agent's fault: the judge returned an empty reply"),
    ],
    ids=["timeout", "empty-reply"],
)
def test_a_judge_that_cannot_grade_is_an_infrastructure_error(
    judge_faults: Recorded, task_id: str, needle: str
) -> None:
    run = judge_faults.run
    assert run.outcome_line(retail(task_id)) == "ERROR", _debug(run)
    metrics = run.metrics(retail(task_id))
    assert needle in metrics["infrastructure_error"], metrics["infrastructure_error"]
    assert metrics["nl_assertion_pass_rate"] is None and metrics["is_successful"] is False
    assert metrics["db_state_match"] is True  # the agent did its part
    assert junit_outcome(run, retail(task_id)) == "error"


def test_the_run_goes_on_around_judge_faults(judge_faults: Recorded) -> None:
    run = judge_faults.run
    assert run.returncode == 1, _debug(run)
    assert run.outcome_line(retail(JUDGE_OK)) == "PASSED", _debug(run)
    assert_counts_agree(run, [retail(t) for t in (JUDGE_TIMEOUT, JUDGE_EMPTY, JUDGE_OK)])
    headline = run.summary().splitlines()[0]
    assert "Success rate: 1/3" in headline and "2 infrastructure errors" in headline, headline


def test_judge_faults_leak_no_key_and_keep_ordinary_text(judge_faults: Recorded) -> None:
    run = judge_faults.run
    assert_no_secret(run, SECRET, ENV_KEY)
    transcript = run.transcript(retail(JUDGE_OK))
    assert any(m.get("content") == ORDINARY for m in transcript), "ordinary text was altered by redaction"
    assert ORDINARY in json.dumps(json.loads((run.results_dir / retail(JUDGE_OK) / "transcript.json").read_text()))


def _produce_judge_401(tmp: Path) -> Recorded:
    models = ScriptedModels(Tasks.load("retail"))
    with FakeOpenAIServer() as server:
        models.install(server)
        server.add_handler("judge", error(401, "Incorrect API key provided"))
        args = [*(node(retail(t)) for t in JUDGE_401), *model_options(server, sides=("agent", "user", "judge"))]
        return Recorded.of(run_pytest(args, tmp, env=_env()), server)


@pytest.fixture(scope="module")
def judge_401(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return shared_once(tmp_path_factory, "faults_judge_401", _produce_judge_401)


def test_a_rejected_judge_key_stops_the_run(judge_401: Recorded) -> None:
    run = judge_401.run
    first, second = map(retail, JUDGE_401)
    assert run.returncode == 2, _debug(run)
    assert run.outcome_line(first) == "ERROR" and run.outcome_line(second) == "", _debug(run)
    assert "Interrupted: stopping the run" in run.stdout
    assert len([r for r in judge_401.requests if r.get("model") == "judge"]) == 1  # not retried
    assert "Incorrect API key provided" in run.metrics(first)["infrastructure_error"]
    assert_counts_agree(run, [first])
    assert_no_secret(run, SECRET, ENV_KEY)
