"""A scenario's sub-results as parts of one test outcome: the failure text, the JUnit
properties and lines, and the plain form they travel in on the scenario's call report.

Each check of a scenario is a sub-result of its one test item, never a test report of its own
(pytest's counts, ``-x``, IDE and CI adapters would count it as a test): the call report carries
them (``report.tau2_subresults``, plain values that xdist serializes), the terminal shows them
under the item with ``-v`` and counts them in the count line (plugin/reporting.py), and JUnit
XML has them in the scenario's ``<testcase>``: a ``check:<id>`` property per sub-result, and,
when any failed, a failure text listing every one of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

PROPERTY_PREFIX = "check:"


@dataclass(frozen=True)
class SubResult:
    id: str
    """The check id, as the subtest shows it (``db_state_match``, ``nl_assertion[0]``)."""
    passed: bool | None
    """None: not applicable (shown as a skipped sub-result)."""
    message: str | None = None


def status(result: SubResult) -> str:
    """``passed``, ``failed: <message>`` or ``N/A: <reason>``, the message on one line."""
    if result.passed is True:
        return "passed"
    first = (result.message or "").strip().splitlines()
    word = "N/A" if result.passed is None else "failed"
    return f"{word}: {first[0]}" if first else word


def properties(results: Sequence[SubResult]) -> list[tuple[str, str]]:
    """One JUnit property per sub-result: ``("check:<id>", status)``."""
    return [(PROPERTY_PREFIX + r.id, status(r)) for r in results]


def failure_text(results: Sequence[SubResult], *extra: str) -> str:
    """Why the scenario failed, with every sub-result and the full message of each failed one.

    ``extra`` lines (the stall rule) follow the sub-results.
    """
    failed = [r for r in results if r.passed is False]
    lines = [f"{len(failed)} of {len(results)} sub-results failed:"]
    for result in results:
        lines.append(f"  {result.id}: {status(result)}")
        if result.passed is False and result.message and "\n" in result.message.strip():
            lines += [f"    {line}" for line in result.message.strip().splitlines()[1:]]
    lines += extra
    return "\n".join(lines)


def outcome(result: SubResult) -> str:
    """``passed``, ``failed`` or ``skipped`` (not applicable): pytest's words for the outcome."""
    return "passed" if result.passed is True else "failed" if result.passed is False else "skipped"


def to_report(results: Sequence[SubResult]) -> list[dict[str, Any]]:
    """The sub-results as plain values, as the call report carries them (xdist serializes them)."""
    return [{"id": r.id, "passed": r.passed, "message": r.message} for r in results]


def from_report(data: Sequence[dict[str, Any]]) -> list[SubResult]:
    """The sub-results a call report carries (``to_report``'s form)."""
    return [SubResult(str(d["id"]), d.get("passed"), d.get("message")) for d in data]


def lines(results: Sequence[SubResult]) -> list[str]:
    """One line per sub-result, ``<id>: <status>`` (as the failure text lists them)."""
    return [f"{result.id}: {status(result)}" for result in results]
