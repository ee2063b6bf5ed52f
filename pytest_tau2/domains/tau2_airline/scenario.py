"""``Tau2AirlineBaseScenario``: the 50 upstream airline tasks, each derived from ``tau2_id``."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pytest_tau2.domains.tau2_airline.db import AirlineDB, read_db
from pytest_tau2.domains.tau2_airline.tools import TOOL_CLASSES
from pytest_tau2.domains.tau2_common.base import Tau2BaseScenario
from pytest_tau2.domains.tau2_common.tasks import cached_db
from pytest_tau2.scenario.model import SuccessSignal


class Tau2AirlineBaseScenario(Tau2BaseScenario):
    """Airline: scored on the final DB and a clean exit.

    Upstream's airline tasks carry NL assertions that do not gate its reward: with a judge
    configured they are judged and saved per assertion under ``excluded``, never failing.
    """

    tau2_domain = "airline"
    agent_tool_classes = TOOL_CLASSES
    success_signals: ClassVar[tuple[SuccessSignal, ...]] = (SuccessSignal.DB_STATE_MATCH, SuccessSignal.CLEAN_EXIT)

    def read_db(self, path: Path, side: str) -> AirlineDB:
        return cached_db(path, read_db)
