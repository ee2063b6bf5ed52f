"""The example projects and recipes of docs/, built from the pages' own blocks and run as written.

Each test takes its blocks from the page (``doctest: file PATH`` and friends, see
tests/docs/doc_blocks.py), writes them into a fresh folder and runs the commands the page
gives, in fresh processes. What the page does not show (a one-line test module, the agent a
reader brings) is written here and said so.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.scoring.predicates import evaluate_db_state_assertion, register_db_state_predicate
from tests.docs.doc_blocks import REPO, Block, clean_env, find, read_blocks
from tests.support.tau2_data import has_data, requires_data, skip_reason

TEST_MODULE = "from pytest_tau2 import test_scenario  # noqa: F401\n"
RESTAURANT = (REPO / "scenarios" / "restaurant.py").read_text("utf-8")


def write(folder: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, "utf-8")


def run(words: list[str], cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    """A documented command: ``pytest``, ``pytest-tau2`` and ``python`` as this interpreter."""
    program = {
        "pytest": [sys.executable, "-m", "pytest", "-p", "no:randomly"],
        "pytest-tau2": [sys.executable, "-m", "pytest_tau2.cli"],
        "python": [sys.executable],
    }[words[0]]
    environment = clean_env(**extra)
    return subprocess.run(
        [*program, *words[1:]], cwd=cwd, env=environment, capture_output=True, text=True, timeout=300, check=False
    )


def page_commands(block: Block) -> list[list[str]]:
    lines = [line.removeprefix("$ ").strip() for line in block.text.splitlines()]
    return [shlex.split(line, comments=True) for line in lines if line and not line.startswith("#")]


def outcome(out: str, scenario: str) -> str:
    found = re.search(rf"test_scenario\[{re.escape(scenario)}\] (PASSED|FAILED|ERROR|SKIPPED)", out)
    return found.group(1) if found else "not run"


# ---- authoring-scenarios.md: the bakery, in its own repository --------------------------------------------

LAYOUT_FILES = {
    # what the page's tree gives on each line (the test checks that the tree says so)
    "pytest.ini": ("[pytest]\ntestpaths = my_scenarios\n", "testpaths = my_scenarios"),
    "conftest.py": ("import my_scenarios\n", "import my_scenarios"),
    "data/bakery/db.json": ('{"reservations": []}\n', '{"reservations": []}'),
    "my_scenarios/__init__.py": ("from my_scenarios import bakery\n", "from my_scenarios import bakery"),
    "my_scenarios/test_scenarios.py": (TEST_MODULE, "from pytest_tau2 import test_scenario"),
}
BAKERY_AGENT = '''
"""A reader's own agent, as the page imports it (``from my_agent import BakeryAgent``): rule-based."""

import re

from pytest_tau2 import Reply, ToolCall


class BakeryAgent:
    def __init__(self, system_prompt: str) -> None:
        self.cakes = re.search(r"Cakes: (.*)\\.", system_prompt).group(1).split(", ")
        self.spoken = 0

    async def respond(self, messages, tools):
        customer = " ".join(m["content"] or "" for m in messages if m["role"] == "user")
        if not any(m["role"] == "tool" for m in messages):
            cake = next(c for c in self.cakes if c.lower() in customer.lower())
            day = re.search(r"\\d{4}-\\d{2}-\\d{2}", customer).group()
            return Reply(tool_calls=[ToolCall("reserve_cake", {"cake": cake, "day": day})])
        self.spoken += 1
        if "###STOP###" in customer or self.spoken >= 3:
            return Reply(text="Enjoy your cake. Goodbye!", tool_calls=[ToolCall("EndConversationTool", {})])
        return Reply(text="Your cake is reserved. Anything else?")
'''


def _tree(block: Block) -> dict[str, str]:
    """``path -> description`` of the files in a layout tree (two spaces of indent per level)."""
    files: dict[str, str] = {}
    folders: list[str] = []
    for line in block.text.splitlines()[1:]:  # the first line is the project folder itself
        depth = (len(line) - len(line.lstrip())) // 2 - 1
        name, _, description = line.strip().partition(" ")
        folders = folders[:depth]
        if name.endswith("/"):
            folders.append(name.rstrip("/"))
        else:
            files["/".join([*folders, name])] = description.strip()
    return files


def test_bakery_project_runs_as_written(tmp_path: Path) -> None:
    page = "docs/authoring-scenarios.md"
    tree = _tree(find(page, "layout"))
    assert set(tree) == {*LAYOUT_FILES, "my_scenarios/bakery.py"}
    for path, (_, said) in LAYOUT_FILES.items():
        assert said in tree[path], f"the tree's line for {path} no longer says {said!r}"
    project = tmp_path / "my-agent-evals"
    write(project, {path: text for path, (text, _) in LAYOUT_FILES.items()})
    write(project, {"my_scenarios/bakery.py": find(page, "file", "my_scenarios/bakery.py").text})

    listing, offline = (run(words, project) for words in page_commands(find(page, "run-in-project")))
    assert listing.returncode == 0, listing.stderr
    assert (
        f"rootdir: {project}\n1 scenario in 1 domain\n\nbakery: 1 scenario\n  bakery__carrot_cake\n" in listing.stdout
    )
    assert offline.returncode == 0, offline.stdout[-3000:]
    assert outcome(offline.stdout, "bakery__carrot_cake") == "PASSED"
    assert re.search(r"SUBPASSED.*action_match", offline.stdout) and "SUBPASSED" in offline.stdout

    # The page's conftest.py with the tau2_agent override, and the reader's agent.
    write(project, {"conftest.py": find(page, "file", "conftest.py").text, "my_agent.py": BAKERY_AGENT})
    own_agent = run(["pytest", "my_scenarios", "-v", f"--tau2-results-dir={tmp_path / 'own'}"], project)
    assert outcome(own_agent.stdout, "bakery__carrot_cake") == "PASSED", own_agent.stdout[-3000:]
    metrics = json.loads((tmp_path / "own" / "bakery__carrot_cake" / "metrics.json").read_text("utf-8"))
    assert re.fullmatch(r"python:my_agent\.BakeryAgent@sha256:[0-9a-f]{12}", metrics["agent"]), metrics["agent"]

    # The page's conftest.py that adds the tau2 scenarios next to the bakery.
    if not has_data("retail", "airline", "telecom"):
        pytest.skip(skip_reason("retail", "airline", "telecom"))
    write(project, {"conftest.py": find(page, "file", "conftest.py", index=1).text})
    both = run(["pytest-tau2", "list"], project)
    assert both.returncode == 0, both.stderr
    assert "\nbakery: 1 scenario\n" in both.stdout and "\ntau2_retail: 114 scenarios" in both.stdout


# ---- evaluating-a-model.md: your own Python agent -------------------------------------------------------


def test_python_agent_fixture_override(tmp_path: Path) -> None:
    """The page's skeleton agent, put under test by the page's conftest, is the one that runs."""
    page = "docs/evaluating-a-model.md"
    write(
        tmp_path,
        {
            "data/restaurant/orders.json": '{"orders": []}\n',
            "restaurant_scenarios.py": RESTAURANT,
            "test_scenarios.py": "import restaurant_scenarios  # noqa: F401\n" + TEST_MODULE,
            "my_agent.py": find(page, "file", "my_agent.py").text,
            "conftest.py": find(page, "file", "conftest.py").text,
        },
    )
    results = tmp_path / "results"
    done = run(["pytest", "-k", "pizza_pepperoni", "-v", f"--tau2-results-dir={results}"], tmp_path)
    # The skeleton calls a tool the restaurant does not have, so the scenario fails (not errors).
    assert outcome(done.stdout, "restaurant__pizza_pepperoni") == "FAILED", done.stdout[-3000:]
    metrics = json.loads((results / "restaurant__pizza_pepperoni" / "metrics.json").read_text("utf-8"))
    assert re.fullmatch(r"python:my_agent\.MyAgent@sha256:[0-9a-f]{12}", metrics["agent"]), metrics["agent"]
    transcript = (results / "restaurant__pizza_pepperoni" / "transcript.json").read_text("utf-8")
    assert "Let me check that order." in transcript


# ---- output-files.md: checking metrics.json against its schema ------------------------------------------


def test_metrics_files_validate_against_the_schema(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "data/restaurant/orders.json": '{"orders": []}\n',
            "conftest.py": "import restaurant_scenarios  # noqa: F401\n",
            "restaurant_scenarios.py": RESTAURANT,
            "test_scenarios.py": TEST_MODULE,
            "check_metrics.py": find("docs/output-files.md", "file", "check_metrics.py").text,
        },
    )
    swept = run(["pytest", "-k", "pizza_pepperoni or menu_question", "-q"], tmp_path)
    assert swept.returncode == 0, swept.stdout[-3000:]
    assert len(list(tmp_path.glob("tau2-results/*/*/metrics.json"))) == 2
    checked = run(["python", "check_metrics.py"], tmp_path)
    assert checked.returncode == 0, checked.stderr
    # and it does check: a broken file is reported
    broken = next(tmp_path.glob("tau2-results/*/restaurant__menu_question/metrics.json"))
    broken.write_text(json.dumps({**json.loads(broken.read_text("utf-8")), "is_successful": "maybe"}), "utf-8")
    refused = run(["python", "check_metrics.py"], tmp_path)
    assert refused.returncode == 1 and "ValidationError" in refused.stderr


# ---- tau2-retail.md: overriding one task ---------------------------------------------------------------


@requires_data("retail")
def test_overriding_one_retail_task(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"conftest.py": find("docs/tau2-retail.md", "file", "conftest.py").text, "test_scenarios.py": TEST_MODULE},
    )
    results = tmp_path / "results"
    done = run(["pytest", "-m", "smoke", "-v", f"--tau2-results-dir={results}"], tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    assert re.findall(r"test_scenario\[(\w+)\] PASSED", done.stdout) == ["tau2_retail__57"]
    metrics = json.loads((results / "tau2_retail__57" / "metrics.json").read_text("utf-8"))
    assert metrics["description"] == "Chitchat only: nothing may change"


# ---- replay.md: gold minus its last write ------------------------------------------------------------


@requires_data("retail")
def test_gold_minus_last_write_recipe(tmp_path: Path) -> None:
    page = "docs/replay.md"
    write(
        tmp_path,
        {
            "conftest.py": "import pytest_tau2.domains.tau2_sources  # noqa: F401\n",
            "test_scenarios.py": TEST_MODULE,
            "make_replay.py": find(page, "file", "make_replay.py").text,
        },
    )
    make, replay = page_commands(find(page, "run-in-project"))
    assert run(make, tmp_path).returncode == 0
    done = run([*replay, "-v", f"--tau2-results-dir={tmp_path / 'results'}"], tmp_path)
    assert done.returncode == 1, done.stdout[-3000:]
    assert outcome(done.stdout, "tau2_retail__5") == "PASSED"
    assert outcome(done.stdout, "tau2_retail__0") == "FAILED"
    assert re.search(r"tau2_retail__0\] SUBFAILED.*db_state_match", done.stdout)
    assert "values_changed: root['orders']['#W2378156']['status']: expected 'exchange requested'" in done.stdout
    assert "tau2_retail__52" not in done.stdout  # -k's full names are exact: the two tasks alone


# ---- replay.md: a model run's transcripts -> a replay file ---------------------------------------------------


@requires_data("retail")
def test_transcripts_to_replay_recipe_on_a_model_run(tmp_path: Path) -> None:
    """Three retail scenarios played by a (loopback) model, turned into a replay file, replayed.

    Task 5 is played as the reference does it, task 88 cancels with the wrong reason, task 69
    first sends arguments that are not JSON, calls a tool that does not exist and breaks the
    schema, then does the reference. The replay must give each scenario the model run's outcome.
    """
    from tests.e2e.llm_scripts import AgentScript, ScriptedModels, call, model_options, node, run_pytest
    from tests.support.fake_openai import FakeOpenAIServer

    models = ScriptedModels()
    wrong = models.gold_steps("88")
    wrong[0] = call("cancel_pending_order", {"order_id": "#W8835847", "reason": "no longer needed"})
    models.agent["88"] = AgentScript(wrong)
    garbled = '{"order_id": "#W2417020"'
    models.agent["69"] = AgentScript(
        [
            call("get_order_details", garbled),
            call("delete_every_order", {}),
            call("get_order_details", {"order_id": 2417020}),
            *models.gold_steps("69"),
        ]
    )
    scenarios = [f"tau2_retail__{task}" for task in ("5", "69", "88")]
    with FakeOpenAIServer() as server:
        models.install(server)
        played = run_pytest([*map(node, scenarios), *model_options(server)], tmp_path / "model")
    expected = {"tau2_retail__5": "PASSED", "tau2_retail__69": "PASSED", "tau2_retail__88": "FAILED"}
    assert {s: outcome(played.stdout, s) for s in scenarios} == expected, played.stdout[-3000:]

    folder = tmp_path / "replay"
    write(folder, {"to_replay.py": find("docs/replay.md", "file", "to_replay.py").text})
    assert run(["python", "to_replay.py", str(played.results_dir)], folder).returncode == 0
    records = {
        r["scenario"]: r["actions"]
        for r in map(json.loads, (folder / "recorded.jsonl").read_text("utf-8").splitlines())
    }
    assert set(records) == set(scenarios)
    assert all(isinstance(a["arguments"], dict) for a in records["tau2_retail__5"])  # parsed from the model's text
    assert garbled not in [a["arguments"] for a in records["tau2_retail__69"]]  # left out by the recipe
    assert "delete_every_order" in [a["name"] for a in records["tau2_retail__69"]]  # refused calls are kept

    replayed = run_pytest(
        [*map(node, scenarios), "--tau2-agent", f"replay:{folder / 'recorded.jsonl'}"], tmp_path / "again"
    )
    assert {s: outcome(replayed.stdout, s) for s in scenarios} == expected, replayed.stdout[-3000:]
    assert re.search(r"tau2_retail__88\] SUBFAILED.*db_state_match", replayed.stdout)
    assert replayed.metrics("tau2_retail__69")["tool_errors"] == played.metrics("tau2_retail__69")["tool_errors"] - 1


# ---- db-state-predicates.md: the verdict's shape --------------------------------------------------------------


@register_db_state_predicate(domain="doc_shop")
def order_exists(db: dict[str, Any], order_id: str) -> bool:
    return order_id in db["orders"]


def test_predicate_verdict_shape() -> None:
    block = find("docs/db-state-predicates.md", "checked-by", "test_predicate_verdict_shape")
    shape = eval(block.text, {"Any": Any})  # a dict of key -> type, as the page writes it
    db = {"orders": {"#1": {}}}
    records = [
        {"side": "agent", "func_name": "order_exists", "arguments": {"order_id": "#1"}, "message": "has #1"},
        {"env_type": "assistant", "func_name": "order_exists", "arguments": {"order_id": "#2"}, "assert_value": False},
        {"side": "agent", "func_name": "order_exists", "arguments": {"order": "#1"}},  # the predicate raises
        {"side": "user", "func_name": "order_exists"},  # no user DB
    ]
    for record in records:
        verdict = evaluate_db_state_assertion("doc_shop", record, db, None)
        assert list(verdict) == list(shape), f"keys of the verdict for {record}"
        for key, kind in shape.items():
            assert kind is Any or isinstance(verdict[key], kind), f"{key}={verdict[key]!r} is not {kind}"
    assert [evaluate_db_state_assertion("doc_shop", r, db, None)["passed"] for r in records] == [
        True,
        True,
        False,
        False,
    ]


# ---- websocket.md: the in-process bot needs the scenarios imported -------------------------------------------


def test_websocket_snippet_without_the_scenarios_import_fails_as_the_page_warns(tmp_path: Path) -> None:
    block = next(b for b in read_blocks(REPO / "docs" / "websocket.md") if b.mode == "run" and "BotServer" in b.text)
    without = "\n".join(
        line
        for line in block.text.splitlines()
        if line != "import scenarios  # noqa: F401  (registers the scenarios the bot serves)"
    )
    assert without != block.text
    done = subprocess.run(
        [sys.executable, "-c", without],
        cwd=REPO,
        env=clean_env(PYTEST_ADDOPTS=f"--tau2-results-dir={tmp_path}"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode != 0
    assert "unknown_scenario" in done.stdout
