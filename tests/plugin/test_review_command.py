"""``pytest-tau2 review`` on a saved run, on the model path: a loopback reviewer answers every shape
(well-formed, malformed, contradicting, refusing; a jury; a reviewer that cannot be called)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.plugin.conftest import Project
from tests.support.fake_openai import FakeOpenAIServer, Reply, error, text

SCENARIOS = """
def script(greeting: str, value: int) -> list:
    return [("say", greeting), ("call", "set_value", {"key": "x", "value": value}), ("say", "Done."), ("exit", "Bye.")]

@register_eval_scenario
class Right(LabBase):
    name = "lab__right"
    agent_script = script("Hello from right", 7)

@register_eval_scenario
class WellFormed(LabBase):
    name = "lab__well_formed"
    agent_script = script("Hello from well_formed", 8)

@register_eval_scenario
class Malformed(LabBase):
    name = "lab__malformed"
    agent_script = script("Hello from malformed", 9)

@register_eval_scenario
class Contradicting(LabBase):
    name = "lab__contradicting"
    agent_script = script("Hello from contradicting", 10)

@register_eval_scenario
class Refusing(LabBase):
    name = "lab__refusing"
    agent_script = script("Hello from refusing", 11)
"""

WELL_FORMED = {
    "errors": [
        {"source": "agent", "severity": "critical", "error_tags": ["tool_call_argument_error"], "turn_idx": 3,
         "quote": "set_value", "reasoning": "the customer asked for 7", "correct_behavior": "set 7"},
        {"source": "user", "severity": "critical_hindered", "error_tags": ["hallucination"], "turn_idx": 2,
         "quote": "nothing like this was said", "reasoning": "an invented detail", "correct_behavior": "stick to it"},
    ],
    "summary": "The agent set the wrong value; the user invented a detail.",
}  # fmt: skip


def reviewer(request: dict[str, Any]) -> Reply:
    conversation = request["messages"][1]["content"]
    if "Hello from well_formed" in conversation:
        return text("```json\n" + json.dumps(WELL_FORMED) + "\n```")
    if "Hello from malformed" in conversation:
        return text('{"errors": [{"source": "agent", ')
    if "Hello from contradicting" in conversation:
        bad = {"source": "agent", "severity": "critical_helped", "error_tags": ["other"], "turn_idx": 3}
        return text(json.dumps({"errors": [bad], "summary": "?"}))
    return text("I'm sorry, but I can't help with reviewing this conversation.")


def no_errors(request: dict[str, Any]) -> Reply:
    return text(json.dumps({"errors": [], "summary": "Nothing wrong."}))


def review(folder: Path, *args: str, transport: str = "auto") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "TAU2_LLM_TRANSPORT": transport}
    command = [sys.executable, "-m", "pytest_tau2.cli", "review", str(folder), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False, env=env, timeout=300)


@pytest.fixture
def saved_run(project: Project) -> Path:
    run = project.lab(SCENARIOS).run()
    assert run.items() == {
        "lab__contradicting": "FAILED", "lab__malformed": "FAILED", "lab__refusing": "FAILED",
        "lab__right": "PASSED", "lab__well_formed": "FAILED",
    }  # fmt: skip
    return run.results_dir


@pytest.mark.parametrize("transport", ["auto", "litellm"])  # the OpenAI wire path, and litellm's own
def test_review_every_reply_shape(saved_run: Path, transport: str) -> None:
    with FakeOpenAIServer() as server:
        server.add_handler("reviewer", reviewer)
        args = json.dumps({"api_base": server.base_url, "api_key": "sk-test"})
        done = review(
            saved_run, "--tau2-review-model", "openai/reviewer", "--tau2-review-args", args, transport=transport
        )
        assert len(server.requests_for("reviewer")) == 4  # the failures only; lab__right passed
    assert done.returncode == 1, done.stderr  # some replies were no readable review
    assert "reviewed 1 trials (1 not failed, not reviewed: --all reviews them)" in done.stdout
    assert "no review for lab__malformed: the reviewer 'openai/reviewer' gave no readable review" in done.stdout
    assert "no review for lab__contradicting" in done.stdout and "severity 'critical_helped'" in done.stdout
    assert "no review for lab__refusing" in done.stdout and "not valid JSON" in done.stdout

    metrics = json.loads((saved_run / "lab__well_formed" / "metrics.json").read_text("utf-8"))
    got = metrics["review"]
    assert (got["mode"], got["reviewers"], got["critical_user_error"]) == ("full", ["openai/reviewer"], True)
    assert [(e["source"], e["severity"], e["turn_idx"], e["quote_found"]) for e in got["errors"]] == [
        ("agent", "critical", 3, True),
        ("user", "critical_hindered", 2, False),  # the quote is not in that turn: kept, and said so
    ]
    assert metrics["is_successful"] is False  # a review never changes the verdict
    assert json.loads((saved_run / "lab__well_formed" / "review.json").read_text("utf-8"))["summary"]
    unreadable = json.loads((saved_run / "lab__refusing" / "review.json").read_text("utf-8"))
    assert "error" in unreadable and unreadable["raw_reply"].startswith("I'm sorry")
    assert json.loads((saved_run / "lab__right" / "metrics.json").read_text("utf-8"))["review"] is None

    summary = (saved_run / "all_summary.txt").read_text("utf-8")
    assert "Reviews (docs/review.md): 1 trials reviewed, 1 of 4 failures" in summary
    assert "critical user-simulator error in 1 of 1 reviewed failures" in summary
    assert "success rate 20.0% (1/5) with every trial; 25.0% (1/4) without the 1 whose simulated user" in summary
    assert summary.startswith("Success rate: 1/5")  # the run's own lines are kept
    assert "Failure modes (4 failed trials" in summary
    every = json.loads((saved_run / "all_metrics.json").read_text("utf-8"))
    assert [s["review"] is not None for s in every["scenarios"]] == [True, True, True, False, True]
    page = (saved_run / "report.html").read_text("utf-8")
    assert "critical user-simulator error" in page and 'id="failure-modes"' in page


def test_a_jury_of_reviewers_and_a_reviewer_that_cannot_be_called(saved_run: Path) -> None:
    with FakeOpenAIServer() as server:
        server.add_handler("reviewer", reviewer)
        server.add_handler("lenient", no_errors)
        server.add_handler("denied", error(401, "invalid api key"))
        args = json.dumps({"api_base": server.base_url, "api_key": "sk-test"})
        jury = review(saved_run, "--tau2-review-model", "openai/reviewer,openai/lenient", "--tau2-review-args", args)
        denied = review(saved_run, "--tau2-review-model", "openai/denied", "--tau2-review-args", args)
    got = json.loads((saved_run / "lab__well_formed" / "metrics.json").read_text("utf-8"))["review"]
    assert got["reviewers"] == ["openai/reviewer", "openai/lenient"]
    assert got["critical_user_error"] is False  # one of two reviewers: a tie is no
    assert [p["critical_user_error"] for p in got["panel"]] == [True, False]
    assert {e["reviewer"] for e in got["errors"]} == {"openai/reviewer"}
    assert jury.returncode == 1  # the other three replies of the first reviewer were unreadable
    assert denied.returncode == 2
    assert "stopped: the reviewer 'openai/denied' could not be called" in denied.stderr
    assert "sk-test" not in denied.stderr + denied.stdout


def test_a_run_with_tau2_review_reviews_each_failure_as_it_is_scored(project: Project) -> None:
    with FakeOpenAIServer() as server:
        server.add_handler("reviewer", reviewer)
        args = json.dumps({"api_base": server.base_url, "api_key": "sk-test"})
        project.lab(SCENARIOS)
        run = project.run("-k", "right or well_formed or refusing", "--tau2-review",
                          "--tau2-review-model", "openai/reviewer", "--tau2-review-args", args)  # fmt: skip
        assert len(server.requests_for("reviewer")) == 2  # the two failures; a passing trial is not reviewed
    assert run.items() == {"lab__refusing": "FAILED", "lab__right": "PASSED", "lab__well_formed": "FAILED"}
    reviewed = run.metrics("lab__well_formed")["review"]
    assert reviewed["critical_user_error"] is True and reviewed["reviewers"] == ["openai/reviewer"]
    assert run.metrics("lab__well_formed")["token_usage"]["review"]["calls"] == 1
    refused = run.metrics("lab__refusing")["review"]
    assert "gave no readable review" in refused["error"]  # recorded; the item's outcome is its own
    assert run.metrics("lab__right")["review"] is None
    assert "critical user-simulator error in 1 of 1 reviewed failures" in run.summary()
    assert "1 reviews unreadable or not made" in run.summary()


def test_tau2_review_without_a_model_is_a_usage_error(project: Project) -> None:
    run = project.lab(SCENARIOS).run("--tau2-review")
    assert run.result.ret == 4
    assert "--tau2-review needs a model" in run.stderr
