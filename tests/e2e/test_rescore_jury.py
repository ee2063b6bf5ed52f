"""``pytest-tau2 rescore`` and a jury of judges on the model path (the fake OpenAI server, through the
OpenAI wire path and litellm).

A run of two retail tasks with NL assertions (agent, user and one judge on the loopback server) is
re-scored: by a jury of three judges that disagree (recorded into cassettes), then again from those
cassettes with the server gone (no network), then by two judges that tie, then by one judge with
upstream's prompt shape. No re-score calls the agent or the user.

The jury's verdicts, per assertion (task 36's two, then task 62's two):

    judgeA  T T  T T
    judgeB  T T  F T
    judgeC  F T  F F   -> majority T T  F T

By hand: A-B agreement 3/4, Cohen's kappa 0 (A's labels are all "met": p_e = 1 * 3/4 = p_o);
A-C 1/4, kappa 0; B-C 1/2, p_e = 3/16 + 3/16 = 3/8, kappa (1/2 - 3/8) / (5/8) = 0.2; Fleiss:
P = (1/3 + 1 + 1/3 + 1/3) / 4 = 1/2, 8 of 12 labels "met", P_e = 4/9 + 1/9 = 5/9, kappa
(1/2 - 5/9) / (4/9) = -1/8. The saved judge (all "met") against the new majority: 3/4, kappa 0.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.llm_scripts import (
    REPO_ROOT,
    SECRET,
    PytestRun,
    ScriptedModels,
    for_model,
    judge_json,
    model_options,
    node,
    run_pytest,
    subprocess_env,
    task_of_judge_request,
)
from tests.support.fake_openai import FakeOpenAIServer, Reply, judge_assertions, text

TASKS = ("36", "62")
PLAN = {
    "judgeA": {"36": [True, True], "62": [True, True]},
    "judgeB": {"36": [True, True], "62": [False, True]},
    "judgeC": {"36": [False, True], "62": [False, False]},
}


def retail(task_id: str) -> str:
    return f"tau2_retail__{task_id}"


def _judge(name: str) -> Any:
    def handler(request: dict[str, Any]) -> Reply:
        task = task_of_judge_request(request) or ""
        return text(judge_json(PLAN[name][task], reason=f"{name} read the transcript"))

    return handler


def _upstream_judge(request: dict[str, Any]) -> Reply:
    user = next(m["content"] for m in request["messages"] if m["role"] == "user")
    outcomes = user.split("expectedOutcomes:\n", 1)[1].strip()
    listed = json.loads(outcomes.replace("'", '"'))  # the Python list of the assertions
    results = [{"expectedOutcome": o, "reasoning": "upstream-shaped", "metExpectation": True} for o in listed]
    return text(json.dumps({"results": results[::-1]}))  # in another order: matched by the echoed text


def rescore(source: Path, into: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest_tau2.cli", "rescore", str(source), "--into", str(into), *args]
    return subprocess.run(
        command, cwd=REPO_ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=240, check=False
    )


def judge_args(server: FakeOpenAIServer) -> str:
    return json.dumps({"api_base": server.base_url, "api_key": SECRET})


class Rescored:
    def __init__(self, folder: Path, done: subprocess.CompletedProcess[str]) -> None:
        self.folder, self.done = folder, done
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    def metrics(self, task_id: str) -> dict[str, Any]:
        return dict(json.loads((self.folder / retail(task_id) / "metrics.json").read_text("utf-8")))

    def document(self, name: str) -> dict[str, Any]:
        return dict(json.loads((self.folder / name).read_text("utf-8")))


@pytest.fixture(scope="module", params=["auto", "litellm"])
def flow(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    transport = request.param
    tmp = tmp_path_factory.mktemp(f"rescore-{transport}")
    models = ScriptedModels()
    out: dict[str, Any] = {"tmp": tmp}
    cassettes = tmp / "cassettes"
    with FakeOpenAIServer() as server:
        models.install(server)
        for name in PLAN:
            server.add_handler(name, _judge(name))
        server.add_handler("judgeU", _upstream_judge)
        saved: PytestRun = run_pytest(
            [
                *(node(retail(t)) for t in TASKS),
                *model_options(server, sides=("agent", "user", "judge")),
                "--tau2-llm-transport",
                transport,
            ],
            tmp / "saved",
        )
        assert saved.returncode in (0, 1), saved.output[-3000:]
        out["saved"] = saved
        before = len(server.requests)
        common = ["--tau2-judge-args", judge_args(server), "--tau2-llm-transport", transport]
        out["jury"] = Rescored(
            tmp / "jury",
            rescore(
                saved.results_dir,
                tmp / "jury",
                "--tau2-judge-model",
                "openai/judgeA,openai/judgeB,openai/judgeC",
                "--tau2-record-mode",
                "once",
                "--tau2-cassette-dir",
                str(cassettes),
                *common,
            ),
        )
        out["jury_requests"] = server.requests[before:]
        before = len(server.requests)
        if transport == "auto":  # the rule itself is unit-tested; one transport shows it end to end
            out["tie"] = Rescored(
                tmp / "tie",
                rescore(
                    saved.results_dir,
                    tmp / "tie",
                    "--tau2-judge-model",
                    "openai/judgeA",
                    "--tau2-judge-model",
                    "openai/judgeC",
                    *common,
                ),
            )
        out["upstream"] = Rescored(
            tmp / "upstream",
            rescore(
                saved.results_dir,
                tmp / "upstream",
                "--tau2-judge-model",
                "openai/judgeU",
                "--tau2-judge-prompt",
                "upstream",
                *common,
            ),
        )
        out["later_requests"] = server.requests[before:]
        dead_args = judge_args(server)
    # The server is gone: the same jury re-score from the cassettes alone.
    out["replayed"] = Rescored(
        tmp / "replayed",
        rescore(
            saved.results_dir,
            tmp / "replayed",
            "--tau2-judge-model",
            "openai/judgeA,openai/judgeB,openai/judgeC",
            "--tau2-judge-args",
            dead_args,
            "--tau2-record-mode",
            "none",
            "--tau2-cassette-dir",
            str(cassettes),
            "--tau2-llm-transport",
            transport,
        ),
    )
    return out


def test_a_rescore_calls_only_the_judges_and_keeps_the_conversations(flow: dict[str, Any]) -> None:
    jury_requests = flow["jury_requests"]
    assert not for_model(jury_requests, "agent") and not for_model(jury_requests, "user")
    assert not for_model(flow["later_requests"], "agent") and not for_model(flow["later_requests"], "user")
    for name in PLAN:
        assert len(for_model(jury_requests, name)) == len(TASKS)  # one call per trial and judge
    saved: PytestRun = flow["saved"]
    for task in TASKS:
        again = json.loads((flow["jury"].folder / retail(task) / "transcript.json").read_text("utf-8"))
        assert again["messages"] == saved.transcript(retail(task))


def test_the_jury_saves_every_judge_and_decides_by_majority(flow: dict[str, Any]) -> None:
    jury: Rescored = flow["jury"]
    verdicts = {t: jury.metrics(t)["nl_assertion_verdicts"] for t in TASKS}
    assert [v["passed"] for t in TASKS for v in verdicts[t]] == [True, True, False, True]
    first = verdicts["36"][0]
    assert [(j["judge"], j["passed"]) for j in first["judges"]] == [
        ("openai/judgeA", True), ("openai/judgeB", True), ("openai/judgeC", False),
    ]  # fmt: skip
    assert first["reason"].startswith("2 of 3 judges found it met; ")
    assert first["judges"][2]["reason"] == "judgeC read the transcript"
    assert jury.metrics("36")["is_successful"] is True and jury.metrics("62")["is_successful"] is False
    assert [m["model"] for m in jury.metrics("36")["models"]["judges"]] == [f"openai/judge{x}" for x in "ABC"]
    panel = json.loads((jury.folder / retail("62") / "judge_result.json").read_text("utf-8"))["judges"]
    assert [p["judge"] for p in panel] == [f"openai/judge{x}" for x in "ABC"] and all(p["raw_reply"] for p in panel)


def test_the_agreement_numbers_are_the_hand_computed_ones(flow: dict[str, Any]) -> None:
    jury: Rescored = flow["jury"]
    block = jury.document("all_metrics.json")["judge_agreement"]
    assert block["judges"] == [f"openai/judge{x}" for x in "ABC"]
    assert (block["assertions"], block["unanimous"]) == (4, 1)
    assert block["fleiss_kappa"] == pytest.approx(-0.125)
    pairs = {tuple(p["judges"]): (p["agreement"], p["cohen_kappa"]) for p in block["pairs"]}
    assert pairs[("openai/judgeA", "openai/judgeB")] == (0.75, 0.0)
    assert pairs[("openai/judgeA", "openai/judgeC")] == (0.25, 0.0)
    assert pairs[("openai/judgeB", "openai/judgeC")] == (0.5, pytest.approx(0.2))
    summary = (jury.folder / "all_summary.txt").read_text("utf-8")
    assert "Judge agreement (3 judges, 4 assertions judged by all, 1 unanimous): Fleiss' kappa -0.125" in summary
    assert "openai/judgeB vs openai/judgeC: agreement 50.0%, Cohen's kappa 0.200 (4 assertions)" in summary
    versus = jury.document("run.json")["rescored"]["agreement_with_saved"]
    assert versus["judges"] == ["openai/judge", "openai/judgeA,openai/judgeB,openai/judgeC"]
    assert (versus["pairs"][0]["agreement"], versus["pairs"][0]["cohen_kappa"]) == (0.75, 0.0)
    assert "Saved judge vs new judge (2 judges, 4 assertions" in summary
    report = (jury.folder / "report.html").read_text("utf-8")
    assert "Judge agreement" in report and "judges disagree" in report


def test_the_new_folder_says_it_was_rescored_and_what_changed(flow: dict[str, Any]) -> None:
    jury: Rescored = flow["jury"]
    info = jury.document("run.json")
    saved: PytestRun = flow["saved"]
    assert info["fingerprint"]["rescored_from"] == str(saved.results_dir)
    assert info["fingerprint"]["agent"] == "litellm:openai/agent"  # the conversations are the saved run's
    assert any(line.startswith("judge_model: ") for line in info["rescored"]["changed"])
    assert (jury.folder / "junit.xml").is_file() and (jury.folder / "report.html").is_file()
    assert jury.metrics("36")["agent"] == "litellm:openai/agent" and jury.metrics("36")["user"] == "litellm:openai/user"


def test_the_rescore_replays_from_its_cassettes_without_network(flow: dict[str, Any]) -> None:
    jury: Rescored = flow["jury"]
    replayed: Rescored = flow["replayed"]
    for task in TASKS:
        assert replayed.metrics(task)["nl_assertion_verdicts"] == jury.metrics(task)["nl_assertion_verdicts"]
        recording = replayed.metrics(task)["recording"]
        assert (recording["mode"], recording["replayed_calls"], recording["recorded_calls"]) == ("none", 3, 0)
    assert (
        replayed.document("all_metrics.json")["judge_agreement"] == jury.document("all_metrics.json")["judge_agreement"]
    )


def test_a_tie_is_not_met(flow: dict[str, Any]) -> None:
    if "tie" not in flow:
        pytest.skip("the tie is re-scored on the wire transport only (the rule is unit-tested)")
    tie: Rescored = flow["tie"]
    passed = [v["passed"] for t in TASKS for v in tie.metrics(t)["nl_assertion_verdicts"]]
    assert passed == [False, True, False, False]
    assert "1 of 2 judges found it met (a tie is not met)" in tie.metrics("36")["nl_assertion_verdicts"][0]["reason"]


def test_upstreams_prompt_shape_is_sent_and_its_answer_read(flow: dict[str, Any]) -> None:
    requests = for_model(flow["later_requests"], "judgeU")
    assert len(requests) == len(TASKS)
    system, user = requests[0]["messages"]
    assert "`metExpectation`" in system["content"] and "`expectedOutcome`" in system["content"]
    assert user["content"].startswith("conversation:\nassistant: ")  # every message as "<role>: <content>"
    assert judge_assertions(requests[0]) == []  # not our numbered section
    upstream: Rescored = flow["upstream"]
    for task in TASKS:
        verdicts = upstream.metrics(task)["nl_assertion_verdicts"]
        assert [v["passed"] for v in verdicts] == [True, True]
        assert all(v["reason"] == "upstream-shaped" for v in verdicts)
    assert upstream.document("run.json")["fingerprint"]["judge_prompt"] == "upstream"


def test_one_judge_writes_what_it_always_wrote(flow: dict[str, Any]) -> None:
    saved: PytestRun = flow["saved"]
    metrics = saved.metrics(retail("36"))
    assert all("judges" not in v for v in metrics["nl_assertion_verdicts"])
    assert set(metrics["models"]) == {"agent", "user", "judge"}
    assert "judges" not in saved.judge_result(retail("36"))
    run = json.loads((saved.results_dir / "run.json").read_text("utf-8"))
    assert "judge_prompt" not in run["fingerprint"] and isinstance(run["fingerprint"]["judge_model"], dict)
    assert "judge_agreement" not in json.loads((saved.results_dir / "all_metrics.json").read_text("utf-8"))
    assert "Judge agreement" not in saved.summary()
