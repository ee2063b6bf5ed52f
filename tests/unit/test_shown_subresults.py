"""The sub-results a scenario's call report carries leave the process masked, like its other texts
(plugin/shown.py): the ``-v`` lines show their messages (plugin/reporting.py)."""

from __future__ import annotations

import pytest

from pytest_tau2.plugin.shown import clean_report


def test_the_sub_results_of_a_call_report_are_shown_through_the_mask() -> None:
    report = pytest.TestReport("test_scenarios.py::test_scenario[lab__x]", ("f.py", 0, "x"), {}, "failed", None, "call")
    report.tau2_subresults = [  # type: ignore[attr-defined]
        {"id": "action_match", "passed": False, "message": "called with token sk-SECRET\x1b[2J"},
        {"id": "clean_exit", "passed": True, "message": None},
    ]
    clean_report(report, lambda text: text.replace("sk-SECRET", "***").replace("\x1b", "\\x1b"))
    assert report.tau2_subresults == [
        {"id": "action_match", "passed": False, "message": "called with token ***\\x1b[2J"},
        {"id": "clean_exit", "passed": True, "message": None},
    ]
