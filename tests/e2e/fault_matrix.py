"""What every fault-matrix test asserts about a nested pytest run (tests/e2e/test_faults_*.py).

For each fault: the item's outcome and message (asserted by the test itself), that the items
pytest reported, the JUnit test cases and the entries of ``all_metrics.json`` are the same
scenarios, and that no secret appears anywhere the run wrote: stdout, stderr, the JUnit file,
and every file (name and content) in the results folder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tests.e2e.llm_scripts import PytestRun

SCENARIO_CASE = re.compile(r"^test_scenario\[(?P<name>.+)\]$")


def junit_scenarios(run: PytestRun) -> list[str]:
    """Scenario names of the JUnit test cases (one per item pytest ran)."""
    if not run.junit_path.exists():
        return []
    found = []
    for case in run.junit().iter("testcase"):
        match = SCENARIO_CASE.match(case.get("name") or "")
        if match:
            found.append(match.group("name"))
    return found


def junit_outcome(run: PytestRun, scenario: str) -> str:
    """``passed``, ``failure``, ``error`` or ``skipped`` for one JUnit test case."""
    tags = [e.tag for e in run.testcase(scenario) if e.tag in ("error", "failure", "skipped")]
    return tags[0] if tags else "passed"


def all_metrics_scenarios(run: PytestRun) -> list[str]:
    """Scenario names of ``all_metrics.json``: results and errors without a result (empty without the file)."""
    path = run.results_dir / "all_metrics.json"
    if not path.exists():
        return []
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    entries = [*data.get("scenarios", []), *data.get("errors_without_result", [])]
    return [str(entry["scenario"]) for entry in entries]


def assert_counts_agree(run: PytestRun, expected: Iterable[str]) -> None:
    """Items run == JUnit test cases == all_metrics.json entries == ``expected`` (as sets and counts)."""
    wanted = sorted(expected)
    cases = sorted(junit_scenarios(run))
    entries = sorted(all_metrics_scenarios(run))
    debug = f"\n--- stdout (tail)\n{run.stdout[-4000:]}\n--- stderr (tail)\n{run.stderr[-2000:]}"
    assert cases == wanted, f"JUnit test cases {cases} != {wanted}{debug}"
    assert entries == wanted, f"all_metrics.json entries {entries} != {wanted}{debug}"


def written_files(run: PytestRun) -> list[Path]:
    files = [run.junit_path] if run.junit_path.exists() else []
    if run.results_dir.exists():
        files += sorted(p for p in run.results_dir.rglob("*") if p.is_file())
    return files


def assert_no_secret(run: PytestRun, *secrets: str) -> None:
    """No secret in stdout, stderr, the JUnit file, or any file name or content under the results folder."""
    places = {"stdout": run.stdout, "stderr": run.stderr}
    for path in written_files(run):
        places[str(path)] = path.name + "\n" + path.read_text("utf-8", errors="replace")
    for secret in secrets:
        assert secret, "an empty secret proves nothing"
        leaks = [place for place, text in places.items() if secret in text]
        assert not leaks, f"secret {secret[:4]}... leaked into {leaks}"
