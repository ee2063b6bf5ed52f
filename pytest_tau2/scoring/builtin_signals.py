"""The six built-in signals: their compute functions, evidence schemas and table entries.

Registered when this module is imported, ahead of any other signal (tau2's reward imports this
module first), so the table's report order starts with the six. Read the table through
:mod:`pytest_tau2.scoring.signals`.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_tau2.environment.db import canonical_json, db_diff
from pytest_tau2.scoring.names import SuccessSignal
from pytest_tau2.scoring.table import Check, ScoringInput, SignalResult, SignalSpec, register_signal


def _clean_exit(inp: ScoringInput) -> SignalResult:
    clean = inp.conversation.clean_exit
    limit = inp.conversation.limit  # which limit stopped it, and what was used
    message = (
        ""
        if clean
        else f"the conversation did not end with the agent's exit tool{_or_user_stop(inp)} (stop_reason: "
        f"{inp.conversation.stop_reason}" + (f"; {limit})" if limit else ")")
    )
    return SignalResult(clean, [Check("clean_exit", SuccessSignal.CLEAN_EXIT, clean, message)])


def _or_user_stop(inp: ScoringInput) -> str:
    """Under ``--tau2-prompts upstream`` a user stop is clean as well (conversation/loop.py)."""
    return " or the user's stop" if "user_stop" in inp.conversation.clean_reasons else ""


def _action_match(inp: ScoringInput) -> SignalResult:
    match = inp.scenario.action_match(inp.final.actions, inp.conversation.transcript)
    if match is None:
        return SignalResult(None, [Check("action_match", SuccessSignal.ACTION_MATCH, None, "no reference answer")])
    return SignalResult(match.matched, [Check("action_match", SuccessSignal.ACTION_MATCH, match.matched, match.reason)])


def _db_state_match(inp: ScoringInput) -> SignalResult:
    signal = SuccessSignal.DB_STATE_MATCH
    expected = inp.expected_hashes
    if expected is None:
        return SignalResult(None, [Check("db_state_match", signal, None, "the scenario has no gold actions")])
    if inp.final.missing is not None:
        return SignalResult(None, [Check("db_state_match", signal, None, inp.final.missing)])
    actual = {side: inp.final.hash_of(side) for side in expected}
    mismatched = [side for side in expected if expected[side] != actual[side]]
    if not mismatched:
        return SignalResult(True, [Check("db_state_match", signal, True)])
    expected_dbs = inp.expected_dbs()
    parts = []
    for side in mismatched:
        label = "DB" if side == "agent" else f"{side} DB"
        want, got = expected_dbs.get(side), inp.final.dbs.get(side)
        if got is None:
            diff = "(the agent side did not send its DB)"
        elif inp.final.dbs_on_wire:
            diff = db_diff(_wire(want), got)
        else:
            diff = db_diff(want, got)
        parts.append(f"{label} hash {actual[side]} != expected {expected[side]}\ndiff (expected -> actual):\n{diff}")
    return SignalResult(False, [Check("db_state_match", signal, False, "\n".join(parts + inp.final.notes))])


def _wire(db: Any) -> Any:
    """``db`` as it travels (plain dicts, dates as text), so a diff shows values, not Python types."""
    return None if db is None else json.loads(canonical_json(db))


def _db_state_assertions(inp: ScoringInput) -> SignalResult:
    signal = SuccessSignal.DB_STATE_ASSERTION
    assertions = inp.scenario.db_state_assertions or []
    if not assertions:
        return SignalResult(None, [Check("db_state_assertion", signal, None, "no DB-state assertions")])
    from pytest_tau2.scoring.predicates import evaluate_db_state_assertion

    checks, verdicts = [], []
    for i, assertion in enumerate(assertions):
        verdict = evaluate_db_state_assertion(
            inp.scenario.predicate_domain, assertion, inp.final.dbs.get("agent"), inp.final.dbs.get("user")
        )
        message = "" if verdict["passed"] else _predicate_message(verdict, assertion)
        checks.append(
            Check(f"db_state_assertion[{i}:{verdict['func_name']}]", signal, bool(verdict["passed"]), message)
        )
        verdicts.append(verdict)
    return SignalResult(sum(bool(v["passed"]) for v in verdicts) / len(assertions), checks, verdicts)


def _predicate_message(verdict: dict[str, Any], assertion: dict[str, Any]) -> str:
    raw = assertion.get("arguments") if isinstance(assertion, dict) else None
    arguments = ", ".join(f"{k}={v!r}" for k, v in raw.items()) if isinstance(raw, dict) else ""
    call = f"{verdict['func_name']}({arguments}) on the {verdict['side']} DB"
    if verdict.get("error"):  # it returned nothing: the reason it could not be evaluated comes first
        text = f"{call} could not be evaluated: {verdict['error']} (expected {verdict['expected']!r})"
    else:
        text = f"{call} returned {verdict['actual']!r}, expected {verdict['expected']!r}"
    if verdict.get("message"):
        text += f": {verdict['message']}"
    return text


def _nl_assertions(inp: ScoringInput) -> SignalResult:
    signal = SuccessSignal.NL_ASSERTION
    assertions = inp.scenario.nl_assertions or []
    if not assertions:
        return SignalResult(None, [Check("nl_assertion", signal, None, "no NL assertions")])
    judge = inp.judge
    if judge is None:
        reason = (
            "no judge verdict (the conversation ended in an error)"
            if inp.judge_configured
            else "no judge configured (--tau2-judge-model)"
        )
        return SignalResult(
            None, [Check(f"nl_assertion[{i}]", signal, None, f"{reason}: {text}") for i, text in enumerate(assertions)]
        )
    if judge.error is not None:
        reason = f"not judged: {judge.error.splitlines()[0] if judge.error else 'the judge failed'}"
        return SignalResult(
            None, [Check(f"nl_assertion[{i}]", signal, None, f"{reason}\n{text}") for i, text in enumerate(assertions)]
        )
    checks = []
    for verdict in judge.verdicts:
        ok = verdict["passed"] is True
        message = "" if ok else f"{verdict['assertion']}\njudge: {verdict['reason']}"
        checks.append(Check(f"nl_assertion[{verdict['index']}]", signal, ok, message))
    rate = sum(1 for v in judge.verdicts if v["passed"] is True) / len(assertions)
    return SignalResult(rate, checks, list(judge.verdicts))


def _judge_passed(inp: ScoringInput) -> SignalResult:
    # An overall judge opinion; no domain produces one yet.
    return SignalResult(
        None, [Check("judge_passed", SuccessSignal.JUDGE_PASSED, None, "no overall judge is configured")]
    )


_PREDICATE_VERDICT = {
    "type": "object",
    "required": ["func_name", "side", "passed", "expected", "actual", "message", "error"],
    "properties": {
        "func_name": {"type": ["string", "null"]},
        "side": {"type": ["string", "null"]},
        "passed": {"type": "boolean"},
        "expected": {"$ref": "#/$defs/json_value"},
        "actual": {"type": ["boolean", "null"]},
        "message": {"type": ["string", "null"]},
        "error": {"type": ["string", "null"]},
    },
}
_JUDGE_VERDICT = {
    "type": "object",
    "required": ["index", "assertion", "passed", "reason"],
    "properties": {
        "index": {"type": "integer", "minimum": 0},
        "assertion": {"type": "string"},
        "passed": {"type": ["boolean", "null"]},
        "reason": {"type": ["string", "null"]},
        "judges": {
            "description": "Present with several judges (--tau2-judge-model A,B,C): each judge's verdict on this "
            "assertion, in option order; 'passed' above is their majority (a tie is not met).",
            "type": "array",
            "items": {
                "type": "object",
                "required": ["judge", "passed", "reason"],
                "properties": {
                    "judge": {"type": "string"},
                    "passed": {"type": ["boolean", "null"]},
                    "reason": {"type": ["string", "null"]},
                },
            },
        },
    },
}


def _named(signal: SuccessSignal) -> tuple[str, str]:
    """A built-in's key and metrics.json field, as :mod:`pytest_tau2.scoring.names` fixes them."""
    return signal.value, signal.metric


for _spec in (
    SignalSpec(
        *_named(SuccessSignal.ACTION_MATCH), "Action match", "bool", _action_match,
        "the recorded write actions match the reference answer",
        "the scenario has no `reference_answer`",
    ),
    SignalSpec(
        *_named(SuccessSignal.DB_STATE_MATCH), "DB-state match", "bool", _db_state_match,
        "the final DB hash equals the gold replay's",
        "`gold_actions()` returns `None`",
    ),
    SignalSpec(
        *_named(SuccessSignal.DB_STATE_ASSERTION), "DB-state assertion pass", "rate",
        _db_state_assertions, "passed predicates / predicates", "no `db_state_assertions`",
        unit="predicates", evidence_field="db_state_assertion_verdicts", evidence_schema=_PREDICATE_VERDICT,
    ),
    SignalSpec(
        *_named(SuccessSignal.NL_ASSERTION), "NL-Assertion pass", "rate", _nl_assertions,
        "assertions the judge passed / assertions",
        "no `nl_assertions`, or no judge verdict (no `--tau2-judge-model`, or the conversation ended in an "
        "infrastructure error)",
        unit="assertions", evidence_field="nl_assertion_verdicts", evidence_schema=_JUDGE_VERDICT,
    ),
    SignalSpec(
        *_named(SuccessSignal.JUDGE_PASSED), "Judge passed", "bool", _judge_passed,
        "an overall judge opinion", "always, in this version (no overall judge yet)",
    ),
    SignalSpec(
        *_named(SuccessSignal.CLEAN_EXIT), "Clean exit", "bool", _clean_exit,
        "the agent ended the conversation itself (stop_reason 'exit' or 'transfer')", "never",
        check_order=0,  # the first sub-result of every item: did the agent finish the call itself?
    ),
):  # fmt: skip
    register_signal(_spec)
