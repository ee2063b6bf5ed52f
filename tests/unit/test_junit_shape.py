"""report/junit_shape.py on files shaped like pytest's: what moves, what stays, what is never touched."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_tau2.report.junit_shape import reshape
from pytest_tau2.report.record import ScenarioRecord
from tests.support import junit

HEAD = '<?xml version="1.0" encoding="utf-8"?>'


def _case(item: str, props: list[tuple[str, str]], extra: str = "") -> str:
    inner = "".join(f'<property name="{n}" value="{v}"/>' for n, v in props)
    holder = f"<properties>{inner}</properties>" if props else ""
    return f'<testcase classname="test_scenarios" name="test_scenario[{item}]" time="0.1">{holder}{extra}</testcase>'


def _file(tmp_path: Path, *cases: str) -> Path:
    path = tmp_path / "junit.xml"
    suite = f'<testsuite name="pytest" errors="0" failures="0" skipped="0" tests="{len(cases)}" time="0.2">'
    path.write_text(HEAD + f'<testsuites name="pytest tests">{suite}{"".join(cases)}</testsuite></testsuites>')
    return path


def _reshape(path: Path, mode: str) -> int:
    return reshape(path, mode, marker="tau2_scenario", ours=ScenarioRecord.junit_property, prefix="check:")


def test_a_file_without_scenarios_is_not_rewritten(tmp_path: Path) -> None:
    props = '<properties><property name="a" value="1"/></properties>'
    plain = f'<testcase classname="test_x" name="test_y" time="0.1">{props}</testcase>'
    path = _file(tmp_path, plain)
    before = path.read_bytes()
    assert _reshape(path, "suite") == 0
    assert path.read_bytes() == before


def test_suite_moves_the_scenarios_properties_and_writes_the_sub_results_as_output(tmp_path: Path) -> None:
    first = [("tau2_scenario", "lab__x"), ("is_successful", "false"), ("check:action_match", "failed: no")]
    last = [("tau2_scenario", "lab__x"), ("is_successful", "true"), ("check:action_match", "passed")]
    mine = [("tau2_scenario", "lab__y"), ("ticket", "T-1"), ("check:clean_exit", "passed")]
    path = _file(tmp_path, _case("lab__x", first), _case("lab__x", last), _case("lab__y", mine, "<skipped/>"))
    assert _reshape(path, "suite") == 3
    # Only the user's own testcase property is left outside the schema.
    assert [e.split(":")[0] for e in junit.schema_errors(path)] == ["/testsuites/testsuite/testcase[3]"]
    root = ET.parse(path).getroot()
    suite_props = {p.get("name"): p.get("value") for p in root.find("testsuite/properties") or []}
    # A testcase written twice (a rerun): one set of suite properties, the last run's.
    assert suite_props["lab__x:is_successful"] == "true"
    assert suite_props["lab__y:check:clean_exit"] == "passed"
    assert "lab__y:ticket" not in suite_props
    cases = root.findall("testsuite/testcase")
    assert [junit.system_out(c) for c in cases] == [
        "action_match: failed: no\n",
        "action_match: passed\n",
        "clean_exit: passed\n",
    ]
    assert [[p.get("name") for p in c.iter("property")] for c in cases] == [[], [], ["ticket"]]  # the user's stays


def test_none_drops_them_and_an_unknown_mode_is_refused(tmp_path: Path) -> None:
    path = _file(tmp_path, _case("lab__x", [("tau2_scenario", "lab__x"), ("check:action_match", "passed")]))
    assert _reshape(path, "none") == 1
    junit.validate(path)
    assert not list(ET.parse(path).getroot().iter("property"))
    with pytest.raises(ValueError, match="must be one of suite, testcase, none"):
        _reshape(path, "everywhere")
