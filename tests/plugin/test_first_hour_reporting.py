"""What a run tells a new user: JUnit XML a CI consumer reads right, the stall rule in the
summary, a results path that is a file, and a ``-k`` that selects nothing (issue 16, points 5-8).

The JUnit files are read with junitparser, a JUnit consumer's own parser, not with ElementTree.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from junitparser import JUnitXml, Properties, Property, TestCase, TestSuite

from tests.plugin.conftest import RIGHT_AND_WRONG, Project
from tests.support import junit

LAB = (
    RIGHT_AND_WRONG
    + """
@register_eval_scenario
class NothingToCheck(LabBase):
    name = "lab__nothing_to_check"
    success_signals = (SuccessSignal.ACTION_MATCH,)
    reference_answer = None
"""
)


def _suite(path: Path) -> TestSuite:
    xml = JUnitXml.fromfile(str(path))
    suites = list(xml) if isinstance(xml, JUnitXml) else [xml]
    assert len(suites) == 1
    return suites[0]


def _cases(suite: TestSuite) -> dict[str, TestCase]:
    return {case.name: case for case in suite}


def _properties(case: TestCase) -> dict[str, str]:
    found = case.child(Properties)
    return {p.name: p.value for p in found.iterchildren(Property)} if found is not None else {}


def _suite_properties(suite: TestSuite, case: TestCase) -> dict[str, str]:
    """The testsuite-level properties of one scenario testcase (``<item id>:<name>``, the default)."""
    prefix = case.name.removeprefix("test_scenario[").removesuffix("]") + ":"
    return {p.name[len(prefix) :]: p.value for p in suite.properties() if p.name.startswith(prefix)}


# ---- 7. JUnit: one testcase per scenario, with the scenario's outcome --------------------------------------


@pytest.mark.parametrize("xdist", [False, True], ids=["serial", "xdist"])
@pytest.mark.parametrize("shape", ["suite", "testcase"])
def test_junit_has_one_testcase_per_scenario_with_its_outcome(project: Project, xdist: bool, shape: str) -> None:
    project.lab(LAB)
    option = [] if shape == "suite" else ["--tau2-junit-properties=testcase"]  # suite: the default
    run = project.run("--junitxml=junit.xml", *option, *(["-n", "2"] if xdist else []), xdist=xdist)
    # The terminal still shows every sub-result.
    out = run.stdout
    assert "SUBSKIPPED[nl_assertion[0]]" in out.replace("SUBSKIPPED [", "SUBSKIPPED[")
    assert "SUBFAILED[action_match]" in out.replace("SUBFAILED [", "SUBFAILED[")

    if shape == "suite":
        junit.validate(project.path / "junit.xml")  # the default is valid against junit-10.xsd
    else:
        assert junit.schema_errors(project.path / "junit.xml")  # testcase <properties> are not in the schema
    suite = _suite(project.path / "junit.xml")
    cases = _cases(suite)
    names = {"test_scenario[lab__right]", "test_scenario[lab__wrong]", "test_scenario[lab__nothing_to_check]"}
    assert set(cases) == names
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (3, 1, 0, 1)

    def properties(case: TestCase) -> dict[str, str]:
        own, suite_level = _properties(case), _suite_properties(suite, case)
        assert not (own and suite_level), "properties in both places"
        return own or suite_level

    right = cases["test_scenario[lab__right]"]
    assert right.is_passed and right.result == []  # no <skipped> child for its N/A sub-result
    assert properties(right)["is_successful"] == "true"
    assert properties(right)["check:nl_assertion[0]"].startswith("N/A: ")
    assert properties(right)["check:action_match"] == "passed"
    if shape == "suite":  # the sub-results as the testcase's output, one line each
        expected = ["action_match: passed", "clean_exit: passed"]
        expected.append(f"nl_assertion[0]: {properties(right)['check:nl_assertion[0]']}")
        assert sorted(right.system_out.splitlines()) == expected
    else:
        assert right.system_out is None

    wrong = cases["test_scenario[lab__wrong]"]
    assert wrong.is_failure and len(wrong.result) == 1
    text = f"{wrong.result[0].message}\n{wrong.result[0].text}"
    assert "2 of 3 sub-results failed" in text
    assert "action_match: failed: reference.value: expected 7, found 8" in text
    assert "db_state_match: failed: DB hash" in text
    assert "clean_exit: passed" in text
    assert properties(wrong)["check:action_match"] == "failed: reference.value: expected 7, found 8"

    nothing = cases["test_scenario[lab__nothing_to_check]"]
    assert nothing.is_skipped and "no applicable success signal" in nothing.result[0].message


# ---- 5. the stall rule in the summary ---------------------------------------------------------------------


def test_a_run_where_every_scenario_stalls_still_shows_its_signals(project: Project) -> None:
    project.lab(
        """
        TERSE = [("call", "set_value", {"key": "x", "value": 7}), ("exit", "Done.")]

        @register_eval_scenario
        class TerseRight(LabBase):
            name = "lab__terse_right"
            agent_script = TERSE

        @register_eval_scenario
        class TerseWrong(LabBase):
            name = "lab__terse_wrong"
            agent_script = [("call", "set_value", {"key": "x", "value": 8}), ("exit", "Done.")]
        """
    )
    run = project.run()
    assert run.items() == {"lab__terse_right": "FAILED", "lab__terse_wrong": "FAILED"}
    summary = run.summary()
    assert summary.splitlines()[0] == "Success rate: 0/2 (0.0%) of 2 scenarios (2 stalled counted as not successful)"
    assert (
        "Stalled: 2 scenarios, in which the agent spoke 1 time, fewer than --tau2-min-agent-turns "
        "(0 turns it off); their signals:"
    ) in summary
    for line in ("  Action match: 1/2 (50.0%)", "  DB-state match: 1/2 (50.0%)", "  Clean exit: 2/2 (100.0%)"):
        assert line in summary.split("Stalled:")[1]
    assert summary in run.stdout.replace("\r", "")  # the terminal summary is the same text


def test_the_stall_rule_is_documented_where_models_are_evaluated() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "evaluating-a-model.md").read_text("utf-8")
    section = page.split("## The stall rule", 1)[1].split("\n## ", 1)[0]
    for needed in ("--tau2-min-agent-turns", "default 3", "--tau2-min-agent-turns 0", "Stalled:"):
        assert needed in section


# ---- 6. a results path that is a file -------------------------------------------------------------------------


def test_results_dir_that_is_a_file_is_refused_before_any_scenario_runs(project: Project) -> None:
    """Refused once a scenario is selected (a project without scenarios never opens the folder:
    test_no_scenarios.py), before the first one runs."""
    project.restaurant()
    taken = project.write("taken.txt", "not a folder\n")
    # -p no:benchmark: pytest-benchmark, where installed, warns on stderr in a run started from an
    # xdist worker (it reads PYTEST_XDIST_WORKER from the environment); the line under test is ours.
    result = project.pytester.runpytest_subprocess(
        "-p", "tau2", "-p", "no:benchmark", f"--tau2-results-dir={taken}", "-k", "pizza"
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0].startswith(f"ERROR: results folder {taken} is a file, not a folder")
    assert [line for line in result.stderr.lines if line.strip()] == result.stderr.lines[:1]  # one line
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert "PASSED" not in result.stdout.str() and " passed" not in result.stdout.str()


# ---- 8. a -k that selects nothing ---------------------------------------------------------------------------


@pytest.mark.parametrize("xdist", [False, True], ids=["serial", "xdist"])
def test_a_k_typo_names_the_closest_scenarios(project: Project, xdist: bool) -> None:
    project.restaurant()
    run = project.run("-k", "resturant_pizza", *(["-n", "2"] if xdist else []), xdist=xdist, verbose=False)
    assert run.result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    run.result.stdout.fnmatch_lines(
        [
            "*tau2: no scenario selected*",
            "-k 'resturant_pizza' selected none of the 6 collected scenarios",
            "  no scenario name contains 'resturant_pizza'; closest: restaurant (a domain: 6 scenarios)*",
            "  (pytest-tau2 list shows every scenario by domain)",
        ]
    )


def test_k_for_a_scenario_whose_data_is_missing_shows_why(project: Project, tmp_path: Path) -> None:
    """A README example (``-k tau2_retail__0``) run before the data folder is set: the reason shows."""
    project.restaurant()
    project.write(
        "conftest.py",
        "import restaurant_scenarios  # noqa: F401\nimport pytest_tau2.domains.tau2_sources  # noqa: F401\n",
    )
    project.monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path / "nowhere"))
    run = project.run("-k", "tau2_retail__0", verbose=False)
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    run.result.stdout.fnmatch_lines(
        [f"tau2_retail__unavailable: DataError: tau2 data folder {tmp_path / 'nowhere'} does not exist*"]
    )
    assert "set TAU2_DATA_DIR or pass --tau2-data-dir" in run.stdout


def test_a_k_that_selects_something_prints_no_hint(project: Project) -> None:
    project.restaurant()
    run = project.run("-k", "pizza_pepperoni", verbose=False)
    assert run.result.ret == pytest.ExitCode.OK
    assert "no scenario selected" not in run.stdout
