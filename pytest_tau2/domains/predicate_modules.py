"""Where the shipped domains' DB-state predicates live: each domain package with a ``predicates``
module names it to scoring (:func:`~pytest_tau2.scoring.predicates.register_predicate_module`), which
imports it the first time an assertion of that domain is evaluated or the predicates are listed.

Loaded by the extension registry's load step (extension/registry.py, ``BUILTINS``); it imports no
domain itself (a telecom module costs a third of a second to import).
"""

from __future__ import annotations

import pkgutil
from pathlib import Path

from pytest_tau2.scoring.predicates import register_predicate_module

_HERE = Path(__file__).parent

for _info in pkgutil.iter_modules([str(_HERE)]):
    if _info.ispkg and (_HERE / _info.name / "predicates.py").is_file():
        register_predicate_module(_info.name, f"{__package__}.{_info.name}.predicates")
