"""A scenario's sub-results as one test outcome: the failure text and the JUnit properties.

Each check of a scenario is a pytest subtest, shown on its own line in the terminal. JUnit XML
has one ``<testcase>`` per scenario instead (plugin/session.py keeps the subtest reports out of it), so
what a CI reader needs from the sub-results travels with that testcase: a ``check:<id>``
property per sub-result, and, when any failed, a failure text listing every one of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
