"""Under ``CI=true`` a test that needs the tau2 data fails instead of skipping (tests/support/tau2_data.py).

Each case is a nested pytest run of a small test suite with the plugin loaded by name, as
``tests/conftest.py`` loads it for this suite.
"""

from __future__ import annotations

import pytest

from tests.support.tau2_data import REPO

SUITE = {
    "test_calls": """
        import pytest

        def test_skip_call():
            pytest.skip("no tau2 data under /nowhere (set TAU2_DATA_DIR)")

        @pytest.mark.skipif(True, reason="pinned tau2 airline data not found under /nowhere")
        def test_skipif_mark():
            pass

        def test_unrelated_skip():
            pytest.skip("needs a GPU")

        def test_plain():
            pass
    """,
    "test_module_level": """
        import pytest

        pytest.skip("no tau2 retail data under /nowhere (set TAU2_DATA_DIR)", allow_module_level=True)

        def test_never_collected():
            pass
    """,
}


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str | None, *args: str) -> pytest.RunResult:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(**SUITE)
    return pytester.runpytest_subprocess("-p", "tests.support.tau2_data", "-p", "no:cacheprovider", "-rA", *args)


def test_under_ci_missing_data_fails_and_says_why(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run(pytester, monkeypatch, "true")
    result.assert_outcomes(passed=1, failed=2, errors=1, skipped=1)
    why = "CI is set, so a test that needs the tau2 data fails instead of skipping: "
    result.stdout.fnmatch_lines(
        [
            f"FAILED test_calls.py::test_skip_call - {why}no tau2 data under /nowhere*",
            f"FAILED test_module_level.py::tau2_data_required - Failed: {why}no tau2 retail data under /nowhere*",
        ],
        consecutive=False,
    )
    result.stdout.fnmatch_lines([f"ERROR test_calls.py::test_skipif_mark - {why}pinned tau2 airline data*"])
    result.stdout.fnmatch_lines(["SKIPPED *needs a GPU"])  # other skips stay skips
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_under_ci_with_xdist_the_module_stand_in_runs_on_a_worker(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run(pytester, monkeypatch, "1", "-p", "xdist", "-n", "2")
    result.assert_outcomes(passed=1, failed=2, errors=1, skipped=1)


@pytest.mark.parametrize("ci", [None, "", "false", "0"], ids=["unset", "empty", "false", "zero"])
def test_outside_ci_missing_data_skips(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str | None
) -> None:
    result = _run(pytester, monkeypatch, ci)
    result.assert_outcomes(passed=1, skipped=4)
    assert result.ret == pytest.ExitCode.OK
