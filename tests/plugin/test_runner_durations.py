"""A scenario's time is what runners show as the test's time (issue 38 point 2).

The conversation runs in the setup phase; TeamCity/PyCharm, JUnit's ``junit_duration_report=call``
and ``--durations``' call line take a test's time from its call report, so a passed setup's time
is carried on the call report (plugin/item.py), and JUnit's default total stays the sum of the phases.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from tests.plugin.conftest import RIGHT_AND_WRONG, Project
from tests.plugin.test_report_consumers import _scenario, _teamcity

PAUSE_S = 0.3
"""What each scenario's conversation takes at least: its state set-up sleeps this long."""

SLOW = RIGHT_AND_WRONG.replace("class Right(LabBase):", "class Right(Slow):").replace(
    "class Wrong(LabBase):", "class Wrong(Slow):"
)
SLOW_BASE = f"""
import time


class Slow(LabBase):
    def setup_shared_state(self, state, side):
        time.sleep({PAUSE_S})
        super().setup_shared_state(state, side)
"""


def _project(project: Project) -> Project:
    return project.lab(SLOW_BASE + SLOW)


def test_teamcity_gives_a_scenario_its_time(project: Project) -> None:
    run = _project(project).run("-p", "teamcity.pytest_plugin", "--teamcity")
    finished = {_scenario(a["name"]): int(a["duration"]) for k, a in _teamcity(run.stdout) if k == "testFinished"}
    assert set(finished) == {"lab__right", "lab__wrong"}, run.stdout
    # milliseconds; the conversation sleeps PAUSE_S at least (a passed one and a failed one alike)
    assert all(ms >= PAUSE_S * 1000 for ms in finished.values()), finished


@pytest.mark.parametrize("mode", ["total", "call"])
def test_junit_gives_a_scenario_its_time_whichever_duration_it_reports(project: Project, mode: str) -> None:
    _project(project).run("--junitxml=out.xml", "-o", f"junit_duration_report={mode}")
    times = {c.get("name"): float(c.get("time", "0")) for c in ET.parse(project.path / "out.xml").iter("testcase")}
    assert len(times) == 2 and all(t >= PAUSE_S for t in times.values()), times


def test_durations_show_the_scenario_on_its_call_line(project: Project) -> None:
    run = _project(project).run("--durations=0", "--durations-min=0")
    lines = re.findall(r"^(\d+\.\d+)s (setup|call|teardown)\s+\S+\[(lab__\w+)\]$", run.stdout, re.MULTILINE)
    calls = {name: float(seconds) for seconds, when, name in lines if when == "call"}
    assert set(calls) == {"lab__right", "lab__wrong"} and all(s >= PAUSE_S for s in calls.values()), run.stdout
    # the time is counted once: the setup line of a passed setup no longer holds it
    setups = {name: float(seconds) for seconds, when, name in lines if when == "setup"}
    assert all(s < PAUSE_S for s in setups.values()), run.stdout
