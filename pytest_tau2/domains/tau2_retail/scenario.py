"""``Tau2RetailBaseScenario``: the 114 upstream retail tasks, each derived from ``tau2_id``."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from pytest_tau2.domains.tau2_common.base import Tau2BaseScenario
from pytest_tau2.domains.tau2_common.tasks import cached_db
from pytest_tau2.domains.tau2_retail.db import RetailDB, read_db
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

    def read_db(self, path: Path, side: str) -> RetailDB:
        return cached_db(path, read_db)
