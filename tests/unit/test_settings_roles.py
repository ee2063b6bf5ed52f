"""Model roles resolved once (``settings.roles``), options in sections with their fixed sets in the
table, domains' own option sections, and list-valued options that accumulate when repeated."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pytest_tau2.errors import SettingsError
from pytest_tau2.plugin.worker_settings import receive, ship
from pytest_tau2.run import participants
from pytest_tau2.run.budget import unpriced_problem
from pytest_tau2.settings import OPTION_SECTIONS as REGISTRY
from pytest_tau2.settings import (
    OPTIONS,
    SECTIONS,
    Option,
    OptionSection,
    Settings,
    all_options,
    coerce,
    option_sections,
    register_option_section,
    resolve,
)
from pytest_tau2.settings.roles import ModelRole

BY_NAME = {o.name: o for o in all_options()}


# ---- roles ------------------------------------------------------------------------------------------------


def test_each_role_is_one_typed_value_parsed_and_priced_once() -> None:
    settings = Settings(
        agent_model="openai/a",
        agent_args='{"temperature": 0}',
        user_model="openai/u",
        judge_model="openai/j1,openai/j1,openai/j2",
        judge_args='[{"top_p": 1}, {}, {"seed": 3}]',
        price="openai/a=1/2,openai/j2=3/4",
    )
    roles = settings.roles
    assert roles is settings.roles  # made once per Settings
    assert isinstance(roles.agent, ModelRole) and roles.agent.model == "openai/a"
    assert (roles.agent.args, roles.agent.price, roles.agent.option) == (
        {"temperature": 0},
        (1.0, 2.0),
        "--tau2-agent-model",
    )
    assert roles.user is not None and roles.user.price is None
    assert [(j.model, j.label, j.args, j.price) for j in roles.judges] == [
        ("openai/j1", "openai/j1", {"top_p": 1}, None),
        ("openai/j1", "openai/j1#2", {}, None),
        ("openai/j2", "openai/j2", {"seed": 3}, (3.0, 4.0)),
    ]
    assert roles.judge is roles.judges[0] and [r.role for r in roles.all()] == [
        "agent",
        "user",
        "judge",
        "judge",
        "judge",
    ]


def test_no_model_is_no_role_and_upstreams_prompt_brings_its_judge() -> None:
    assert Settings().roles.all() == ()
    upstream = Settings(judge_prompt="upstream").roles.judges
    assert [(j.model, j.args) for j in upstream] == [("gpt-4.1-2025-04-14", {"temperature": 0.0})]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"agent_model": "m", "agent_args": "[1]"}, "--tau2-agent-args: expected a JSON object"),
        ({"user_args": '{"temperature": 0}'}, "--tau2-user-args: model arguments"),
        ({"judge_model": "a,,b"}, "--tau2-judge-model 'a,,b': an empty model name between commas"),
        ({"agent_model": "m", "price": "m=cheap"}, "--tau2-price: 'm=cheap' is not MODEL=IN/OUT"),
    ],
)
def test_a_wrong_role_is_a_settings_error_naming_the_option(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(SettingsError) as caught:
        Settings(**fields).roles  # noqa: B018
    assert str(caught.value).startswith(message)


def test_a_worker_rebuilds_the_roles_from_the_plain_values(tmp_path: Any) -> None:
    settings = Settings(
        agent_model="openai/a", price="openai/a=1/2", sections={"retrieval": "bm25_grep", "telecom_tasks": "full"}
    )
    values, relative = ship(settings, tmp_path)
    worker = receive(values, relative, tmp_path)
    assert worker == settings and worker.roles == settings.roles
    assert worker.option("retrieval") == "bm25_grep"


def test_a_replaced_settings_gets_its_own_roles() -> None:
    settings = Settings(agent_model="openai/a")
    assert settings.roles.agent is not None
    assert dataclasses.replace(settings, agent_model="openai/b").roles.agent.model == "openai/b"  # type: ignore[union-attr]


# ---- list-valued options accumulate -------------------------------------------------------------------------


@pytest.mark.parametrize("name", [o.name for o in OPTIONS if o.repeatable])
def test_a_repeated_list_option_keeps_every_value_as_the_comma_form_does(name: str) -> None:
    repeated = resolve({name: ["a=1/2", "b=3/4"]}, {}, {})[name]
    assert repeated == resolve({name: "a=1/2,b=3/4"}, {}, {})[name] == "a=1/2,b=3/4"


def test_the_list_options_are_the_ones_that_take_lists() -> None:
    assert {o.name for o in all_options() if o.repeatable} == {"scenarios", "judge_model", "review_model", "price"}


def test_both_repeated_prices_count_for_the_roles_and_the_budget() -> None:
    price = str(coerce(BY_NAME["price"], ["openai/agent=2/8", "openai/user=1/4"]))
    settings = Settings(agent_model="openai/agent", user_model="openai/user", price=price, budget=1.0)
    assert (settings.roles.agent.price, settings.roles.user.price) == ((2.0, 8.0), (1.0, 4.0))  # type: ignore[union-attr]
    assert unpriced_problem(settings) is None  # neither model is refused for want of a price
    only_last = Settings(agent_model="openai/agent", user_model="openai/user", price="openai/user=1/4", budget=1.0)
    assert "model 'openai/agent' (--tau2-agent-model) has no price" in str(unpriced_problem(only_last))


# ---- sections and fixed sets --------------------------------------------------------------------------------


def test_every_option_has_a_known_section() -> None:
    known = set(SECTIONS) | {section.name for section in option_sections()}
    assert all(option.section in known for option in all_options())
    assert len({o.name for o in all_options()}) == len(all_options())


@pytest.mark.parametrize("option", [o for o in all_options() if o.choices], ids=lambda o: o.flag)
@pytest.mark.parametrize("source", ["cli", "ini", "env"])
def test_a_value_outside_the_fixed_set_is_refused_from_every_source(option: Option, source: str) -> None:
    env = option.env or "TAU2_TEST_UNUSED"
    given = {"cli": ({option.name: "bogus"}, {}, {}), "ini": ({}, {option.name: "bogus"}, {}),
             "env": ({}, {}, {env: "bogus"})}[source]  # fmt: skip
    if source == "env" and option.env is None:
        assert resolve(*given)  # no environment variable: nothing read
        return
    with pytest.raises(ValueError) as caught:
        resolve(*given)
    assert str(caught.value) == (
        f"{option.flag} (ini {option.ini}) must be one of {', '.join(option.choices)}, got 'bogus'"
    )


def test_the_domains_options_are_their_own_sections_not_the_core_tables() -> None:
    core = {o.name for o in OPTIONS}
    sections = {section.name: {o.name for o in section.options} for section in option_sections()}
    assert sections["telecom"] == {"telecom_tasks"}
    assert sections["banking_knowledge"] == {"retrieval", "embedding_model", "embedding_args", "reranker_model",
                                             "reranker_args"}  # fmt: skip
    assert not core & (sections["telecom"] | sections["banking_knowledge"])


def test_a_domains_option_resolves_cli_over_ini_over_default_and_reaches_the_domain_typed() -> None:
    from pytest_tau2.domains.tau2_banking_knowledge.options import BANKING
    from pytest_tau2.domains.tau2_telecom.options import TELECOM

    assert resolve({}, {}, {})["sections"] == {}  # not given: the defaults
    assert TELECOM.of(Settings()).tasks == "base" and BANKING.of(Settings()).retrieval == "bm25"
    values = resolve({"telecom_tasks": "full"}, {"telecom_tasks": "base", "retrieval": "grep_only"}, {})
    settings = Settings(**values)
    assert TELECOM.of(settings).tasks == "full" and BANKING.of(settings).retrieval == "grep_only"
    with pytest.raises(ValueError, match=r"^--tau2-telecom-tasks \(ini tau2_telecom_tasks\) must be one of base, full"):
        resolve({}, {"telecom_tasks": "most"}, {})


def test_the_banking_roles_are_typed_and_priced() -> None:
    from pytest_tau2.domains.tau2_banking_knowledge.options import BANKING

    settings = Settings(
        price="openai/emb=0.1/0",
        sections={"embedding_model": "openai/emb", "reranker_args": '{"api_base": "http://h/v1"}'},
    )
    banking = BANKING.of(settings)
    assert banking.embedding is not None and banking.embedding.price == (0.1, 0.0)
    assert banking.reranker is None and banking.reranker_role("openai/r").args == {"api_base": "http://h/v1"}
    with pytest.raises(SettingsError, match=r"^--tau2-embedding-args: expected a JSON object"):
        participants.validate_settings(Settings(sections={"embedding_model": "m", "embedding_args": "[1]"}))


def test_a_section_registers_once_and_may_not_take_a_core_options_name() -> None:
    saved = REGISTRY.snapshot()
    try:
        extra = OptionSection("test_extra", "tau2: a test", (Option("test_knob", "a knob", "x", section="test_extra"),),
                              lambda s: str(s.option("test_knob")))  # fmt: skip
        register_option_section(extra)
        assert extra.of(Settings()) == "x" and extra.of(Settings(sections={"test_knob": "y"})) == "y"
        assert resolve({"test_knob": "z"}, {}, {})["sections"] == {"test_knob": "z"}
        clash = OptionSection("test_clash", "t", (Option("seed", "again", section="test_clash"),), lambda s: None)
        with pytest.raises(ValueError, match="option section 'test_clash': --tau2-seed already declared"):
            register_option_section(clash)
    finally:
        REGISTRY.restore(saved)
