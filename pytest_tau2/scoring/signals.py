"""Compute the six signals of one finished scenario, and one :class:`Check` per sub-result.

A *signal* is the value saved in metrics.json (bool, pass rate, or None when not applicable);
a *check* is one pytest sub-result with its evidence. Per-assertion signals (NL assertions,
DB-state predicates) have one check per assertion and a pass rate as the signal value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_tau2.environment.db import db_diff, db_hash
from pytest_tau2.scenario.model import SuccessSignal

if TYPE_CHECKING:
    from pytest_tau2.conversation.loop import ConversationResult
    from pytest_tau2.runner import GoldResult
    from pytest_tau2.scenario.base import Scenario


@dataclass
class Check:
    """One sub-result: ``passed`` is None when the check does not apply (shown as skipped)."""

    id: str
    signal: SuccessSignal
    passed: bool | None
    message: str = ""


@dataclass
class JudgeOutcome:
    """The NL judge's per-assertion verdicts for one scenario."""

    verdicts: list[dict[str, Any]]
    judge_input: list[dict[str, Any]] = field(default_factory=list)
    raw_reply: str | None = None
    error: str | None = None
    model: str | None = None


def score(
    scenario: Scenario,
    *,
    conversation: ConversationResult,
    final_dbs: dict[str, Any],
    gold: GoldResult | None,
    recorded_actions: list[dict[str, Any]],
    judge: JudgeOutcome | None,
    judge_configured: bool,
    gold_dbs: Callable[[], dict[str, Any]],
    db_state_verdicts: list[dict[str, Any]],
) -> tuple[dict[SuccessSignal, Any], list[Check]]:
    """Signal values and checks. Predicate verdicts are appended to ``db_state_verdicts``."""
    signals: dict[SuccessSignal, Any] = {}
    checks: list[Check] = []

    # CLEAN_EXIT
    clean = conversation.clean_exit
    signals[SuccessSignal.CLEAN_EXIT] = clean
    checks.append(
        Check(
            "clean_exit",
            SuccessSignal.CLEAN_EXIT,
            clean,
            ""
            if clean
            else f"the conversation did not end with the agent's exit tool (stop_reason: {conversation.stop_reason})",
        )
    )

    # ACTION_MATCH
    match = scenario.action_match(recorded_actions, conversation.transcript)
    if match is None:
        signals[SuccessSignal.ACTION_MATCH] = None
        checks.append(Check("action_match", SuccessSignal.ACTION_MATCH, None, "no reference answer"))
    else:
        signals[SuccessSignal.ACTION_MATCH] = match.matched
        checks.append(Check("action_match", SuccessSignal.ACTION_MATCH, match.matched, match.reason))

    # DB_STATE_MATCH
    signals[SuccessSignal.DB_STATE_MATCH], db_check = _db_state_match(final_dbs, gold, gold_dbs)
    checks.append(db_check)

    # DB_STATE_ASSERTION
    rate, assertion_checks = _db_state_assertions(scenario, final_dbs, db_state_verdicts)
    signals[SuccessSignal.DB_STATE_ASSERTION] = rate
    checks.extend(assertion_checks)

    # NL_ASSERTION
    rate, nl_checks = _nl_assertions(scenario, judge, judge_configured)
    signals[SuccessSignal.NL_ASSERTION] = rate
    checks.extend(nl_checks)

    # JUDGE_PASSED: an overall judge opinion; no domain produces one yet.
    signals[SuccessSignal.JUDGE_PASSED] = None
    checks.append(Check("judge_passed", SuccessSignal.JUDGE_PASSED, None, "no overall judge is configured"))
    return signals, checks


def _db_state_match(
    final_dbs: dict[str, Any], gold: GoldResult | None, gold_dbs: Callable[[], dict[str, Any]]
) -> tuple[bool | None, Check]:
    if gold is None:
        return None, Check("db_state_match", SuccessSignal.DB_STATE_MATCH, None, "the scenario has no gold actions")
    actual = {side: db_hash(db) if db is not None else None for side, db in final_dbs.items()}
    mismatched = [side for side in gold.hashes if gold.hashes[side] != actual.get(side)]
    if not mismatched:
        return True, Check("db_state_match", SuccessSignal.DB_STATE_MATCH, True)
    expected_dbs = gold_dbs()
    parts = []
    for side in mismatched:
        label = "DB" if side == "agent" else f"{side} DB"
        parts.append(
            f"{label} hash {actual.get(side)} != expected {gold.hashes[side]}\n"
            f"diff (expected -> actual):\n{db_diff(expected_dbs.get(side), final_dbs.get(side))}"
        )
    return False, Check("db_state_match", SuccessSignal.DB_STATE_MATCH, False, "\n".join(parts))


def _db_state_assertions(
    scenario: Scenario, final_dbs: dict[str, Any], verdicts: list[dict[str, Any]]
) -> tuple[float | None, list[Check]]:
    assertions = scenario.db_state_assertions or []
    if not assertions:
        return None, [Check("db_state_assertion", SuccessSignal.DB_STATE_ASSERTION, None, "no DB-state assertions")]
    from pytest_tau2.scoring.predicates import evaluate_db_state_assertion

    checks = []
    passed = 0
    for i, assertion in enumerate(assertions):
        verdict = evaluate_db_state_assertion(
            scenario.predicate_domain, assertion, final_dbs.get("agent"), final_dbs.get("user")
        )
        passed += bool(verdict["passed"])
        message = "" if verdict["passed"] else _predicate_message(verdict, assertion)
        checks.append(
            Check(
                f"db_state_assertion[{i}:{verdict['func_name']}]",
                SuccessSignal.DB_STATE_ASSERTION,
                bool(verdict["passed"]),
                message,
            )
        )
        verdicts.append(verdict)
    return passed / len(assertions), checks


def _predicate_message(verdict: dict[str, Any], assertion: dict[str, Any]) -> str:
    text = (
        f"{verdict['func_name']}({_args(assertion.get('arguments') or {})}) on the {verdict['side']} DB "
        f"returned {verdict['actual']!r}, expected {verdict['expected']!r}"
    )
    if verdict.get("message"):
        text += f": {verdict['message']}"
    if verdict.get("error"):
        text += f" [error: {verdict['error']}]"
    return text


def _args(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in arguments.items())


def _nl_assertions(
    scenario: Scenario, judge: JudgeOutcome | None, judge_configured: bool
) -> tuple[float | None, list[Check]]:
    assertions = scenario.nl_assertions or []
    if not assertions:
        return None, [Check("nl_assertion", SuccessSignal.NL_ASSERTION, None, "no NL assertions")]
    if judge is None:
        reason = (
            "no judge verdict (the conversation ended in an error)"
            if judge_configured
            else "no judge configured (--tau2-judge-model)"
        )
        return None, [
            Check(f"nl_assertion[{i}]", SuccessSignal.NL_ASSERTION, None, f"{reason}: {text}")
            for i, text in enumerate(assertions)
        ]
    checks = []
    for verdict in judge.verdicts:
        ok = verdict["passed"] is True
        checks.append(
            Check(
                f"nl_assertion[{verdict['index']}]",
                SuccessSignal.NL_ASSERTION,
                ok,
                "" if ok else f"{verdict['assertion']}\njudge: {verdict['reason']}",
            )
        )
    rate = sum(1 for v in judge.verdicts if v["passed"] is True) / len(assertions)
    return rate, checks
