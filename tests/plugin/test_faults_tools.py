"""Fault matrix, tools and user simulators of a user's domain (docs/faults.md).

A user's tools can end the process (``sys.exit()``, ``KeyboardInterrupt``), return values no
JSON can hold (tuple keys, a cycle, a failing ``__str__``), or block; a user simulator can call
its tools forever. Each is an error of its own scenario naming the tool (or the simulator) and
what it did; the rest of the sweep runs; items run == all_metrics.json entries == JUnit testcases.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugin.conftest import LAB_CONFTEST, Project, junit_cases

TOOLS = '''
import sys
import time


class ExitNow(LabTool):
    name = "exit_now"
    def run(self, **arguments: Any) -> Any:
        sys.exit(3)


class Interrupt(LabTool):
    name = "interrupt"
    def run(self, **arguments: Any) -> Any:
        raise KeyboardInterrupt


class TupleKeys(LabTool):
    name = "tuple_keys"
    def run(self, **arguments: Any) -> Any:
        return {(1, 2): "pair"}


class Cycle(LabTool):
    name = "cycle"
    def run(self, **arguments: Any) -> Any:
        loop: list[Any] = []
        loop.append(loop)
        return loop


class _NoText:
    def __str__(self) -> str:
        raise RuntimeError("no text for you")


class BadStr(LabTool):
    name = "bad_str"
    def run(self, **arguments: Any) -> Any:
        return {"value": _NoText()}


class SlowOp(LabTool):
    """Blocks 4 s on its first call in the process (the conversation's); the gold replay's is quick."""
    name = "slow_op"
    calls = 0
    def run(self, **arguments: Any) -> Any:
        SlowOp.calls += 1
        if SlowOp.calls == 1:
            time.sleep(4.0)
        return "finally done"


class Peek(LabTool):
    name = "peek"
    def run(self, **arguments: Any) -> Any:
        return self.db["values"]["x"]["value"]


ALL_TOOLS = {"SetValue": {}, "EndConversationTool": {}, "ExitNow": {}, "Interrupt": {}, "TupleKeys": {},
             "Cycle": {}, "BadStr": {}, "SlowOp": {}}


class Hostile(LabBase):
    description = "Set x to 7."

    @property
    def agent_resources(self) -> Resources:
        return Resources(tools=ALL_TOOLS)


def _calls(tool: str) -> list[tuple[Any, ...]]:
    return [("say", "Hello!"), ("call", tool, {}), ("call", "set_value", {"key": "x", "value": 7}),
            ("say", "Done."), ("exit", "Bye.")]
'''

SCENARIOS = '''
@register_eval_scenario
class ExitScenario(Hostile):
    name = "lab__exit"
    agent_script = _calls("exit_now")

@register_eval_scenario
class InterruptScenario(Hostile):
    name = "lab__interrupt"
    agent_script = _calls("interrupt")

@register_eval_scenario
class TupleScenario(Hostile):
    name = "lab__tuple_keys"
    agent_script = _calls("tuple_keys")

@register_eval_scenario
class CycleScenario(Hostile):
    name = "lab__cycle"
    agent_script = _calls("cycle")

@register_eval_scenario
class BadStrScenario(Hostile):
    name = "lab__bad_str"
    agent_script = _calls("bad_str")

@register_eval_scenario
class Fine(Hostile):
    name = "lab__fine"
    agent_script = RIGHT_VALUE

@register_eval_scenario
class ChattyUser(Hostile):
    """The user simulator calls its own tool forever (its conftest fixture below)."""
    name = "lab__chatty_user"
    agent_script = RIGHT_VALUE

    @property
    def user_resources(self) -> Resources:
        return Resources(tools={"Peek": {}})
'''

CHATTY_USER = """

class _ChattyUser:
    async def respond(self, messages, tools):
        from pytest_tau2 import Reply, ToolCall
        return Reply(tool_calls=[ToolCall("peek", {})])


@pytest.fixture
def tau2_user(tau2_scenario, tau2_context):
    if tau2_scenario.name == "lab__chatty_user":
        return _ChattyUser()
    return participants.make_user(tau2_context)
"""

PROCESS_ENDERS = {
    "lab__exit": "the agent's tool 'exit_now' (lab_scenarios.ExitNow) called sys.exit(3)",
    "lab__interrupt": "the agent's tool 'interrupt' (lab_scenarios.Interrupt) raised KeyboardInterrupt",
    "lab__tuple_keys": "the agent's tool 'tuple_keys' (lab_scenarios.TupleKeys) returned a value that cannot be "
    "written as text: TypeError: keys must be str",
    "lab__cycle": "the agent's tool 'cycle' (lab_scenarios.Cycle) returned a value that cannot be written as text: "
    "ValueError: Circular reference detected",
    "lab__bad_str": "the agent's tool 'bad_str' (lab_scenarios.BadStr) returned a value that cannot be written as "
    "text: RuntimeError: no text for you",
}


def _scenario_names(results: Path) -> list[str]:
    data = json.loads((results / "all_metrics.json").read_text("utf-8"))
    return sorted(str(e["scenario"]) for e in [*data["scenarios"], *data["errors_without_result"]])


def _invariant(run_dir: Path, junit: Path, items: dict[str, str]) -> None:
    cases = sorted(name.removeprefix("test_scenario[").removesuffix("]") for name in junit_cases(junit))
    assert sorted(items) == cases == _scenario_names(run_dir), (sorted(items), cases, _scenario_names(run_dir))


@pytest.fixture
def hostile_tools(project: Project) -> Project:
    project.lab(TOOLS + SCENARIOS)
    (project.path / "conftest.py").write_text(LAB_CONFTEST + CHATTY_USER, "utf-8")
    return project


def test_tools_that_end_the_process_or_return_junk_are_errors_of_their_scenario(hostile_tools: Project) -> None:
    junit = hostile_tools.path / "junit.xml"
    run = hostile_tools.run(f"--junitxml={junit}", "--tau2-max-user-steps", "25")
    out = run.stdout
    assert "INTERNALERROR" not in out and "Interrupted" not in out, out[-4000:]
    items = run.items()
    assert items["lab__fine"] == "PASSED", out[-4000:]
    for name, needle in PROCESS_ENDERS.items():
        assert items[name] == "ERROR", (name, out[-4000:])
        assert needle in str(run.metrics(name)["infrastructure_error"]), run.metrics(name)["infrastructure_error"]
    _invariant(run.results_dir, junit, items)

    # The user simulator that never stops: its own step limit, its own stop reason, not the agent's fault.
    chatty = run.metrics("lab__chatty_user")
    assert items["lab__chatty_user"] == "ERROR"
    assert chatty["stop_reason"] == "user_max_steps"
    assert "the user simulator took 25 steps" in chatty["infrastructure_error"]
    assert "not the agent's" in chatty["infrastructure_error"]
    assert "CLEAN_EXIT" not in json.dumps(junit_cases(junit)["test_scenario[lab__chatty_user]"].get("failure") or "")


SLOW = '''
@register_eval_scenario
class Slow(LabBase):
    """The oracle calls a tool that blocks for 4 s; the scenario has 1 s."""
    name = "lab__slow"
    max_duration = 1.0

    @property
    def agent_resources(self) -> Resources:
        return Resources(tools={"SlowOp": {}, "SetValue": {}, "EndConversationTool": {}})

    def gold_actions(self) -> list[dict[str, Any]] | None:
        return [{"name": "slow_op", "arguments": {}, "requestor": "assistant"},
                {"name": "set_value", "arguments": {"key": "x", "value": 7}, "requestor": "assistant"}]


@register_eval_scenario
class Quick1(LabBase):
    name = "lab__quick1"

@register_eval_scenario
class Quick2(LabBase):
    name = "lab__quick2"

@register_eval_scenario
class Quick3(LabBase):
    name = "lab__quick3"
'''


@pytest.fixture
def slow_tools(project: Project) -> Project:
    project.lab(TOOLS + SLOW)
    (project.path / "conftest.py").write_text("import lab_scenarios  # noqa: F401\n", "utf-8")
    return project


@pytest.mark.parametrize("concurrency", ["1", "4"])
def test_a_blocking_tool_is_stopped_at_the_deadline_and_stalls_no_one(slow_tools: Project, concurrency: str) -> None:
    junit = slow_tools.path / "junit.xml"
    run = slow_tools.run(f"--junitxml={junit}", "--tau2-concurrency", concurrency)
    items = run.items()
    assert items["lab__slow"] == "ERROR", run.stdout[-4000:]
    slow = run.metrics("lab__slow")
    assert slow["stop_reason"] == "max_duration"
    message = slow["infrastructure_error"]
    assert "the agent's tool 'slow_op' was still running when max_duration (1 s) passed" in message, message
    assert slow["duration_s"] < 3.0  # the 4 s tool did not hold the scenario past its deadline
    for name in ("lab__quick1", "lab__quick2", "lab__quick3"):
        assert items[name] == "PASSED", run.stdout[-4000:]
        # Never stalled: held by the blocking tool it would take 3 s more (the tool runs 4 s, the
        # deadline is 1 s); the bound leaves room for a loaded machine.
        assert run.metrics(name)["duration_s"] < 2.5, (name, run.metrics(name)["duration_s"])
    _invariant(run.results_dir, junit, items)
