"""Real conversations, end to end: pytest in a subprocess, litellm over real HTTP, a loopback model.

One nested pytest run plays fifteen retail scenarios. Each is scripted differently through
the same three model names (see ``llm_scripts``): gold runs, a wrong write, malformed tool
calls, a 500 that is retried, a customer stop the agent does not close, and every shape of
judge reply. The tests below read that one run's exit code, terminal output, result files,
JUnit XML and the requests the fake server received.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.llm_scripts import (
    SECRET,
    AgentScript,
    PytestRun,
    Recorded,
    ScriptedModels,
    Tasks,
    call,
    judge_json,
    model_options,
    node,
    run_pytest,
    shared_once,
)
from tests.support.fake_openai import FakeOpenAIServer, error, text

GOLD = "5"  # find user, read order and product, return one item
WRONG_REASON = "88"  # cancel_pending_order with the other reason
WRONG_ITEM = "13"  # return_delivered_order_items with one different item id
MALFORMED = "69"  # three broken tool calls, then the gold actions
RETRY = "83"  # the first agent call answers 500
USER_STOP = "84"  # the agent answers the customer's ###STOP### without exiting

JUDGE_OK_ONE = "24"  # one NL assertion, no actions
JUDGE_OK = "43"  # three assertions, plain JSON
JUDGE_FENCED = "63"  # three assertions, ```json fenced
JUDGE_MISSING = "95"  # no verdict for assertion 1
JUDGE_OUT_OF_RANGE = "110"  # index 7 instead of 2
JUDGE_NOT_BOOL = "89"  # passed: "yes" for assertion 2
JUDGE_NOT_JSON = "36"
JUDGE_EMPTY = "37"
JUDGE_DOWN = "38"  # 500 on every attempt
#: Judge replies without a readable verdict for every assertion: infrastructure errors of the item.
JUDGE_UNREADABLE = (JUDGE_MISSING, JUDGE_OUT_OF_RANGE, JUDGE_NOT_BOOL, JUDGE_NOT_JSON, JUDGE_EMPTY, JUDGE_DOWN)
JUDGED = (
    JUDGE_OK_ONE,
    JUDGE_OK,
    JUDGE_FENCED,
    JUDGE_MISSING,
    JUDGE_OUT_OF_RANGE,
    JUDGE_NOT_BOOL,
    JUDGE_NOT_JSON,
    JUDGE_EMPTY,
    JUDGE_DOWN,
)
ALL = (GOLD, WRONG_REASON, WRONG_ITEM, MALFORMED, RETRY, USER_STOP, *JUDGED)
RETRIES = 2


def name(task_id: str) -> str:
    return f"tau2_retail__{task_id}"


TASKS = Tasks.load("retail")
agent_requests = ScriptedModels.agent_requests
judge_requests = ScriptedModels.judge_requests


def _script(models: ScriptedModels) -> None:
    tasks = models.tasks
    # A wrong write: the cancel reason swapped.
    steps = models.gold_steps(WRONG_REASON)
    steps[0] = call("cancel_pending_order", {"order_id": "#W8835847", "reason": "no longer needed"})
    models.agent[WRONG_REASON] = AgentScript(steps)
    # A wrong write: one returned item swapped for another item of the same order.
    steps = models.gold_steps(WRONG_ITEM)
    gold = tasks.gold(WRONG_ITEM)
    ret = next(i for i, a in enumerate(gold) if a["name"] == "return_delivered_order_items")
    args = dict(gold[ret]["arguments"], item_ids=["4579334072", "6117189161", "1421289881"])
    steps[ret] = call("return_delivered_order_items", args)
    models.agent[WRONG_ITEM] = AgentScript(steps)
    # Malformed model output first, then the gold actions.
    models.agent[MALFORMED] = AgentScript(
        [
            call("get_order_details", '{"order_id": "#W2417020"'),  # not JSON
            call("delete_every_order", {}),  # no such tool
            call("get_order_details", {"order_id": 2417020}),  # fails the schema (not a string)
            *models.gold_steps(MALFORMED),
        ]
    )
    # One 500, then the real reply.
    models.agent_script(RETRY).faults[0] = [error(500, "fake upstream overloaded")]
    # The customer stops; the agent says goodbye but never calls EndConversationTool.
    models.agent[USER_STOP] = AgentScript(models.gold_steps(USER_STOP), closing=text("Alright, goodbye then."))
    # The judge.
    models.judge[JUDGE_FENCED] = text("```json\n" + judge_json([True, True, True]) + "\n```")
    models.judge[JUDGE_MISSING] = text(
        json.dumps(
            {
                "verdicts": [
                    {"index": 0, "passed": True, "reason": "said so"},
                    {"index": 2, "passed": True, "reason": "said so"},
                ]
            }
        )
    )
    models.judge[JUDGE_OUT_OF_RANGE] = text(
        json.dumps(
            {
                "verdicts": [
                    {"index": 0, "passed": True, "reason": "ok"},
                    {"index": 1, "passed": True, "reason": "ok"},
                    {"index": 7, "passed": True, "reason": "ok"},
                ]
            }
        )
    )
    models.judge[JUDGE_NOT_BOOL] = text(
        json.dumps(
            {
                "verdicts": [
                    {"index": 0, "passed": True, "reason": "ok"},
                    {"index": 1, "passed": True, "reason": "ok"},
                    {"index": 2, "passed": "yes", "reason": "ok"},
                    {"index": 3, "passed": True, "reason": "ok"},
                ]
            }
        )
    )
    models.judge[JUDGE_NOT_JSON] = text("All assertions look satisfied to me.")
    models.judge[JUDGE_EMPTY] = text("")
    models.judge[JUDGE_DOWN] = error(500, "fake judge is down")


def _produce(tmp: Path) -> Recorded:
    models = ScriptedModels(TASKS)
    _script(models)
    with FakeOpenAIServer() as server:
        models.install(server)
        run = run_pytest(
            [
                *(node(name(t)) for t in ALL),
                *model_options(server, sides=("agent", "user", "judge")),
                "--tau2-llm-retries",
                str(RETRIES),
            ],
            tmp,
        )
        return Recorded.of(run, server)


@pytest.fixture(scope="module")
def main(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return shared_once(tmp_path_factory, "llm_main", _produce)


def _debug(run: PytestRun) -> str:
    return f"exit {run.returncode}\n--- stdout (tail)\n{run.stdout[-6000:]}\n--- stderr (tail)\n{run.stderr[-3000:]}"


def _check(metrics: dict[str, Any], check_id: str) -> dict[str, Any]:
    return next(c for c in metrics["checks"] if c["id"] == check_id)


# ---- 1. a gold run passes, with usage, masked models, and no secret anywhere --------------------------


def test_run_finished_with_failures_only_where_scripted(main: Recorded) -> None:
    run = main.run
    assert run.returncode == 1, _debug(run)  # tests failed (not a usage error or a crash)
    passing = {GOLD, MALFORMED, RETRY, JUDGE_OK_ONE, JUDGE_OK, JUDGE_FENCED}
    for task_id in ALL:
        expected = "PASSED" if task_id in passing else "ERROR" if task_id in JUDGE_UNREADABLE else "FAILED"
        assert run.outcome_line(name(task_id)) == expected, f"{name(task_id)}\n{_debug(run)}"
    assert main.handler_errors == []


def test_gold_scenario_passes_with_usage_and_masked_models(main: Recorded) -> None:
    run = main.run
    metrics = run.metrics(name(GOLD))
    assert metrics["is_successful"] is True
    assert metrics["stop_reason"] == "exit" and metrics["clean_exit"] is True
    assert metrics["db_state_match"] is True and metrics["tool_errors"] == 0
    assert metrics["agent"] == "litellm:openai/agent" and metrics["user"] == "litellm:openai/user"

    requests = agent_requests(main.requests, GOLD)
    n_gold = len(TASKS.gold(GOLD))
    assert len(requests) == n_gold + 3  # gold calls, wrap-up, "anything else?", closing
    usage = metrics["token_usage"]
    # The fake server counts len(json.dumps(messages)) // 4 prompt tokens per request.
    expected_prompt = sum(max(1, len(json.dumps(r["messages"])) // 4) for r in requests)
    assert usage["agent"]["calls"] == len(requests)
    assert usage["agent"]["prompt_tokens"] == expected_prompt
    assert usage["agent"]["completion_tokens"] > 0
    assert usage["user"]["calls"] == 3 and usage["user"]["prompt_tokens"] > 0
    assert usage["judge"]["calls"] == 0  # no NL assertions in this task
    for side in ("agent", "user"):
        assert usage[side]["cost_usd"] is None, "an unpriced model must report cost null, never 0"

    for side in ("agent", "user", "judge"):
        recorded = metrics["models"][side]
        assert recorded["model"] == f"openai/{side}"
        assert recorded["args"]["api_key"] == "***"
        assert recorded["args"]["api_base"] == main.base_url
    props = run.properties(name(GOLD))
    assert props["is_successful"] == "true" and props["stop_reason"] == "exit"


def test_api_key_appears_in_no_output(main: Recorded) -> None:
    run = main.run
    assert SECRET in " ".join(run.args)  # it was really passed
    assert SECRET not in run.stdout
    assert SECRET not in run.stderr
    assert SECRET not in run.files_text()
    for path in run.results_dir.rglob("*"):
        assert SECRET not in path.name


def test_run_summary_counts_tokens_per_side_as_unpriced(main: Recorded) -> None:
    summary = main.run.summary()
    assert summary in main.run.stdout.replace("\r", "") or summary.splitlines()[0] in main.run.stdout
    agent_calls = sum(m["token_usage"]["agent"]["calls"] for m in (main.run.metrics(name(t)) for t in ALL))
    assert f"agent: {agent_calls} calls" in summary
    assert "cost unpriced" in summary and "$0.0000" not in summary


# ---- 2. a wrong write fails DB_STATE_MATCH with a diff naming the field ---------------------------------


@pytest.mark.parametrize(
    ("task_id", "needles"),
    [
        (WRONG_REASON, ["#W8835847", "cancel_reason", "'ordered by mistake'", "'no longer needed'"]),
        (WRONG_ITEM, ["#W5490111", "1421289881"]),
    ],
    ids=["cancel-reason", "item-id"],
)
def test_wrong_write_fails_db_state_match_with_a_diff(main: Recorded, task_id: str, needles: list[str]) -> None:
    run = main.run
    metrics = run.metrics(name(task_id))
    assert metrics["db_state_match"] is False and metrics["is_successful"] is False
    assert metrics["clean_exit"] is True  # only the DB is wrong
    message = _check(metrics, "db_state_match")["message"]
    assert "diff (expected -> actual)" in message
    for needle in needles:
        assert needle in message, message
    # The same text reaches the terminal (the sub-result's line and the item's failure) and the JUnit report.
    assert f"{node(name(task_id))} SUBFAILED[db_state_match] - " in run.stdout
    assert needles[1] in run.stdout
    case = run.testcase(name(task_id))
    failure_text = " ".join((f.get("message") or "") + (f.text or "") for f in case.iter("failure"))
    assert needles[1] in failure_text, failure_text[:2000]
    assert run.properties(name(task_id))["db_state_match"] == "false"


@pytest.mark.parametrize(
    ("task_id", "tool", "argument"),
    [(WRONG_REASON, "cancel_pending_order", "reason"), (WRONG_ITEM, "return_delivered_order_items", "item_ids")],
    ids=["cancel-reason", "item-id"],
)
def test_a_wrong_write_names_its_first_divergence(main: Recorded, task_id: str, tool: str, argument: str) -> None:
    """docs/review.md: the model path's wrong write is the first divergence, in metrics.json, the
    failure text (terminal and JUnit) and the run's failure modes."""
    run = main.run
    found = run.metrics(name(task_id))["first_divergence"]
    assert (found["kind"], found["tool"], list(found["argument_diff"])) == ("wrong_arguments", tool, [argument])
    gold = TASKS.gold(task_id)
    assert found["gold"]["arguments"] == next(a["arguments"] for a in gold if a["name"] == tool)
    assert f"first divergence from gold: turn {found['turn_idx']}: {tool} called with other arguments" in run.stdout
    case = run.testcase(name(task_id))
    assert found["summary"] in " ".join((f.get("message") or "") + (f.text or "") for f in case.iter("failure"))
    modes = json.loads((run.results_dir / "failure_modes.json").read_text("utf-8"))
    groups = {g["key"]: g["scenarios"] for g in modes["groups"]}
    assert name(task_id) in groups[f"wrong_arguments:{tool}({argument})"]
    # The customer's stop the agent did not close: every write followed the gold, the failure is elsewhere.
    assert run.metrics(name(USER_STOP))["first_divergence"] is None
    assert name(USER_STOP) in groups["signals:clean_exit"]


# ---- 3. malformed tool calls become error results; the conversation goes on ---------------------------------


def test_malformed_tool_calls_are_returned_as_errors_and_counted(main: Recorded) -> None:
    run = main.run
    metrics = run.metrics(name(MALFORMED))
    assert metrics["tool_errors"] == 3
    assert metrics["is_successful"] is True and metrics["stop_reason"] == "exit"
    expected = {
        1: ("Error: arguments for 'get_order_details' are not valid JSON",),
        2: ("Error: Tool 'delete_every_order' not found.",),
        # A number where upstream's tool expects an id string: upstream checks no types at call
        # time, so the lookup fails (docs/tau2-retail.md, "Tool arguments").
        3: ("Error: Order not found",),
    }
    for step, needles in expected.items():
        [request] = agent_requests(main.requests, MALFORMED, step)
        last = request["messages"][-1]
        assert last["role"] == "tool", last
        for needle in needles:
            assert needle in last["content"], last
    # The request after the bad JSON still carried the model's raw arguments back to it.
    [after_bad_json] = agent_requests(main.requests, MALFORMED, 1)
    echoed = after_bad_json["messages"][-2]["tool_calls"][0]["function"]["arguments"]
    assert echoed == '{"order_id": "#W2417020"'
    errors = [m for m in run.transcript(name(MALFORMED)) if m.get("role") == "tool" and m.get("error")]
    assert len(errors) == 3


# ---- 4. a 500 then success is retried ----------------------------------------------------------------------


def test_server_error_is_retried_and_the_scenario_passes(main: Recorded) -> None:
    requests = agent_requests(main.requests, RETRY, 0)
    assert len(requests) == 2
    assert requests[0]["messages"] == requests[1]["messages"]
    metrics = main.run.metrics(name(RETRY))
    assert metrics["is_successful"] is True and metrics["infrastructure_error"] is None
    # Usage counts completed calls only.
    assert metrics["token_usage"]["agent"]["calls"] == len(agent_requests(main.requests, RETRY)) - 1


# ---- 6. the judge -----------------------------------------------------------------------------------------


def _verdicts(main: Recorded, task_id: str) -> list[dict[str, Any]]:
    return list(main.run.judge_result(name(task_id))["nl_assertion_verdicts"])


@pytest.mark.parametrize("task_id", [JUDGE_OK_ONE, JUDGE_OK, JUDGE_FENCED], ids=["one", "three", "code-fenced"])
def test_judge_correct_reply_passes_every_assertion(main: Recorded, task_id: str) -> None:
    run = main.run
    assertions = TASKS.nl_assertions(task_id)
    verdicts = _verdicts(main, task_id)
    assert [v["passed"] for v in verdicts] == [True] * len(assertions)
    assert [v["assertion"] for v in verdicts] == assertions
    metrics = run.metrics(name(task_id))
    assert metrics["nl_assertion_pass_rate"] == 1.0 and metrics["is_successful"] is True
    for index in range(len(assertions)):
        assert f"{node(name(task_id))} SUBPASSED[nl_assertion[{index}]]" in run.stdout
    assert metrics["token_usage"]["judge"]["calls"] == 1


@pytest.mark.parametrize(
    ("task_id", "reason"),
    [
        (JUDGE_MISSING, "the judge gave no verdict for assertion 1"),
        (JUDGE_OUT_OF_RANGE, "index 7 outside 0..2"),
        (JUDGE_NOT_BOOL, "is not a boolean: 'yes'"),
        (JUDGE_NOT_JSON, "the judge reply is not valid JSON"),
        (JUDGE_EMPTY, "the judge returned an empty reply"),
        (JUDGE_DOWN, f"failed after {RETRIES + 1} attempts"),
    ],
    ids=["missing-entry", "index-out-of-range", "non-boolean", "not-json", "empty", "500-every-retry"],
)
def test_a_judge_that_cannot_grade_is_an_infrastructure_error(main: Recorded, task_id: str, reason: str) -> None:
    """Never the agent's fault: the item errors, naming the judge and the problem; no verdict is made up."""
    run = main.run
    assert run.outcome_line(name(task_id)) == "ERROR", _debug(run)
    metrics = run.metrics(name(task_id))
    error = metrics["infrastructure_error"]
    assert error is not None and "NL-assertion judge" in error and reason in error, error
    assert metrics["is_successful"] is False
    assert metrics["stop_reason"] == "exit" and metrics["clean_exit"] is True  # the conversation is left as it ended
    assert run.judge_result(name(task_id))["error"] == error  # with what the judge was sent and answered
    assert metrics["nl_assertion_pass_rate"] is None  # not 0.0: nothing was graded
    assert metrics["db_state_match"] is True  # the agent itself did everything right
    case = run.testcase(name(task_id))
    assert [e.tag for e in case if e.tag in ("error", "failure")] == ["error"]
    assert f"{node(name(task_id))} SUBFAILED[nl_assertion[0]]" not in run.stdout


def test_judge_500_is_retried_then_given_up(main: Recorded) -> None:
    requests = judge_requests(main.requests, JUDGE_DOWN)
    assert len(requests) == RETRIES + 1
    error = main.run.metrics(name(JUDGE_DOWN))["infrastructure_error"]
    assert "the NL-assertion judge failed, not the agent" in error
    assert "InternalServerError" in error and "fake judge is down" in error


def test_judge_result_records_the_judge_input(main: Recorded) -> None:
    result = main.run.judge_result(name(JUDGE_OK))
    assert result["model"] == "openai/judge"
    system, user = result["judge_input"]
    assert system["role"] == "system" and "assertion" in system["content"]
    assert "## nl_assertions" in user["content"]
    for index, assertion in enumerate(TASKS.nl_assertions(JUDGE_OK)):
        assert f"{index}. {assertion}" in user["content"]
    assert f"[case {JUDGE_OK}]" in user["content"]  # the transcript, with the customer's opening
    assert "calls tool modify_user_address(" in user["content"]  # ... and the agent's tool calls
    # What the judge model was sent is exactly the recorded input.
    [request] = judge_requests(main.requests, JUDGE_OK)
    assert [m["content"] for m in request["messages"]] == [system["content"], user["content"]]
    assert result["raw_reply"] == judge_json([True, True, True])


def test_run_summary_counts_nl_assertions(main: Recorded) -> None:
    passed = total = 0
    for task_id in set(JUDGED) - set(JUDGE_UNREADABLE):
        verdicts = _verdicts(main, task_id)
        total += len(verdicts)
        passed += sum(v["passed"] is True for v in verdicts)
    assert (passed, total) == (7, 7)
    line = f"NL-Assertion pass: {passed}/{total} ({100 * passed / total:.1f}%) assertions"
    assert line in main.run.summary()
    assert line in main.run.stdout


def test_scenarios_without_nl_assertions_do_not_call_the_judge(main: Recorded) -> None:
    judged = {t for t in ALL if judge_requests(main.requests, t)}
    assert judged == set(JUDGED)
    metrics = main.run.metrics(name(GOLD))
    assert metrics["nl_assertion_pass_rate"] is None
    assert not (main.run.results_dir / name(GOLD) / "judge_result.json").exists()


# ---- 7. how conversations end --------------------------------------------------------------------------------


def test_stop_token_then_agent_exit_is_a_clean_exit(main: Recorded) -> None:
    transcript = main.run.transcript(name(GOLD))
    stop = next(i for i, m in enumerate(transcript) if m["role"] == "user" and "###STOP###" in (m["content"] or ""))
    closing = transcript[stop + 1]
    assert closing["role"] == "assistant" and closing["tool_calls"][0]["name"] == "EndConversationTool"
    assert transcript[-1]["role"] == "tool" and transcript[-1]["name"] == "EndConversationTool"
    assert main.run.metrics(name(GOLD))["stop_reason"] == "exit"


def test_stop_token_without_agent_exit_is_user_stop(main: Recorded) -> None:
    run = main.run
    metrics = run.metrics(name(USER_STOP))
    assert metrics["stop_reason"] == "user_stop"
    assert metrics["clean_exit"] is False and metrics["db_state_match"] is True
    assert metrics["is_successful"] is False
    message = _check(metrics, "clean_exit")["message"]
    assert "stop_reason: user_stop" in message
    assert f"{node(name(USER_STOP))} SUBFAILED[clean_exit] - " in run.stdout
    last = run.transcript(name(USER_STOP))[-1]
    assert last == {**last, "role": "assistant", "content": "Alright, goodbye then."}
    assert run.properties(name(USER_STOP))["clean_exit"] == "false"


def test_results_dir_has_one_folder_per_scenario(main: Recorded) -> None:
    folders = {p.name for p in main.run.results_dir.iterdir() if p.is_dir()}
    assert folders == {name(t) for t in ALL}
    all_metrics = json.loads((main.run.results_dir / "all_metrics.json").read_text("utf-8"))
    assert sorted(m["scenario"] for m in all_metrics["scenarios"]) == sorted(name(t) for t in ALL)


def test_junit_report_comes_without_warnings(main: Recorded) -> None:
    assert "record_property is incompatible with junit_family" not in main.run.stdout
