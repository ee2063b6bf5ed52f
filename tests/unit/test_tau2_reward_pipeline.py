"""tau2_reward through the pipeline (run_scenario) on the pinned tasks: the offline oracle earns
1.0 wherever upstream's gold trajectory does, each component fails when its part of the
trajectory is wrong, and ``--tau2-verdict tau2-reward`` makes the reward decide the item."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

import pytest_tau2.domains.tau2_sources as tau2_sources
from pytest_tau2.conversation.offline import GoldPlan, OracleAgent, ScriptedUser
from pytest_tau2.conversation.protocol import Reply
from pytest_tau2.errors import InfrastructureError
from pytest_tau2.report.metrics import metrics_schema
from pytest_tau2.run import participants
from pytest_tau2.run.pipeline import run_scenario
from pytest_tau2.scenario.outcome import ScenarioOutcome
from pytest_tau2.scenario.registry import all_scenarios
from pytest_tau2.scoring.signals import JudgeOutcome
from pytest_tau2.settings import Settings

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
if not (DATA_DIR / "tau2" / "domains").is_dir():
    pytest.skip(f"no tau2 data under {DATA_DIR} (set TAU2_DATA_DIR)", allow_module_level=True)

RETAIL_WRITES = {
    "cancel_pending_order", "exchange_delivered_order_items", "modify_pending_order_address",
    "modify_pending_order_items", "modify_pending_order_payment", "modify_user_address",
    "return_delivered_order_items",
}  # fmt: skip
TRANSFER_TASK = "[service_issue]airplane_mode_on|lock_sim_card_pin[PERSONA:Easy]"
SIX = ("is_action_match", "db_state_match", "db_state_assertion_pass_rate", "nl_assertion_pass_rate")


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(data_dir=str(DATA_DIR), results_dir=str(tmp_path_factory.mktemp("results")), prompts="seed")


@pytest.fixture(scope="module")
def scenarios(settings: Settings) -> dict[str, type]:
    return all_scenarios(settings)


class FakeJudge:
    def __init__(self, passed: bool) -> None:
        self.passed = passed

    async def judge(self, assertions: list[str], transcript: list[dict[str, Any]]) -> JudgeOutcome:
        verdicts = [
            {"index": i, "assertion": a, "passed": self.passed, "reason": "fixed verdict"}
            for i, a in enumerate(assertions)
        ]
        return JudgeOutcome(verdicts, model="fake-judge")


@dataclasses.dataclass
class NoExitOracle:
    """The oracle, minus its exit tool: the conversation ends on the user's ###STOP###."""

    oracle: OracleAgent

    async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        reply = await self.oracle.respond(messages, tools)
        kept = [c for c in reply.tool_calls if c.name != "EndConversationTool"]
        return Reply(text=reply.text or ("Done." if not kept else None), tool_calls=kept)


class BrokenUser:
    async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        raise InfrastructureError("the user model endpoint is unreachable")


def scenario_named(scenarios: dict[str, type], settings: Settings, name: str) -> Any:
    return scenarios[name]().bind(settings)


def run(
    scenario: Any,
    settings: Settings,
    *,
    actions: list[dict[str, Any]] | None = None,
    communicate: tuple[str, ...] | None = None,
    judge: Any = None,
    agent: Any = None,
    user: Any = None,
) -> ScenarioOutcome:
    ctx = participants.Context.for_scenario(scenario, settings)
    plan = GoldPlan(
        [dict(a) for a in (ctx.plan.actions if actions is None else actions)],
        ending_tools=ctx.plan.ending_tools,
        communicate=ctx.plan.communicate if communicate is None else communicate,
    )
    oracle = OracleAgent(plan)
    user = user or ScriptedUser(scenario.user_opening(), plan, patience=5, agent_follows_plan=True)
    the_agent = agent(oracle) if agent is not None else oracle
    return asyncio.run(run_scenario(scenario, agent=the_agent, user=user, settings=settings, judge=judge))


def details(outcome: ScenarioOutcome) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    return (
        outcome.signals["tau2_reward"],
        outcome.evidence["tau2_reward_breakdown"],
        outcome.evidence["tau2_reward_info"],
    )


# ---- the offline oracle earns 1.0 everywhere upstream's gold trajectory does ---------------------


@pytest.mark.parametrize(("domain", "count"), [("tau2_retail", 114), ("tau2_airline", 50), ("tau2_telecom", 114)])
def test_offline_oracle_sweep_earns_reward_one(
    scenarios: dict[str, type], settings: Settings, domain: str, count: int
) -> None:
    """Reference 4.8: gold trajectories score 1.0 on every retail, airline and telecom base task.
    Offline there is no judge, so retail's 40 NL tasks report NL_ASSERTION as not evaluated."""
    names = [n for n in scenarios if n.startswith(f"{domain}__")]
    assert len(names) == count
    not_evaluated = []
    for name in names:
        scenario = scenario_named(scenarios, settings, name)
        ctx = participants.Context.for_scenario(scenario, settings)
        outcome = asyncio.run(
            run_scenario(
                scenario, agent=participants.make_agent(ctx), user=participants.make_user(ctx), settings=settings
            )
        )
        reward, breakdown, info = details(outcome)
        assert reward == 1.0, (name, breakdown, info["reasons"])
        assert outcome.is_successful is True, name  # the six-signal verdict agrees on gold
        if info["not_evaluated"]:
            assert info["not_evaluated"] == ["NL_ASSERTION"] and breakdown["NL_ASSERTION"] is None
            not_evaluated.append(scenario.tau2_id)
    assert len(not_evaluated) == (40 if domain == "tau2_retail" else 0)


def test_reward_basis_per_domain_at_the_pin(scenarios: dict[str, type], settings: Settings) -> None:
    retail = run(scenario_named(scenarios, settings, "tau2_retail__5"), settings)
    assert details(retail)[1] == {"DB": 1.0, "NL_ASSERTION": 1.0}
    airline = run(scenario_named(scenarios, settings, "tau2_airline__7"), settings)
    assert details(airline)[1] == {"DB": 1.0, "COMMUNICATE": 1.0}
    assert details(airline)[2]["communicate_checks"][0]["info"] == "1628"
    telecom = run(scenario_named(scenarios, settings, "tau2_telecom__" + tau2_sources.slug(TRANSFER_TASK)), settings)
    assert details(telecom)[1] == {"ENV_ASSERTION": 1.0, "ACTION": 1.0}


# ---- each component fails when its part of the trajectory is wrong ------------------------------


def test_dropping_the_last_write_fails_the_db_component(scenarios: dict[str, type], settings: Settings) -> None:
    scenario = scenario_named(scenarios, settings, "tau2_retail__0")
    gold = scenario.gold_actions()
    last = max(i for i, a in enumerate(gold) if a["name"] in RETAIL_WRITES)
    reward, breakdown, info = details(run(scenario, settings, actions=gold[:last] + gold[last + 1 :]))
    assert reward == 0.0
    assert breakdown["DB"] == 0.0
    assert "gold replay" in info["reasons"]["DB"]


def test_unsaid_communicate_info_fails_airline(scenarios: dict[str, type], settings: Settings) -> None:
    outcome = run(scenario_named(scenarios, settings, "tau2_airline__7"), settings, communicate=())
    reward, breakdown, info = details(outcome)
    assert (reward, breakdown) == (0.0, {"DB": 1.0, "COMMUNICATE": 0.0})
    assert info["reasons"]["COMMUNICATE"] == "never said by the agent: ['1628']"
    assert outcome.is_successful is True  # the six-signal verdict does not gate on COMMUNICATE


def test_no_transfer_fails_the_telecom_action_component(scenarios: dict[str, type], settings: Settings) -> None:
    scenario = scenario_named(scenarios, settings, "tau2_telecom__" + tau2_sources.slug(TRANSFER_TASK))
    outcome = run(scenario, settings, actions=[])
    reward, breakdown, info = details(outcome)
    assert (reward, breakdown) == (0.0, {"ENV_ASSERTION": 1.0, "ACTION": 0.0})
    assert "transfer_to_human_agents" in info["reasons"]["ACTION"]
    assert outcome.is_successful is True  # env assertions hold and the agent exited: six signals pass


def test_nl_component_from_the_same_judge_verdicts(scenarios: dict[str, type], settings: Settings) -> None:
    scenario = scenario_named(scenarios, settings, "tau2_retail__2")
    met = run(scenario, settings, judge=FakeJudge(True))
    assert details(met)[:2] == (1.0, {"DB": 1.0, "NL_ASSERTION": 1.0})
    assert details(met)[2]["not_evaluated"] == []
    unmet = run(scenario_named(scenarios, settings, "tau2_retail__2"), settings, judge=FakeJudge(False))
    assert details(unmet)[:2] == (0.0, {"DB": 1.0, "NL_ASSERTION": 0.0})


# ---- the termination rule, infrastructure errors ------------------------------------------------


def test_a_conversation_cut_by_max_turns_scores_zero(scenarios: dict[str, type], settings: Settings) -> None:
    short = dataclasses.replace(settings, max_turns=1)
    outcome = run(scenario_named(scenarios, short, "tau2_retail__5"), short)
    assert outcome.conversation.stop_reason == "max_turns"
    reward, breakdown, info = details(outcome)
    assert (reward, breakdown, info["terminated_early"]) == (0.0, {}, "max_turns")


def test_a_user_stop_is_scored_although_the_six_signals_fail(scenarios: dict[str, type], settings: Settings) -> None:
    outcome = run(scenario_named(scenarios, settings, "tau2_retail__5"), settings, agent=NoExitOracle)
    assert outcome.conversation.stop_reason == "user_stop"
    assert details(outcome)[0] == 1.0
    assert outcome.is_successful is False  # CLEAN_EXIT gates the six-signal verdict


def test_an_infrastructure_error_has_no_reward(scenarios: dict[str, type], settings: Settings) -> None:
    outcome = run(scenario_named(scenarios, settings, "tau2_retail__5"), settings, user=BrokenUser())
    assert outcome.conversation.stop_reason == "error"
    assert details(outcome) == (None, None, None)
    check = next(c for c in outcome.checks if c.id == "tau2_reward")
    assert check.passed is None and "infrastructure error" in check.message


# ---- --tau2-verdict tau2-reward -----------------------------------------------------------------


def test_tau2_reward_verdict_makes_the_reward_decide(scenarios: dict[str, type], settings: Settings) -> None:
    by_reward = dataclasses.replace(settings, verdict="tau2-reward")
    scenario = scenario_named(scenarios, by_reward, "tau2_retail__5")
    assert [str(s) for s in scenario.success_signals] == ["tau2_reward"]
    assert [str(s) for s in type(scenario)().bind(settings).success_signals] == ["db_state_match", "clean_exit"]
    passed = run(scenario, by_reward, agent=NoExitOracle)
    assert passed.is_successful is True
    assert passed.verdict.passed == ["tau2_reward"]
    assert set(SIX) <= set(passed.verdict.excluded) and passed.verdict.excluded["clean_exit"] is False
    failed = run(scenario_named(scenarios, by_reward, "tau2_airline__7"), by_reward, communicate=())
    assert failed.is_successful is False and failed.verdict.failed == ["tau2_reward"]


def test_restaurant_has_no_tau2_reward_and_keeps_its_verdict(scenarios: dict[str, type], settings: Settings) -> None:
    by_reward = dataclasses.replace(settings, verdict="tau2-reward", data_dir=str(DATA_DIR))
    name = next(n for n in scenarios if n.startswith("restaurant__"))
    scenario = scenarios[name]().bind(by_reward)
    assert "tau2_reward" not in [str(s) for s in scenario.success_signals]


def test_metrics_schema_has_the_tau2_fields() -> None:
    schema = metrics_schema()
    for field in ("tau2_reward", "tau2_reward_breakdown", "tau2_reward_info"):
        assert field in schema["properties"] and field in schema["required"]
    assert "tau2_reward" in schema["$defs"]["signal"]["enum"]
    json.dumps(schema)
