"""VS Code's Test Explorer shows a scenario's real outcome (issue 38 point 1).

Two layers:

- **the adapter itself** (microsoft/vscode-python's ``vscode_pytest``, driven as the extension
  drives it: tests/support/vscode_adapter.py): discovery, then a run of a passing, a failing, an
  errored and a skipped scenario by their discovered ids, in one process and under ``-n 2``;
  every outcome it sends is under a discovered id, and the first one per id is the scenario's.
  It ships only inside the editor, so these run where ``TAU2_VSCODE_PYTHON_FILES`` names a
  checkout of it, and are skipped, saying so, elsewhere;
- **the facts it relies on**, checked always with a probe plugin: no item carries a skip or
  skipif marker whose arguments are truthy (the adapter sends ``skipped`` for such an item before
  it runs), and every report's node id and the item's path are the collected ones, in every process.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.plugin.conftest import Project
from tests.plugin.test_report_consumers import LAB, OUTCOMES
from tests.support import vscode_adapter

VSCODE = {"passed": "success", "failed": "failure", "error": "error", "skipped": "skipped"}


@pytest.fixture
def adapter() -> vscode_adapter.Path:
    found = vscode_adapter.python_files()
    if found is None:
        pytest.skip(
            f"VS Code's pytest adapter is not here: set {vscode_adapter.ENV_VAR} to a checkout's python_files "
            "folder (github.com/microsoft/vscode-python); it is on no package index"
        )
    return found


def _env(project: Project) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env


PLAIN = "def test_plain():\n    pass\n"
"""An ordinary test beside the scenarios: the control for what the adapter does with any test."""


@pytest.mark.parametrize("xdist", [False, True], ids=["serial", "xdist"])
def test_vscode_adapter_shows_each_scenario_outcome_under_its_discovered_id(
    project: Project, adapter: vscode_adapter.Path, xdist: bool
) -> None:
    project.lab(LAB)
    project.write("test_plain.py", PLAIN)
    plugins = ["-p", "tau2", "-p", "no:cacheprovider", f"--tau2-results-dir={project.path / 'out'}"]
    if xdist:
        plugins += ["-p", "xdist", "-n", "2"]
    env = _env(project)
    found = vscode_adapter.discover(adapter, project.path, plugins, env)
    assert found.process.returncode == 0, found.process.stdout + found.process.stderr
    assert not found.errors(), found.errors()
    discovered = found.discovered()
    by_name = {node["name"].split("[")[-1].rstrip("]"): test_id for test_id, node in discovered.items()}
    assert set(by_name) == {*OUTCOMES, "test_plain"}, discovered
    assert all(node["lineno"] for node in discovered.values())  # "go to test" has a line

    ids = [node["runID"] for node in discovered.values()]
    ran = vscode_adapter.execute(adapter, project.path, plugins, ids, env)
    output = ran.process.stdout + ran.process.stderr
    sent = ran.results()
    assert sent, output
    first: dict[str, str] = {}
    for test_id, outcome in sent:
        first.setdefault(test_id, outcome)  # the extension keeps the first result of an id
    expected = {by_name[name]: VSCODE[outcome] for name, outcome in OUTCOMES.items()}
    assert {i: first[i] for i in discovered} == {**expected, by_name["test_plain"]: "success"}, json.dumps(sent)
    # Any other id is the adapter's own under xdist, for every test alike: its controller process
    # never ran the item, so it names each report "<cwd>::<test>"; no discovered test has that id,
    # and each comes after the worker's result under the discovered id.
    others = {i for i, _ in sent} - set(discovered)
    if xdist:
        mangled = {f"{project.path}::{i.split('::', 1)[1]}": i for i in discovered}
        assert others <= set(mangled) and f"{project.path}::test_plain" in others, sent
        order = [i for i, _ in sent]
        assert all(order.index(mangled[i]) < order.index(i) for i in others), sent
    else:
        assert not others, sent


# ---- the facts the adapter relies on, checked in every environment ------------------------------------------

# Records, per process, what the adapter reads: each item's own skip/skipif markers (it sends
# "skipped" before the item runs when one has a truthy argument), its node id and path (its test
# id is the path joined with the node id's selector), and the node id of every report.
FACTS_PROBE = """
import json
import os
from pathlib import Path

import pytest

ITEMS = {}
REPORTS = []


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_protocol(item, nextitem):
    skips = [[m.name, [bool(a) for a in m.args]] for m in item.own_markers if m.name in ("skip", "skipif")]
    ITEMS[item.nodeid] = {"skips": skips, "path": str(item.path)}
    yield


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_report_teststatus(report, config):
    REPORTS.append([report.nodeid, report.when])
    yield


def pytest_collection_finish(session):
    ITEMS.update({item.nodeid: ITEMS.get(item.nodeid, {}) for item in session.items})


def pytest_unconfigure(config):
    role = config.workerinput["workerid"] if hasattr(config, "workerinput") else "main"
    Path(os.environ["VSCODE_PROBE_DIR"], role + ".json").write_text(json.dumps([ITEMS, REPORTS]))
"""


@pytest.mark.parametrize("xdist", [False, True], ids=["serial", "xdist"])
def test_no_item_reads_as_skipped_and_every_report_has_a_collected_id(project: Project, xdist: bool) -> None:
    project.lab(LAB)
    project.write("vscode_facts.py", FACTS_PROBE)
    probes = project.path / "probe-out"
    probes.mkdir()
    project.monkeypatch.setenv("VSCODE_PROBE_DIR", str(probes))
    run = project.run("-p", "vscode_facts", *(["-n", "2"] if xdist else []), xdist=xdist)
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED, run.stdout
    files = {f.stem: json.loads(f.read_text()) for f in probes.glob("*.json")}
    assert "main" in files and (set(files) > {"main"}) == xdist
    collecting = {role: data for role, data in files.items() if role != "main" or not xdist}  # xdist: the workers
    collected = set(next(iter(collecting.values()))[0])
    assert len(collected) == len(OUTCOMES)
    ran = 0
    for role, (items, reports) in files.items():
        if role in collecting:
            assert set(items) == collected, role  # every process collects the same ids
        for nodeid, facts in items.items():
            if not facts:
                continue  # collected here, run by another process
            ran += 1
            assert not [s for s in facts["skips"] if s[0] == "skip" or any(s[1])], (nodeid, facts)
            # the adapter's id for the item: its path joined with the node id's selector
            assert facts["path"] == str(project.path / nodeid.split("::")[0]), (nodeid, facts)
        assert {nodeid for nodeid, _ in reports} <= collected, role
    assert ran == len(OUTCOMES)


def test_under_p_no_tau2_the_scenarios_are_skipped_by_their_marker(project: Project) -> None:
    """The other side: without the plugin the marker stays and skips the items with its reason
    (tests/plugin/test_no_scenarios.py runs the same with auto-loading)."""
    project.lab(LAB)
    project.monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = project.pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(skipped=1)  # not parametrized without the plugin: one item
    result.stdout.fnmatch_lines(["SKIPPED * pytest-tau2 is disabled here (-p no:tau2): its scenarios are not run"])
