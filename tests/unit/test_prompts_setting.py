"""``--tau2-prompts``: the view file is found and read at run time, a missing one falls back to the
seed prompts and says so, the loop ends as upstream's does (or refuses writes in the closing turn
under ``seed``), tau2's reward stops at the user's stop, and the results name the prompts."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

import pytest_tau2.domains.tau2_sources  # noqa: F401  (registers the tau2 domains)
from pytest_tau2 import EndConversationTool, Reply, Tool, ToolCall
from pytest_tau2.conversation.loop import UPSTREAM_CLEAN_EXIT_REASONS, Conversation
from pytest_tau2.domains.tau2_common import upstream_view
from pytest_tau2.environment.env import Environment
from pytest_tau2.report.compare_runs import RunSide, compare
from pytest_tau2.report.leaderboard import prompts_line
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.scenario.registry import all_scenarios
from pytest_tau2.scoring.tau2_reward import upstream_ending
from pytest_tau2.settings import Settings, resolve


class _Write(Tool):
    namespace = "unitprompts"
    name = "set_value"
    mutates_state = True
    check_argument_types = False

    def run(self, **arguments: Any) -> Any:
        self.db["x"] = arguments["value"]
        return "ok"


def make_env() -> Environment:
    state: dict[str, Any] = {"db": {"x": 0}}
    return Environment("agent", state, [_Write(state), EndConversationTool(state)])


class Script:
    """Replies from a list, then repeats ``then``; remembers what it was shown."""

    def __init__(self, replies: list[Any], then: Any = "...") -> None:
        self.replies, self.then = replies, then
        self.seen: list[Any] = []

    async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        self.seen.append(messages)
        return self.replies.pop(0) if self.replies else self.then


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name, arguments, id=f"id_{name}")


EXIT = Reply(text="Goodbye!", tool_calls=[call("EndConversationTool")])

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR") or "/work/shared/tau2-data")
VIEW = DATA_DIR.resolve().parent / "tau2-view" / "agent_view.json"
needs_view = pytest.mark.skipif(not VIEW.is_file() or bool(os.environ.get("TAU2_VIEW_FILE")), reason="no view file")
needs_data = pytest.mark.skipif(not (DATA_DIR / "tau2").is_dir(), reason=f"no tau2 data under {DATA_DIR}")


def test_the_option_takes_two_words_and_defaults_to_upstream() -> None:
    assert resolve({}, {}, {})["prompts"] == "upstream"
    assert resolve({}, {"prompts": "seed"}, {})["prompts"] == "seed"
    assert resolve({}, {}, {"TAU2_PROMPTS": "seed"})["prompts"] == "seed"
    with pytest.raises(ValueError, match=r"--tau2-prompts \(ini tau2_prompts\) must be one of upstream, seed"):
        resolve({"prompts": "ours"}, {}, {})


def test_the_view_is_found_beside_the_data_or_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(upstream_view.VIEW_ENV, raising=False)
    data = tmp_path / "tau2-data"
    data.mkdir()
    assert upstream_view.view_path(data) == tmp_path / "tau2-view" / "agent_view.json"
    monkeypatch.setenv(upstream_view.VIEW_ENV, str(tmp_path / "elsewhere.json"))
    assert upstream_view.view_path(data) == tmp_path / "elsewhere.json"
    with pytest.warns(
        UserWarning, match="no tau2 view file at .*elsewhere.json.*pytest-tau2 data view.*not leaderboard-comparable"
    ):
        assert upstream_view.find_view("upstream", data) == (upstream_view.SEED_FALLBACK, None)
    assert upstream_view.find_view("seed", data) == ("seed", None)
    (tmp_path / "elsewhere.json").write_text('{"domains": {}}', "utf-8")
    with pytest.raises(Exception, match=r"elsewhere\.json: not a tau2 view file"):
        upstream_view.find_view("upstream", data)


def test_the_scenario_is_rendered_with_upstreams_labels_and_tabs() -> None:
    scenario = {
        "persona": "Calm.\nPolite.",
        "instructions": {"domain": "retail", "reason_for_call": "Return a lamp.\n\nSoon.", "known_info": "Zip 1",
                         "unknown_info": None, "task_instructions": "Be brief."},
    }  # fmt: skip
    assert upstream_view.render_scenario(scenario) == (  # type: ignore[arg-type]
        "Persona:\n\tCalm.\n\tPolite.\nInstructions:\n\tDomain: retail\n\tReason for call:\n\t\tReturn a lamp.\n\n"
        "\t\tSoon.\n\tKnown info:\n\t\tZip 1\n\tTask instructions:\n\t\tBe brief."
    )
    assert upstream_view.render_scenario({"instructions": "Just this."}) == "Instructions:\n\tJust this."


def test_tool_schemas_are_sent_with_upstreams_key_order() -> None:
    # A view file written with sorted keys: the schema goes out as upstream lays it out (type before
    # function; name, description, parameters; required properties first, in their order).
    sorted_schema = {"function": {"description": "D.", "name": "f", "parameters": {
        "$defs": {"B": {"properties": {"z": {"type": "string"}, "a": {"type": "string"}}, "required": ["z"],
                        "title": "B", "type": "object"}},
        "properties": {"a_opt": {"default": None, "title": "A Opt", "type": "string"},
                       "b": {"items": {"$ref": "#/$defs/B"}, "title": "B", "type": "array"},
                       "c": {"title": "C", "type": "string"}},
        "required": ["c", "b"], "title": "parameters", "type": "object"}}, "type": "function"}  # fmt: skip
    view = {"domains": {"d": {"tools": [sorted_schema]}}}
    [schema] = upstream_view.tool_schemas(view, "d", "agent").values()  # type: ignore[arg-type]
    assert list(schema) == ["type", "function"]
    assert list(schema["function"]) == ["name", "description", "parameters"]  # type: ignore[call-overload]
    parameters: Any = schema["function"]["parameters"]  # type: ignore[index]
    assert list(parameters) == ["$defs", "properties", "required", "title", "type"]
    assert list(parameters["properties"]) == ["c", "b", "a_opt"]
    assert list(parameters["$defs"]["B"]["properties"]) == ["z", "a"]
    assert schema == sorted_schema  # the content is untouched


@needs_data
@needs_view
def test_upstream_prompts_come_from_the_view_and_seed_keeps_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    view = json.loads(VIEW.read_text("utf-8"))
    for prompts in ("upstream", "seed"):
        settings = Settings(data_dir=str(DATA_DIR), results_dir="unused", prompts=prompts)
        scenario = all_scenarios(settings)["tau2_retail__0"]().bind(settings)
        assert scenario.data_pin(settings)["prompts"] == prompts  # type: ignore[index]
        upstream = prompts == "upstream"
        assert (scenario.get_agent_prompt() == view["domains"]["retail"]["agent_system_prompt"]) is upstream
        assert ("EndConversationTool" in scenario.agent_resources.tools) is not upstream
        assert bool(scenario.tool_schemas("agent")) is upstream


def test_without_a_closing_turn_a_user_stop_ends_at_once_and_is_clean() -> None:
    agent, user = Script([EXIT]), Script(["Hello", "Bye ###STOP###"], then="...")
    agent.replies = [Reply(text="Hi, what can I do?"), EXIT]
    conversation = Conversation(agent, user, make_env(), None, "A", "U", closing_turn=False)
    result = asyncio.run(conversation.run())
    assert result.stop_reason == "user_stop" and result.clean_exit
    assert result.clean_reasons == UPSTREAM_CLEAN_EXIT_REASONS
    assert len(agent.seen) == 1  # never asked again after the stop


def test_the_seed_closing_turn_refuses_writes_but_lets_the_agent_exit() -> None:
    agent = Script([Reply(text="Hi"), Reply(tool_calls=[call("set_value", key="x", value=5)]), EXIT])
    user = Script(["Hello", "Bye ###STOP###"])
    env = make_env()
    conversation = Conversation(agent, user, env, None, "A", "U")
    result = asyncio.run(conversation.run())
    assert result.stop_reason == "exit" and result.clean_exit
    refused = [m for m in result.transcript if m.get("role") == "tool" and m.get("name") == "set_value"]
    assert refused[0]["error"] is True and refused[0]["closing_turn"] is True
    assert env.state["db"] == {"x": 0}
    # tau2's reward sees the conversation as upstream ended it: at the user's stop.
    stop, kept = upstream_ending(result.stop_reason, result.transcript)
    assert stop == "user_stop" and kept[-1]["content"] == "Bye ###STOP###"


def _record(name: str, prompts: str | None) -> ScenarioRecord:
    data: dict[str, Any] = {"scenario": name, "domain": name.split("__")[0], "tau2_id": name.split("__")[1],
                            "is_successful": True, "success_signals": ["db_state_match"],
                            "data_pin": {"commit": "abc", **({"prompts": prompts} if prompts else {})}}  # fmt: skip
    return ScenarioRecord.read(data)


def test_the_summary_and_compare_name_the_prompts() -> None:
    assert prompts_line([_record("tau2_retail__1", "upstream")]).startswith("Prompts: upstream")  # type: ignore[union-attr]
    mixed = prompts_line([_record("tau2_retail__1", "upstream"), _record("tau2_retail__2", None)])
    assert mixed is not None and "seed in 1" in mixed and "not leaderboard-comparable" in mixed
    a = RunSide("A", [_record("tau2_retail__1", "upstream")])
    b = RunSide("B", [_record("tau2_retail__1", "seed")])
    assert any("different prompts" in note for note in compare(a, b).notes)


def test_banking_discoverable_tools_are_shown_in_the_views_words() -> None:
    from pytest_tau2.domains.tau2_banking_knowledge.agent_tools import (
        GiveDiscoverableUserToolTool,
        UnlockDiscoverableAgentToolTool,
    )
    from pytest_tau2.domains.tau2_banking_knowledge.discoverable import AGENT_TOOLS, TEXTS

    name = "get_all_user_accounts_by_user_id_3847"
    texts = {  # made up here: the view file's shape, not upstream's words
        "agent": {name: {"description": "VIEW DESCRIPTION.", "success_message": "x",
                         "parameters": {"user_id": {"type": "str", "description": "VIEW PARAM.", "required": True}}}},
        "user": {"get_card_last_4_digits": {"description": "VIEW USER DESCRIPTION.", "parameters": {}}},
    }  # fmt: skip
    ours: dict[str, object] = {"db": {}}
    theirs: dict[str, object] = {"db": {"user_discoverable_tools": {"data": {}}}, TEXTS: texts}
    unlocked = UnlockDiscoverableAgentToolTool(theirs).run(name)
    assert "Description: VIEW DESCRIPTION.\n\nTool: " + name in unlocked
    assert "  - user_id: str (required) - VIEW PARAM.\n" in unlocked
    assert AGENT_TOOLS[name].description in UnlockDiscoverableAgentToolTool(ours).run(name)
    given = GiveDiscoverableUserToolTool(theirs).run("get_card_last_4_digits")
    assert "Description: VIEW USER DESCRIPTION.\n" in given


@needs_data
@needs_view
def test_a_view_without_banking_texts_keeps_ours_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_tau2.domains.tau2_banking_knowledge.discoverable import TEXTS

    view = json.loads(VIEW.read_text("utf-8"))
    view["domains"]["banking_knowledge"].pop("discoverable_tools", None)
    settings = Settings(data_dir=str(DATA_DIR), results_dir="unused", prompts="upstream")
    for texts in (None, {"agent": {}, "user": {}}):
        if texts is not None:
            view["domains"]["banking_knowledge"]["discoverable_tools"] = texts
        path = tmp_path / f"view-{texts is None}.json"
        path.write_text(json.dumps(view), "utf-8")
        monkeypatch.setenv(upstream_view.VIEW_ENV, str(path))
        scenario = all_scenarios(settings)["tau2_banking_knowledge__task_001"]().bind(settings)
        state: dict[str, object] = {}
        scenario.setup_shared_state(state, "agent")
        if texts is None:
            assert scenario.prompts_used == upstream_view.UPSTREAM_OWN_DISCOVERABLE and TEXTS not in state
        else:
            assert scenario.prompts_used == "upstream" and state[TEXTS] == texts
        assert scenario.upstream_view is not None  # upstream's prompts, schemas and rules either way


def test_the_user_prompt_is_composed_in_one_place_with_the_default_persona() -> None:
    guidelines = {"plain": "P<PERSONA_GUIDELINES>.", "tools": "T.", "voice": "V<PERSONA_GUIDELINES>."}
    view: Any = {"user_system_prompt_template": "{global_user_sim_guidelines_with_persona}|{instructions}",
                 "user_guidelines": guidelines}  # fmt: skip
    scenario: Any = {"instructions": "Call."}
    assert upstream_view.user_system_prompt(view, scenario, with_tools=False) == "P.|Instructions:\n\tCall."
    assert upstream_view.user_system_prompt(view, scenario, with_tools=True).startswith("T.|")
    assert upstream_view.user_system_prompt(view, scenario, with_tools=False, guidelines_key="voice").startswith("V.|")
    with pytest.raises(Exception, match="no user guidelines 'voice_tools'"):
        upstream_view.user_system_prompt(view, scenario, with_tools=True, guidelines_key="voice_tools")
