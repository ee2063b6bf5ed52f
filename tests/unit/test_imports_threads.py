"""``import_whole`` from several threads at once: a package whose submodules import each other
(as jsonschema's do) is imported once, whole, and every thread gets it; first imports never run
side by side (a loaded machine once showed ``cannot import name ... from partially initialized
module 'jsonschema.validators'`` when a blocking tool's thread and another scenario's first tool
call imported it together)."""

from __future__ import annotations

import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from pytest_tau2.environment import imports

CIRCLE = {
    "__init__.py": "from circlepkg.validators import Checker\nfrom circlepkg import exceptions\n",
    "exceptions.py": "import time\ntime.sleep(0.05)\nclass Bad(Exception):\n    pass\n",
    "validators.py": textwrap.dedent(
        """
        import time
        from circlepkg import exceptions
        time.sleep(0.05)
        from circlepkg._types import KINDS


        class Checker:
            kinds = KINDS
            error = exceptions.Bad
        """
    ),
    "_types.py": "import circlepkg.exceptions\nKINDS = ('object', 'array')\n",
}


def test_threads_importing_one_circular_package_each_get_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "circlepkg"
    package.mkdir()
    for name, text in CIRCLE.items():
        (package / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    got: list[object] = []
    errors: list[BaseException] = []
    start = threading.Barrier(6)

    def first_use(name: str) -> None:
        start.wait()
        try:
            got.append(imports.import_whole(name).__name__)
        except BaseException as exc:  # the failure this guards against
            errors.append(exc)

    names = ["circlepkg.validators", "circlepkg.exceptions", "circlepkg._types"] * 2
    threads = [threading.Thread(target=first_use, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    try:
        assert errors == []
        assert sorted(got) == sorted(names)
        checker = sys.modules["circlepkg.validators"].Checker
        assert checker.kinds == ("object", "array") and checker.error is sys.modules["circlepkg.exceptions"].Bad
    finally:
        for name in [n for n in sys.modules if n.partition(".")[0] == "circlepkg"]:
            monkeypatch.delitem(sys.modules, name)


def test_first_imports_run_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    active = peak = 0
    lock = threading.Lock()

    def slow_import(name: str) -> object:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.02)
        with lock:
            active -= 1
        return sys.modules[__name__]

    monkeypatch.setattr(imports.importlib, "import_module", slow_import)
    threads = [threading.Thread(target=imports.import_whole, args=(f"not_loaded_{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert peak == 1
