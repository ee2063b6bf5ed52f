"""banking_knowledge against upstream's own numbers, over all 97 tasks, offline.

``tau2_banking_upstream.json`` holds, per task, what upstream's code at the pin (a2c0247)
computed in a throwaway virtualenv (``bench/upstream_facts/banking_facts.py`` is the script):
the DB hash after initialization and after the gold replay, and the DB verdict of upstream's
``EnvironmentEvaluator`` on four trajectories built from the gold actions: the gold itself,
the gold minus its last state-changing action, the gold plus a read of a discoverable tool
outside the read allowlist (unlock + call), and the gold with every integer of a discoverable
call's JSON arguments spelled as a float (``25`` -> ``25.0``). The port replays the same
trajectories through its real tool surface and must reach the same verdicts.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

import pytest_tau2.domains.tau2_sources as tau2_sources  # noqa: F401  (registers the sources)
from pytest_tau2.domains.tau2_banking_knowledge import AGENT_TOOLS, BASE_AGENT_TOOLS, USER_TOOL_CLASSES, USER_TOOLS
from pytest_tau2.environment.db import db_hash
from pytest_tau2.run import participants, seeding
from pytest_tau2.run.pipeline import run_scenario
from pytest_tau2.scenario.registry import all_scenarios
from pytest_tau2.settings import Settings

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
BANK = DATA_DIR / "tau2" / "domains" / "banking_knowledge"
if not (BANK / "db.json").is_file():
    pytest.skip(f"no tau2 banking_knowledge data under {DATA_DIR} (set TAU2_DATA_DIR)", allow_module_level=True)

UPSTREAM: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).with_name("tau2_banking_upstream.json")).read_text(encoding="utf-8")
)["tasks"]
READ_EXTRA = "get_all_user_accounts_by_user_id_3847"
MUTATING = {cls.name for cls in (*BASE_AGENT_TOOLS, *USER_TOOL_CLASSES) if cls.mutates_state}


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(data_dir=str(DATA_DIR), results_dir=str(tmp_path_factory.mktemp("results")))


@pytest.fixture(scope="module")
def scenarios(settings: Settings) -> dict[str, Any]:
    found = {n: c for n, c in all_scenarios(settings).items() if n.startswith("tau2_banking_knowledge__")}
    return {cls.tau2_id: cls().bind(settings) for cls in found.values()}


def test_census(scenarios: dict[str, Any]) -> None:
    assert len(scenarios) == len(UPSTREAM) == 97
    assert sorted(scenarios) == sorted(UPSTREAM)
    assert min(scenarios) == "task_001" and max(scenarios) == "task_102"
    assert (
        len(BASE_AGENT_TOOLS) == 14 and len(AGENT_TOOLS) == 44
    )  # upstream has 44 (@is_discoverable_tool on KnowledgeTools)
    assert len(USER_TOOL_CLASSES) == 6 and len(USER_TOOLS) == 4
    bases = [tuple(s.criteria["reward_basis"]) for s in scenarios.values()]
    assert (bases.count(("DB",)), bases.count(("ACTION",)), bases.count(("DB", "NL_ASSERTION"))) == (87, 9, 1)


def _gold(task_id: str, scenario: Any) -> list[tuple[str, str, dict[str, Any]]]:
    return [(a["requestor"], a["name"], dict(a["arguments"])) for a in scenario.gold_actions()]


def _replay(scenario: Any, settings: Settings, calls: list[tuple[str, str, dict[str, Any]]]) -> str:
    prepared = seeding.prepare(scenario, settings)
    for requestor, name, arguments in calls:
        env = prepared.envs["user" if requestor == "user" else "agent"]
        env.call(name, arguments)
    return db_hash(prepared.states["agent"]["db"])


def _trajectories(task_id: str, scenario: Any) -> dict[str, list[tuple[str, str, dict[str, Any]]]]:
    gold = _gold(task_id, scenario)
    found = {"gold_trajectory": gold}
    facts = UPSTREAM[task_id]
    if "minus_last_write_index" in facts:
        k = facts["minus_last_write_index"]
        assert gold[k][1] in MUTATING  # the same action upstream dropped
        assert all(gold[j][1] not in MUTATING for j in range(k + 1, len(gold)))
        found["minus_last_write"] = gold[:k] + gold[k + 1 :]
    if "extra_read" in facts:
        read = {"agent_tool_name": READ_EXTRA, "arguments": json.dumps({"user_id": "x"})}
        found["extra_read"] = [
            ("assistant", "unlock_discoverable_agent_tool", {"agent_tool_name": READ_EXTRA}),
            ("assistant", "call_discoverable_agent_tool", read),
            *gold,
        ]
    if "ints_as_floats" in facts:
        floated = []
        for requestor, name, arguments in gold:
            if name == "call_discoverable_agent_tool":
                arguments = {
                    **arguments,
                    "arguments": re.sub(r"(:\s*-?\d+)(?=[,}\s])", r"\1.0", arguments["arguments"]),
                }
            floated.append((requestor, name, arguments))
        found["ints_as_floats"] = floated
    return found


@pytest.mark.parametrize("task_id", sorted(UPSTREAM))
def test_gold_replay_and_perturbations_agree_with_upstream(
    scenarios: dict[str, Any], settings: Settings, task_id: str
) -> None:
    scenario, facts = scenarios[task_id], UPSTREAM[task_id]
    assert db_hash(seeding.prepare(scenario, settings).states["agent"]["db"]) == facts["initial"]
    gold = seeding.gold_replay(scenario, settings)
    assert gold is not None and gold.failures == []
    assert gold.hashes["agent"] == facts["gold"]
    assert gold.hashes.get("user", facts["gold"]) == facts["gold"]  # one DB for both sides
    for kind, calls in _trajectories(task_id, scenario).items():
        assert (_replay(scenario, settings, calls) == facts["gold"]) is facts[kind], kind


def test_agreement_totals() -> None:
    """What the pinned verdicts say, in numbers (quoted in docs/tau2-banking-knowledge.md)."""
    kinds = ("gold_trajectory", "minus_last_write", "extra_read", "ints_as_floats")
    totals = {k: [v[k] for v in UPSTREAM.values() if k in v] for k in kinds}
    assert {k: (len(v), sum(v)) for k, v in totals.items()} == {
        "gold_trajectory": (97, 97),
        "minus_last_write": (93, 8),
        "extra_read": (57, 57),
        "ints_as_floats": (23, 23),
    }


def test_a_replay_missing_its_last_write_fails_with_a_db_diff(scenarios: dict[str, Any], settings: Settings) -> None:
    scenario = scenarios["task_010"]  # log_verification, then the customer's submit_referral
    ctx = participants.Context.for_scenario(scenario, settings)
    actions = [dict(a) for a in ctx.plan.actions][:-1]
    from pytest_tau2.conversation.offline import GoldPlan, OracleAgent, ScriptedUser

    plan = GoldPlan(actions, ending_tools=ctx.plan.ending_tools)
    user = ScriptedUser(scenario.user_opening(), plan, patience=5, agent_follows_plan=True)
    outcome = asyncio.run(run_scenario(scenario, agent=OracleAgent(plan), user=user, settings=settings))
    assert outcome.is_successful is False
    message = next(c.message for c in outcome.checks if c.id == "db_state_match")
    assert "diff (expected -> actual)" in message and "referrals" in message


def test_offline_oracle_passes_every_task_with_upstreams_reward(scenarios: dict[str, Any], settings: Settings) -> None:
    not_evaluated = []
    for task_id, scenario in scenarios.items():
        ctx = participants.Context.for_scenario(scenario, settings)
        outcome = asyncio.run(
            run_scenario(
                scenario, agent=participants.make_agent(ctx), user=participants.make_user(ctx), settings=settings
            )
        )
        assert outcome.is_successful is True, task_id
        assert outcome.signals["tau2_reward"] == 1.0, task_id
        not_evaluated += [task_id] if outcome.evidence["tau2_reward_info"]["not_evaluated"] else []
    assert len(not_evaluated) == 1  # the one [DB, NL_ASSERTION] task: no judge offline
