"""The verdict (strict AND over whitelisted signals), the six signals' checks, and run-level counting."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from pytest_tau2 import Scenario, SuccessSignal
from pytest_tau2.conversation.loop import ConversationResult
from pytest_tau2.environment.db import db_hash, fresh_db
from pytest_tau2.errors import ScenarioDefinitionError
from pytest_tau2.report.summary import render, summarize
from pytest_tau2.run import GoldResult, scenario_verdict
from pytest_tau2.scoring.signals import (
    Check,
    FinalState,
    JudgeOutcome,
    ScoringInput,
    SignalResult,
    SignalSpec,
    register_signal,
    score,
    unregister_signal,
)
from pytest_tau2.scoring.verdict import NOT_APPLICABLE, Verdict, signal_passed, strict_and

S = SuccessSignal
ALL = tuple(SuccessSignal)


# ---- signal_passed ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        (1.0, True),
        (1, True),
        (0.999999, False),
        (0.5, False),
        (0.0, False),
        (0, False),
        (None, None),
        ("N/A", None),
    ],
)
def test_signal_passed(value: Any, expected: bool | None) -> None:
    assert signal_passed(value) is expected


@pytest.mark.parametrize("value", ["yes", [], {"passed": True}])
def test_signal_passed_rejects_values_that_are_not_signal_values(value: Any) -> None:
    with pytest.raises(TypeError, match="signal value must be"):
        signal_passed(value)


# ---- strict AND ----------------------------------------------------------------------------------


def test_all_whitelisted_signals_passing_is_success() -> None:
    verdict = strict_and({S.ACTION_MATCH: True, S.CLEAN_EXIT: True}, (S.ACTION_MATCH, S.CLEAN_EXIT))
    assert verdict.is_successful is True
    assert verdict.passed == ["is_action_match", "clean_exit"]
    assert verdict.failed == []


def test_one_failing_whitelisted_signal_fails_the_verdict() -> None:
    verdict = strict_and({S.ACTION_MATCH: True, S.CLEAN_EXIT: False}, (S.ACTION_MATCH, S.CLEAN_EXIT))
    assert verdict.is_successful is False
    assert verdict.failed == ["clean_exit"]


@pytest.mark.parametrize("rate", [0.0, 0.5, 0.99])
def test_a_pass_rate_below_exactly_one_fails(rate: float) -> None:
    verdict = strict_and({S.NL_ASSERTION: rate, S.CLEAN_EXIT: True}, (S.NL_ASSERTION, S.CLEAN_EXIT))
    assert verdict.is_successful is False
    assert verdict.failed == ["nl_assertion_pass_rate"]


def test_a_pass_rate_of_one_passes() -> None:
    verdict = strict_and({S.DB_STATE_ASSERTION: 1.0}, (S.DB_STATE_ASSERTION,))
    assert verdict.is_successful is True
    assert verdict.passed == ["db_state_assertion_pass_rate"]


@pytest.mark.parametrize("missing", [None, "N/A"])
def test_a_whitelisted_signal_without_a_value_is_not_applicable_and_never_gates(missing: Any) -> None:
    verdict = strict_and({S.ACTION_MATCH: missing, S.CLEAN_EXIT: True}, (S.ACTION_MATCH, S.CLEAN_EXIT))
    assert verdict.is_successful is True
    assert verdict.not_applicable == ["is_action_match"]


def test_a_signal_absent_from_the_mapping_is_not_applicable() -> None:
    verdict = strict_and({S.CLEAN_EXIT: True}, (S.ACTION_MATCH, S.CLEAN_EXIT))
    assert verdict.not_applicable == ["is_action_match"]
    assert verdict.is_successful is True


def test_no_applicable_whitelisted_signal_gives_not_applicable() -> None:
    signals = {S.ACTION_MATCH: None, S.NL_ASSERTION: None, S.CLEAN_EXIT: False}
    verdict = strict_and(signals, (S.ACTION_MATCH, S.NL_ASSERTION))
    assert verdict.is_successful == NOT_APPLICABLE == "N/A"
    assert verdict.not_applicable == ["is_action_match", "nl_assertion_pass_rate"]
    assert verdict.passed == verdict.failed == []


def test_signals_outside_the_whitelist_are_excluded_and_never_fail() -> None:
    signals = {S.ACTION_MATCH: False, S.DB_STATE_MATCH: False, S.NL_ASSERTION: 0.0, S.CLEAN_EXIT: True}
    verdict = strict_and(signals, (S.CLEAN_EXIT,))
    assert verdict.is_successful is True
    assert verdict.excluded == {
        "is_action_match": False,
        "db_state_match": False,
        "db_state_assertion_pass_rate": None,
        "nl_assertion_pass_rate": 0.0,
        "judge_passed": None,
        "tau2_reward": None,  # tau2's reward, also in the signal table (scoring/tau2_signal.py)
    }


def test_breakdown_has_the_four_lists_of_metrics_json() -> None:
    verdict = strict_and(
        {S.ACTION_MATCH: True, S.DB_STATE_MATCH: False, S.NL_ASSERTION: None, S.CLEAN_EXIT: True},
        (S.ACTION_MATCH, S.DB_STATE_MATCH, S.NL_ASSERTION),
    )
    assert verdict.breakdown() == {
        "passed": ["is_action_match"],
        "failed": ["db_state_match"],
        "not_applicable": ["nl_assertion_pass_rate"],
        "excluded": {
            "db_state_assertion_pass_rate": None,
            "judge_passed": None,
            "clean_exit": True,
            "tau2_reward": None,
        },
    }


def test_every_signal_has_its_metrics_field_name() -> None:
    assert {s: s.metric for s in SuccessSignal} == {
        S.ACTION_MATCH: "is_action_match",
        S.DB_STATE_MATCH: "db_state_match",
        S.DB_STATE_ASSERTION: "db_state_assertion_pass_rate",
        S.NL_ASSERTION: "nl_assertion_pass_rate",
        S.JUDGE_PASSED: "judge_passed",
        S.CLEAN_EXIT: "clean_exit",
    }


# ---- the scenario's combinator ------------------------------------------------------------------


class ExitOnly(Scenario):
    name = "unitverdict__exit_only"
    success_signals: ClassVar[tuple[SuccessSignal, ...]] = (S.CLEAN_EXIT,)


class Lenient(Scenario):
    """Overrides the combinator: passes as soon as the action matched, whatever the exit."""

    name = "unitverdict__lenient"
    success_signals: ClassVar[tuple[SuccessSignal, ...]] = (S.ACTION_MATCH, S.CLEAN_EXIT)

    def compute_is_successful(self, signals: Mapping[SuccessSignal, Any]) -> bool | str:
        return bool(signals.get(S.ACTION_MATCH))


def test_default_combinator_is_strict_and_over_the_scenario_whitelist() -> None:
    assert ExitOnly().compute_is_successful({S.CLEAN_EXIT: True, S.ACTION_MATCH: False}) is True
    assert ExitOnly().compute_is_successful({S.CLEAN_EXIT: False}) is False
    assert ExitOnly().compute_is_successful({}) == "N/A"


def test_scenario_verdict_keeps_the_breakdown_and_takes_the_combinators_answer() -> None:
    verdict = scenario_verdict(Lenient(), {S.ACTION_MATCH: True, S.CLEAN_EXIT: False})
    assert isinstance(verdict, Verdict)
    assert verdict.is_successful is True
    assert verdict.failed == ["clean_exit"]  # the breakdown still tells the truth


@pytest.mark.parametrize(
    "signals",
    [
        {},
        {S.CLEAN_EXIT: True},
        {S.CLEAN_EXIT: False, S.ACTION_MATCH: True},
        {S.ACTION_MATCH: None, S.NL_ASSERTION: 1.0},
        {S.ACTION_MATCH: "N/A", S.NL_ASSERTION: 0.5, S.CLEAN_EXIT: True},
        {S.DB_STATE_MATCH: True, "tau2_reward": 0.0},
    ],
)
def test_the_default_combinator_gives_the_strict_and_of_the_breakdown(signals: dict[str, Any]) -> None:
    for case in (ExitOnly(), Scored()):
        expected = strict_and(signals, case.success_signals).is_successful
        assert case.compute_is_successful(signals) == expected
        assert scenario_verdict(case, signals).is_successful == expected


def test_an_override_set_on_the_instance_also_decides() -> None:
    scenario = ExitOnly()
    scenario.compute_is_successful = lambda signals: "N/A"  # type: ignore[method-assign]
    assert scenario_verdict(scenario, {S.CLEAN_EXIT: True}).is_successful == "N/A"


def test_a_removed_signal_no_longer_counts_as_a_success_signal() -> None:
    spec = SignalSpec("unitverdict_extra", "unitverdict_extra", "Extra", "bool", _no_value, "x", "always")
    register_signal(spec)
    try:

        class Extra(Scenario):
            name = "unitverdict__extra"
            success_signals: ClassVar[tuple[Any, ...]] = (spec.signal,)

        assert Extra().compute_is_successful({"unitverdict_extra": False}) is False
    finally:
        unregister_signal("unitverdict_extra")
    assert Extra().compute_is_successful({"unitverdict_extra": False}) == "N/A"  # gone from the table, as strict_and
    with pytest.raises(ScenarioDefinitionError, match="success_signals"):

        class Stale(Scenario):
            name = "unitverdict__stale"
            success_signals: ClassVar[tuple[Any, ...]] = (spec.signal,)


def _no_value(inp: ScoringInput) -> SignalResult:
    return SignalResult(None, [])


# ---- score(): one check per sub-result -------------------------------------------------------------


def conversation(stop_reason: str = "exit", turns: int = 3) -> ConversationResult:
    return ConversationResult(transcript=[], stop_reason=stop_reason, agent_turns=turns, duration_s=0.1)


class Scored(Scenario):
    name = "unitverdict__scored"
    success_signals: ClassVar[tuple[SuccessSignal, ...]] = ALL
    reference_answer: ClassVar[Any] = {"name": "place_order", "total": 5}
    nl_assertions: ClassVar[list[str] | None] = ["The agent greets the caller.", "The agent confirms the total."]


def run_score(
    scenario: Scenario,
    *,
    stop_reason: str = "exit",
    actions: list[dict[str, Any]] | None = None,
    final_db: Any = None,
    gold: GoldResult | None = None,
    gold_db: Any = None,
    judge: JudgeOutcome | None = None,
    judge_configured: bool = False,
) -> tuple[dict[SuccessSignal, Any], dict[str, Check]]:
    signals, checks, _ = score(
        ScoringInput(
            scenario,
            conversation=conversation(stop_reason),
            final=FinalState(actions=actions or [], dbs={"agent": final_db}),
            expected_hashes=gold.hashes if gold is not None else None,
            expected_dbs=lambda: {"agent": gold_db},
            judge=judge,
            judge_configured=judge_configured,
        )
    )
    return signals, {c.id: c for c in checks}


@pytest.mark.parametrize(
    ("stop_reason", "clean"),
    [
        ("exit", True),
        ("transfer", True),
        ("user_stop", False),
        ("max_turns", False),
        ("timeout", False),
        ("too_many_tool_errors", False),
        ("error", False),
    ],
)
def test_clean_exit_only_for_the_agents_own_exit(stop_reason: str, clean: bool) -> None:
    signals, checks = run_score(ExitOnly(), stop_reason=stop_reason)
    assert signals[S.CLEAN_EXIT] is clean
    assert checks["clean_exit"].passed is clean
    if not clean:
        assert f"stop_reason: {stop_reason}" in checks["clean_exit"].message


def test_every_signal_is_computed_even_when_not_whitelisted() -> None:
    signals, checks = run_score(ExitOnly())
    assert set(signals) == {*SuccessSignal, "tau2_reward"}  # tau2's reward: None outside tau2 tasks
    assert {c.signal for c in checks.values()} == {*SuccessSignal, "tau2_reward"}
    assert signals["tau2_reward"] is None and checks["tau2_reward"].message == "not a tau2 task"


def test_not_applicable_checks_carry_the_reason() -> None:
    signals, checks = run_score(ExitOnly())
    assert signals[S.ACTION_MATCH] is None and checks["action_match"].message == "no reference answer"
    assert signals[S.DB_STATE_MATCH] is None
    assert checks["db_state_match"].message == "the scenario has no gold actions"
    assert checks["db_state_assertion"].passed is None
    assert checks["nl_assertion"].passed is None
    assert signals[S.JUDGE_PASSED] is None and checks["judge_passed"].passed is None


def test_action_match_check_names_the_mismatching_field() -> None:
    signals, checks = run_score(Scored(), actions=[{"name": "place_order", "arguments": {"total": 6}}])
    assert signals[S.ACTION_MATCH] is False
    assert checks["action_match"].message == "reference.total: expected 5, found 6"


def test_db_state_match_compares_hashes_and_shows_a_path_level_diff() -> None:
    expected = fresh_db({"orders": {"o1": {"status": "placed", "total": 5}}})
    actual = fresh_db({"orders": {"o1": {"status": "placed", "total": 5.0}}})
    gold = GoldResult(hashes={"agent": db_hash(expected)}, actions=[], failures=[])
    signals, checks = run_score(ExitOnly(), final_db=actual, gold=gold, gold_db=expected)
    assert signals[S.DB_STATE_MATCH] is False
    message = checks["db_state_match"].message
    assert f"DB hash {db_hash(actual)} != expected {db_hash(expected)}" in message
    assert "root['orders']['o1']['total']" in message and "int -> float" in message


def test_db_state_match_passes_on_equal_hash_without_computing_the_gold_db() -> None:
    db = fresh_db({"orders": {"o1": {"status": "placed"}}})
    gold = GoldResult(hashes={"agent": db_hash(db)}, actions=[], failures=[])

    def no_gold_db() -> dict[str, Any]:
        raise AssertionError("the gold DB is only rebuilt for a failing comparison")

    signals, checks, _ = score(
        ScoringInput(
            ExitOnly(),
            conversation=conversation(),
            final=FinalState(actions=[], dbs={"agent": db}),
            expected_hashes=gold.hashes,
            expected_dbs=no_gold_db,
        )
    )
    assert signals[S.DB_STATE_MATCH] is True
    assert [c.passed for c in checks if c.id == "db_state_match"] == [True]


def test_nl_assertions_without_a_judge_are_one_skipped_check_each() -> None:
    signals, checks = run_score(Scored())
    assert signals[S.NL_ASSERTION] is None
    assert [checks[f"nl_assertion[{i}]"].passed for i in range(2)] == [None, None]
    assert checks["nl_assertion[1]"].message == (
        "no judge configured (--tau2-judge-model): The agent confirms the total."
    )


def test_nl_assertions_with_a_configured_judge_that_gave_no_verdict() -> None:
    _, checks = run_score(Scored(), judge_configured=True)
    assert checks["nl_assertion[0]"].message.startswith("no judge verdict (the conversation ended in an error)")


def test_nl_assertion_pass_rate_and_one_check_per_assertion_with_the_judges_reason() -> None:
    judge = JudgeOutcome(
        verdicts=[
            {"index": 0, "assertion": "The agent greets the caller.", "passed": True, "reason": "says hi"},
            {"index": 1, "assertion": "The agent confirms the total.", "passed": False, "reason": "never did"},
        ]
    )
    signals, checks = run_score(Scored(), judge=judge, judge_configured=True)
    assert signals[S.NL_ASSERTION] == 0.5
    assert checks["nl_assertion[0]"].passed is True
    assert checks["nl_assertion[1]"].passed is False
    assert checks["nl_assertion[1]"].message == "The agent confirms the total.\njudge: never did"


# ---- run-level counting (all_summary.txt) ------------------------------------------------------------


def metrics(name: str, successful: Any = True, **fields: Any) -> dict[str, Any]:
    base = {
        "scenario": name,
        "domain": name.split("__")[0],
        "is_successful": successful,
        "is_action_match": successful if isinstance(successful, bool) else None,
        "db_state_match": None,
        "judge_passed": None,
        "clean_exit": True,
        "stalled": False,
        "infrastructure_error": None,
        "nl_assertion_verdicts": [],
        "db_state_assertion_verdicts": [],
        "token_usage": {},
    }
    return {**base, **fields}


def test_composite_counts_successes_over_scenarios_with_a_verdict() -> None:
    summary = summarize([metrics("d__a"), metrics("d__b", False), metrics("d__c", "N/A")])
    assert (summary.scenarios, summary.successful, summary.failed, summary.not_applicable) == (3, 1, 1, 1)
    assert str(summary.composite) == "1/2 (50.0%)"


def test_stalled_and_infrastructure_errors_count_in_the_composite_but_not_in_signal_rates() -> None:
    rows = [
        metrics("d__ok"),
        metrics("d__stalled", False, stalled=True, is_action_match=True),
        metrics("d__infra", False, infrastructure_error="boom", is_action_match=False),
    ]
    summary = summarize(rows)
    assert (summary.stalled, summary.infra_errors) == (1, 1)
    assert str(summary.composite) == "1/3 (33.3%)"
    assert str(summary.signals["Action match"]) == "1/1 (100.0%)"
    assert str(summary.signals["Clean exit"]) == "1/1 (100.0%)"


def test_assertions_and_predicates_are_counted_individually() -> None:
    rows = [
        metrics("d__a", nl_assertion_verdicts=[{"passed": True}, {"passed": False}, {"passed": None}]),
        metrics("d__b", db_state_assertion_verdicts=[{"passed": True}, {"passed": True}]),
    ]
    summary = summarize(rows)
    assert str(summary.signals["NL-Assertion pass"]) == "1/3 (33.3%)"
    assert str(summary.signals["DB-state assertion pass"]) == "2/2 (100.0%)"
    text = render(rows)
    assert "  NL-Assertion pass: 1/3 (33.3%) assertions" in text
    assert "  DB-state assertion pass: 2/2 (100.0%) predicates" in text


def test_rendered_summary_headline_and_per_domain_lines() -> None:
    rows = [
        metrics("alpha__1"),
        metrics("alpha__2", False, stalled=True),
        metrics("beta__1", "N/A"),
        metrics("beta__2", False, infrastructure_error="timeout talking to the bot"),
    ]
    lines = render(rows).splitlines()
    assert lines[0] == (
        "Success rate: 1/3 (33.3%) of 4 scenarios (1 stalled, 1 infrastructure errors counted as not "
        "successful); 1 N/A (skipped)"
    )
    assert "Per domain:" in lines
    assert "  alpha: Success rate: 1/2 (50.0%) of 2 scenarios (1 stalled counted as not successful)" in lines
    assert any(line.startswith("  beta: Success rate: 0/1 (0.0%) of 2 scenarios") for line in lines)


def test_rendered_summary_lists_token_usage_and_unpriced_cost() -> None:
    usage_a = {
        "agent": {"calls": 2, "prompt_tokens": 100, "completion_tokens": 10, "cost_usd": 0.5},
        "user": {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0},
    }
    usage_b = {"agent": {"calls": 1, "prompt_tokens": 50, "completion_tokens": 5, "cost_usd": None}}
    text = render([metrics("d__a", token_usage=usage_a), metrics("d__b", token_usage=usage_b)])
    assert "  agent: 3 calls, 150 prompt + 15 completion tokens, cost unpriced" in text
    assert "  user:" not in text  # a side that made no call is not listed


def test_empty_rates_are_not_rendered() -> None:
    text = render([metrics("d__a", "N/A", is_action_match=None, clean_exit=None)])
    assert text == "Success rate: n/a of 1 scenarios; 1 N/A (skipped)\n"


def test_scenarios_that_errored_without_a_result_count_as_not_successful() -> None:
    text = render([metrics("d__ok")], ["d__broken", "d__missing_data"])
    lines = text.splitlines()
    assert lines[0] == (
        "Success rate: 1/3 (33.3%) of 3 scenarios (2 errors without a result counted as not successful)"
    )
    assert lines[1] == "  errors without a result: d__broken, d__missing_data"
