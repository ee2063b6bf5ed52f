"""Missing tau2 data: one ``tau2_<domain>__unavailable`` item per domain, saying what and how to fix.

The error must not hide scenarios that need no tau2 data (the user's own domains).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import pytest

pytest_plugins = ["pytester"]  # also in tests/conftest.py; repeated so this module stands alone

CONFTEST = '''
from typing import ClassVar

import pytest_tau2.domains.tau2_sources  # noqa: F401  (registers the tau2 sources)
from pytest_tau2 import Scenario, SuccessSignal, register_eval_scenario


@register_eval_scenario
class Hello(Scenario):
    """A scenario of the user's own domain: no tau2 data, no DB."""

    name = "shop__hello"
    description = "Say hello and hang up"
    success_signals: ClassVar[tuple[SuccessSignal, ...]] = (SuccessSignal.CLEAN_EXIT,)
'''

DOMAIN_FILE = {
    "tau2_retail": "retail/db.json",
    "tau2_airline": "airline/db.json",
    "tau2_telecom": "telecom/db.toml",
    "tau2_mock": "mock/db.json",
    "tau2_banking_knowledge": "banking_knowledge/db.json",
}


@pytest.fixture
def no_data(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    empty = pytester.mkdir("empty-data")
    cache = pytester.mkdir("empty-cache")
    monkeypatch.setenv("TAU2_DATA_DIR", str(empty))
    monkeypatch.setenv("PYTEST_TAU2_CACHE_DIR", str(cache))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    for name in ("TAU2_AGENT_MODEL", "TAU2_USER_MODEL", "TAU2_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_tau2_items="from pytest_tau2 import test_scenario  # noqa: F401\n")
    return pytester


def test_missing_data_gives_one_unavailable_item_per_domain(no_data: pytest.Pytester) -> None:
    result = no_data.runpytest_subprocess(
        "-p", "tau2", "-p", "no:cacheprovider", "-v", f"--tau2-results-dir={no_data.path / 'out'}", timeout=120
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, errors=5)
    result.stdout.fnmatch_lines(["*test_scenario?shop__hello? PASSED*"], consecutive=False)
    out = result.stdout.str()
    for domain, missing in DOMAIN_FILE.items():
        assert f"test_scenario[{domain}__unavailable] ERROR" in out
        assert f"empty-data/tau2/domains/{missing}: missing" in out
        assert f"python -m pytest_tau2.data fetch --domain {domain.removeprefix('tau2_')}" in out
    assert out.count("How to fix") >= 5
    assert "TAU2_DATA_DIR" in out and "--tau2-data-dir" in out
    # nothing else of the tau2 domains was collected
    assert "tau2_retail__0" not in out


def test_missing_data_only_errors_the_selected_domain(no_data: pytest.Pytester) -> None:
    result = no_data.runpytest_subprocess(
        "-p", "tau2", "-p", "no:cacheprovider", "-k", "tau2_airline", f"--tau2-results-dir={no_data.path / 'out'}",
        timeout=120,
    )  # fmt: skip
    result.assert_outcomes(errors=1, deselected=5)
    assert "airline/db.json: missing" in result.stdout.str()


def _junit(path: Any) -> tuple[dict[str, str], list[tuple[str, str, int]]]:
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    cases = [(c.get("classname", ""), c.get("name", ""), len(c.findall("error"))) for c in suite.iter("testcase")]
    return {k: suite.get(k, "") for k in ("tests", "errors", "failures", "skipped")}, cases


def test_a_missing_domain_under_xdist_gives_the_junit_of_one_process(no_data: pytest.Pytester) -> None:
    """Issue 26.8: every worker lacks the data alike, so each collects the domain's error item:
    one error, as in one process (not one collection error per worker on top of it)."""
    junit = {}
    for label, extra in (("serial", ()), ("xdist", ("-p", "xdist", "-n", "2"))):
        result = no_data.runpytest_subprocess(
            "-p", "tau2", "-p", "no:cacheprovider", *extra, "-k", "airline or hello",
            f"--junitxml={no_data.path / (label + '.xml')}", f"--tau2-results-dir={no_data.path / label}",
            timeout=180,
        )  # fmt: skip
        assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
        result.assert_outcomes(passed=1, errors=1)
        assert "ERROR collecting" not in result.stdout.str()
        junit[label] = _junit(no_data.path / f"{label}.xml")
    counts, cases = junit["xdist"]
    assert counts == junit["serial"][0] == {"tests": "2", "errors": "1", "failures": "0", "skipped": "0"}
    assert sorted(cases) == sorted(junit["serial"][1])
    assert all(classname for classname, _, _ in cases) and all(errors <= 1 for _, _, errors in cases)
