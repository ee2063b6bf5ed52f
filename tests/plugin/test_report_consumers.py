"""What other people's tools read of a scenario (issue 24 point 5, issue 26 points 4-7 and 9).

A scenario is one test: pytest's count line, ``-x``/``--maxfail``, VS Code's adapter, TeamCity's
messages and JUnit count it once, with its own outcome, and its sub-results are shown and counted
as sub-results. Its location is its scenario class. The consumers are the real ones where they
install from the package index (teamcity-messages, pytest-rerunfailures, xmlschema with the
junit-10.xsd schema); VS Code's adapter ships only inside the editor, so its rule is written down
here as a small probe plugin and the report stream is checked against it.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from tests.plugin.conftest import RIGHT_AND_WRONG, Project, junit_cases
from tests.support import junit

LAB = (
    RIGHT_AND_WRONG
    + """
@register_eval_scenario
class Crash(LabBase):
    name = "lab__crash"
    agent_script = [("say", "Hello!"), ("crash", "the agent's server went away")]

@register_eval_scenario
class NothingToCheck(LabBase):
    name = "lab__nothing_to_check"
    success_signals = (SuccessSignal.ACTION_MATCH,)
    reference_answer = None
"""
)
OUTCOMES = {"lab__right": "passed", "lab__wrong": "failed", "lab__crash": "error", "lab__nothing_to_check": "skipped"}

# The rule VS Code's pytest adapter (microsoft/vscode-python, python_files/vscode_pytest) follows:
# in a trylast pytest_report_teststatus hook wrapper, the first report of a test id that is a
# "call" report, or a skipped "setup" report, becomes that test's outcome; later ones are ignored.
# This probe records every report that hook sees, per process, so the test can apply the rule.
VSCODE_PROBE = """
import json
import os
from pathlib import Path

import pytest

SEEN = []


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_report_teststatus(report, config):
    SEEN.append([report.nodeid, report.when, report.outcome, type(report).__name__])
    yield


def pytest_unconfigure(config):
    role = config.workerinput["workerid"] if hasattr(config, "workerinput") else "main"
    Path(os.environ["VSCODE_PROBE_DIR"], role + ".json").write_text(json.dumps(SEEN))
"""


def _scenario(nodeid: str) -> str:
    """The scenario of a node id (``...::test_scenario[x]``) or TeamCity name (``....test_scenario(x)``)."""
    found = re.search(r"test_scenario[\[(](.+)[\])]$", nodeid)
    assert found, nodeid
    return found[1]


def _vscode_outcomes(seen: list[list[str]]) -> dict[str, str]:
    """Scenario -> the outcome VS Code's adapter would show (its first-call-report rule)."""
    first: dict[str, str] = {}
    for nodeid, when, outcome, _ in seen:
        if when == "call" or (when == "setup" and outcome == "skipped"):
            first.setdefault(_scenario(nodeid), outcome)
    for nodeid, when, outcome, _ in seen:  # no call report: an error in setup (shown as the error)
        if when == "setup" and outcome == "failed":
            first.setdefault(_scenario(nodeid), "error")
    return first


# ---- 26.4: VS Code takes the first call report ---------------------------------------------------------


@pytest.mark.parametrize("xdist", [False, True], ids=["serial", "xdist"])
def test_the_first_call_report_of_a_scenario_carries_its_real_outcome(project: Project, xdist: bool) -> None:
    project.lab(LAB)
    project.write("vscode_probe.py", VSCODE_PROBE)
    probes = project.path / "probe-out"
    probes.mkdir()
    project.monkeypatch.setenv("VSCODE_PROBE_DIR", str(probes))
    run = project.run("-p", "vscode_probe", *(["-n", "2"] if xdist else []), xdist=xdist)
    if not xdist:
        assert run.items() == {name: word.upper() for name, word in OUTCOMES.items()}
    files = {f.stem: json.loads(f.read_text()) for f in probes.glob("*.json")}
    assert "main" in files and (set(files) > {"main"}) == xdist
    for role, seen in files.items():
        # Only the items' own reports (the terminal asks again for its summary lines): no
        # sub-result is a report of its own.
        assert {kind for *_, kind in seen} <= {"TestReport"}
        outcomes = _vscode_outcomes(seen)  # a worker sees the items it ran
        assert outcomes == (OUTCOMES if role == "main" else {k: OUTCOMES[k] for k in outcomes}), role


# ---- 24.5: pytest's counts are scenarios; sub-results are counted as sub-results ---------------------------


COUNT_LINE = "1 failed, 1 passed, 1 skipped, 3 subtests passed, 2 subtests failed, 2 subtests skipped"


@pytest.mark.parametrize("verbosity", [[], ["-q"], ["-v"]], ids=["default", "quiet", "verbose"])
def test_the_count_line_counts_scenarios_and_their_sub_results_at_every_verbosity(
    project: Project, verbosity: list[str]
) -> None:
    project.lab(LAB.replace("@register_eval_scenario\nclass Crash", "class Crash"))  # Crash not registered
    run = project.run(*verbosity, verbose=False)
    last = run.stdout.strip().splitlines()[-1]
    assert COUNT_LINE in last, last
    if verbosity == ["-v"]:
        assert "test_scenarios.py::test_scenario[lab__wrong] SUBFAILED[action_match] - reference.value" in run.stdout
    else:
        # One progress glyph per scenario (sorted: nothing_to_check, right, wrong), whatever its sub-results.
        glyphs = re.findall(r"^(?:test_scenarios\.py )?([.FsE]+)\s+\[100%\]$", run.stdout, re.MULTILINE)
        assert glyphs == ["s.F"], run.stdout
        assert "SUBPASSED" not in run.stdout


def test_exitfirst_and_maxfail_count_scenarios(project: Project) -> None:
    project.lab(
        RIGHT_AND_WRONG
        + """
@register_eval_scenario
class WrongAgain(LabBase):
    name = "lab__wrong_again"
    agent_script = WRONG_VALUE
"""
    )
    stopped = project.run("-x")
    # Order: lab__right, lab__wrong, lab__wrong_again; -x stops after the first failing scenario.
    assert stopped.items() == {"lab__right": "PASSED", "lab__wrong": "FAILED"}
    assert "stopping after 1 failures" in stopped.stdout
    both = project.run("--maxfail=2")
    assert both.items() == {"lab__right": "PASSED", "lab__wrong": "FAILED", "lab__wrong_again": "FAILED"}
    assert "stopping after 2 failures" in both.stdout


# ---- 26.5: the location is the scenario class ---------------------------------------------------------------


def test_a_scenario_reports_its_class_as_its_location(project: Project) -> None:
    project.lab(LAB)
    source = (project.path / "lab_scenarios.py").read_text().splitlines()
    line = {name: source.index(f"class {name}(LabBase):") for name in ("Right", "NothingToCheck")}
    # -rs names the scenario's class (its decorator's line, 1-based), not the plugin's test function.
    run = project.run("-rs", "--junitxml=legacy.xml", "-o", "junit_family=legacy")
    assert f"SKIPPED [1] lab_scenarios.py:{line['NothingToCheck']}: no applicable success signal" in run.stdout
    # -vv shows where the item's code lives beside its node id.
    assert "test_scenarios.py::test_scenario[lab__right] <- lab_scenarios.py" in project.run("-vv").stdout
    # Legacy JUnit (xunit1) writes file= and line= (0-based) from the item's location.
    cases = {c.get("name"): c for c in ET.parse(project.path / "legacy.xml").getroot().iter("testcase")}
    right = cases["test_scenario[lab__right]"]
    assert (right.get("file"), right.get("line")) == ("lab_scenarios.py", str(line["Right"] - 1))
    assert "pytest_tau2" not in run.stdout.split("short test summary info")[-1]


# ---- 26.6: TeamCity / PyCharm (teamcity-messages) ----------------------------------------------------------


_ESCAPES = {"n": "\n", "r": "\r", "'": "'", "[": "[", "]": "]", "|": "|"}


def _unescape(match: re.Match[str]) -> str:
    """One TeamCity service-message escape (``|n``, ``|'``, ``|[`` ...)."""
    return _ESCAPES.get(match[1], match[1])


def _teamcity(stdout: str) -> list[tuple[str, dict[str, str]]]:
    messages = []
    for kind, body in re.findall(r"##teamcity\[(\w+) (.*)\]\s*$", stdout, re.MULTILINE):
        found = re.findall(r"(\w+)='((?:[^'|]|\|.)*)'", body)
        attributes = {k: re.sub(r"\|(.)", _unescape, v) for k, v in found}
        messages.append((kind, attributes))
    return messages


def test_teamcity_sees_one_test_per_scenario_with_its_outcome(project: Project) -> None:
    project.lab(LAB)
    run = project.run("-p", "teamcity.pytest_plugin", "--teamcity")
    messages = _teamcity(run.stdout)
    tests = [(kind, _scenario(a["name"])) for kind, a in messages if kind.startswith("test") and "name" in a]
    for name in OUTCOMES:
        started = [k for k, n in tests if n == name and k == "testStarted"]
        finished = [k for k, n in tests if n == name and k == "testFinished"]
        assert (len(started), len(finished)) == (1, 1), (name, tests)
    failed = {n for k, n in tests if k == "testFailed"}
    ignored = {n for k, n in tests if k == "testIgnored"}
    assert failed == {"lab__wrong", "lab__crash"}
    assert ignored == {"lab__nothing_to_check"}  # not lab__right, whose N/A sub-result is not a skip
    details = next(a for k, a in messages if k == "testFailed" and _scenario(a["name"]) == "lab__wrong")
    # The failure names every sub-result, and its location is the scenario class.
    assert "action_match: failed: reference.value: expected 7, found 8" in details["details"]
    assert "clean_exit: passed" in details["details"]
    assert details["message"].startswith("lab_scenarios.py:")
    # A passed scenario's sub-results are its test output.
    out = [a["out"] for k, a in messages if k == "testStdOut" and _scenario(a["name"]) == "lab__right"]
    assert out and "action_match: passed\n" in out[0] and "nl_assertion[0]: N/A: no judge" in out[0], out


# ---- 26.7: JUnit valid against junit-10.xsd -----------------------------------------------------------------


@pytest.mark.parametrize("xdist", [False, True], ids=["serial", "xdist"])
def test_junit_is_valid_against_the_schema_by_default(project: Project, xdist: bool) -> None:
    project.lab(LAB)
    run = project.run("--junitxml=junit.xml", *(["-n", "2"] if xdist else []), xdist=xdist)
    # The sub-results travel on the call report to the controller, which counts them.
    counts = "1 failed, 1 passed, 1 skipped, 1 error, 3 subtests passed, 2 subtests failed, 2 subtests skipped in"
    assert counts in run.stdout.strip().splitlines()[-1]
    cases = junit_cases(project.path / "junit.xml")  # validates against junit-10.xsd
    outcomes = {"passed": "passed", "failure": "failed", "error": "error", "skipped": "skipped"}
    assert {_scenario(n): outcomes[c["outcome"]] for n, c in cases.items()} == OUTCOMES
    root = ET.parse(project.path / "junit.xml").getroot()
    assert not [c.get("name") for c in root.iter("testcase") if c.find("properties") is not None]
    wrong = cases["test_scenario[lab__wrong]"]
    assert wrong["properties"]["is_successful"] == "false"
    assert wrong["out"].splitlines() == [
        "clean_exit: passed",
        "action_match: failed: reference.value: expected 7, found 8",
        f"db_state_match: {wrong['properties']['check:db_state_match']}",
    ]
    assert cases["test_scenario[lab__crash]"]["properties"]["stop_reason"] == "error"


def test_junit_properties_none_keeps_only_the_output_lines_and_a_users_own_properties(project: Project) -> None:
    project.lab(RIGHT_AND_WRONG)
    project.write(
        "conftest.py",
        (project.path / "conftest.py").read_text()
        + "\n\n@pytest.fixture(autouse=True)\ndef _ticket(record_property):\n    record_property('ticket', 'T-1')\n",
    )
    project.run("--junitxml=junit.xml", "--tau2-junit-properties=none")
    root = ET.parse(project.path / "junit.xml").getroot()
    in_cases = {p.get("name") for case in root.iter("testcase") for p in case.iter("property")}
    assert in_cases == {"ticket"}  # the user's own property stays in its testcase
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    run_level = {p.get("name") for p in suite.findall("properties/property")}
    # what stays on the suite is the run's own numbers (docs/statistics.md), no scenario's properties
    assert run_level and all(str(name).startswith("tau2_") and ":" not in str(name) for name in run_level)
    cases = junit_cases(project.path / "junit.xml", valid=False)
    out = cases["test_scenario[lab__wrong]"]["out"].splitlines()
    assert "action_match: failed: reference.value: expected 7, found 8" in out


def test_an_unknown_junit_properties_value_is_a_usage_error(project: Project) -> None:
    project.lab(RIGHT_AND_WRONG)
    run = project.run("--tau2-junit-properties=everywhere")
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--tau2-junit-properties (ini tau2_junit_properties) must be one of suite, testcase, none" in run.stderr


# ---- 26.9: pytest-rerunfailures ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["suite", "testcase"])
def test_a_rerun_scenario_carries_one_runs_properties(project: Project, shape: str) -> None:
    project.lab(RIGHT_AND_WRONG)
    run = project.run(
        "-p", "pytest_rerunfailures", "--reruns=1", "--junitxml=junit.xml", f"--tau2-junit-properties={shape}"
    )
    assert "RERUN" in run.stdout
    # The sub-results of the run that was repeated are not counted again.
    assert "1 failed, 1 passed, 3 subtests passed, 2 subtests failed, 1 subtests skipped, 1 rerun" in run.stdout
    path = project.path / "junit.xml"
    root = ET.parse(path).getroot()
    wrong = [c for c in root.iter("testcase") if c.get("name") == "test_scenario[lab__wrong]"]
    # pytest-rerunfailures' own shape: the repeated run is a testcase of its own, with no outcome
    # child (reads as passed); the last one has the failure.
    assert [c.find("failure") is not None for c in wrong] == [False, True]
    for case in wrong:  # scenario_properties refuses a property written twice for one testcase
        assert junit.scenario_properties(root, case)["is_successful"] == "false"
    if shape == "suite":
        junit.validate(path)
        names = [p.get("name") for p in root.iter("property")]
        assert len(names) == len(set(names)), names
    else:
        assert all(len(c.findall("properties/property")) == len(wrong[1].findall("properties/property")) for c in wrong)


# ---- ordinary tests keep pytest's own reporting -------------------------------------------------------------

ORDINARY = """
def test_with_subtests(subtests, record_property):
    record_property("ticket", "T-1")
    for i in range(3):
        with subtests.test(msg=f"part {i}"):
            assert i != 1


def test_plain():
    assert True
"""


def _shape(path: object) -> list[tuple[str | None, list[str], list[tuple[str | None, str | None]]]]:
    root = ET.parse(str(path)).getroot()
    return [
        (
            case.get("name"),
            [child.tag for child in case if child.tag != "properties"],
            [(p.get("name"), p.get("value")) for p in case.iter("property")],
        )
        for case in root.iter("testcase")
    ]


def test_ordinary_tests_get_pytests_own_counts_and_junit(project: Project) -> None:
    project.write("test_ordinary.py", ORDINARY)
    with_plugin = project.run("--junitxml=with.xml", verbose=False)
    project.monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    without = project.pytester.runpytest_subprocess("-p", "no:cacheprovider", "--junitxml=without.xml")
    assert _shape(project.path / "with.xml") == _shape(project.path / "without.xml")
    assert (
        with_plugin.stdout.strip().splitlines()[-1].split(" in ")[0]
        == (without.stdout.str().strip().splitlines()[-1].split(" in ")[0])
    )
