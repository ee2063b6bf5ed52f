"""Reading the JUnit files a run writes, as a CI consumer would, and validating them.

``validate`` checks a file against junit-10.xsd (the schema pytest's own tests and Jenkins'
readers use, beside this module) with xmlschema, a maintained XSD 1.0/1.1 validator from the
package index. ``scenario_properties`` reads a scenario testcase's tau2 properties from either
place ``--tau2-junit-properties`` puts them: the testsuite's ``<properties>`` (``suite``, the
default, named ``<item id>:<name>``) or the testcase's own (``testcase``).
"""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

XSD = Path(__file__).with_name("junit-10.xsd")
_ITEM = re.compile(r"\[(?P<id>.+)\]$")


@functools.cache
def _schema() -> Any:
    import xmlschema

    return xmlschema.XMLSchema10(str(XSD))


def schema_errors(path: Path) -> list[str]:
    """Every way the file breaks junit-10.xsd, one line each (empty: valid)."""
    return [f"{error.path}: {error.reason}" for error in _schema().iter_errors(str(path))]


def validate(path: Path) -> None:
    errors = schema_errors(path)
    assert not errors, f"{path} is not valid against junit-10.xsd:\n" + "\n".join(errors[:20])


def item_id(case: ET.Element) -> str:
    name = case.get("name") or ""
    found = _ITEM.search(name)
    return found["id"] if found else name


def scenario_properties(root: ET.Element, case: ET.Element) -> dict[str, str]:
    """A testcase's properties: its own, and those the testsuite holds for it (``<item id>:<name>``)."""
    own = [(str(p.get("name")), str(p.get("value"))) for p in case.iter("property")]
    prefix = item_id(case) + ":"
    suite = [
        (str(p.get("name"))[len(prefix) :], str(p.get("value")))
        for holder in root.iter("testsuite")
        for props in holder.findall("properties")
        for p in props.findall("property")
        if str(p.get("name")).startswith(prefix)
    ]
    names = [name for name, _ in own + suite]
    assert len(names) == len(set(names)), f"repeated properties in {case.get('name')}: {names}"
    return dict(own + suite)


def system_out(case: ET.Element) -> str:
    """The testcase's ``<system-out>`` texts, joined."""
    return "".join(out.text or "" for out in case.findall("system-out"))
