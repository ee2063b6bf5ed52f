"""A project without scenarios, with pytest-tau2 installed (issue 26.1-3, 24.17): the plugin writes
nothing, prints nothing, opens no folder and imports no engine module; ``-p no:tau2`` in a
project with scenarios runs its ordinary tests; a run that selects no scenario leaves nothing.

The tests run as root, where a read-only folder is still writable: instead of chmod, a *file*
stands where the plugin would make ``tau2-results/``, so any attempt to open the folder fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.plugin.conftest import RESTAURANT_SCENARIOS, SCENARIO_TEST_MODULE

ORDINARY_TESTS = '''
import sys


def test_arithmetic():
    assert 1 + 1 == 2


def test_the_engine_stays_unloaded():
    """What the plugin imported in this process: its entry point only, no engine module."""
    loaded = sorted(
        name for name in sys.modules
        if name.startswith(("pytest_tau2.run", "pytest_tau2.report", "pytest_tau2.llm.client", "pytest_tau2.scenario"))
    )
    assert loaded == []
'''


def _ordinary_project(pytester: pytest.Pytester) -> Path:
    pytester.makepyfile(test_ordinary=ORDINARY_TESTS)
    blocker = pytester.path / "tau2-results"
    blocker.write_text("a file where the results folder would go: opening it fails\n", "utf-8")
    return blocker


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str) -> pytest.RunResult:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return pytester.runpytest_subprocess("-p", "tau2", "-p", "xdist", "-p", "no:cacheprovider", *args)


PYTESTER_OWN = ("runpytest-", "stdout", "stderr", "__pycache__")
"""What pytester itself leaves in the project folder (its basetemp and captured streams), and
Python's bytecode cache of the test module (written unless PYTHONDONTWRITEBYTECODE is set)."""


def _created(pytester: pytest.Pytester, before: set[str]) -> set[str]:
    return {p.name for p in pytester.path.iterdir() if not p.name.startswith(PYTESTER_OWN)} - before


@pytest.mark.parametrize(
    "args",
    [(), ("-x",), ("--setup-plan",), ("-k", "nothing_matches"), ("-n", "2"), ("--collect-only",)],
    ids=["plain", "-x", "--setup-plan", "-k-nothing", "-n2", "--collect-only"],
)
def test_a_project_without_scenarios_gets_nothing_from_the_plugin(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    blocker = _ordinary_project(pytester)
    before = {p.name for p in pytester.path.iterdir()}
    result = _run(pytester, monkeypatch, *args)
    expected = pytest.ExitCode.NO_TESTS_COLLECTED if args == ("-k", "nothing_matches") else pytest.ExitCode.OK
    assert result.ret == expected, result.stdout.str() + result.stderr.str()
    assert blocker.is_file()  # never replaced, never "is a file, not a folder"
    assert _created(pytester, before) == set()
    output = result.stdout.str() + result.stderr.str()
    assert "tau2:" not in output
    assert "tau2 summary" not in output
    assert "plugins:" in output and "tau2-" in output  # the plugin was loaded all the same
    if not args or args == ("-x",) or args == ("-n", "2"):
        result.assert_outcomes(passed=2)


def test_a_read_only_project_without_scenarios_runs_its_tests(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder itself read-only (binding for a user who is not root; here the blocker file
    above does the same job) and a results dir given in the ini file that cannot be made."""
    _ordinary_project(pytester)
    pytester.makeini("[pytest]\ntau2_results_dir = tau2-results/inside-a-file\n")
    pytester.path.chmod(0o555)
    try:
        result = _run(pytester, monkeypatch)
    finally:
        pytester.path.chmod(0o755)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=2)


def _restaurant_project(pytester: pytest.Pytester) -> None:
    (pytester.path / "data" / "restaurant").mkdir(parents=True)
    (pytester.path / "data" / "restaurant" / "orders.json").write_text('{"orders": []}', "utf-8")
    pytester.makepyfile(
        restaurant_scenarios=RESTAURANT_SCENARIOS,
        conftest="import restaurant_scenarios  # noqa: F401\n",
        test_scenarios=SCENARIO_TEST_MODULE,
        test_ordinary="def test_plain():\n    assert True\n",
    )


@pytest.mark.parametrize("args", [("-k", "test_plain"), ("-k", "no_such_scenario"), ("--tau2-scenarios=x*",)])
def test_a_run_that_selects_no_scenario_prints_and_leaves_nothing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    _restaurant_project(pytester)
    before = {p.name for p in pytester.path.iterdir()}
    result = _run(pytester, monkeypatch, *args)
    output = result.stdout.str() + result.stderr.str()
    if args[0].startswith("--tau2-scenarios"):  # a pattern that names nothing is a usage error, as before
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        assert "--tau2-scenarios: no collected scenario matches 'x*'" in output
    else:
        assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED), output
    assert _created(pytester, before) == set()
    assert "tau2: agent=" not in output and "tau2: results=" not in output


def test_a_selected_scenario_opens_the_folder_and_shows_the_header(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _restaurant_project(pytester)
    result = _run(pytester, monkeypatch, "-k", "menu_question")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(["collected 7 items / 6 deselected / 1 selected", "tau2: agent=oracle *"])
    (run,) = (pytester.path / "tau2-results").iterdir()
    assert (run / "restaurant__menu_question" / "metrics.json").is_file()


def test_a_folder_that_cannot_be_made_is_a_usage_error_once_a_scenario_is_selected(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _restaurant_project(pytester)
    (pytester.path / "tau2-results").write_text("in the way\n", "utf-8")
    for args in ((), ("-n", "2")):
        result = _run(pytester, monkeypatch, "-k", "menu_question", *args)
        output = result.stdout.str() + result.stderr.str()
        assert result.ret == pytest.ExitCode.USAGE_ERROR, output
        assert "is not writable" in output or "is a file, not a folder" in output
        assert "PASSED" not in output and " passed" not in output  # nothing ran


def test_plugin_disabled_runs_the_ordinary_tests_and_skips_the_scenarios_with_the_reason(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _restaurant_project(pytester)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "")
    result = pytester.runpytest_subprocess("-p", "no:tau2", "-p", "no:cacheprovider", "-rs")
    output = result.stdout.str()
    assert result.ret == pytest.ExitCode.OK, output
    result.assert_outcomes(passed=1, skipped=1)
    assert "fixture 'tau2_outcome' not found" not in output
    result.stdout.fnmatch_lines(["SKIPPED * pytest-tau2 is disabled here (-p no:tau2): its scenarios are not run"])
    assert not (pytester.path / "tau2-results").exists()
