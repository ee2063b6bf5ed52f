"""Which signals decide a tau2 scenario, and what they say, through ``runner.run_scenario``.

Whitelists per domain: retail DB_STATE_MATCH + CLEAN_EXIT (+ NL_ASSERTION for the 40 tasks that
have assertions); airline DB_STATE_MATCH + CLEAN_EXIT; telecom DB_STATE_ASSERTION + CLEAN_EXIT.
Everything else is computed and saved under ``excluded``.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from functools import cached_property
from pathlib import Path
from typing import Any

import pytest

import pytest_tau2.domains.tau2_sources as tau2_sources
from pytest_tau2.conversation.offline import GoldPlan, OracleAgent, ScriptedUser
from pytest_tau2.domains.tau2_retail.scenario import Tau2RetailBaseScenario
from pytest_tau2.run import ScenarioOutcome, run_scenario, seed_states
from pytest_tau2.run.participants import Context, make_agent, make_user
from pytest_tau2.scenario.model import SuccessSignal
from pytest_tau2.scenario.registry import all_scenarios
from pytest_tau2.scoring.signals import JudgeOutcome
from pytest_tau2.settings import Settings

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
if not (DATA_DIR / "tau2" / "domains").is_dir():
    pytest.skip(f"no tau2 data under {DATA_DIR} (set TAU2_DATA_DIR)", allow_module_level=True)

RETAIL_NL_TASKS = set(
    "2 3 4 16 19 21 24 28 29 36 37 38 39 40 43 44 45 46 47 54 59 60 62 63 67 68 70 76 89 95 103 104 105 106 "
    "107 108 109 110 111 113".split()
)
DB, NL, CLEAN, ASSERT = (
    SuccessSignal.DB_STATE_MATCH,
    SuccessSignal.NL_ASSERTION,
    SuccessSignal.CLEAN_EXIT,
    SuccessSignal.DB_STATE_ASSERTION,
)
TRANSFER_TASK = "[service_issue]airplane_mode_on|lock_sim_card_pin[PERSONA:Easy]"
REFUEL_TASK = "[mobile_data_issue]data_usage_exceeded|user_abroad_roaming_enabled_off[PERSONA:Easy]"


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(data_dir=str(DATA_DIR), results_dir=str(tmp_path_factory.mktemp("results")))


@pytest.fixture(scope="module")
def scenarios(settings: Settings) -> dict[str, type]:
    return all_scenarios(settings)


def _get(scenarios: dict[str, type], settings: Settings, name: str) -> Any:
    return scenarios[name]().bind(settings)


def _of(scenarios: dict[str, type], settings: Settings, domain: str) -> list[Any]:
    return [cls().bind(settings) for name, cls in scenarios.items() if name.startswith(f"{domain}__")]


def _telecom(task_id: str) -> str:
    return "tau2_telecom__" + tau2_sources.slug(task_id)


class FakeJudge:
    """Answers every NL assertion with one fixed verdict, as a judge model would."""

    def __init__(self, passed: bool) -> None:
        self.passed = passed
        self.calls = 0

    async def judge(self, assertions: list[str], transcript: list[dict[str, Any]]) -> JudgeOutcome:
        self.calls += 1
        verdicts = [
            {"index": i, "assertion": a, "passed": self.passed, "reason": "fixed verdict"}
            for i, a in enumerate(assertions)
        ]
        return JudgeOutcome(verdicts, model="fake-judge")


def run(
    scenario: Any,
    settings: Settings,
    actions: list[dict[str, Any]] | None = None,
    judge: Any = None,
) -> ScenarioOutcome:
    """Run offline: the oracle (gold actions, or ``actions`` instead) and the scripted user."""
    ctx = Context.for_scenario(scenario, settings)
    if actions is None:
        agent, user = make_agent(ctx), make_user(ctx)
    else:
        plan = GoldPlan([dict(a) for a in actions], ending_tools=ctx.plan.ending_tools)
        user = ScriptedUser(scenario.user_opening(), plan, patience=5, agent_follows_plan=True)
        agent = OracleAgent(plan)
    return asyncio.run(run_scenario(scenario, agent=agent, user=user, settings=settings, judge=judge))


# ---- retail -------------------------------------------------------------------------------------


def test_retail_nl_assertion_only_where_the_task_has_assertions(scenarios: dict[str, type], settings: Settings) -> None:
    retail = _of(scenarios, settings, "tau2_retail")
    with_nl = {s.tau2_id for s in retail if NL in s.success_signals}
    assert with_nl == RETAIL_NL_TASKS
    for s in retail:
        expected = (DB, NL, CLEAN) if s.tau2_id in RETAIL_NL_TASKS else (DB, CLEAN)
        assert tuple(s.success_signals) == expected, s.name
    assert sum(len(s.nl_assertions or []) for s in retail) == 61
    # tasks 33 and 34 carry an empty list upstream: normalised to None
    assert _get(scenarios, settings, "tau2_retail__33").nl_assertions is None


def test_retail_success_signals_is_a_cached_property(scenarios: dict[str, type], settings: Settings) -> None:
    assert isinstance(Tau2RetailBaseScenario.__dict__["success_signals"], cached_property)
    scenario = _get(scenarios, settings, "tau2_retail__2")
    assert scenario.success_signals is scenario.success_signals


def test_retail_24_nl_without_actions(scenarios: dict[str, type], settings: Settings) -> None:
    scenario = _get(scenarios, settings, "tau2_retail__24")
    assert tuple(scenario.success_signals) == (DB, NL, CLEAN)
    assert scenario.gold_actions() == []
    assert scenario.nl_assertions and "polyester" in scenario.nl_assertions[0]
    outcome = run(scenario, settings)
    assert outcome.is_successful is True
    assert outcome.verdict.passed == ["db_state_match", "clean_exit"]
    assert outcome.verdict.not_applicable == ["nl_assertion_pass_rate"], "no judge: NL is not applicable"
    nl_checks = [c for c in outcome.checks if c.signal is NL]
    assert [c.passed for c in nl_checks] == [None]
    assert "no judge configured" in nl_checks[0].message


@pytest.mark.parametrize(("passed", "expected"), [(True, True), (False, False)])
def test_retail_24_nl_verdict_decides_with_a_judge(
    scenarios: dict[str, type], settings: Settings, passed: bool, expected: bool
) -> None:
    judge = FakeJudge(passed)
    outcome = run(_get(scenarios, settings, "tau2_retail__24"), settings, judge=judge)
    assert judge.calls == 1
    assert outcome.signals[NL] == (1.0 if passed else 0.0)
    assert outcome.is_successful is expected
    check = next(c for c in outcome.checks if c.id == "nl_assertion[0]")
    assert check.passed is passed
    if not passed:
        assert "judge: fixed verdict" in check.message


def test_retail_24_any_successful_write_fails_the_db_check(scenarios: dict[str, type], settings: Settings) -> None:
    scenario = _get(scenarios, settings, "tau2_retail__24")
    orders = seed_states(scenario, settings)["agent"]["db"]["orders"]
    pending = next(order_id for order_id in orders if orders[order_id]["status"] == "pending")
    cancel = {"name": "cancel_pending_order", "arguments": {"order_id": pending, "reason": "no longer needed"}}
    outcome = run(scenario, settings, actions=[cancel])
    assert outcome.signals[DB] is False
    assert outcome.is_successful is False
    message = next(c for c in outcome.checks if c.id == "db_state_match").message
    assert pending in message and "cancelled" in message


def test_retail_57_chitchat(scenarios: dict[str, type], settings: Settings) -> None:
    scenario = _get(scenarios, settings, "tau2_retail__57")
    assert tuple(scenario.success_signals) == (DB, CLEAN)
    assert scenario.gold_actions() == [] and scenario.nl_assertions is None
    judge = FakeJudge(False)
    outcome = run(scenario, settings, judge=judge)
    assert judge.calls == 0, "no assertions: no judge call"
    assert outcome.is_successful is True
    assert outcome.verdict.passed == ["db_state_match", "clean_exit"]
    assert outcome.verdict.not_applicable == []


def test_retail_action_match_is_upstreams_rule_and_excluded(scenarios: dict[str, type], settings: Settings) -> None:
    scenario = _get(scenarios, settings, "tau2_retail__0")
    gold = scenario.gold_actions()
    assert gold[2]["name"] == "get_product_details"
    # skip one read the reference made: the DB is right, upstream's action check is not
    outcome = run(scenario, settings, actions=gold[:2] + gold[3:])
    assert outcome.signals[DB] is True
    assert outcome.signals[SuccessSignal.ACTION_MATCH] is False
    assert "get_product_details" in next(c for c in outcome.checks if c.id == "action_match").message
    assert outcome.verdict.excluded["is_action_match"] is False
    assert outcome.is_successful is True


@pytest.mark.parametrize("task_id", ["64", "105"])
def test_retail_tasks_with_failing_gold_writes_pass_offline(
    scenarios: dict[str, type], settings: Settings, task_id: str
) -> None:
    outcome = run(_get(scenarios, settings, f"tau2_retail__{task_id}"), settings)
    assert outcome.conversation.error is None
    assert outcome.is_successful is True
    assert outcome.tool_errors == 1, "the oracle repeats the failing write and gets upstream's error"
    assert outcome.signals[SuccessSignal.ACTION_MATCH] is True, "a failed call still counts as made"


# ---- airline ------------------------------------------------------------------------------------


def test_airline_whitelist(scenarios: dict[str, type], settings: Settings) -> None:
    airline = _of(scenarios, settings, "tau2_airline")
    assert len(airline) == 50
    assert all(tuple(s.success_signals) == (DB, CLEAN) for s in airline)
    assert all(s.nl_assertions for s in airline), "every airline task has NL assertions"
    assert sum(len(s.nl_assertions) for s in airline) == 123


def test_airline_nl_assertions_are_judged_but_never_gate(scenarios: dict[str, type], settings: Settings) -> None:
    judge = FakeJudge(False)
    outcome = run(_get(scenarios, settings, "tau2_airline__7"), settings, judge=judge)
    assert judge.calls == 1
    assert outcome.signals[NL] == 0.0
    assert outcome.verdict.excluded["nl_assertion_pass_rate"] == 0.0
    assert outcome.is_successful is True
    assert outcome.verdict.passed == ["db_state_match", "clean_exit"]


# ---- telecom ------------------------------------------------------------------------------------


def test_telecom_whitelist_and_predicates(scenarios: dict[str, type], settings: Settings) -> None:
    telecom = _of(scenarios, settings, "tau2_telecom")
    assert len(telecom) == 114
    assert all(tuple(s.success_signals) == (ASSERT, CLEAN) for s in telecom)
    assert sum(len(s.db_state_assertions) for s in telecom) == 209
    assert sum(len(s.initialization_actions) for s in telecom) == 803
    assert all(s.nl_assertions is None for s in telecom)


def test_telecom_run_scores_predicates_and_excludes_hash_and_actions(
    scenarios: dict[str, type], settings: Settings
) -> None:
    outcome = run(_get(scenarios, settings, _telecom(REFUEL_TASK)), settings)
    assert outcome.is_successful is True
    assert set(outcome.final_dbs) == {"agent", "user"}
    assert outcome.signals[ASSERT] == 1.0
    assert [v["func_name"] for v in outcome.evidence["db_state_assertion_verdicts"]] == [
        "assert_mobile_data_status",
        "assert_internet_speed",
        "assert_data_refueling_amount",
    ]
    assert outcome.verdict.passed == ["db_state_assertion_pass_rate", "clean_exit"]
    assert {"db_state_match", "is_action_match"} <= set(outcome.verdict.excluded)
    assert outcome.extra["initialization"][0]["func_name"] == "set_user_info"


def test_telecom_doing_nothing_fails_a_refuel_task(scenarios: dict[str, type], settings: Settings) -> None:
    outcome = run(_get(scenarios, settings, _telecom(REFUEL_TASK)), settings, actions=[])
    assert outcome.is_successful is False
    failed = [c.id for c in outcome.checks if c.signal is ASSERT and c.passed is False]
    assert "db_state_assertion[2:assert_data_refueling_amount]" in failed


def test_telecom_transfer_task_scores_as_the_issue_specifies(scenarios: dict[str, type], settings: Settings) -> None:
    """Deliberate divergence from upstream (see docs/tau2-telecom.md): ACTION_MATCH is computed
    and saved under ``excluded`` in every telecom task, as the telecom issue specifies, so in the
    20 tasks whose upstream basis is [ENV_ASSERTION, ACTION] a missing transfer is visible in
    metrics but does not gate the verdict."""
    scenario = _get(scenarios, settings, _telecom(TRANSFER_TASK))
    assert scenario.criteria["reward_basis"] == ["ENV_ASSERTION", "ACTION"]
    outcome = run(scenario, settings, actions=[])
    assert outcome.signals[SuccessSignal.ACTION_MATCH] is False
    assert outcome.verdict.excluded["is_action_match"] is False
    assert outcome.is_successful is True


def test_telecom_replay_of_gold_with_user_actions_passes(
    scenarios: dict[str, type], settings: Settings, tmp_path: Path
) -> None:
    scenario = _get(scenarios, settings, _telecom(REFUEL_TASK))
    replay = tmp_path / "telecom.jsonl"
    replay.write_text(json.dumps({"scenario": scenario.name, "actions": scenario.gold_actions()}) + "\n", "utf-8")
    replay_settings = Settings(
        data_dir=settings.data_dir, results_dir=settings.results_dir, agent=f"replay:{replay}", max_turns=20
    )
    ctx = Context.for_scenario(scenario, replay_settings)
    outcome = asyncio.run(run_scenario(scenario, agent=make_agent(ctx), user=make_user(ctx), settings=replay_settings))
    assert outcome.conversation.stop_reason != "max_turns"
    assert outcome.is_successful is True


def test_a_failing_retail_db_check_is_explained_quickly(scenarios: dict[str, type], settings: Settings) -> None:
    from pytest_tau2.environment.db import db_diff
    from pytest_tau2.run.seeding import gold_dbs

    scenario = _get(scenarios, settings, "tau2_retail__0")
    expected = gold_dbs(scenario, settings)["agent"]
    actual = seed_states(scenario, settings)["agent"]["db"]  # as if the exchange never happened
    start = time.perf_counter()
    text = db_diff(expected, actual)
    elapsed = time.perf_counter() - start
    assert "root['orders']['#W2378156']['status']: expected 'exchange requested' but found 'delivered'" in text
    # Diffing the whole 2.8 MB DB took 6-15 s; only the changed order needs walking.
    assert elapsed < 3.0, f"db_diff took {elapsed:.1f} s"
