"""The async conversation loop, the offline participants, and a whole scenario run without pytest."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pytest_tau2 import (
    EndConversationTool,
    InfrastructureError,
    Reply,
    Resources,
    Scenario,
    SuccessSignal,
    Tool,
    ToolCall,
    ToolError,
)
from pytest_tau2.conversation.loop import CLEAN_EXIT_REASONS, STOP_REASONS, Conversation, Limits
from pytest_tau2.conversation.offline import GoldPlan, OracleAgent, ScriptedUser
from pytest_tau2.conversation.protocol import Participant, has_stop_token
from pytest_tau2.environment.env import Environment
from pytest_tau2.run import gold_replay, run_scenario
from pytest_tau2.settings import Settings

S = SuccessSignal

# ---- a tiny domain ------------------------------------------------------------------------------


class LoopTool(Tool):
    abstract = True
    namespace = "unitloop"


class SetValue(LoopTool):
    name = "set_value"
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"key": {"type": "string"}, "value": {"type": "integer"}},
        "required": ["key", "value"],
        "additionalProperties": False,
    }
    action_name = "set_value"
    mutates_state = True

    def run(self, **arguments: Any) -> Any:
        if arguments["key"] not in self.db["values"]:
            raise ToolError(f"unknown key {arguments['key']!r}")
        self.db["values"][arguments["key"]]["value"] = arguments["value"]
        return "ok"


class Transfer(LoopTool):
    name = "transfer_to_human_agents"
    action_name = "transfer_to_human_agents"
    ends_conversation = "transfer"

    def run(self, **arguments: Any) -> Any:
        return "Transfer successful"


class PressButton(LoopTool):
    """A user-side tool."""

    name = "press_button"
    action_name = "press_button"
    mutates_state = True

    def run(self, **arguments: Any) -> Any:
        self.db["values"]["button"]["value"] += 1
        return "pressed"


def make_env(side: str = "agent") -> Environment:
    state: dict[str, Any] = {"db": {"values": {"x": {"value": 0}, "button": {"value": 0}}}}
    tools = [SetValue(state), Transfer(state), EndConversationTool(state), PressButton(state)]
    return Environment(side, state, tools)


# ---- scripted participants ------------------------------------------------------------------------


@dataclass
class Script:
    """Replies from a list, then repeats ``then``; remembers what it was shown."""

    replies: list[Any]
    then: Any = "..."
    seen: list[list[dict[str, Any]]] = field(default_factory=list)
    tools_seen: list[list[dict[str, Any]]] = field(default_factory=list)
    closed: bool = False

    async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        self.seen.append(messages)
        self.tools_seen.append(tools)
        return self.replies.pop(0) if self.replies else self.then

    async def aclose(self) -> None:
        self.closed = True


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name, arguments, id=f"id_{name}")


EXIT = Reply(text="Goodbye!", tool_calls=[call("EndConversationTool")])


def converse(
    agent: Any,
    user: Any,
    *,
    limits: Limits | None = None,
    user_env: Environment | None = None,
    greeting: str | None = None,
) -> tuple[Conversation, Any]:
    conversation = Conversation(
        agent=agent,
        user=user,
        agent_env=make_env(),
        user_env=user_env,
        agent_prompt="AGENT PROMPT",
        user_prompt="USER PROMPT",
        limits=limits or Limits(),
        greeting=greeting,
    )
    return conversation, asyncio.run(conversation.run())


# ---- stop reasons -----------------------------------------------------------------------------------


def test_the_documented_stop_reasons() -> None:
    assert STOP_REASONS == (
        "exit", "transfer", "user_stop", "max_turns", "max_duration", "max_tokens", "max_cost", "max_messages",
        "too_many_tool_errors", "user_max_steps", "error",
    )  # fmt: skip
    assert frozenset({"exit", "transfer"}) == CLEAN_EXIT_REASONS


def test_exit_tool_ends_the_conversation_cleanly() -> None:
    agent = Script(["Hello, how can I help?", EXIT])
    _, result = converse(agent, Script(["Hi", "Thanks"]))
    assert (result.stop_reason, result.clean_exit, result.agent_turns) == ("exit", True, 2)
    assert result.transcript[-1]["content"] == "Conversation ended."


def test_transfer_tool_is_a_clean_exit() -> None:
    agent = Script([Reply(text="Let me transfer you.", tool_calls=[call("transfer_to_human_agents")])])
    _, result = converse(agent, Script(["I want a human"]))
    assert (result.stop_reason, result.clean_exit) == ("transfer", True)


def test_user_stop_gives_the_agent_one_closing_turn_then_ends() -> None:
    agent = Script(["Hi", "Bye then"], then="still here")
    user = Script(["Hello", "All good ###STOP###"])
    _, result = converse(agent, user)
    assert (result.stop_reason, result.clean_exit) == ("user_stop", False)
    assert [m["content"] for m in result.transcript] == ["Hello", "Hi", "All good ###STOP###", "Bye then"]


def test_an_agent_that_exits_in_its_closing_turn_ends_with_exit() -> None:
    _, result = converse(Script(["Hi", EXIT]), Script(["Hello", "Thanks ###STOP###"]))
    assert result.stop_reason == "exit" and result.clean_exit


@pytest.mark.parametrize("token", ["###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"])
def test_every_user_stop_token_ends_the_conversation(token: str) -> None:
    assert has_stop_token(f"bye {token}")
    _, result = converse(Script([], then="ok"), Script([f"bye {token}"]))
    assert result.stop_reason == "user_stop"


def test_max_turns_counts_every_agent_step_including_tool_rounds() -> None:
    agent = Script([], then=Reply(tool_calls=[call("set_value", key="x", value=1)]))
    _, result = converse(agent, Script(["Hi"]), limits=Limits(max_turns=4))
    assert result.stop_reason == "max_turns"
    assert len([m for m in result.transcript if m["role"] == "tool"]) == 4
    assert result.agent_turns == 0  # tool calls without text are not turns


def test_timeout_keeps_the_transcript_so_far() -> None:
    class Slow:
        async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
            await asyncio.sleep(5)
            return Reply(text="too late")

    _, result = converse(Slow(), Script(["Hi"]), limits=Limits(max_duration=0.05))
    assert (result.stop_reason, result.clean_exit, result.error) == ("max_duration", False, None)
    assert result.limit == "max_duration 0.05 s reached"
    assert [m["content"] for m in result.transcript] == ["Hi"]
    assert result.duration_s < 2


def test_too_many_consecutive_tool_errors_stop_the_conversation() -> None:
    agent = Script([], then=Reply(tool_calls=[call("set_value", key="nope", value=1)]))
    _, result = converse(agent, Script(["Hi"]), limits=Limits(max_tool_errors=3))
    assert result.stop_reason == "too_many_tool_errors"
    assert [m["error"] for m in result.transcript if m["role"] == "tool"] == [True, True, True]


def test_a_successful_call_resets_the_consecutive_error_count() -> None:
    bad, good = call("set_value", key="nope", value=1), call("set_value", key="x", value=1)
    agent = Script(
        [
            Reply(tool_calls=[bad]),
            Reply(tool_calls=[bad]),
            Reply(tool_calls=[good]),
            Reply(tool_calls=[bad]),
            Reply(tool_calls=[bad]),
            EXIT,
        ]
    )
    _, result = converse(agent, Script(["Hi"]), limits=Limits(max_tool_errors=3))
    assert result.stop_reason == "exit"


def test_an_infrastructure_error_stops_with_error_and_keeps_the_exception() -> None:
    class Broken:
        async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
            raise InfrastructureError("bot unreachable")

    user = Script(["Hi"])
    _, result = converse(Broken(), user)
    assert result.stop_reason == "error" and not result.clean_exit
    assert isinstance(result.error, InfrastructureError) and str(result.error) == "bot unreachable"
    assert user.closed


def test_any_other_exception_from_a_participant_propagates_after_closing_both() -> None:
    class Buggy:
        async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
            raise ValueError("agent bug")

    user = Script(["Hi"])
    with pytest.raises(ValueError, match="agent bug"):
        converse(Buggy(), user)
    assert user.closed


def test_participants_are_closed_and_a_failing_close_does_not_mask_the_outcome() -> None:
    class BadClose(Script):
        async def aclose(self) -> None:
            raise RuntimeError("close failed")

    agent = BadClose([EXIT])
    user = Script(["Hi"])
    _, result = converse(agent, user)
    assert result.stop_reason == "exit" and user.closed


# ---- turns, transcript and views ------------------------------------------------------------------------


def test_agent_turns_count_non_empty_agent_text_only() -> None:
    agent = Script(
        [
            "",  # empty: passes the turn, not counted
            Reply(tool_calls=[call("set_value", key="x", value=1)]),  # tool round: not counted
            Reply(text="Done, anything else?", tool_calls=[call("set_value", key="x", value=2)]),  # counted
            "Here you go.",  # counted
            EXIT,  # counted: it says goodbye
        ]
    )
    _, result = converse(agent, Script(["Hi", "More", "Thanks"]), greeting="Welcome!")
    assert result.agent_turns == 3
    assert result.transcript[0] == {"role": "assistant", "content": "Welcome!", "generated": False, "turn_idx": 0}


def test_transcript_entries_are_numbered_and_record_tool_calls_and_results() -> None:
    agent = Script([Reply(tool_calls=[call("set_value", key="x", value=5)]), EXIT])
    conversation, result = converse(agent, Script(["Set x to 5"]))
    assert [m["turn_idx"] for m in result.transcript] == list(range(len(result.transcript)))
    assert result.transcript[1] == {
        "role": "assistant",
        "content": None,
        "turn_idx": 1,
        "tool_calls": [{"id": "id_set_value", "name": "set_value", "arguments": {"key": "x", "value": 5}}],
    }
    assert result.transcript[2] == {
        "role": "tool",
        "requestor": "agent",
        "tool_call_id": "id_set_value",
        "name": "set_value",
        "content": "ok",
        "error": False,
        "turn_idx": 2,
    }
    assert conversation.agent_env.actions == [{"name": "set_value", "arguments": {"key": "x", "value": 5}}]


def test_each_participant_sees_the_conversation_from_its_own_side() -> None:
    agent = Script([Reply(text="checking", tool_calls=[call("set_value", key="x", value=1)]), "Done.", EXIT])
    user = Script(["Please set x", "Thanks"])
    converse(agent, user)
    assert agent.seen[0] == [{"role": "system", "content": "AGENT PROMPT"}, {"role": "user", "content": "Please set x"}]
    after_tool = agent.seen[1]
    assert after_tool[2]["role"] == "assistant" and after_tool[2]["content"] == "checking"
    assert after_tool[2]["tool_calls"][0]["function"] == {"name": "set_value", "arguments": '{"key": "x", "value": 1}'}
    assert after_tool[3] == {"role": "tool", "tool_call_id": "id_set_value", "content": "ok"}
    assert user.seen[1] == [
        {"role": "system", "content": "USER PROMPT"},
        {"role": "assistant", "content": "Please set x"},
        {"role": "user", "content": "Done."},  # the agent's text that went with a tool call never reaches the user
    ]


def test_the_agent_is_offered_its_tool_schemas_and_a_user_without_tools_none() -> None:
    agent, user = Script([EXIT]), Script(["Hi"])
    converse(agent, user)
    assert [t["function"]["name"] for t in agent.tools_seen[0]] == [
        "set_value",
        "transfer_to_human_agents",
        "EndConversationTool",
        "press_button",
    ]
    assert user.tools_seen == [[]]


def test_a_user_without_tools_gets_an_error_result_for_a_tool_call() -> None:
    user = Script([Reply(tool_calls=[call("press_button")]), "Hi"])
    _, result = converse(Script([EXIT]), user)
    tool = next(m for m in result.transcript if m["role"] == "tool")
    assert (tool["requestor"], tool["content"], tool["error"]) == ("user", "Error: the user has no tools.", True)


def test_user_tools_act_on_the_user_environment_and_never_end_the_conversation() -> None:
    user_env = make_env("user")
    user = Script([Reply(tool_calls=[call("press_button"), call("EndConversationTool")]), "I pressed it"])
    _, result = converse(Script(["Press the button", EXIT]), user, user_env=user_env)
    assert user_env.db["values"]["button"]["value"] == 1
    assert result.stop_reason == "exit"
    assert [m["content"] for m in result.transcript if m["role"] == "user"] == [None, "I pressed it", "..."]


def test_a_plain_string_reply_is_accepted() -> None:
    _, result = converse(Script(["plain text", EXIT]), Script(["Hi", "ok"]))
    assert result.transcript[1]["content"] == "plain text"


def test_tool_call_arguments_may_be_a_raw_json_string() -> None:
    agent = Script([Reply(tool_calls=[ToolCall("set_value", '{"key": "x", "value": 3}', id="c1")]), EXIT])
    conversation, _ = converse(agent, Script(["Hi"]))
    assert conversation.agent_env.db["values"]["x"]["value"] == 3


def test_tool_call_ids_are_generated_when_missing() -> None:
    first, second = ToolCall("a"), ToolCall("a")
    assert first.id and second.id and first.id != second.id
    assert first.to_openai() == {"id": first.id, "type": "function", "function": {"name": "a", "arguments": "{}"}}


def test_the_transcript_keeps_parsed_arguments_and_flags_a_string_that_is_no_object() -> None:
    calls = [
        ToolCall("set_value", '{"key": "x", "value": 3}', id="c1"),
        ToolCall("set_value", '{"key": ', id="c2"),
        ToolCall("set_value", "[1, 2]", id="c3"),
    ]
    agent = Script([Reply(tool_calls=calls), EXIT])
    _, result = converse(agent, Script(["Hi"]))
    good, cut, listed = result.transcript[1]["tool_calls"]
    assert good["arguments"] == {"key": "x", "value": 3} and "invalid_arguments" not in good
    assert cut["arguments"] == '{"key": ' and "Expecting value" in cut["invalid_arguments"]
    assert listed["arguments"] == "[1, 2]" and listed["invalid_arguments"] == "expected a JSON object, got list"
    view = agent.seen[1][-4]["tool_calls"]  # the agent is sent back its own text
    assert [c["function"]["arguments"] for c in view] == ['{"key": "x", "value": 3}', '{"key": ', "[1, 2]"]


def test_missing_and_repeated_ids_get_ids_of_their_own_sent_back_and_the_same_every_run() -> None:
    def play() -> tuple[Any, Script]:
        first = Reply(tool_calls=[ToolCall("set_value", {"key": "x", "value": 1}, id="call_0"),
                                  ToolCall("set_value", {"key": "nope", "value": 1}, id="call_0")])  # fmt: skip
        second = Reply(tool_calls=[ToolCall("set_value", {"key": "x", "value": 2}), ToolCall("press_button")])
        third = Reply(tool_calls=[ToolCall("set_value", {"key": "x", "value": 3}, id="call_0")])
        agent = Script([first, second, third, EXIT])
        return converse(agent, Script(["Hi"]))[1], agent

    result, agent = play()
    calls = [c for m in result.transcript for c in m.get("tool_calls") or []]
    ids = [c["id"] for c in calls]
    assert len(set(ids)) == len(ids)
    assert calls[0]["id"] == "call_0" and calls[1]["sent_id"] == "call_0" and calls[1]["id"] == "tau2_call_1_1"
    assert [c.get("id_generated") for c in calls[2:4]] == [True, True] and calls[2]["id"] == "tau2_call_4_0"
    assert calls[4]["sent_id"] == "call_0"
    results = [m for m in result.transcript if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == ids[: len(results)]
    assert results[1]["error"] is True and results[0]["error"] is False  # each call's own result
    last_view = agent.seen[-1]
    sent = [c["id"] for m in last_view if m.get("tool_calls") for c in m["tool_calls"]]
    assert sent == ids[: len(sent)] and [m["tool_call_id"] for m in last_view if m["role"] == "tool"] == sent
    assert [c["id"] for m in play()[0].transcript for c in m.get("tool_calls") or []] == ids  # deterministic


def test_the_offline_participants_follow_the_protocol() -> None:
    plan = GoldPlan([])
    assert isinstance(OracleAgent(plan), Participant)
    assert isinstance(ScriptedUser("hi", plan), Participant)


# ---- oracle agent and scripted user --------------------------------------------------------------------


GOLD = [
    {"name": "set_value", "arguments": {"key": "x", "value": 7}, "requestor": "assistant"},
    {"name": "press_button", "arguments": {}, "requestor": "user"},
    {"name": "set_value", "arguments": {"key": "x", "value": 8}, "requestor": "assistant"},
]


def test_gold_plan_hands_out_consecutive_actions_of_one_side() -> None:
    plan = GoldPlan([dict(a) for a in GOLD])
    assert plan.take("user") == []
    assert [a["name"] for a in plan.take("agent")] == ["set_value"]
    assert plan.next_side() == "user"
    assert [a["name"] for a in plan.take("user")] == ["press_button"]
    assert plan.take("agent")[0]["arguments"] == {"key": "x", "value": 8}
    assert plan.next_side() is None


def test_gold_plan_holds_back_ending_tools() -> None:
    plan = GoldPlan(
        [GOLD[0], {"name": "transfer_to_human_agents", "arguments": {}}, GOLD[2]],
        ending_tools=frozenset({"transfer_to_human_agents"}),
    )
    # An ending action listed early waits for the end (banking task_005 transfers first): the
    # actions after it are still performed.
    assert plan.take("agent") == [GOLD[0], GOLD[2]]
    assert plan.take("agent") == []  # only the ending action is left
    assert [a["name"] for a in plan.remaining_endings()] == ["transfer_to_human_agents"]


@pytest.mark.parametrize("min_turns", [1, 3, 5])
def test_oracle_and_scripted_user_replay_the_gold_actions_interleaved(min_turns: int) -> None:
    plan = GoldPlan([dict(a) for a in GOLD])
    user_env = make_env("user")
    conversation, result = converse(
        OracleAgent(plan, min_turns=min_turns),
        ScriptedUser("Please fix x", plan, patience=min_turns + 2),
        user_env=user_env,
    )
    assert result.stop_reason == "exit"
    assert result.agent_turns == max(min_turns, 2)  # asks the user to act once, then says goodbye
    assert [a["arguments"] for a in conversation.agent_env.actions] == [
        {"key": "x", "value": 7},
        {"key": "x", "value": 8},
    ]
    assert user_env.actions == [{"name": "press_button", "arguments": {}}]
    assert result.transcript[0] == {"role": "user", "content": "Please fix x", "turn_idx": 0}


def test_oracle_ends_with_the_gold_ending_tool_instead_of_the_exit_tool() -> None:
    gold = [GOLD[0], {"name": "transfer_to_human_agents", "arguments": {}, "requestor": "assistant"}]
    plan = GoldPlan(gold, ending_tools=frozenset({"transfer_to_human_agents"}))
    _, result = converse(OracleAgent(plan, min_turns=1), ScriptedUser("help", plan))
    assert result.stop_reason == "transfer"


def test_scripted_user_stops_after_its_patience_when_the_agent_never_exits() -> None:
    _, result = converse(Script([], then="Anything else?"), ScriptedUser("hello", patience=2))
    assert result.stop_reason == "user_stop"
    assert [m["content"] for m in result.transcript if m["role"] == "user"] == [
        "hello",
        "Yes, that is right. Please go ahead.",
        "Okay, thank you.",
        "Thank you, that is all. ###STOP###",
    ]


def test_scripted_user_stops_even_if_the_agent_skipped_its_gold_actions() -> None:
    plan = GoldPlan([dict(GOLD[0])])  # an agent-side action a real model may never perform
    _, result = converse(
        Script([], then="Anything else?"), ScriptedUser("hello", plan, patience=2), limits=Limits(max_turns=30)
    )
    assert result.stop_reason == "user_stop"


# ---- a whole scenario, without pytest -------------------------------------------------------------------


class ValueBase(Scenario):
    success_signals: ClassVar[tuple[SuccessSignal, ...]] = (S.ACTION_MATCH, S.DB_STATE_MATCH, S.CLEAN_EXIT)
    tool_namespace = "unitloop"
    reference_answer: ClassVar[Any] = {"name": "set_value", "key": "x", "value": 7}

    def setup_shared_state(self, state: dict[str, Any], side: str) -> None:
        state["db_path"] = "values.json"

    @property
    def agent_resources(self) -> Resources:
        return Resources(tools={"SetValue": {}, "EndConversationTool": {}})

    def gold_actions(self) -> list[dict[str, Any]] | None:
        return [{"name": "set_value", "arguments": {"key": "x", "value": 7}, "requestor": "assistant"}]


class SetSeven(ValueBase):
    name = "unitloop__set_seven"


class GoldFails(ValueBase):
    name = "unitloop__gold_fails"

    def gold_actions(self) -> list[dict[str, Any]] | None:
        return [
            {"name": "set_value", "arguments": {"key": "nope", "value": 1}, "requestor": "assistant"},
            {"name": "lookup", "arguments": {}, "requestor": "user"},
        ]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    (tmp_path / "values.json").write_text(json.dumps({"values": {"x": {"value": 0}}}))
    return Settings(eval_data_root=str(tmp_path))


def run(scenario: Scenario, settings: Settings, agent: Participant, user: Participant | None = None) -> Any:
    return asyncio.run(run_scenario(scenario, agent=agent, user=user or ScriptedUser("Set x to 7"), settings=settings))


def oracle_for(scenario: Scenario, min_turns: int = 3) -> OracleAgent:
    return OracleAgent(GoldPlan([dict(a) for a in scenario.gold_actions() or []]), min_turns=min_turns)


def test_run_scenario_with_the_oracle_passes_every_signal(settings: Settings) -> None:
    scenario = SetSeven()
    outcome = run(scenario, settings, oracle_for(scenario))
    assert outcome.signals[S.ACTION_MATCH] is True
    assert outcome.signals[S.DB_STATE_MATCH] is True
    assert outcome.signals[S.CLEAN_EXIT] is True
    assert outcome.is_successful is True and not outcome.stalled
    assert outcome.final_dbs["agent"] == {"values": {"x": {"value": 7}}}
    assert outcome.recorded_actions == [{"name": "set_value", "arguments": {"key": "x", "value": 7}}]
    assert outcome.tool_errors == 0


def test_a_wrong_agent_fails_action_and_db_checks_with_evidence(settings: Settings) -> None:
    agent = Script(["Hi", Reply(tool_calls=[call("set_value", key="x", value=8)]), "Done", EXIT])
    outcome = run(SetSeven(), settings, agent)
    checks = {c.id: c for c in outcome.checks}
    assert outcome.is_successful is False
    assert checks["action_match"].message == "reference.value: expected 7, found 8"
    assert "values_changed: root['values']['x']['value']: expected 7 but found 8" in checks["db_state_match"].message
    assert outcome.verdict.failed == ["is_action_match", "db_state_match"]


def test_fewer_agent_turns_than_the_minimum_is_stalled(settings: Settings) -> None:
    quick = Script([Reply(text="Done.", tool_calls=[call("set_value", key="x", value=7)]), EXIT])
    outcome = run(SetSeven(), settings, quick)
    assert outcome.conversation.agent_turns == 2
    assert outcome.verdict.is_successful is True
    assert outcome.stalled and outcome.is_successful is False


def test_min_agent_turns_zero_disables_the_stall_check(settings: Settings) -> None:
    quick = Script([Reply(tool_calls=[call("set_value", key="x", value=7), call("EndConversationTool")])])
    relaxed = Settings(eval_data_root=settings.eval_data_root, min_agent_turns=0)
    outcome = run(SetSeven(), relaxed, quick)
    assert outcome.conversation.agent_turns == 0
    assert not outcome.stalled and outcome.is_successful is True


def test_settings_override_the_scenarios_limits(settings: Settings) -> None:
    capped = Settings(eval_data_root=settings.eval_data_root, max_turns=1)
    outcome = run(SetSeven(), capped, oracle_for(SetSeven()))
    assert outcome.conversation.stop_reason == "max_turns"


def test_gold_replay_keeps_failing_gold_actions_as_failures_and_is_cached(settings: Settings) -> None:
    gold = gold_replay(GoldFails(), settings)
    assert gold is not None
    assert gold.failures == [
        {"index": 0, "name": "set_value", "error": "Error: unknown key 'nope'"},
        {"index": 1, "name": "lookup", "error": "no user side"},
    ]
    assert gold.actions == []
    assert gold_replay(GoldFails(), settings) is gold


def test_no_gold_actions_means_no_replay(settings: Settings) -> None:
    class NoGold(ValueBase):
        name = "unitloop__no_gold"

        def gold_actions(self) -> list[dict[str, Any]] | None:
            return None

    assert gold_replay(NoGold(), settings) is None
    outcome = run(NoGold(), settings, Script(["a", "b", EXIT]))
    assert outcome.signals[S.DB_STATE_MATCH] is None
