"""Third-party packages imported on first use, whole or not at all.

Some packages are imported only when first needed (jsonschema on the first tool call, deepdiff
on the first DB mismatch), so a run that never needs them never pays for them. Such an import
then happens inside a scenario, where something may interrupt it half-way: a test timeout
(pytest-timeout raises from a signal handler), Ctrl-C. Python drops the module that failed but
keeps the submodules that had loaded; the next import of the package runs its ``__init__``
again, finds those submodules already there and never binds them as its attributes, so the
next scenario fails with ``module 'jsonschema' has no attribute 'exceptions'`` (issue 26.10).
:func:`import_whole` removes what an interrupted import added, so the next one starts afresh.

These imports are also serialized: they happen in whichever thread first needs the package (a
tool call off the event loop, the prefetcher's warm-up), and two threads importing submodules of
one package whose modules import each other (jsonschema) can see it half-initialized:
``cannot import name 'Draft3Validator' from partially initialized module 'jsonschema.validators'``
(seen on a loaded machine, a blocking tool's thread beside another scenario's first tool call).
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any


def import_whole(name: str) -> ModuleType:
    """``importlib.import_module(name)``; if the import fails or is interrupted, every module of a
    package that was not loaded before it is dropped again (only those: another thread's imports
    of packages already loaded are left alone)."""
    module = sys.modules.get(name)
    if module is not None and not _initializing(module):
        return module
    with _IMPORTING:  # one first import at a time (a thread finding it half-done waits here)
        module = sys.modules.get(name)
        if module is not None and not _initializing(module):
            return module
        loaded = {key.partition(".")[0] for key in list(sys.modules)}
        try:
            return importlib.import_module(name)
        except BaseException:
            for key in list(sys.modules):
                if key.partition(".")[0] not in loaded:
                    sys.modules.pop(key, None)
            raise


_IMPORTING = threading.RLock()


def _initializing(module: ModuleType) -> bool:
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any], *, first: Sequence[str] = ()
) -> Callable[[str], Any]:
    """A package's module ``__getattr__`` that imports each name in ``exports`` (name -> the module
    defining it) on first use and keeps it in ``namespace`` (the package's globals); ``first``:
    modules imported before any export is (tools that register themselves). Importing a light
    module of the package (its ``options``, read at every pytest start) then stays cheap."""

    def attribute(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        for other in first:
            importlib.import_module(other)
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return attribute
