"""The authoring API: per-side dataclasses, the Scenario contract, the scenario and tool registries,
seeding state from ``db_path``, and the tool-call layer (``Environment``)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pytest_tau2 import (
    Actions,
    EndConversationTool,
    Persona,
    Resources,
    Scenario,
    ScenarioDefinitionError,
    SuccessSignal,
    Task,
    Tool,
    ToolDefinitionError,
    ToolError,
    register_eval_scenario,
    register_scenario_source,
)
from pytest_tau2.environment.env import Environment, serialize_result
from pytest_tau2.environment.tools import DEFAULT_NAMESPACE, TOOL_REGISTRY, resolve_tool
from pytest_tau2.errors import DataPathError
from pytest_tau2.run import build_environments, seed_states
from pytest_tau2.scenario import registry
from pytest_tau2.settings import Settings

S = SuccessSignal


@pytest.fixture(autouse=True)
def _isolated_registries() -> Iterator[None]:
    """Each test sees only the scenarios it registers; the registries are restored afterwards."""
    saved = registry.REGISTRY.snapshot(), registry.SOURCES.snapshot(), dict(TOOL_REGISTRY)
    registry.REGISTRY.restore({})
    registry.SOURCES.restore({})
    yield
    registry.REGISTRY.restore(saved[0])
    registry.SOURCES.restore(saved[1])
    TOOL_REGISTRY.clear()
    TOOL_REGISTRY.update(saved[2])


# ---- a tiny domain used throughout -------------------------------------------------------------


class CounterTool(Tool):
    abstract = True
    namespace = "unitreg"


class GetCount(CounterTool):
    name = "get_count"
    description = "Read a counter."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"counter": {"type": "string"}},
        "required": ["counter"],
        "additionalProperties": False,
    }

    def run(self, **arguments: Any) -> Any:
        if arguments["counter"] not in self.db["counters"]:
            raise ToolError(f"no counter {arguments['counter']!r}")
        return self.db["counters"][arguments["counter"]]


class AddToCount(CounterTool):
    name = "add_to_count"
    description = "Add to a counter."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"counter": {"type": "string"}, "amount": {"type": "integer", "minimum": 1}},
        "required": ["counter", "amount"],
        "additionalProperties": False,
    }
    action_name = "add"
    mutates_state = True

    def run(self, **arguments: Any) -> Any:
        counters = self.db["counters"]
        if arguments["counter"] not in counters:
            raise ToolError(f"no counter {arguments['counter']!r}")
        counters[arguments["counter"]]["value"] += arguments["amount"]
        return {"value": counters[arguments["counter"]]["value"]}


class Handoff(CounterTool):
    description = "Hand the caller to a human."
    action_name = "handoff"
    ends_conversation = "transfer"

    def run(self, **arguments: Any) -> Any:
        return "Transferring you now."


class CounterBase(Scenario):
    """A domain base: no name, so it is not checked or registered."""

    success_signals: ClassVar[tuple[SuccessSignal, ...]] = (S.DB_STATE_MATCH, S.CLEAN_EXIT)
    tool_namespace = "unitreg"

    def setup_shared_state(self, state: dict[str, Any], side: str) -> None:
        state["db_path"] = "counters/db.json"

    @property
    def agent_resources(self) -> Resources:
        return Resources(tools={"GetCount": {}, "AddToCount": {}, "Handoff": {}, "EndConversationTool": {}})


def counter_env(db: dict[str, Any] | None = None) -> Environment:
    state = {"db": db if db is not None else {"counters": {"a": {"value": 1}}}}
    return Environment("agent", state, [cls(state) for cls in (GetCount, AddToCount, Handoff, EndConversationTool)])


# ---- per-side dataclasses --------------------------------------------------------------------------


def test_dataclass_defaults() -> None:
    persona = Persona(role="customer", name="Ann")
    assert (persona.background, persona.personality) == ("", "")
    assert persona.behavior_config is None and persona.voice_config is None
    assert Task(goal="g").background == ""
    assert Actions() == Actions(instructions=[], guidelines=[])
    assert Resources() == Resources(tools={}, information=[])


def test_dataclasses_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Persona(role="r", name="n").name = "other"  # type: ignore[misc]


def test_default_mutable_fields_are_not_shared() -> None:
    Actions().instructions.append("x")
    assert Actions().instructions == []


# ---- the Scenario: eight per-side properties and prompts ------------------------------------------


class Ordering(Scenario):
    name = "unitreg__ordering"
    description = "Order a coffee"
    success_signals: ClassVar[tuple[SuccessSignal, ...]] = (S.CLEAN_EXIT,)

    @property
    def user_persona(self) -> Persona:
        return Persona(
            role="customer",
            name="Ann",
            background="You live in Lyon.",
            personality="Chatty.",
            behavior_config={"interrupts": "often"},
            voice_config={"accent": "SECRET-VOICE-LABEL"},
        )

    @property
    def user_task(self) -> Task:
        return Task(goal="Order a flat white.", background="You are in a hurry.")

    @property
    def user_actions(self) -> Actions:
        return Actions(instructions=["Ask for a flat white.", "Pay by card."], guidelines=["Be brief."])

    @property
    def user_resources(self) -> Resources:
        return Resources(information=["Your card ends in 4242."])

    @property
    def agent_actions(self) -> Actions:
        return Actions(instructions=["Take the order."], guidelines=["Never invent prices."])


def test_user_prompt_renders_persona_task_actions_and_information() -> None:
    prompt = Ordering().get_user_prompt()
    assert prompt.startswith("You are Ann, a customer.")
    for text in (
        "## Background\nYou live in Lyon.",
        "## Personality\nChatty.",
        "## Your goal\nOrder a flat white.",
        "## Context\nYou are in a hurry.",
        "## Steps\n1. Ask for a flat white.\n2. Pay by card.",
        "## Guidelines\n- Be brief.",
        "## Information\n- Your card ends in 4242.",
        "###STOP###",
    ):
        assert text in prompt


def test_agent_prompt_renders_the_agent_side_only() -> None:
    prompt = Ordering().get_agent_prompt()
    assert prompt.startswith("You are Agent, a customer service agent.")
    assert "## Steps\n1. Take the order." in prompt and "- Never invent prices." in prompt
    assert "flat white" not in prompt and "###STOP###" not in prompt


def test_behavior_and_voice_config_never_reach_a_prompt() -> None:
    scenario = Ordering()
    for prompt in (scenario.get_user_prompt(), scenario.get_agent_prompt()):
        assert "SECRET-VOICE-LABEL" not in prompt and "interrupts" not in prompt


def test_default_properties() -> None:
    scenario = ExitOnly()
    assert scenario.user_persona == Persona(role="customer", name="Customer")
    assert scenario.user_task == Task(goal="Check the defaults")
    assert scenario.user_actions == Actions() and scenario.agent_actions == Actions()
    assert scenario.user_resources == Resources()
    assert scenario.agent_resources == Resources(tools={"EndConversationTool": {}})
    assert scenario.agent_persona.role == "customer service agent"
    assert scenario.user_opening() == "Check the defaults"
    assert (scenario.max_turns, scenario.max_duration, scenario.reference_answer) == (30, 600.0, None)


class ExitOnly(Scenario):
    name = "unitreg__exit_only"
    description = "Check the defaults"
    success_signals: ClassVar[tuple[SuccessSignal, ...]] = (S.CLEAN_EXIT,)


def test_name_prefix_is_the_domain_and_the_default_tool_namespace() -> None:
    scenario = ExitOnly()
    assert scenario.domain == "unitreg"
    assert scenario.namespace == scenario.user_namespace == "unitreg"


def test_tool_namespaces_can_be_set_per_side() -> None:
    class Split(ExitOnly):
        name = "unitreg__split"
        tool_namespace = "agent_ns"
        user_tool_namespace = "user_ns"

    assert (Split().namespace, Split().user_namespace) == ("agent_ns", "user_ns")


def test_a_user_side_exists_only_when_the_user_has_tools() -> None:
    class WithUserTools(ExitOnly):
        name = "unitreg__user_tools"

        @property
        def user_resources(self) -> Resources:
            return Resources(tools={"GetCount": {}})

    assert ExitOnly().sides == ("agent",)
    assert WithUserTools().sides == ("agent", "user")


# ---- the success-signal contract, checked at class definition -----------------------------------


def test_a_named_class_without_success_signals_is_a_definition_error_naming_the_class() -> None:
    with pytest.raises(ScenarioDefinitionError, match=r"test_registry\.\S*NoSignals.*does not define success_signals"):

        class NoSignals(Scenario):
            name = "unitreg__no_signals"


def test_the_definition_error_is_a_type_error() -> None:
    with pytest.raises(TypeError):

        class NoSignals(Scenario):
            name = "unitreg__no_signals"


@pytest.mark.parametrize("bad", [(), [], ("action_match",), (S.CLEAN_EXIT, "clean_exit")])
def test_success_signals_must_be_a_non_empty_sequence_of_members(bad: Any) -> None:
    with pytest.raises(ScenarioDefinitionError, match="expected a non-empty sequence of SuccessSignal"):
        type("Bad", (Scenario,), {"name": "unitreg__bad", "success_signals": bad})


@pytest.mark.parametrize("bad", [S.ACTION_MATCH, "action_match"], ids=["bare member", "string"])
def test_success_signals_that_are_not_a_sequence_are_refused(bad: Any) -> None:
    with pytest.raises(ScenarioDefinitionError):
        type("Bad", (Scenario,), {"name": "unitreg__bad", "success_signals": bad})


def test_success_signals_inherited_from_a_domain_base() -> None:
    class Inherits(CounterBase):
        name = "unitreg__inherits"

    assert tuple(Inherits().success_signals) == (S.DB_STATE_MATCH, S.CLEAN_EXIT)


def test_success_signals_as_cached_property_depending_on_the_scenario() -> None:
    class Dynamic(Scenario):
        name = "unitreg__dynamic"
        nl_assertions: ClassVar[list[str] | None] = ["The agent is polite."]

        @cached_property
        def success_signals(self) -> tuple[SuccessSignal, ...]:  # type: ignore[override]
            return (S.NL_ASSERTION,) if self.nl_assertions else (S.CLEAN_EXIT,)

    assert Dynamic().success_signals == (S.NL_ASSERTION,)


def test_a_base_class_without_name_is_not_checked() -> None:
    class Base(Scenario):
        pass

    with pytest.raises(ScenarioDefinitionError):

        class Child(Base):
            name = "unitreg__child"


@pytest.mark.parametrize("bad_name", ["no_domain_separator", "", 42])
def test_name_must_be_domain_double_underscore_case(bad_name: Any) -> None:
    with pytest.raises(ScenarioDefinitionError, match="expected '<domain>__<case>'"):
        type("Bad", (Scenario,), {"name": bad_name, "success_signals": (S.CLEAN_EXIT,)})


@pytest.mark.parametrize("bad_name", ["__case", "domain__", "shop__../../outside"])
def test_name_parts_must_be_non_empty_and_safe_as_a_folder_name(bad_name: str) -> None:
    with pytest.raises(ScenarioDefinitionError):
        type("Bad", (Scenario,), {"name": bad_name, "success_signals": (S.CLEAN_EXIT,)})


# ---- scenario registry ----------------------------------------------------------------------------


def test_register_returns_the_class_and_all_scenarios_finds_it() -> None:
    assert register_eval_scenario(ExitOnly) is ExitOnly
    assert registry.all_scenarios(Settings()) == {"unitreg__exit_only": ExitOnly}


def test_registering_the_same_class_twice_is_harmless() -> None:
    register_eval_scenario(ExitOnly)
    register_eval_scenario(ExitOnly)
    assert list(registry.REGISTRY) == ["unitreg__exit_only"]


def test_duplicate_names_are_an_error_naming_both_classes() -> None:
    register_eval_scenario(ExitOnly)

    class Impostor(Scenario):
        name = "unitreg__exit_only"
        success_signals = (S.CLEAN_EXIT,)

    with pytest.raises(ScenarioDefinitionError) as info:
        register_eval_scenario(Impostor)
    message = str(info.value)
    assert "duplicate scenario name 'unitreg__exit_only'" in message
    assert f"{__name__}.ExitOnly" in message
    assert f"{__name__}.test_duplicate_names_are_an_error_naming_both_classes.<locals>.Impostor" in message


def test_a_subclass_that_keeps_its_parents_name_is_a_duplicate() -> None:
    register_eval_scenario(ExitOnly)

    class Tweaked(ExitOnly):
        max_turns = 5

    with pytest.raises(ScenarioDefinitionError, match="duplicate scenario name"):
        register_eval_scenario(Tweaked)


def test_register_refuses_what_is_not_a_named_scenario_class() -> None:
    with pytest.raises(ScenarioDefinitionError, match="expects a Scenario subclass"):
        register_eval_scenario(object)  # type: ignore[type-var]
    with pytest.raises(ScenarioDefinitionError, match="has no name"):
        register_eval_scenario(CounterBase)


def test_all_scenarios_is_sorted_by_name() -> None:
    class Zeta(ExitOnly):
        name = "unitreg__zeta"

    class Alpha(ExitOnly):
        name = "unitreg__alpha"

    for cls in (Zeta, ExitOnly, Alpha):
        register_eval_scenario(cls)
    assert list(registry.all_scenarios(Settings())) == ["unitreg__alpha", "unitreg__exit_only", "unitreg__zeta"]


def test_an_explicit_class_wins_over_a_generated_one_with_the_same_name() -> None:
    generated = [type(f"Gen{i}", (CounterBase,), {"name": f"gen__{i}"}) for i in range(3)]
    register_scenario_source("gen", lambda settings: generated)

    class Override(CounterBase):
        name = "gen__1"
        max_turns = 3

    register_eval_scenario(Override)
    found = registry.all_scenarios(Settings())
    assert list(found) == ["gen__0", "gen__1", "gen__2"]
    assert found["gen__1"] is Override
    assert found["gen__0"] is generated[0]


def test_a_failing_source_is_reported_and_does_not_hide_the_others() -> None:
    register_eval_scenario(ExitOnly)

    def broken(settings: Any) -> list[type[Scenario]]:
        raise FileNotFoundError("tasks.json is missing")

    register_scenario_source("broken", broken)
    errors: list[tuple[str, Exception]] = []
    assert list(registry.all_scenarios(Settings(), errors)) == ["unitreg__exit_only"]
    assert [(domain, str(exc)) for domain, exc in errors] == [("broken", "tasks.json is missing")]
    with pytest.raises(FileNotFoundError):
        registry.all_scenarios(Settings())


def test_the_source_receives_the_run_settings() -> None:
    seen: list[Any] = []
    register_scenario_source("gen", lambda settings: seen.append(settings) or [])
    settings = Settings(sections={"telecom_tasks": "full"})
    registry.all_scenarios(settings)
    assert seen == [settings]


# ---- seeding: setup_shared_state and db_path ----------------------------------------------------


@pytest.fixture
def data_root(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    (root / "counters").mkdir(parents=True)
    (root / "counters" / "db.json").write_text(json.dumps({"counters": {"a": {"value": 1}, "b": {"value": 5}}}))
    (root / "counters" / "user.toml").write_text("[phone]\nbattery = 80\n")
    return root


class Counting(CounterBase):
    name = "unitreg__counting"


def test_db_path_is_resolved_against_the_data_root_and_loaded(data_root: Path) -> None:
    states = seed_states(Counting(), Settings(eval_data_root=str(data_root)))
    assert states == {"agent": {"db": {"counters": {"a": {"value": 1}, "b": {"value": 5}}}}}


def test_every_seed_is_a_private_copy(data_root: Path) -> None:
    settings = Settings(eval_data_root=str(data_root))
    first = seed_states(Counting(), settings)
    first["agent"]["db"]["counters"]["a"]["value"] = 99
    assert seed_states(Counting(), settings)["agent"]["db"]["counters"]["a"]["value"] == 1


def test_named_db_paths_and_toml_files(data_root: Path) -> None:
    class Phones(CounterBase):
        name = "unitreg__phones"

        def setup_shared_state(self, state: dict[str, Any], side: str) -> None:
            state["db_path"] = "counters/db.json"
            state["device_db_path"] = "counters/user.toml"
            state["note"] = "kept as is"

    state = seed_states(Phones(), Settings(eval_data_root=str(data_root)))["agent"]
    assert state["device_db"] == {"phone": {"battery": 80}}
    assert state["note"] == "kept as is"
    assert "db_path" not in state and "device_db_path" not in state


@pytest.mark.parametrize("escaping", ["../outside.json", "counters/../../outside.json", "/etc/passwd"])
def test_a_db_path_escaping_the_data_root_is_refused(data_root: Path, escaping: str) -> None:
    (data_root.parent / "outside.json").write_text("{}")

    class Escapes(CounterBase):
        name = "unitreg__escapes"

        def setup_shared_state(self, state: dict[str, Any], side: str) -> None:
            state["db_path"] = escaping

    with pytest.raises(DataPathError, match="escapes the data root"):
        seed_states(Escapes(), Settings(eval_data_root=str(data_root)))


def test_setup_shared_state_is_called_once_per_side(data_root: Path) -> None:
    calls: list[str] = []

    class TwoSides(CounterBase):
        name = "unitreg__two_sides"

        @property
        def user_resources(self) -> Resources:
            return Resources(tools={"GetCount": {}})

        def setup_shared_state(self, state: dict[str, Any], side: str) -> None:
            calls.append(side)
            state["db_path"] = "counters/db.json"

    states = seed_states(TwoSides(), Settings(eval_data_root=str(data_root)))
    assert calls == ["agent", "user"]
    assert states["agent"]["db"] is not states["user"]["db"]


def test_environments_get_the_tools_named_in_resources(data_root: Path) -> None:
    scenario = Counting()
    states = seed_states(scenario, Settings(eval_data_root=str(data_root)))
    envs = build_environments(scenario, states)
    assert [t["function"]["name"] for t in envs["agent"].schemas()] == [
        "get_count",
        "add_to_count",
        "Handoff",
        "EndConversationTool",
    ]
    assert envs["agent"].call("add_to_count", {"counter": "b", "amount": 2}).content == '{"value": 7}'
    assert states["agent"]["db"]["counters"]["b"]["value"] == 7


# ---- tool registry -------------------------------------------------------------------------------


def test_tools_register_under_namespace_and_class_name() -> None:
    assert TOOL_REGISTRY[("unitreg", "GetCount")] is GetCount
    assert TOOL_REGISTRY[(DEFAULT_NAMESPACE, "EndConversationTool")] is EndConversationTool
    assert ("unitreg", "CounterTool") not in TOOL_REGISTRY  # abstract


def test_the_llm_facing_name_defaults_to_the_class_name() -> None:
    assert (GetCount.name, Handoff.name) == ("get_count", "Handoff")


def test_resolve_tool_falls_back_to_the_default_namespace() -> None:
    assert resolve_tool("unitreg", "GetCount") is GetCount
    assert resolve_tool("unitreg", "EndConversationTool") is EndConversationTool
    assert resolve_tool("any_domain", "EndConversationTool") is EndConversationTool


def test_resolve_tool_error_lists_what_is_known() -> None:
    with pytest.raises(ToolDefinitionError, match=r"no tool class 'Nope' in namespace 'unitreg'.*AddToCount, EndCon"):
        resolve_tool("unitreg", "Nope")


def test_a_class_name_registered_twice_in_one_namespace_is_an_error() -> None:
    with pytest.raises(ToolDefinitionError, match="registered twice in namespace 'unitreg'"):

        class GetCount(CounterTool):
            pass


def test_the_same_class_name_in_two_namespaces_is_fine() -> None:
    class GetCount(Tool):
        namespace = "unitreg_other"

    assert resolve_tool("unitreg_other", "GetCount") is GetCount
    assert resolve_tool("unitreg", "GetCount") is not GetCount


def test_openai_schema() -> None:
    assert AddToCount.openai_schema() == {
        "type": "function",
        "function": {"name": "add_to_count", "description": "Add to a counter.", "parameters": AddToCount.parameters},
    }


# ---- Environment: the tool-call layer -------------------------------------------------------------


def test_a_successful_read_call_returns_serialised_content_and_records_nothing() -> None:
    env = counter_env()
    result = env.call("get_count", {"counter": "a"})
    assert (result.content, result.error, result.ends_conversation) == ('{"value": 1}', False, None)
    assert env.actions == [] and env.tool_errors == 0


def test_a_successful_write_call_is_recorded_under_its_action_name() -> None:
    env = counter_env()
    env.call("add_to_count", {"counter": "a", "amount": 2})
    env.call("add", '{"counter": "a", "amount": 3}')  # the action name is callable too (gold replay)
    assert env.actions == [
        {"name": "add", "arguments": {"counter": "a", "amount": 2}},
        {"name": "add", "arguments": {"counter": "a", "amount": 3}},
    ]
    assert env.db["counters"]["a"]["value"] == 6


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"counter": "a"}, "Error: invalid arguments for 'add_to_count': 'amount' is a required property"),
        (
            {"counter": "a", "amount": "2"},
            "Error: invalid arguments for 'add_to_count': '2' is not of type 'integer' (at 'amount')",
        ),
        (
            {"counter": "a", "amount": 0},
            "Error: invalid arguments for 'add_to_count': 0 is less than the minimum of 1 (at 'amount')",
        ),
        (
            {"counter": "a", "amount": 1, "x": 1},
            "Error: invalid arguments for 'add_to_count': Additional properties are not allowed ('x' was unexpected)",
        ),
        (
            '{"counter": "a", ',
            "Error: arguments for 'add_to_count' are not valid JSON: Expecting property name "
            'enclosed in double quotes at position 17 in \'{"counter": "a", \'',
        ),
        ("[1, 2]", "Error: arguments for 'add_to_count' are not valid JSON: expected a JSON object, got list"),
    ],
)
def test_bad_arguments_are_error_results_counted_never_exceptions(arguments: Any, expected: str) -> None:
    env = counter_env()
    result = env.call("add_to_count", arguments)
    assert result.error is True
    assert result.content == expected
    assert env.tool_errors == 1 and env.actions == []
    assert env.db["counters"]["a"]["value"] == 1


def test_a_refusing_tool_is_an_error_result_and_its_action_is_not_recorded() -> None:
    env = counter_env()
    result = env.call("add_to_count", {"counter": "zzz", "amount": 1})
    assert (result.content, result.error) == ("Error: no counter 'zzz'", True)
    assert env.actions == [] and env.tool_errors == 1


def test_an_unknown_tool_is_an_error_result() -> None:
    env = counter_env()
    assert env.call("drop_tables", {}).content == "Error: Tool 'drop_tables' not found."
    assert env.tool_errors == 1


def test_a_tool_crash_is_an_error_result_with_the_exception_type_when_there_is_no_message() -> None:
    class Crashes(Tool):
        namespace = "unitreg_crash"

        def run(self, **arguments: Any) -> Any:
            raise KeyError

    state: dict[str, Any] = {"db": {}}
    env = Environment("agent", state, [Crashes(state)])
    assert env.call("Crashes", None).content == "Error: KeyError"


def test_empty_arguments_are_an_empty_object() -> None:
    env = counter_env()
    assert env.call("EndConversationTool", "").content == "Conversation ended."
    assert env.call("EndConversationTool", None).ends_conversation == "exit"


def test_ending_tools_say_how_the_conversation_ends() -> None:
    env = counter_env()
    assert env.call("Handoff", {}).ends_conversation == "transfer"
    assert env.actions == [{"name": "handoff", "arguments": {}}]


def test_after_success_runs_after_successful_calls_only() -> None:
    env = counter_env()
    calls: list[int] = []
    env.after_success = lambda: calls.append(1)
    env.call("get_count", {"counter": "a"})
    env.call("get_count", {"counter": "zzz"})
    env.call("get_count", {})
    assert calls == [1]


def test_has_tool_knows_names_and_action_names() -> None:
    env = counter_env()
    assert env.has_tool("add_to_count") and env.has_tool("add") and not env.has_tool("AddToCount")


def test_tool_config_from_resources_is_passed_to_the_tool() -> None:
    state: dict[str, Any] = {"db": {}}
    tool = GetCount(state, {"limit": 3})
    assert tool.config == {"limit": 3} and tool.db is state["db"]
    assert GetCount(state).config == {}


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("plain text", "plain text"),
        (3, "3"),
        (2.5, "2.5"),
        (True, "True"),
        ({"a": [1, "é"]}, '{"a": [1, "\\u00e9"]}'),
        ([1, 2], "[1, 2]"),
        (None, "null"),
    ],
)
def test_serialize_result(value: Any, text: str) -> None:
    assert serialize_result(value) == text
