"""A test timeout that interrupts a scenario's deferred import is that scenario's error only
(issue 26.10): the next scenarios import the package afresh and pass (pytest-timeout, signal
method, as users run it)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from pytest_tau2.environment.imports import import_whole
from tests.plugin.conftest import Project

SLOW_JSONSCHEMA = '''
import importlib.abc
import sys
import time

import restaurant_scenarios  # noqa: F401


class SlowJsonschema(importlib.abc.MetaPathFinder):
    """The first import of jsonschema.validators (the first tool call's) outlasts the timeout,
    after jsonschema's other submodules have loaded: the timeout interrupts the package half-way."""

    done = False

    def find_spec(self, name, path, target=None):
        if name == "jsonschema.validators" and not SlowJsonschema.done:
            SlowJsonschema.done = True
            time.sleep(6)
        return None


sys.meta_path.insert(0, SlowJsonschema())
'''


def test_a_timeout_in_the_first_scenarios_deferred_import_fails_only_that_scenario(project: Project) -> None:
    project.restaurant()
    project.write("conftest.py", SLOW_JSONSCHEMA)
    run = project.run("-p", "timeout", "--timeout=3", "--timeout-method=signal", "-p", "no:randomly")
    out = run.stdout
    assert "INTERNALERROR" not in out + run.stderr
    assert "has no attribute" not in out
    items = run.items()
    errored = [name for name, outcome in items.items() if outcome == "ERROR"]
    assert len(errored) == 1, items
    assert "Timeout (>3.0s) from pytest-timeout" in out
    assert sorted(o for n, o in items.items() if n not in errored) == ["PASSED"] * 5
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED


def test_an_interrupted_import_leaves_nothing_half_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mechanism itself: a package whose __init__ imports a submodule, then is interrupted."""
    package = tmp_path / "halfpkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            import os
            from halfpkg import exceptions
            if os.environ.get("HALFPKG_INTERRUPT"):
                raise KeyboardInterrupt("interrupted half-way")
            from halfpkg import validators
            """
        ),
        "utf-8",
    )
    (package / "exceptions.py").write_text("class Bad(Exception):\n    pass\n", "utf-8")
    (package / "validators.py").write_text("from halfpkg.exceptions import Bad\n", "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("HALFPKG_INTERRUPT", "1")
    with pytest.raises(KeyboardInterrupt):
        import_whole("halfpkg")
    assert not [name for name in sys.modules if name.startswith("halfpkg")]
    monkeypatch.delenv("HALFPKG_INTERRUPT")
    module = import_whole("halfpkg")
    assert module.exceptions.Bad is module.validators.Bad  # the submodule is an attribute again
    for name in [n for n in sys.modules if n.startswith("halfpkg")]:
        monkeypatch.delitem(sys.modules, name)
