"""Scripted models for end-to-end runs against the loopback fake OpenAI server.

A pytest run in a subprocess has one model name per side (``openai/agent``, ``openai/user``,
``openai/judge``), but several scenarios. The handlers here tell scenarios apart from the
request itself, statelessly, so they also work under ``-n 8``:

- the **user** model finds its task from its system prompt (the ``<scenario>`` block that
  pytest-tau2 builds from the task's instructions) and opens with ``[case <id>] <reason>``;
- the **agent** model reads the task id from the first customer message (that opening) and
  its position from the number of assistant messages it has already sent;
- the **judge** model finds the task id in the transcript it is asked to grade.

Per task, a test can replace any step, make a step fail a few times first (:attr:`faults`),
change the closing turn, or take over a side entirely (:attr:`override`).

Used by ``tests/e2e/test_llm_*.py`` and ``bench/bench_llm_latency.py``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pytest_tau2.domains.tau2_common.prompts import scenario_block
from tests.support.fake_openai import FakeOpenAIServer, Reply, text, tool_calls

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR") or "/work/shared/tau2-data")
STOP = "###STOP###"
CASE = re.compile(r"\[case ([A-Za-z0-9_.-]+)\]")
SCENARIO_BLOCK = re.compile(r"<scenario>\n(.*)\n</scenario>", re.DOTALL)
NODE = "scenarios/test_scenarios.py::test_scenario[{}]"

#: A key that no built-in pattern (``sk-...``, ``Bearer ...``) would catch: only the
#: per-model secret list can mask it, so finding it anywhere is a real leak.
SECRET = "tau2e2e-Zq8xW3vLk0pYt7Rm"
#: Gold actions that end the conversation: the scripted agent performs them as its closing turn,
#: after speaking, as the offline oracle does (an agent that transfers without a word is stalled).
ENDING_TOOLS = frozenset({"transfer_to_human_agents"})


# ---- tasks ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tasks:
    """The upstream tasks of one tau2 domain, indexed by id and by their user ``<scenario>`` block."""

    domain: str
    by_id: dict[str, dict[str, Any]]
    by_block: dict[str, str]

    @classmethod
    @cache
    def load(cls, domain: str = "retail") -> Tasks:
        path = DATA_DIR / "tau2" / "domains" / domain / "tasks.json"
        tasks = {str(t["id"]): t for t in json.loads(path.read_text("utf-8"))}
        blocks: dict[str, str] = {}
        for task_id, task in tasks.items():
            block = scenario_block(task.get("user_scenario") or {})
            blocks.setdefault(block, task_id)  # a duplicate block keeps the first id
        return cls(domain, tasks, blocks)

    def gold(self, task_id: str) -> list[dict[str, Any]]:
        """The task's gold actions as ``{"name", "arguments"}`` (agent side only)."""
        actions = (self.by_id[task_id].get("evaluation_criteria") or {}).get("actions") or []
        return [
            {"name": a["name"], "arguments": a.get("arguments") or {}}
            for a in actions
            if (a.get("requestor") or "assistant") == "assistant"
        ]

    def nl_assertions(self, task_id: str) -> list[str]:
        return list((self.by_id[task_id].get("evaluation_criteria") or {}).get("nl_assertions") or [])

    def opening(self, task_id: str) -> str:
        instructions = (self.by_id[task_id].get("user_scenario") or {}).get("instructions") or {}
        reason = instructions.get("reason_for_call", "") if isinstance(instructions, dict) else str(instructions)
        return f"[case {task_id}] {reason}".strip()

    def task_of_user_request(self, request: dict[str, Any]) -> str | None:
        system = _content(request["messages"][0]) if request.get("messages") else ""
        found = SCENARIO_BLOCK.search(system)
        return self.by_block.get(found.group(1)) if found else None


# ---- reading a request -------------------------------------------------------------------------


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # content parts
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def first_customer_text(request: dict[str, Any]) -> str:
    return next((_content(m) for m in request.get("messages", []) if m.get("role") == "user"), "")


def task_of_agent_request(request: dict[str, Any]) -> str | None:
    found = CASE.search(first_customer_text(request))
    return found.group(1) if found else None


def task_of_judge_request(request: dict[str, Any]) -> str | None:
    for message in request.get("messages", []):
        if message.get("role") == "user":
            found = CASE.search(_content(message))
            if found:
                return found.group(1)
    return None


def agent_step(request: dict[str, Any]) -> int:
    """How many replies the agent has already sent after the customer's first message."""
    messages = request.get("messages", [])
    first_user = next((i for i, m in enumerate(messages) if m.get("role") == "user"), len(messages))
    return sum(1 for m in messages[first_user:] if m.get("role") == "assistant")


def own_replies(request: dict[str, Any]) -> int:
    """How many replies this side has sent (its ``assistant`` messages; a greeting counts)."""
    return sum(1 for m in request.get("messages", []) if m.get("role") == "assistant")


def last_message(request: dict[str, Any]) -> dict[str, Any]:
    messages = request.get("messages") or [{}]
    return dict(messages[-1])


def customer_stopped(request: dict[str, Any]) -> bool:
    last = last_message(request)
    return last.get("role") == "user" and STOP in _content(last)


# ---- replies ----------------------------------------------------------------------------------


def call(name: str, arguments: Any, content: str | None = None) -> Reply:
    """One tool call (``arguments`` a dict, or a raw string sent verbatim)."""
    return tool_calls([(name, arguments)], content=content)


def end_call(content: str = "Thank you for contacting us. Goodbye!") -> Reply:
    return call("EndConversationTool", {}, content=content)


def judge_json(verdicts: Sequence[bool], *, reason: str = "the transcript shows it") -> str:
    return json.dumps({"verdicts": [{"index": i, "passed": ok, "reason": reason} for i, ok in enumerate(verdicts)]})


# ---- scripts ----------------------------------------------------------------------------------


@dataclass
class AgentScript:
    """What the agent model does in one task, by step (one step = one model reply)."""

    steps: list[Reply]
    idle: Reply = field(default_factory=lambda: text("Is there anything else I can help you with?"))
    """Served once the steps are used up and the customer has not stopped."""
    closing: Reply = field(default_factory=end_call)
    """Served when the customer's last message holds ``###STOP###``."""
    faults: dict[int, list[Reply]] = field(default_factory=dict)
    """Replies served (once each, in order) for a step before its real reply: 500s, hangs."""
    override: Callable[[dict[str, Any]], Reply] | None = None


@dataclass
class UserScript:
    replies: list[str]
    """By the number of replies already sent; the last one repeats."""
    override: Callable[[dict[str, Any]], Reply] | None = None


class ScriptedModels:
    """Agent, user and judge handlers for a set of tau2 tasks; gold behaviour unless told otherwise.

    ``install(server)`` registers the three handlers (model names ``agent``, ``user``,
    ``judge``). Unknown tasks get the default (gold) scripts, so a run over all 114 retail
    tasks needs no per-task setup.
    """

    def __init__(
        self, tasks: Tasks | None = None, *, wrap_up: Sequence[str] = ("All done: your request is processed.",)
    ):
        self.tasks = tasks or Tasks.load("retail")
        self.wrap_up = list(wrap_up)
        self.agent: dict[str, AgentScript] = {}
        self.user: dict[str, UserScript] = {}
        self.judge: dict[str, Reply | Callable[[dict[str, Any]], Reply]] = {}
        self._lock = threading.Lock()

    # -- defaults -------------------------------------------------------------------------------

    def gold_steps(self, task_id: str) -> list[Reply]:
        """The gold calls, one per step, then the wrap-up text (a gold transfer is kept for the closing)."""
        calls = [call(a["name"], a["arguments"]) for a in self.tasks.gold(task_id) if a["name"] not in ENDING_TOOLS]
        return calls + [text(t) for t in self.wrap_up]

    def gold_closing(self, task_id: str) -> Reply:
        """The reply to the customer's stop: the gold transfer if the task has one, else EndConversationTool."""
        ending = [a for a in self.tasks.gold(task_id) if a["name"] in ENDING_TOOLS]
        if ending:
            return call(ending[0]["name"], ending[0]["arguments"], content="I am transferring you to a human agent.")
        return end_call()

    def agent_script(self, task_id: str) -> AgentScript:
        with self._lock:
            script = self.agent.get(task_id)
            if script is None:
                script = self.agent[task_id] = AgentScript(self.gold_steps(task_id), closing=self.gold_closing(task_id))
            return script

    def user_script(self, task_id: str) -> UserScript:
        with self._lock:
            script = self.user.get(task_id)
            if script is None:
                script = self.user[task_id] = UserScript(
                    [self.tasks.opening(task_id), "Yes, please go ahead.", f"Thanks, that is all. {STOP}"]
                )
            return script

    # -- handlers -------------------------------------------------------------------------------

    def agent_handler(self, request: dict[str, Any]) -> Reply:
        task_id = task_of_agent_request(request)
        if task_id is None:
            return text("Sorry, which case is this about?")
        script = self.agent_script(task_id)
        if script.override is not None:
            return script.override(request)
        step = agent_step(request)
        with self._lock:
            pending = script.faults.get(step)
            if pending:
                return pending.pop(0)
        if customer_stopped(request):
            return script.closing
        return script.steps[step] if step < len(script.steps) else script.idle

    def user_handler(self, request: dict[str, Any]) -> Reply:
        task_id = self.tasks.task_of_user_request(request)
        if task_id is None:
            return text(f"I do not know why I am calling. {STOP}")
        script = self.user_script(task_id)
        if script.override is not None:
            return script.override(request)
        sent = own_replies(request)
        return text(script.replies[min(sent, len(script.replies) - 1)])

    def judge_handler(self, request: dict[str, Any]) -> Reply:
        task_id = task_of_judge_request(request)
        scripted = self.judge.get(task_id or "")
        if scripted is None:
            n = len(self.tasks.nl_assertions(task_id)) if task_id in self.tasks.by_id else 0
            return text(judge_json([True] * n))
        return scripted(request) if callable(scripted) else scripted

    def install(self, server: FakeOpenAIServer) -> None:
        server.add_handler("agent", self.agent_handler)
        server.add_handler("user", self.user_handler)
        server.add_handler("judge", self.judge_handler)

    # -- inspection -----------------------------------------------------------------------------

    @staticmethod
    def agent_requests(
        requests: Sequence[dict[str, Any]], task_id: str, step: int | None = None
    ) -> list[dict[str, Any]]:
        """The agent-model requests of one task (optionally of one step), in arrival order."""
        return [
            r
            for r in for_model(requests, "agent")
            if task_of_agent_request(r) == task_id and (step is None or agent_step(r) == step)
        ]

    @staticmethod
    def judge_requests(requests: Sequence[dict[str, Any]], task_id: str) -> list[dict[str, Any]]:
        return [r for r in for_model(requests, "judge") if task_of_judge_request(r) == task_id]


def for_model(requests: Sequence[dict[str, Any]], model: str) -> list[dict[str, Any]]:
    return [r for r in requests if str(r.get("model", "")).removeprefix("openai/") == model]


# ---- running pytest in a subprocess ----------------------------------------------------------------


NESTED_PLUGINS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTEST_ADDOPTS": "-p tau2 -p xdist"}
"""A nested run loads the plugins it uses by name: pytest-tau2, and xdist for ``-n``. Autoloading
every installed plugin (hypothesis, anyio with trio, benchmark, rerunfailures, teamcity, ...) cost
about 0.23 s of CPU at each of the suite's hundreds of nested starts. Loading pytest-tau2 through
its entry point is still run by tests/plugin (``Project.run(autoload=True)``) and tests/docs."""


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment of a nested pytest run: offline litellm, the data folder, no outer options."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "TAU2_"))}
    env.update(TAU2_DATA_DIR=str(DATA_DIR), LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONDONTWRITEBYTECODE="1")
    env.update(NESTED_PLUGINS)
    # These scripts find a task by our <scenario> block and close with EndConversationTool: the seed
    # prompts, unless a run says --tau2-prompts (tests/e2e/test_upstream_prompts.py runs upstream's).
    env.update(TAU2_PROMPTS="seed")
    env.update(extra)
    return env


def model_options(
    server: FakeOpenAIServer, *, sides: Sequence[str] = ("agent", "user"), api_key: str = SECRET
) -> list[str]:
    args = json.dumps({"api_base": server.base_url, "api_key": api_key})
    out: list[str] = []
    for side in sides:
        out += [f"--tau2-{side}-model", f"openai/{side}", f"--tau2-{side}-args", args]
    return out


@dataclass
class PytestRun:
    """A finished nested pytest run and where it left its files."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    results_dir: Path
    junit_path: Path
    wall_s: float

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def metrics(self, scenario: str) -> dict[str, Any]:
        return dict(json.loads((self.results_dir / scenario / "metrics.json").read_text("utf-8")))

    def judge_result(self, scenario: str) -> dict[str, Any]:
        return dict(json.loads((self.results_dir / scenario / "judge_result.json").read_text("utf-8")))

    def transcript(self, scenario: str) -> list[dict[str, Any]]:
        return list(json.loads((self.results_dir / scenario / "transcript.json").read_text("utf-8"))["messages"])

    def summary(self) -> str:
        return (self.results_dir / "all_summary.txt").read_text("utf-8")

    def junit(self) -> Any:
        import xml.etree.ElementTree as ET

        return ET.parse(self.junit_path).getroot()

    def testcase(self, scenario: str) -> Any:
        for case in self.junit().iter("testcase"):
            if case.get("name") == f"test_scenario[{scenario}]":
                return case
        raise KeyError(f"no JUnit testcase for {scenario}")

    def properties(self, scenario: str) -> dict[str, str]:
        """The scenario's tau2 JUnit properties, wherever --tau2-junit-properties put them."""
        from tests.support import junit

        return junit.scenario_properties(self.junit(), self.testcase(scenario))

    def outcome_line(self, scenario: str) -> str:
        """The ``-v`` outcome of the item itself (PASSED / FAILED / ERROR ...), not of its subtests.

        Understands both layouts: ``<node> PASSED`` and, under xdist, ``[gw0] [ 50%] PASSED <node>``.
        """
        node = re.escape(NODE.format(scenario))
        words = r"(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)"
        pattern = re.compile(rf"^{node} {words}\b|^\[gw\d+\] \[ *\d+%\] {words} {node}\s*$", re.MULTILINE)
        found = [m.group(1) or m.group(2) for m in pattern.finditer(self.stdout)]
        return ",".join(found)

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "results_dir": str(self.results_dir), "junit_path": str(self.junit_path)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PytestRun:
        return cls(**{**data, "results_dir": Path(data["results_dir"]), "junit_path": Path(data["junit_path"])})

    def files_text(self) -> str:
        """Every file the run wrote (results dir and JUnit XML), concatenated."""
        parts = [self.junit_path.read_text("utf-8", errors="replace")] if self.junit_path.exists() else []
        for path in sorted(self.results_dir.rglob("*")):
            if path.is_file():
                parts.append(path.read_text("utf-8", errors="replace"))
        return "\n".join(parts)


def run_pytest(
    args: Sequence[str],
    tmp: Path,
    *,
    cwd: Path = REPO_ROOT,
    env: dict[str, str] | None = None,
    timeout: float = 240.0,
    umask: int | None = None,
) -> PytestRun:
    """``python -m pytest <args> -v --tau2-results-dir <tmp>/results --junitxml <tmp>/junit.xml``
    (under ``umask`` when given)."""
    results = tmp / "results"
    junit = tmp / "junit.xml"
    full = [
        sys.executable,
        "-m",
        "pytest",
        *args,
        "-v",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        f"--tau2-results-dir={results}",  # one argument: an existing folder is not taken for a test path
        f"--junitxml={junit}",
    ]
    start = time.perf_counter()
    done = subprocess.run(
        full,
        cwd=cwd,
        env=env or subprocess_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        umask=-1 if umask is None else umask,
    )
    wall = time.perf_counter() - start
    (tmp / "stdout.txt").write_text(done.stdout, "utf-8")  # kept for debugging a failed assertion
    (tmp / "stderr.txt").write_text(done.stderr, "utf-8")
    return PytestRun(full, done.returncode, done.stdout, done.stderr, results, junit, wall)


def node(scenario: str) -> str:
    return NODE.format(scenario)


@dataclass
class Recorded:
    """A nested run plus what the fake server saw while it ran (plain data, so it can be shared)."""

    run: PytestRun
    requests: list[dict[str, Any]] = field(default_factory=list)
    handler_errors: list[str] = field(default_factory=list)
    base_url: str = ""
    probe: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, run: PytestRun, server: FakeOpenAIServer, probe: list[dict[str, Any]] | None = None) -> Recorded:
        errors = [repr(e) for e in server.handler_errors]
        return cls(run, server.requests, errors, server.base_url, list(probe or []))

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "run": self.run.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Recorded:
        return cls(**{**data, "run": PytestRun.from_dict(data["run"])})


def shared_once(tmp_path_factory: Any, key: str, produce: Callable[[Path], Recorded]) -> Recorded:
    """``produce(tmp)`` once per test session, even when xdist spreads a module over workers.

    Under xdist the first worker to get here runs it, under a file lock in the session's shared
    base temp folder, and saves the result as JSON; the others wait for it and read it back.
    """
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return produce(tmp_path_factory.mktemp(key))
    try:
        import fcntl
    except ImportError:  # no flock (Windows): each worker runs its own copy
        return produce(tmp_path_factory.mktemp(key))
    root = tmp_path_factory.getbasetemp().parent / "tau2-e2e-shared"
    root.mkdir(parents=True, exist_ok=True)
    saved = root / f"{key}.json"
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if saved.exists():
                return Recorded.from_dict(json.loads(saved.read_text("utf-8")))
            tmp = root / key
            tmp.mkdir(parents=True, exist_ok=True)
            recorded = produce(tmp)
            saved.write_text(json.dumps(recorded.to_dict()), "utf-8")
            return recorded
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# ---- is litellm imported? -----------------------------------------------------------------------------

PROBE_PLUGIN = "tau2_e2e_import_probe"
_PROBE_SOURCE = """\
import json, os, sys


def _record(stage):
    with open(os.environ["TAU2_PROBE_OUT"], "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"stage": stage, "litellm": "litellm" in sys.modules,
                             "worker": os.environ.get("PYTEST_XDIST_WORKER")}) + "\\n")


def pytest_collection_finish(session):
    _record("collection_finish")


def pytest_unconfigure(config):
    _record("unconfigure")
"""


def import_probe(tmp: Path) -> tuple[list[str], dict[str, str], Path]:
    """A ``-p`` plugin recording, per process, whether litellm is in ``sys.modules``.

    Returns the pytest arguments, the environment additions and the JSON Lines file it writes.
    """
    folder = tmp / "probe"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{PROBE_PLUGIN}.py").write_text(_PROBE_SOURCE, "utf-8")
    out = tmp / "probe.jsonl"
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH", "")) if p)
    return ["-p", PROBE_PLUGIN], {"PYTHONPATH": path, "TAU2_PROBE_OUT": str(out)}, out


def probe_records(out: Path) -> list[dict[str, Any]]:
    if not out.exists():
        return []
    return [json.loads(line) for line in out.read_text("utf-8").splitlines() if line.strip()]


# ---- an agent that calls tools as real models do ----------------------------------------------------

BAD_ARGUMENTS = '{"user_id": '
"""Arguments a model cut off mid-way: not JSON (the tool refuses the call)."""
UNKNOWN_ORDER = "#W0"


def realistic_agent_script(models: ScriptedModels, task_id: str = "5") -> AgentScript:
    """The gold calls of ``task_id`` made as real models make them, with the gold outcome.

    Every call's arguments are a JSON string (as OpenAI-compatible APIs send them); the first
    message holds the first gold call and a failing lookup of order ``#W0`` under the **same id**,
    with text beside them; the second the next gold call with **no id** and a call whose arguments
    are cut off (``BAD_ARGUMENTS``, id ``null``); every later call reuses the id ``call_0``, as some
    local servers do. The gold calls all succeed, so the run passes.
    """
    from tests.support.fake_openai import MISSING_ID

    gold = [a for a in models.tasks.gold(task_id) if a["name"] not in ENDING_TOOLS]
    first, second, *rest = gold
    steps = [
        tool_calls(
            [(first["name"], first["arguments"]), ("get_order_details", {"order_id": UNKNOWN_ORDER})],
            content="Let me look you up.",
            ids=["call_0", "call_0"],
        ),
        tool_calls(
            [(second["name"], second["arguments"]), ("get_user_details", BAD_ARGUMENTS)], ids=[MISSING_ID, None]
        ),
        *(tool_calls([(a["name"], a["arguments"])], ids=["call_0"]) for a in rest),
        *(text(t) for t in models.wrap_up),
    ]
    return AgentScript(steps, closing=models.gold_closing(task_id))
