"""One JUnit XML file from the JUnit files of several shards (``pytest-tau2 merge``).

pytest writes ``<testsuites><testsuite name="pytest" tests= failures= errors= skipped= time=
timestamp= hostname=>`` with one ``<testcase>`` per item (and, under the default
``--tau2-junit-properties suite``, the scenarios' properties in the suite's ``<properties>``).
The merged file has one ``<testsuite>`` whose properties are every shard's (each distinct
name and value once), whose counts are the sums of the shards' counts, whose ``time`` is the sum of
the shards' times (the compute spent, not the wall clock of the matrix), whose ``timestamp`` is
the earliest, and whose test cases are every shard's, sorted by class name and name. The
standard library's ElementTree reads and writes it: the format is small and fixed, and the
merge needs no schema beyond what pytest writes.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from pytest_tau2.errors import Tau2Error

COUNTS = ("tests", "errors", "failures", "skipped")


class JUnitMergeError(Tau2Error):
    """A shard's JUnit file cannot be read, or two shards report the same test case."""


def _suites(path: Path) -> list[ET.Element]:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise JUnitMergeError(f"cannot read the JUnit file {path}: {exc}") from None
    if root.tag == "testsuite":
        return [root]
    if root.tag != "testsuites":
        raise JUnitMergeError(f"{path} is not a JUnit XML file (root element <{root.tag}>)")
    return list(root.iter("testsuite"))


def merge_junit(paths: Sequence[Path], output: Path) -> int:
    """Write the merged file at ``output``; returns its number of test cases."""
    cases: dict[tuple[str, str], tuple[ET.Element, Path]] = {}
    properties: dict[tuple[str, str], ET.Element] = {}
    totals = dict.fromkeys(COUNTS, 0)
    time = 0.0
    stamps: list[str] = []
    hosts: list[str] = []
    name = "pytest"
    for path in paths:
        for suite in _suites(path):
            name = suite.get("name") or name
            for count in COUNTS:
                totals[count] += int(suite.get(count) or 0)
            time += float(suite.get("time") or 0.0)
            if suite.get("timestamp"):
                stamps.append(str(suite.get("timestamp")))
            host = suite.get("hostname")
            if host and host not in hosts:
                hosts.append(host)
            for holder in suite.findall("properties"):
                for prop in holder.findall("property"):
                    properties.setdefault((prop.get("name") or "", prop.get("value") or ""), prop)
            for case in suite.iter("testcase"):
                key = (case.get("classname") or "", case.get("name") or "")
                if key in cases:
                    raise JUnitMergeError(
                        f"test case {key[0]}::{key[1]} is in two shards' JUnit files: {cases[key][1]} and {path}"
                    )
                cases[key] = (case, path)
    root = ET.Element("testsuites", {"name": "pytest tests"})
    attributes = {count: str(totals[count]) for count in COUNTS}
    attributes["time"] = f"{time:.3f}"
    if stamps:
        attributes["timestamp"] = min(stamps)
    if hosts:
        attributes["hostname"] = ",".join(hosts)
    suite = ET.SubElement(root, "testsuite", {"name": name, **attributes})
    if properties:
        ET.SubElement(suite, "properties").extend(properties.values())
    for key in sorted(cases):
        suite.append(cases[key][0])
    output.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(output, encoding="utf-8", xml_declaration=True)
    return len(cases)
