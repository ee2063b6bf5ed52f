"""Collection: one item per registered scenario, stable ids, ``-k``, cheap, and bad scenarios as
collection errors that name the class."""

from __future__ import annotations

import pytest

from tests.plugin.conftest import Project

RESTAURANT = [
    "restaurant__margherita_for_two",
    "restaurant__menu_question",
    "restaurant__party_order",
    "restaurant__pepperoni_mushrooms",
    "restaurant__pizza_pepperoni",
    "restaurant__veggie_and_lemonade",
]


def test_collect_only_lists_every_scenario_once_with_a_stable_sorted_id(project: Project) -> None:
    run = project.restaurant().run("--collect-only", "-q", verbose=False)
    assert run.result.ret == pytest.ExitCode.OK
    ids = [line for line in run.result.outlines if "::" in line]
    assert ids == [f"test_scenarios.py::test_scenario[{name}]" for name in RESTAURANT]
    run.result.stdout.fnmatch_lines(["6 tests collected in *"])
    assert not run.results_dir.exists()  # collecting writes nothing


def test_k_selects_scenarios_by_name(project: Project) -> None:
    run = project.restaurant().run("--collect-only", "-q", "-k", "pepperoni and not mushrooms", verbose=False)
    assert [line for line in run.result.outlines if "::" in line] == [
        "test_scenarios.py::test_scenario[restaurant__pizza_pepperoni]"
    ]
    run.result.stdout.fnmatch_lines(["1/6 tests collected (5 deselected) in *"])


def test_every_scenario_carries_the_tau2_marker(project: Project) -> None:
    project.restaurant().write("test_other.py", "def test_plain():\n    pass\n")
    run = project.run("--collect-only", "-q", "-m", "tau2", verbose=False)
    run.result.stdout.fnmatch_lines(["6/7 tests collected (1 deselected) in *"])


def test_collection_reads_no_data_and_runs_no_scenario_code(project: Project) -> None:
    # db_path points nowhere and gold_actions raises: neither matters until the scenario runs.
    project.lab(
        """
        @register_eval_scenario
        class Lazy(LabBase):
            name = "lab__lazy"

            def setup_shared_state(self, state, side):
                raise RuntimeError("setup_shared_state ran during collection")

            def gold_actions(self):
                raise RuntimeError("gold_actions ran during collection")
        """
    )
    (project.path / "data" / "lab" / "values.json").unlink()
    run = project.run("--collect-only", "-q", verbose=False)
    assert run.result.ret == pytest.ExitCode.OK
    run.result.stdout.fnmatch_lines(["test_scenarios.py::test_scenario[[]lab__lazy[]]", "1 test collected in *"])


def test_a_scenario_without_success_signals_imported_by_conftest_is_an_error_naming_the_class(
    project: Project,
) -> None:
    project.write(
        "bad_scenarios.py",
        "from pytest_tau2 import Scenario, register_eval_scenario\n\n\n"
        "@register_eval_scenario\nclass Unscorable(Scenario):\n    name = 'shop__unscorable'\n",
    )
    project.write("conftest.py", "import bad_scenarios  # noqa: F401\n")
    project.write("test_scenarios.py", "from pytest_tau2 import test_scenario  # noqa: F401\n")
    run = project.run("--collect-only")
    assert run.result.ret != pytest.ExitCode.OK
    assert (
        "ScenarioDefinitionError: scenario class bad_scenarios.Unscorable (name 'shop__unscorable') does not "
        "define success_signals" in run.stderr + run.stdout
    )


def test_a_scenario_without_success_signals_in_a_test_module_is_a_collection_error(project: Project) -> None:
    project.write(
        "test_scenarios.py",
        "from pytest_tau2 import Scenario, register_eval_scenario, test_scenario  # noqa: F401\n\n\n"
        "@register_eval_scenario\nclass Unscorable(Scenario):\n    name = 'shop__unscorable'\n",
    )
    run = project.run()
    assert run.result.ret == pytest.ExitCode.INTERRUPTED
    run.result.stdout.fnmatch_lines(
        [
            "*ERROR collecting test_scenarios.py*",
            "E   pytest_tau2.errors.ScenarioDefinitionError: scenario class test_scenarios.Unscorable "
            "(name 'shop__unscorable') does not define success_signals*",
            "*1 error*",
        ]
    )


def test_a_duplicate_scenario_name_is_a_collection_error_naming_both_classes(project: Project) -> None:
    project.restaurant(
        """

        @register_eval_scenario
        class AnotherPepperoni(RestaurantBaseScenario):
            name = "restaurant__pizza_pepperoni"
        """
    )
    run = project.run("--collect-only")
    assert run.result.ret != pytest.ExitCode.OK
    assert (
        "duplicate scenario name 'restaurant__pizza_pepperoni': restaurant_scenarios.PizzaPepperoni and "
        "restaurant_scenarios.AnotherPepperoni" in run.stdout + run.stderr
    )


def test_an_explicit_class_overrides_a_generated_scenario_of_the_same_name(project: Project) -> None:
    project.restaurant(
        """

        from pytest_tau2 import register_scenario_source


        def _generated(settings):
            for case in ("alpha", "beta"):
                yield type(f"Generated_{case}", (RestaurantBaseScenario,), {
                    "name": f"restaurant__gen_{case}", "description": "generated",
                    "reference_answer": MargheritaForTwo.reference_answer, "__module__": __name__,
                })


        register_scenario_source("restaurant_generated", _generated)


        @register_eval_scenario
        class ExplicitBeta(RestaurantBaseScenario):
            name = "restaurant__gen_beta"
            description = "explicit"
            reference_answer = MargheritaForTwo.reference_answer
        """
    )
    run = project.run("-k", "gen_")
    assert run.items() == {"restaurant__gen_alpha": "PASSED", "restaurant__gen_beta": "PASSED"}
    assert run.metrics("restaurant__gen_beta")["description"] == "explicit"
    assert run.metrics("restaurant__gen_alpha")["description"] == "generated"


def test_a_plain_run_loads_the_plugin_from_its_entry_point_and_shows_the_banner(project: Project) -> None:
    run = project.restaurant().run("--collect-only", autoload=True, verbose=False)
    assert run.result.ret == pytest.ExitCode.OK
    run.result.stdout.fnmatch_lines(  # the tau2 lines come once scenarios were collected and selected
        [
            "plugins: *tau2-*",
            "collected 6 items",
            "tau2: agent=oracle user=scripted judge=none (NL assertions skipped)",
            f"tau2: results={run.results_dir}",
        ]
    )


def test_built_in_participants_can_be_named_explicitly(project: Project) -> None:
    run = project.restaurant().run("--collect-only", "--tau2-agent", "oracle", "--tau2-user", "scripted", verbose=False)
    assert run.result.ret == pytest.ExitCode.OK
    run.result.stdout.fnmatch_lines(["tau2: agent=oracle user=scripted judge=none (NL assertions skipped)"])


MODELS = (
    "--tau2-agent-model",
    "openai/gpt-4.1",
    "--tau2-user-model",
    "openai/gpt-4.1-mini",
    "--tau2-judge-model",
    "openai/gpt-4.1-nano",
)
RECORD_LITELLM_IMPORT = """
import sys

import restaurant_scenarios  # noqa: F401


def pytest_unconfigure(config):
    with open("litellm_imported.txt", "w") as fh:
        fh.write(str("litellm" in sys.modules))
"""


RECORD_FREEZE = """
import gc

import restaurant_scenarios  # noqa: F401


def pytest_unconfigure(config):
    with open("frozen.txt", "w") as fh:
        fh.write(str(gc.get_freeze_count()))
"""


def test_collected_scenarios_leave_the_garbage_collectors_reach_and_nothing_else_does(project: Project) -> None:
    # gc_policy.freeze_collected: items, classes and tasks live until the end; full GC passes skip them.
    project.restaurant().write("conftest.py", RECORD_FREEZE)
    assert project.run("--collect-only", "-q", verbose=False).result.ret == pytest.ExitCode.OK
    assert int((project.path / "frozen.txt").read_text()) > 1000
    assert project.run("--collect-only", "-q", "-k", "no_such_scenario", verbose=False).result.ret == 5
    assert int((project.path / "frozen.txt").read_text()) > 1000  # deselected items live on in the stats too
    project.write("test_other.py", "def test_plain():\n    pass\n")
    assert project.run("-q", "test_other.py", verbose=False).result.ret == pytest.ExitCode.OK
    assert (project.path / "frozen.txt").read_text() == "0"  # a session without scenario items freezes nothing


def test_the_banner_names_configured_models(project: Project) -> None:
    run = project.restaurant().run("--collect-only", *MODELS, verbose=False)
    run.result.stdout.fnmatch_lines(
        [
            "tau2: agent=litellm:openai/gpt-4.1 user=litellm:openai/gpt-4.1-mini judge=openai/gpt-4.1-nano",
        ]
    )


def test_collecting_with_a_model_configured_does_not_import_litellm(project: Project) -> None:
    project.restaurant().write("conftest.py", RECORD_LITELLM_IMPORT)
    run = project.run("--collect-only", "-q", *MODELS, verbose=False)
    assert run.result.ret == pytest.ExitCode.OK
    assert (project.path / "litellm_imported.txt").read_text() == "False"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--tau2-agent", "nope"],
            "ERROR: --tau2-agent 'nope' is not a built-in agent; choose one of oracle, litellm, replay:PATH, "
            "websocket, mcp:COMMAND, null",
        ),
        (
            ["--tau2-user", "nobody"],
            "ERROR: --tau2-user 'nobody' is not a built-in user; choose one of scripted, litellm, replay",
        ),
        (
            ["--tau2-min-agent-turns", "abc"],
            "ERROR: --tau2-min-agent-turns (ini tau2_min_agent_turns) expects int, got 'abc'",
        ),
        (
            ["--tau2-agent-model", "openai/gpt-4.1", "--tau2-agent-args", "[1]"],
            "ERROR: --tau2-agent-args: expected a JSON object such as '{\"temperature\": 0}', got list '[[]1]'",
        ),
        (["--tau2-agent-args", "[1]"], "ERROR: --tau2-agent-args: model arguments '[[]1]' were given but no model*"),
        (["--tau2-price", "garbage"], "ERROR: --tau2-price: 'garbage' is not MODEL=IN/OUT (USD per million *"),
    ],
    ids=["agent", "user", "min-agent-turns", "agent-args", "args-without-model", "price"],
)
def test_bad_option_values_are_usage_errors(project: Project, args: list[str], message: str) -> None:
    run = project.restaurant().run("--collect-only", *args)
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    run.result.stderr.fnmatch_lines([message])
    assert "Traceback" not in run.stderr


def test_a_bad_ini_value_is_a_usage_error_naming_the_ini_key(project: Project) -> None:
    project.restaurant().write("pytest.ini", "[pytest]\ntau2_max_turns = lots\n")
    run = project.run("--collect-only")
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    run.result.stderr.fnmatch_lines(["ERROR: --tau2-max-turns (ini tau2_max_turns) expects int, got 'lots'"])
