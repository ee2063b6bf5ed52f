"""``Tau2RetailBaseScenario``: the 114 upstream retail tasks, each derived from ``tau2_id``."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

from pytest_tau2.domains.tau2_common.base import Tau2BaseScenario
from pytest_tau2.domains.tau2_retail.db import read_db
from pytest_tau2.domains.tau2_retail.tools import TOOL_CLASSES
from pytest_tau2.scenario.model import SuccessSignal


class Tau2RetailBaseScenario(Tau2BaseScenario):
    """Retail: scored on the final DB, a clean exit, and (where the task has any) NL assertions.

    ACTION_MATCH is computed with upstream's rule and saved under ``excluded``.
    """

    tau2_domain = "retail"
    agent_tool_classes = TOOL_CLASSES

    @cached_property
    def success_signals(self) -> tuple[SuccessSignal, ...]:  # type: ignore[override]
        if self.nl_assertions:
            return (SuccessSignal.DB_STATE_MATCH, SuccessSignal.NL_ASSERTION, SuccessSignal.CLEAN_EXIT)
        return (SuccessSignal.DB_STATE_MATCH, SuccessSignal.CLEAN_EXIT)

    def read_db(self, path: Path, side: str) -> Any:
        return _cached_db(path)


_DB_CACHE: dict[Path, Any] = {}


def _cached_db(path: Path) -> Any:
    # Parsed once per process; the runner copies it per scenario (copy_db).
    if path not in _DB_CACHE:
        _DB_CACHE[path] = read_db(path)
    return _DB_CACHE[path]
