"""Collection of the tau2 ports in a user's project: one item per upstream task, ``-k`` and ``-m``.

Each run is a fresh ``python -m pytest`` process in a pytester directory whose conftest
imports the tau2 scenario sources and whose test module imports ``test_scenario``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]  # also in tests/conftest.py; repeated so this module stands alone

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
if not (DATA_DIR / "tau2" / "domains").is_dir():
    pytest.skip(f"no tau2 data under {DATA_DIR} (set TAU2_DATA_DIR)", allow_module_level=True)

CONFTEST = "import pytest_tau2.domains.tau2_sources  # noqa: F401  (registers the tau2 sources)\n"
TEST_MODULE = "from pytest_tau2 import test_scenario  # noqa: F401\n"
ITEM = re.compile(r"::test_scenario\[(tau2_[a-z]+)__([a-z0-9_]+)\]$")


def _project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, conftest: str = CONFTEST) -> None:
    monkeypatch.setenv("TAU2_DATA_DIR", str(DATA_DIR))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # -p tau2 below; keeps each run short
    for name in ("TAU2_AGENT_MODEL", "TAU2_USER_MODEL", "TAU2_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest(conftest)
    pytester.makepyfile(test_tau2_items=TEST_MODULE)


def _collect(pytester: pytest.Pytester, *args: str) -> list[tuple[str, str]]:
    result = pytester.runpytest_subprocess(
        "-p", "tau2", "-p", "no:cacheprovider", f"--tau2-results-dir={pytester.path / 'out'}",
        "--collect-only", "-q", *args, timeout=120,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    items = [(m[1], m[2]) for line in result.outlines if (m := ITEM.search(line))]
    assert len(items) == len([line for line in result.outlines if "::test_scenario[" in line])
    return items


@pytest.mark.parametrize(
    ("args", "domain", "count"),
    [
        (("-k", "tau2_retail"), "tau2_retail", 114),
        (("-k", "tau2_airline"), "tau2_airline", 50),
        (("-k", "tau2_telecom"), "tau2_telecom", 114),
        (("-m", "tau2_split_test", "-k", "tau2_retail"), "tau2_retail", 40),
    ],
    ids=["retail", "airline", "telecom", "retail-test-split"],
)
def test_collect_counts(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], domain: str, count: int
) -> None:
    _project(pytester, monkeypatch)
    items = _collect(pytester, *args)
    assert len(items) == count
    assert {d for d, _ in items} == {domain}
    assert len(set(items)) == count
    assert not (pytester.path / "out").exists(), "collecting writes no results"


def test_collect_full_telecom_and_its_marker(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(pytester, monkeypatch)
    items = _collect(pytester, "-k", "tau2_telecom", "-m", "tau2_telecom_full", "--tau2-telecom-tasks", "full")
    assert len(items) == 2285 - 114


def test_one_generated_task_by_exact_id(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(pytester, monkeypatch)
    items = _collect(pytester, "-k", "tau2_retail__24 or tau2_airline__33")
    assert items == [("tau2_airline", "33"), ("tau2_retail", "24")]
