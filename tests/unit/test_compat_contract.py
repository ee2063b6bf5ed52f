"""The compat modules' contract with the installed pytest, pytest-xdist, execnet and litellm.

Each ``compat_*`` module is the only place that touches its project's private names
(tests/unit/test_architecture.py keeps it so) and lists what it uses in ``contract_problems()``.
An upgrade that drops or renames one of them fails here, naming the name and the installed
version, instead of a run silently taking a slower path or crashing the xdist controller.
scripts/test-lower-bounds.sh runs this file at the lower bounds of pyproject.toml.
"""

from __future__ import annotations

import importlib
import re
import tomllib
from importlib.metadata import version
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPAT = {
    "pytest": "pytest_tau2.plugin.compat_pytest",
    "pytest-xdist": "pytest_tau2.plugin.compat_xdist",
    "execnet": "pytest_tau2.plugin.compat_execnet",
    "litellm": "pytest_tau2.llm.compat_litellm",
}


def _module(distribution: str) -> ModuleType:
    return importlib.import_module(COMPAT[distribution])


@pytest.mark.parametrize("distribution", sorted(COMPAT))
def test_the_installed_version_has_every_name_the_compat_module_uses(distribution: str) -> None:
    problems = _module(distribution).contract_problems()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("distribution", sorted(COMPAT))
def test_each_compat_module_states_the_versions_it_was_read_from(distribution: str) -> None:
    module = _module(distribution)
    oldest, newest = module.TESTED
    assert oldest in (module.__doc__ or "") and newest in (module.__doc__ or "")


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def _bounds(distribution: str) -> tuple[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    for requirement in project["dependencies"]:
        name, _, spec = re.match(r"([A-Za-z0-9_.-]+)(\[[^]]*\])?\s*(.*)", requirement).groups()  # type: ignore[union-attr]
        if name == distribution:
            lower = re.search(r">=\s*([\d.]+)", spec)
            upper = re.search(r"<\s*([\d.]+)", spec)
            assert lower and upper, f"pyproject.toml: {requirement!r} needs a lower and an upper bound"
            return lower.group(1), upper.group(1)
    raise AssertionError(f"pyproject.toml does not depend on {distribution}")


@pytest.mark.parametrize("distribution", ["pytest", "pytest-xdist", "litellm"])
def test_the_installed_version_lies_within_the_bounds_and_the_tested_range(distribution: str) -> None:
    lower, upper = _bounds(distribution)
    installed = _release(version(distribution))
    oldest, newest = (_release(v) for v in _module(distribution).TESTED)
    assert _release(lower) <= installed < _release(upper), (
        f"{distribution} {version(distribution)} not in [{lower}, {upper})"
    )
    assert _release(lower) <= oldest, f"{distribution}: compat module read from {oldest}, below the lower bound {lower}"
    assert newest < _release(upper), f"{distribution}: compat module read from {newest}, above the upper bound {upper}"


def test_a_missing_name_is_named_with_the_installed_version(monkeypatch: pytest.MonkeyPatch) -> None:
    from xdist.scheduler import LoadScheduling

    compat_xdist = _module("pytest-xdist")
    monkeypatch.delattr(LoadScheduling, "_send_tests")
    problems = compat_xdist.contract_problems()
    assert problems == [
        f"pytest-xdist {version('pytest-xdist')} (compat_xdist read 3.6.1 and 3.8.0) lacks the method "
        "LoadScheduling._send_tests"
    ]
