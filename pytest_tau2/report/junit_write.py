"""A JUnit file from result records, for a results folder no pytest session wrote (``pytest-tau2 rescore``).

The file has the shape a run's ``--junitxml`` file has once reshaped (report/junit_shape.py): one
``<testcase name="test_scenario[<item id>]">`` per result, a ``<failure>`` for a failed verdict,
an ``<error>`` for an infrastructure error or an item without a result, and the scenario's
properties (:meth:`ScenarioRecord.junit_properties`) moved to the suite by the same reshaping a
run uses. ``pytest-tau2 merge`` reads it as it reads a run's.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from pytest_tau2.report import subresults
from pytest_tau2.report.junit_shape import reshape
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.report.run_record import ErrorEntry
from pytest_tau2.storage.atomic import write_text_atomic

MARKER = "tau2_scenario"
"""The property every scenario testcase carries (the adapter's ``SCENARIO_PROPERTY``)."""


def write_junit(
    path: Path, records: Sequence[ScenarioRecord], errors: Sequence[ErrorEntry], *, suite: str, mode: str = "suite"
) -> int:
    """Write the JUnit file of ``records`` and ``errors`` at ``path``; the number of testcases."""
    root = ET.Element("testsuites")
    node = ET.SubElement(root, "testsuite", name=suite)
    failures = errored = 0
    for record in records:
        case = ET.SubElement(
            node, "testcase", classname=suite, name=f"test_scenario[{record.folder}]", time=f"{record.duration_s:.3f}"
        )
        holder = ET.SubElement(case, "properties")
        for name, value in [(MARKER, record.scenario), *record.junit_properties()]:
            ET.SubElement(holder, "property", name=name, value=value)
        if record.infrastructure_error:
            errored += 1
            ET.SubElement(case, "error", message=record.infrastructure_error.splitlines()[0][:500])
        elif record.is_successful is False or record.stalled:
            failures += 1
            failed = [c.id for c in record.gating_checks() if c.passed is False]
            why = "stalled" if record.stalled else f"failed: {', '.join(failed) or 'the verdict'}"
            ET.SubElement(case, "failure", message=why)
    for entry in errors:
        errored += 1
        case = ET.SubElement(node, "testcase", classname=suite, name=f"test_scenario[{entry.scenario}]", time="0")
        ET.SubElement(case, "error", message=entry.reason[:500])
    count = len(records) + len(errors)
    node.set("tests", str(count))
    node.set("failures", str(failures))
    node.set("errors", str(errored))
    node.set("skipped", "0")
    ET.indent(root)
    write_text_atomic(path, ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n")
    if mode != "testcase":
        reshape(path, mode, marker=MARKER, ours=ScenarioRecord.junit_property, prefix=subresults.PROPERTY_PREFIX)
    return count
