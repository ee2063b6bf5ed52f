"""Where a scenario's JUnit properties go: ``--tau2-junit-properties testcase|suite|none``.

pytest writes an item's ``user_properties`` as ``<properties>`` inside its ``<testcase>``. The
JUnit schema CI tools validate against (``junit-10.xsd``: Jenkins' and pytest's own tests) has
no such element, so by default (``suite``) the written file is reshaped once pytest has written
it: each scenario testcase's tau2 properties move to the ``<testsuite>``'s ``<properties>``,
named ``<item id>:<name>`` (``restaurant__wrong_total:is_successful``), and the testcase gets a
``<system-out>`` with one line per sub-result, which dashboards show as the test's output.
``none`` writes the ``<system-out>`` lines and drops the properties; ``testcase`` leaves pytest's
file as it was (properties inside each testcase: readers of that shape, not valid against the
schema). Properties a user recorded on a scenario item stay where pytest put them. A scenario
written as two testcases (pytest-rerunfailures writes one for the run it repeated) keeps one set
of suite properties, its last run's.

A scenario's testcase is recognised by its marker property (the scenario name, recorded on every
scenario item before it can fail); the file is read and written with the standard library's
ElementTree, the way pytest itself writes it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from pytest_tau2.storage.atomic import write_text_atomic

MODES = ("suite", "testcase", "none")
_ITEM = re.compile(r"\[(?P<id>.+)\]$")


def suite_name(testcase: ET.Element, name: str) -> str:
    """The suite-level name of a testcase's property: ``<item id>:<name>``."""
    case = testcase.get("name") or ""
    found = _ITEM.search(case)
    return f"{found['id'] if found else case}:{name}"


def suite_properties(root: ET.Element) -> dict[str, dict[str, str]]:
    """Item id -> the properties the testsuites of a file hold for it (``<item id>:<name>``)."""
    found: dict[str, dict[str, str]] = {}
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    for prop in (p for suite in suites for holder in suite.findall("properties") for p in holder.findall("property")):
        item, sep, name = (prop.get("name") or "").partition(":")
        if sep and name:
            found.setdefault(item, {})[name] = prop.get("value") or ""
    return found


def reshape(path: Path, mode: str, *, marker: str, ours: Callable[[str], bool], prefix: str) -> int:
    """Rewrite the JUnit file at ``path`` for ``mode``; returns the number of scenario testcases.

    ``marker`` names the property every scenario testcase has, ``ours`` tells the tau2 properties
    from a user's, ``prefix`` marks the sub-result properties (``check:``) that become the
    ``<system-out>`` lines.
    """
    if mode == "testcase":
        return 0
    if mode not in MODES:
        raise ValueError(f"--tau2-junit-properties must be one of {', '.join(MODES)}, got {mode!r}")
    tree = ET.parse(path)
    root = tree.getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    count = 0
    for suite in suites:
        moved: dict[str, ET.Element] = {}  # a testcase written twice (pytest-rerunfailures): its last run's
        for case in suite.findall("testcase"):
            holder = case.find("properties")
            if holder is None or not any(p.get("name") == marker for p in holder.findall("property")):
                continue
            count += 1
            mine = [p for p in holder.findall("property") if p.get("name") == marker or ours(p.get("name") or "")]
            # The output lines are made before the properties are renamed.
            checks = [(p.get("name") or "", p.get("value")) for p in mine]
            lines = [f"{name[len(prefix) :]}: {value}" for name, value in checks if name.startswith(prefix)]
            for prop in mine:
                holder.remove(prop)
                prop.set("name", suite_name(case, prop.get("name") or ""))
                moved[str(prop.get("name"))] = prop
            if not len(holder):
                case.remove(holder)
            if lines:
                ET.SubElement(case, "system-out").text = "\n".join(lines) + "\n"
        if mode == "suite" and moved:
            props = suite.find("properties")
            if props is None:
                props = ET.Element("properties")
                suite.insert(0, props)
            props.extend(moved.values())
    if count:
        write_text_atomic(path, '<?xml version="1.0" encoding="utf-8"?>' + ET.tostring(root, encoding="unicode"))
    return count
