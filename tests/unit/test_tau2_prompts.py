"""Agent and user prompts of the tau2 ports, and the tool surfaces each side sees.

Comparability with published tau2 numbers depends on the upstream policy reaching the agent
byte for byte, with our own notes in a clearly separate section after it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import pytest_tau2.domains.tau2_sources as tau2_sources
from pytest_tau2.run.trial import Trial
from pytest_tau2.scenario.registry import all_scenarios
from pytest_tau2.settings import Settings

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
if not (DATA_DIR / "tau2" / "domains").is_dir():
    pytest.skip(f"no tau2 data under {DATA_DIR} (set TAU2_DATA_DIR)", allow_module_level=True)

DOMAINS = DATA_DIR / "tau2" / "domains"
GUIDELINES = DATA_DIR / "tau2" / "user_simulator" / "simulation_guidelines.md"
GUIDELINES_TOOLS = DATA_DIR / "tau2" / "user_simulator" / "simulation_guidelines_tools.md"
NOTES_HEADING = "## Additional Notes to Follow"
TELECOM_TASK = "[mobile_data_issue]data_usage_exceeded|user_abroad_roaming_enabled_off[PERSONA:Easy]"

RETAIL_TOOLS = [
    "calculate", "cancel_pending_order", "exchange_delivered_order_items", "find_user_id_by_name_zip",
    "find_user_id_by_email", "get_order_details", "get_product_details", "get_item_details", "get_user_details",
    "list_all_product_types", "modify_pending_order_address", "modify_pending_order_items",
    "modify_pending_order_payment", "modify_user_address", "return_delivered_order_items", "transfer_to_human_agents",
]  # fmt: skip
AIRLINE_TOOLS = [
    "book_reservation", "calculate", "cancel_reservation", "get_reservation_details", "get_user_details",
    "list_all_airports", "search_direct_flight", "search_onestop_flight", "send_certificate",
    "transfer_to_human_agents", "update_reservation_baggages", "update_reservation_flights",
    "update_reservation_passengers", "get_flight_status",
]  # fmt: skip
TELECOM_USER_TOOLS = [
    "check_status_bar", "check_network_status", "check_network_mode_preference", "set_network_mode_preference",
    "run_speed_test", "toggle_airplane_mode", "check_sim_status", "reseat_sim_card", "toggle_data",
    "toggle_roaming", "check_data_restriction_status", "toggle_data_saver_mode", "check_apn_settings",
    "set_apn_settings", "reset_apn_settings", "check_wifi_status", "toggle_wifi", "check_wifi_calling_status",
    "toggle_wifi_calling", "check_vpn_status", "connect_vpn", "disconnect_vpn", "check_installed_apps",
    "check_app_status", "check_app_permissions", "grant_app_permission", "can_send_mms", "reboot_device",
    "check_payment_request", "make_payment",
]  # fmt: skip


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(data_dir=str(DATA_DIR), results_dir=str(tmp_path_factory.mktemp("results")), prompts="seed")


@pytest.fixture(scope="module")
def scenarios(settings: Settings) -> dict[str, type]:
    return all_scenarios(settings)


def _get(scenarios: dict[str, type], settings: Settings, name: str) -> Any:
    return scenarios[name]().bind(settings)


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize(("name", "policy"), [("tau2_retail__0", "retail"), ("tau2_airline__8", "airline")])
def test_agent_prompt_is_policy_verbatim_then_our_notes(
    scenarios: dict[str, type], settings: Settings, name: str, policy: str
) -> None:
    policy_text = _read(DOMAINS / policy / "policy.md")
    prompt = _get(scenarios, settings, name).get_agent_prompt()
    assert prompt.startswith(policy_text), "the policy must be a byte-identical prefix"
    rest = prompt[len(policy_text) :]
    assert rest.lstrip("\n").startswith(NOTES_HEADING + "\n")
    assert prompt.count(NOTES_HEADING) == 1
    assert NOTES_HEADING not in policy_text


def test_agent_prompt_is_the_same_for_every_task_of_a_domain(scenarios: dict[str, type], settings: Settings) -> None:
    prompts = {_get(scenarios, settings, f"tau2_retail__{i}").get_agent_prompt() for i in (0, 24, 57, 113)}
    assert len(prompts) == 1


def test_telecom_agent_prompt_holds_both_policy_files_verbatim(scenarios: dict[str, type], settings: Settings) -> None:
    scenario = _get(scenarios, settings, "tau2_telecom__" + tau2_sources.slug(TELECOM_TASK))
    prompt = scenario.get_agent_prompt()
    main = _read(DOMAINS / "telecom" / "main_policy.md")
    manual = _read(DOMAINS / "telecom" / "tech_support_manual.md")
    assert f"<main_policy>\n{main}\n</main_policy>" in prompt
    assert f"<tech_support_policy>\n{manual}\n</tech_support_policy>" in prompt
    assert prompt.index(main) < prompt.index(manual) < prompt.index(NOTES_HEADING)


def _section(prompt: str, heading: str) -> str:
    """The text under ``heading`` up to the next blank line followed by another heading."""
    start = prompt.index(heading + "\n") + len(heading) + 1
    end = prompt.find("\n\n", start)
    return prompt[start : end if end != -1 else None]


def test_retail_user_prompt_sections(scenarios: dict[str, type], settings: Settings) -> None:
    scenario = _get(scenarios, settings, "tau2_retail__0")
    instructions = scenario.task["user_scenario"]["instructions"]
    prompt = scenario.get_user_prompt()
    assert prompt.startswith(_read(GUIDELINES)), "the guidelines file must be a byte-identical prefix"
    block = prompt[len(_read(GUIDELINES)) :]
    assert block.lstrip("\n").startswith("<scenario>\n") and block.endswith("</scenario>")
    assert instructions["reason_for_call"] in _section(prompt, "Goal (why you are calling):")
    assert _section(prompt, "Things you know:") == instructions["known_info"]
    assert _section(prompt, "Things you don't know:") == instructions["unknown_info"]
    assert instructions["task_instructions"].strip() in prompt
    assert prompt.index("Things you know:") < prompt.index("Things you don't know:")
    # the scripted user opens with the goal
    assert scenario.user_opening() == instructions["reason_for_call"]
    assert scenario.user_task.goal == instructions["reason_for_call"]


def test_user_prompt_without_unknown_info_has_no_such_section(scenarios: dict[str, type], settings: Settings) -> None:
    scenario = _get(scenarios, settings, "tau2_retail__10")
    assert not scenario.task["user_scenario"]["instructions"].get("unknown_info")
    assert "Things you don't know" not in scenario.get_user_prompt()


def test_telecom_user_prompt_and_tools(scenarios: dict[str, type], settings: Settings) -> None:
    scenario = _get(scenarios, settings, "tau2_telecom__" + tau2_sources.slug(TELECOM_TASK))
    instructions = scenario.task["user_scenario"]["instructions"]
    prompt = scenario.get_user_prompt()
    assert prompt.startswith(_read(GUIDELINES_TOOLS))
    assert instructions["reason_for_call"] in prompt
    assert instructions["known_info"] in _section(prompt, "Things you know:")
    persona = scenario.task["user_scenario"]["persona"]
    assert persona and persona in prompt
    assert scenario.sides == ("agent", "user")
    schemas = Trial(scenario, settings).tool_schemas()
    assert [s["function"]["name"] for s in schemas["user"]] == TELECOM_USER_TOOLS
    assert len(schemas["agent"]) == 13 + 1  # 13 upstream agent tools + EndConversationTool


@pytest.mark.parametrize(("name", "expected"), [("tau2_retail__0", RETAIL_TOOLS), ("tau2_airline__0", AIRLINE_TOOLS)])
def test_agent_tools_in_upstream_order(
    scenarios: dict[str, type], settings: Settings, name: str, expected: list[str]
) -> None:
    scenario = _get(scenarios, settings, name)
    schemas = Trial(scenario, settings).tool_schemas()
    names = [s["function"]["name"] for s in schemas["agent"]]
    assert names == [*expected, "EndConversationTool"]
    assert "user" not in schemas, "retail and airline users have no tools"
    assert scenario.sides == ("agent",)
