"""``--tau2-*`` settings: one table of options, resolved CLI > ini > environment > default, and
validation of the participant choices (bad values are usage errors naming the option)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_tau2.errors import SettingsError
from pytest_tau2.run import participants
from pytest_tau2.settings import OPTIONS, Option, Settings, coerce, resolve

BY_NAME = {o.name: o for o in OPTIONS}


def resolved(
    cli: dict[str, Any] | None = None, ini: dict[str, Any] | None = None, env: dict[str, str] | None = None
) -> dict[str, Any]:
    return resolve(cli or {}, ini or {}, env or {})


# ---- the option table -------------------------------------------------------------------------


def test_every_option_is_prefixed_and_maps_to_a_settings_field() -> None:
    fields = set(Settings.__dataclass_fields__)
    for option in OPTIONS:
        assert option.flag == "--tau2-" + option.name.replace("_", "-")
        assert option.ini == "tau2_" + option.name
        assert option.name in fields
        assert option.help
        assert option.kind in ("str", "int", "float", "bool")


def test_option_names_are_unique() -> None:
    assert len(BY_NAME) == len(OPTIONS)


def test_defaults_match_the_settings_defaults() -> None:
    values = resolved()
    for name, value in values.items():
        if name in ("eval_data_root", "results_dir"):
            continue  # filled in by the plugin from the rootdir
        assert getattr(Settings(), name) == value, name
    assert values["min_agent_turns"] == 3
    assert values["eval_data_root"] is None and values["results_dir"] is None


# ---- coerce -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "raw", "value"),
    [
        ("min_agent_turns", "0", 0),
        ("min_agent_turns", "12", 12),
        ("max_duration", "2.5", 2.5),
        ("llm_timeout", "30", 30.0),
        ("save_db", "yes", True),
        ("save_db", "TRUE", True),
        ("save_db", "off", False),
        ("save_db", "0", False),
        ("save_db", True, True),
        ("agent", "oracle", "oracle"),
        ("max_turns", 7, 7),
        ("min_agent_turns", "", 3),
        ("min_agent_turns", None, 3),
    ],
)
def test_coerce(name: str, raw: Any, value: Any) -> None:
    assert coerce(BY_NAME[name], raw) == value
    assert type(coerce(BY_NAME[name], raw)) is type(value)


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("min_agent_turns", "abc", "--tau2-min-agent-turns (ini tau2_min_agent_turns) expects int, got 'abc'"),
        ("min_agent_turns", "2.5", "--tau2-min-agent-turns (ini tau2_min_agent_turns) expects int, got '2.5'"),
        ("max_duration", "soon", "--tau2-max-duration (ini tau2_max_duration) expects float, got 'soon'"),
        ("save_db", "maybe", "--tau2-save-db (ini tau2_save_db) expects bool, got 'maybe'"),
    ],
)
def test_coerce_errors_name_the_option_and_the_value(name: str, raw: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        coerce(BY_NAME[name], raw)
    assert str(info.value) == message


def test_a_custom_option_uses_its_own_default() -> None:
    assert coerce(Option("x", "help", 5, "int"), None) == 5


# ---- precedence --------------------------------------------------------------------------------------


def test_cli_beats_ini_beats_environment_beats_default() -> None:
    env = {"TAU2_AGENT_MODEL": "env/model"}
    assert resolved()["agent_model"] is None
    assert resolved(env=env)["agent_model"] == "env/model"
    assert resolved(ini={"agent_model": "ini/model"}, env=env)["agent_model"] == "ini/model"
    assert resolved(cli={"agent_model": "cli/model"}, ini={"agent_model": "ini/model"}, env=env)["agent_model"] == (
        "cli/model"
    )


def test_empty_values_fall_through_to_the_next_source() -> None:
    values = resolved(cli={"judge_model": ""}, ini={"judge_model": None}, env={"TAU2_JUDGE_MODEL": "env/judge"})
    assert values["judge_model"] == "env/judge"


def test_an_explicit_zero_on_the_command_line_wins_over_the_ini() -> None:
    assert resolved(cli={"min_agent_turns": "0"}, ini={"min_agent_turns": "5"})["min_agent_turns"] == 0


def test_ini_values_are_coerced() -> None:
    values = resolved(ini={"min_agent_turns": "5", "save_db": True, "max_duration": "60"})
    assert (values["min_agent_turns"], values["save_db"], values["max_duration"]) == (5, True, 60.0)


def test_only_options_with_an_environment_variable_read_the_environment() -> None:
    assert resolved(env={"TAU2_MIN_AGENT_TURNS": "9"})["min_agent_turns"] == 3
    assert resolved(env={"TAU2_EVAL_DATA_ROOT": "/srv/data"})["eval_data_root"] == "/srv/data"


def test_the_real_environment_is_used_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAU2_USER_MODEL", "env/user")
    assert resolve({}, {})["user_model"] == "env/user"


def test_a_bad_value_from_any_source_raises() -> None:
    with pytest.raises(ValueError, match="expects int"):
        resolved(ini={"max_turns": "many"})


# ---- Settings ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "agent", "user"),
    [
        ({}, "oracle", "scripted"),
        ({"agent_model": "openai/gpt-4.1"}, "litellm", "scripted"),
        ({"user_model": "openai/gpt-4.1"}, "oracle", "litellm"),
        ({"agent_url": "ws://127.0.0.1:8765"}, "websocket", "scripted"),
        ({"agent": "oracle", "agent_model": "openai/gpt-4.1"}, "oracle", "scripted"),
        ({"agent": "replay:calls.jsonl"}, "replay:calls.jsonl", "scripted"),
        ({"user": "scripted", "user_model": "m"}, "oracle", "scripted"),
    ],
)
def test_the_participant_actually_used(fields: dict[str, Any], agent: str, user: str) -> None:
    settings = Settings(**fields)
    assert (settings.agent_kind, settings.user_kind) == (agent, user)


def test_settings_round_trip_through_a_plain_dict() -> None:
    settings = Settings(agent_model="m", min_agent_turns=0, save_db=True, extra={"k": [1]})
    assert Settings.from_dict(settings.to_dict()) == settings


def test_settings_are_frozen() -> None:
    with pytest.raises(AttributeError):
        Settings().agent = "litellm"  # type: ignore[misc]


# ---- validation of participant choices ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"agent": "nope"},
            "--tau2-agent 'nope' is not a built-in agent; choose one of oracle, litellm, replay:PATH, websocket",
        ),
        ({"agent": "litellm"}, "--tau2-agent litellm needs --tau2-agent-model MODEL"),
        ({"agent": "websocket"}, "--tau2-agent websocket needs --tau2-agent-url ws://HOST:PORT"),
        ({"user": "bob"}, "--tau2-user 'bob' is not a built-in user; choose one of scripted, litellm, replay"),
        ({"user": "litellm"}, "--tau2-user litellm needs --tau2-user-model MODEL"),
        ({"agent_model": "m", "agent_args": "[1]"}, "--tau2-agent-args: expected a JSON object"),
        ({"agent_model": "m", "agent_args": "{oops"}, "--tau2-agent-args: expected a JSON object"),
        ({"judge_args": '{"temperature": 0}'}, "--tau2-judge-args: model arguments"),
        ({"sections": {"telecom_tasks": "some"}}, "--tau2-telecom-tasks must be 'base' or 'full', got 'some'"),
    ],
)
def test_impossible_choices_are_usage_errors_naming_the_option(fields: dict[str, Any], message: str) -> None:
    # SettingsError here; the pytest adapter shows it as a usage error (tests/plugin check that).
    with pytest.raises(SettingsError) as info:
        participants.validate_settings(Settings(**fields))
    assert str(info.value).startswith(message)


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"agent_url": "ws://127.0.0.1:8765"},
        {"agent_model": "openai/gpt-4.1", "agent_args": '{"temperature": 0}'},
        {"user_model": "openai/gpt-4.1", "judge_model": "openai/gpt-4.1-mini"},
        {"sections": {"telecom_tasks": "full"}},
    ],
)
def test_valid_choices_pass(fields: dict[str, Any]) -> None:
    participants.validate_settings(Settings(**fields))


@pytest.mark.parametrize(
    ("fields", "agent", "user"),
    [
        ({}, "oracle", "scripted"),
        (
            {"agent_model": "openai/gpt-4.1", "user_model": "openai/gpt-4.1-mini"},
            "litellm:openai/gpt-4.1",
            "litellm:openai/gpt-4.1-mini",
        ),
        ({"agent_url": "ws://127.0.0.1:8765"}, "websocket:ws://127.0.0.1:8765", "scripted"),
    ],
)
def test_banner_descriptions(fields: dict[str, Any], agent: str, user: str) -> None:
    settings = Settings(**fields)
    assert (participants.describe_agent(settings), participants.describe_user(settings)) == (agent, user)
