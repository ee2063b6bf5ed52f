"""The shipped tau2 tasks a do-nothing agent passes (``--tau2-agent null`` with the offline scripted
user), per verdict: ``null_passes.json``, written by ``python bench/bench_null_agent.py`` from real
runs. The report and ``pytest-tau2 compare`` mark these tasks: passing one says nothing about the
agent under test (docs/statistics.md lists them).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from importlib import resources

from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.scoring.tau2_signal import TAU2_REWARD

MARK = "do-nothing passes"
"""The marker shown beside such a task."""


@functools.cache
def _table() -> dict[str, frozenset[str]]:
    text = resources.files("pytest_tau2.report").joinpath("null_passes.json").read_text("utf-8")
    table = json.loads(text)
    return {verdict: frozenset(n for d in domains.values() for n in d["passed"]) for verdict, domains in table.items()}


def verdict_of(record: ScenarioRecord) -> str:
    """``tau2-reward`` when tau2's reward decided the item, else ``six-signal``."""
    return "tau2-reward" if list(record.success_signals) == [TAU2_REWARD.key] else "six-signal"


def passes_without_work(record: ScenarioRecord) -> bool:
    """True for a shipped tau2 task that the do-nothing agent passes under the record's verdict."""
    return record.tau2_id is not None and record.scenario in _table().get(verdict_of(record), frozenset())


def free_tasks(records: Iterable[ScenarioRecord]) -> list[str]:
    """The tasks of ``records`` a do-nothing agent passes (each once, in order of appearance)."""
    return list(dict.fromkeys(r.scenario for r in records if passes_without_work(r)))
