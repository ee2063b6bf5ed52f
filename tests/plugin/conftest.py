"""Acceptance-test helpers: a throw-away pytest project in a pytester directory, run in a subprocess.

Every run happens in a fresh ``python -m pytest`` process, so the scenario and tool registries
of one test never leak into another. Plugin auto-loading is turned off and the plugin is
loaded by its entry-point name (``-p tau2``), which keeps each run under a second; one test
(test_collection.py) checks that a plain run with auto-loading finds the plugin by itself.
"""

from __future__ import annotations

import json
import re
import shutil
import textwrap
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_tau2.report.metrics import metrics_schema
from tests.support import junit

REPO = Path(__file__).resolve().parents[2]
RESTAURANT_SCENARIOS = (REPO / "scenarios" / "restaurant.py").read_text("utf-8")
"""The repository's worked example, run as a user's project would run it."""

ITEM_LINE = re.compile(
    r"^(?P<nodeid>\S+::test_scenario\[(?P<name>[^\]]+)\]) (?P<outcome>PASSED|FAILED|SKIPPED|ERROR)\b"
)

LAB_DOMAIN = '''
"""A tiny domain for controlled outcomes: one value store, one write tool, a scripted agent."""

from __future__ import annotations

from typing import Any, ClassVar

from pytest_tau2 import (
    InfrastructureError,
    Reply,
    Resources,
    Scenario,
    SuccessSignal,
    Tool,
    ToolCall,
    ToolError,
)


class LabTool(Tool):
    abstract = True
    namespace = "lab"


class SetValue(LabTool):
    name = "set_value"
    description = "Set a stored value."
    parameters = {
        "type": "object",
        "properties": {"key": {"type": "string"}, "value": {"type": "integer"}},
        "required": ["key", "value"],
        "additionalProperties": False,
    }
    action_name = "set_value"
    mutates_state = True

    def run(self, **arguments: Any) -> Any:
        values = self.db["values"]
        if arguments["key"] not in values:
            raise ToolError(f"unknown key {arguments['key']!r}")
        values[arguments["key"]]["value"] = arguments["value"]
        return {"key": arguments["key"], "value": arguments["value"]}


class ScriptedAgent:
    """Plays a fixed list of steps: ("say", text), ("call", name, arguments), ("exit", text), ("crash", text)."""

    def __init__(self, steps: list[tuple[Any, ...]]) -> None:
        self.steps = list(steps)

    async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        step = self.steps.pop(0) if self.steps else ("exit", "Goodbye.")
        if step[0] == "say":
            return Reply(text=step[1])
        if step[0] == "call":
            return Reply(tool_calls=[ToolCall(step[1], step[2])])
        if step[0] == "crash":
            raise InfrastructureError(step[1])
        return Reply(text=step[1], tool_calls=[ToolCall("EndConversationTool", {})])


class LabBase(Scenario):
    """Scored on the action, the final DB and a clean exit; the oracle replays gold_actions."""

    success_signals: ClassVar[tuple[SuccessSignal, ...]] = (
        SuccessSignal.ACTION_MATCH,
        SuccessSignal.DB_STATE_MATCH,
        SuccessSignal.CLEAN_EXIT,
    )
    reference_answer: ClassVar[Any] = {"name": "set_value", "key": "x", "value": 7}
    agent_script: ClassVar[list[tuple[Any, ...]] | None] = None
    """Steps of a ScriptedAgent; None: the run's built-in agent (the oracle offline)."""

    def setup_shared_state(self, state: dict[str, Any], side: str) -> None:
        state["db_path"] = "lab/values.json"

    @property
    def agent_resources(self) -> Resources:
        return Resources(tools={"SetValue": {}, "EndConversationTool": {}})

    def gold_actions(self) -> list[dict[str, Any]] | None:
        return [{"name": "set_value", "arguments": {"key": "x", "value": 7}, "requestor": "assistant"}]


WRONG_VALUE = [("say", "Hello!"), ("call", "set_value", {"key": "x", "value": 8}), ("say", "Done."), ("exit", "Bye.")]
RIGHT_VALUE = [("say", "Hello!"), ("call", "set_value", {"key": "x", "value": 7}), ("say", "Done."), ("exit", "Bye.")]
'''

# Lab scenarios with a passing item (one N/A sub-result) and a failing one.
RIGHT_AND_WRONG = """
@register_eval_scenario
class Right(LabBase):
    name = "lab__right"
    success_signals = (SuccessSignal.ACTION_MATCH, SuccessSignal.NL_ASSERTION, SuccessSignal.CLEAN_EXIT)
    nl_assertions = ["The agent confirms the new value."]  # no judge: an N/A sub-result
    agent_script = RIGHT_VALUE

@register_eval_scenario
class Wrong(LabBase):
    name = "lab__wrong"
    agent_script = WRONG_VALUE
"""

LAB_CONFTEST = '''
import pytest

import lab_scenarios  # noqa: F401  (registers the scenarios)
from pytest_tau2.run import participants


@pytest.fixture
def tau2_agent(tau2_scenario, tau2_context):
    """A scenario with an agent_script gets a scripted agent; the others the run's agent."""
    from lab_domain import ScriptedAgent

    script = getattr(tau2_scenario, "agent_script", None)
    if script is None:
        return participants.make_agent(tau2_context)
    return ScriptedAgent(script)
'''

SCENARIO_TEST_MODULE = (
    '"""Collects every registered scenario."""\n\nfrom pytest_tau2 import test_scenario  # noqa: F401\n'
)


@dataclass
class Run:
    """One finished pytest run of a project."""

    result: pytest.RunResult
    results_dir: Path

    @property
    def stdout(self) -> str:
        return self.result.stdout.str()

    @property
    def stderr(self) -> str:
        return self.result.stderr.str()

    def items(self) -> dict[str, str]:
        """Scenario name -> PASSED/FAILED/SKIPPED/ERROR, from the ``-v`` lines."""
        found: dict[str, str] = {}
        for line in self.result.outlines:
            match = ITEM_LINE.match(line)
            if match:
                found[match["name"]] = match["outcome"]
        return found

    def metrics(self, name: str) -> dict[str, Any]:
        return json.loads((self.results_dir / name / "metrics.json").read_text("utf-8"))

    def summary(self) -> str:
        return (self.results_dir / "all_summary.txt").read_text("utf-8")

    def checks(self, name: str) -> dict[str, dict[str, Any]]:
        return {c["id"]: c for c in self.metrics(name)["checks"]}


class Project:
    """A user's repository: a scenarios module, a one-line test module, a conftest, data files."""

    def __init__(self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pytester = pytester
        self.monkeypatch = monkeypatch
        self.path = pytester.path
        self.results_dir = pytester.path / "tau2-out"
        self._runs = 0

    def restaurant(self, extra: str = "") -> Project:
        """The repository's Pizza Palace scenarios (plus ``extra`` code in the same module)."""
        self.write("data/restaurant/orders.json", '{"orders": []}')
        self.write("restaurant_scenarios.py", RESTAURANT_SCENARIOS + textwrap.dedent(extra))
        self.write("conftest.py", "import restaurant_scenarios  # noqa: F401\n")
        self.write("test_scenarios.py", SCENARIO_TEST_MODULE)
        return self

    def lab(self, scenarios: str) -> Project:
        """The lab domain with the given scenario classes (``from lab_domain import *`` is in scope)."""
        self.write("data/lab/values.json", '{"values": {"x": {"value": 0}}}')
        self.write("lab_domain.py", LAB_DOMAIN)
        header = (
            "from typing import Any, ClassVar\n\n"
            "from pytest_tau2 import *  # noqa: F403\n"
            "from lab_domain import *  # noqa: F403\n"
        )
        self.write("lab_scenarios.py", header + textwrap.dedent(scenarios))
        self.write("conftest.py", LAB_CONFTEST)
        self.write("test_scenarios.py", SCENARIO_TEST_MODULE)
        return self

    def write(self, relative: str, text: str) -> Path:
        """Write ``relative``; a rewrite also drops the bytecode cached beside it.

        Python (and pytest's assertion rewriter) trust a cached module while the source's size and
        mtime in whole seconds are unchanged, so a same-length edit within the second of the last run
        (``WRONG_VALUE`` -> ``RIGHT_VALUE``) would otherwise run the old code.
        """
        target = self.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            shutil.rmtree(target.parent / "__pycache__", ignore_errors=True)
        target.write_text(text, encoding="utf-8")
        return target

    def run(self, *args: str, autoload: bool = False, xdist: bool = False, verbose: bool = True) -> Run:
        """``python -m pytest [-v]`` in the project, with results under a fresh ``--tau2-results-dir``."""
        self._runs += 1
        results = self.path / f"tau2-out-{self._runs}"
        plugins = [] if autoload else ["-p", "tau2", *(["-p", "xdist"] if xdist else [])]
        self.monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "" if autoload else "1")
        result = self.pytester.runpytest_subprocess(
            *plugins, "-p", "no:cacheprovider", *(["-v"] if verbose else []), f"--tau2-results-dir={results}", *args
        )
        run = Run(result, results)
        validate_results(results)
        return run


def validate_results(results: Path) -> None:
    """Every metrics.json a run writes must match the shipped JSON Schema."""
    validator = jsonschema.Draft202012Validator(metrics_schema())
    for path in sorted(results.glob("*/metrics.json")):
        errors = [
            f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(json.loads(path.read_text("utf-8")))
        ]
        assert not errors, f"{path} does not match metrics.schema.json:\n" + "\n".join(errors)


def junit_cases(path: Path, *, valid: bool = True) -> dict[str, dict[str, Any]]:
    """testcase name -> {"properties": {...}, "outcome": passed/failure/error/skipped, "out": system-out}.

    The file is checked against junit-10.xsd first (``valid=False``: a shape that is not meant to
    be, ``--tau2-junit-properties testcase``); properties are read wherever the option put them.
    """
    if valid:
        junit.validate(path)
    cases: dict[str, dict[str, Any]] = {}
    root = ET.parse(path).getroot()
    for case in root.iter("testcase"):
        properties = junit.scenario_properties(root, case)
        outcomes = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        assert case.get("name") not in cases, f"two testcases named {case.get('name')}"
        outcome = outcomes[0] if outcomes else "passed"
        cases[str(case.get("name"))] = {"properties": properties, "outcome": outcome, "out": junit.system_out(case)}
    return cases


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Project:
    """An empty project; offline: no model configured through the environment."""
    for name in ("TAU2_AGENT_MODEL", "TAU2_USER_MODEL", "TAU2_JUDGE_MODEL", "TAU2_EVAL_DATA_ROOT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return Project(pytester, monkeypatch)
