"""run_scenario's order: the conversation's first turn does not wait for the gold replay, which
runs before the end state is compared (only the scoring needs it)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

import pytest_tau2.domains.tau2_sources  # noqa: F401  (registers the tau2 domains)
from pytest_tau2.conversation.offline import OracleAgent, ScriptedUser
from pytest_tau2.conversation.protocol import Reply
from pytest_tau2.errors import ScenarioDefinitionError
from pytest_tau2.run import participants, pipeline
from pytest_tau2.scenario.registry import all_scenarios
from pytest_tau2.settings import Settings

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
if not (DATA_DIR / "tau2" / "domains").is_dir():
    pytest.skip(f"no tau2 data under {DATA_DIR} (set TAU2_DATA_DIR)", allow_module_level=True)


class Recording:
    """A participant that notes each turn in ``events`` before the wrapped one answers."""

    def __init__(self, inner: Any, label: str, events: list[str]) -> None:
        self.inner, self.label, self.events = inner, label, events

    async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        self.events.append(self.label)
        reply: Reply = await self.inner.respond(messages, tools)
        return reply


def test_first_turn_before_gold_replay_and_scoring_still_uses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(data_dir=str(DATA_DIR), results_dir=str(tmp_path))
    scenario = all_scenarios(settings)["tau2_retail__5"]().bind(settings)
    events: list[str] = []
    replay = pipeline.gold_replay

    def recorded_replay(*args: Any) -> Any:
        events.append("gold replay")
        return replay(*args)

    monkeypatch.setattr(pipeline, "gold_replay", recorded_replay)
    ctx = participants.Context.for_scenario(scenario, settings)
    user = ScriptedUser(scenario.user_opening(), ctx.plan, patience=5, agent_follows_plan=True)
    outcome = asyncio.run(
        pipeline.run_scenario(
            scenario,
            agent=Recording(OracleAgent(ctx.plan), "agent", events),
            user=Recording(user, "user", events),
            settings=settings,
        )
    )
    assert events[0] in ("user", "agent")
    assert events.count("gold replay") == 1 and events[-1] == "gold replay"  # after the last turn
    assert outcome.gold is not None and outcome.gold.hashes
    assert outcome.signals["db_state_match"] is True  # the oracle's end state matches the replayed gold


def test_a_broken_gold_definition_fails_before_any_model_call(tmp_path: Path) -> None:
    settings = Settings(data_dir=str(DATA_DIR), results_dir=str(tmp_path))
    base = all_scenarios(settings)["tau2_retail__5"]

    class BrokenGold(base):  # type: ignore[misc, valid-type]
        def gold_actions(self) -> Any:
            raise KeyError("actions")

    scenario = BrokenGold().bind(settings)
    events: list[str] = []

    class Talker:
        async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
            events.append("model call")
            return Reply(text="hello")

    with pytest.raises(KeyError):
        asyncio.run(pipeline.run_scenario(scenario, agent=Talker(), user=Talker(), settings=settings))
    assert events == []


@pytest.mark.parametrize(
    "actions",
    [[{"arguments": {}}], [{"name": "get_user_details", "arguments": 3}], ["get_user_details"], {"name": "x"}],
    ids=["no name", "arguments a number", "not a mapping", "not a list"],
)
def test_a_malformed_gold_action_fails_before_any_model_call(tmp_path: Path, actions: Any) -> None:
    settings = Settings(data_dir=str(DATA_DIR), results_dir=str(tmp_path))
    base = all_scenarios(settings)["tau2_retail__5"]

    class Malformed(base):  # type: ignore[misc, valid-type]
        def gold_actions(self) -> Any:
            return actions

    events: list[str] = []

    class Talker:
        async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
            events.append("model call")
            return Reply(text="hello")

    scenario = Malformed().bind(settings)
    with pytest.raises(ScenarioDefinitionError, match="gold"):
        asyncio.run(pipeline.run_scenario(scenario, agent=Talker(), user=Talker(), settings=settings))
    assert events == []
