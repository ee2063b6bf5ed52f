"""Running scenarios: sub-results, verdicts, stalls, N/A, excluded signals, infrastructure errors,
and what each run leaves behind (files, JUnit properties, the terminal summary)."""

from __future__ import annotations

import json
import re

import pytest

from tests.plugin.conftest import REPO, RESTAURANT_SCENARIOS, Project, junit_cases

RESTAURANT = [
    "restaurant__margherita_for_two",
    "restaurant__menu_question",
    "restaurant__party_order",
    "restaurant__pepperoni_mushrooms",
    "restaurant__pizza_pepperoni",
    "restaurant__veggie_and_lemonade",
]

SIGNAL_PROPERTIES = (
    "is_action_match",
    "db_state_match",
    "db_state_assertion_pass_rate",
    "nl_assertion_pass_rate",
    "judge_passed",
    "clean_exit",
)

WRONG_TOTAL = '''

@register_eval_scenario
class WrongTotal(PizzaPepperoni):
    """The reference says 12.49; the oracle places the real order (11.49)."""

    name = "restaurant__wrong_total"
    reference_answer = {**PizzaPepperoni.reference_answer, "total_price": "12.49"}

    def gold_actions(self):
        return [{"name": "PlaceOrderTool", "arguments": dict(PizzaPepperoni.reference_answer),
                 "requestor": "assistant"}]
'''


# ---- the worked example, offline ------------------------------------------------------------------


def test_the_restaurant_example_passes_offline_with_one_sub_result_per_check(project: Project) -> None:
    run = project.restaurant().run("--junitxml=junit.xml", "--tau2-save-db")
    assert run.result.ret == pytest.ExitCode.OK
    assert run.items() == dict.fromkeys(RESTAURANT, "PASSED")
    for name in RESTAURANT:
        run.result.stdout.fnmatch_lines(
            [
                f"test_scenarios.py::test_scenario[[]{name}[]] SUBPASSED[[]clean_exit[]]*",
                f"test_scenarios.py::test_scenario[[]{name}[]] SUBPASSED[[]action_match[]]*",
            ]
        )
    # DB_STATE_MATCH is not in the restaurant whitelist: computed, saved, never a sub-result.
    assert "SUBPASSED[db_state_match]" not in run.stdout
    run.result.stdout.fnmatch_lines(
        [
            "*= tau2 summary =*",
            "Success rate: 6/6 (100.0%) of 6 scenarios",
            f"results: {run.results_dir}",
            "*6 passed*12 subtests passed*",
        ]
    )


def test_results_directory_layout_and_contents(project: Project) -> None:
    run = project.restaurant().run("-k", "pizza_pepperoni", "--tau2-save-db")
    folder = run.results_dir / "restaurant__pizza_pepperoni"
    assert sorted(p.relative_to(run.results_dir).as_posix() for p in run.results_dir.rglob("*") if p.is_file()) == [
        "all_metrics.json",
        "all_summary.txt",
        "report.html",
        "restaurant__pizza_pepperoni/final_db.json",
        "restaurant__pizza_pepperoni/metrics.json",
        "restaurant__pizza_pepperoni/scenario_config/agent_prompt.txt",
        "restaurant__pizza_pepperoni/scenario_config/metadata.json",
        "restaurant__pizza_pepperoni/scenario_config/tools.json",
        "restaurant__pizza_pepperoni/scenario_config/user_prompt.txt",
        "restaurant__pizza_pepperoni/transcript.json",
        "run.json",
    ]
    metrics = run.metrics("restaurant__pizza_pepperoni")
    assert (metrics["scenario"], metrics["domain"], metrics["is_successful"], metrics["stop_reason"]) == (
        "restaurant__pizza_pepperoni",
        "restaurant",
        True,
        "exit",
    )
    assert (metrics["agent"], metrics["user"]) == ("oracle", "scripted")
    assert metrics["success_signals"] == ["action_match", "clean_exit"]
    assert metrics["success_breakdown"]["excluded"]["db_state_match"] is True

    final_db = json.loads((folder / "final_db.json").read_text())
    assert final_db["orders"][0]["total_price"] == "11.49" and final_db["orders"][0]["status"] == "placed"

    transcript = json.loads((folder / "transcript.json").read_text())
    assert transcript["scenario"] == "restaurant__pizza_pepperoni"
    assert transcript["messages"][0] == {
        "role": "user",
        "content": "Order a pepperoni pizza with extra cheese.",
        "turn_idx": 0,
    }
    assert transcript["messages"][-1]["name"] == "EndConversationTool"

    config = folder / "scenario_config"
    assert (config / "agent_prompt.txt").read_text().startswith("You are Pat, a order-taking assistant at Pizza")
    assert "You are Charlie, a human user." in (config / "user_prompt.txt").read_text()
    tools = json.loads((config / "tools.json").read_text())
    assert [t["function"]["name"] for t in tools["agent"]] == ["GetMenuTool", "PlaceOrderTool", "EndConversationTool"]
    metadata = json.loads((config / "metadata.json").read_text())
    assert metadata["class"] == "restaurant_scenarios.PizzaPepperoni"
    assert metadata["gold_actions"][0]["name"] == "PlaceOrderTool"

    all_metrics = json.loads((run.results_dir / "all_metrics.json").read_text())
    assert [m["scenario"] for m in all_metrics["scenarios"]] == ["restaurant__pizza_pepperoni"]
    assert run.summary().splitlines()[0] == "Success rate: 1/1 (100.0%) of 1 scenarios"


def test_final_db_is_only_written_with_save_db(project: Project) -> None:
    run = project.restaurant().run("-k", "pizza_pepperoni")
    assert not (run.results_dir / "restaurant__pizza_pepperoni" / "final_db.json").exists()


def test_a_wrong_reference_fails_with_a_sub_result_naming_the_field(project: Project) -> None:
    run = project.restaurant(WRONG_TOTAL).run("-k", "wrong_total or margherita", "--junitxml=junit.xml")
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED
    assert run.items() == {"restaurant__margherita_for_two": "PASSED", "restaurant__wrong_total": "FAILED"}
    run.result.stdout.fnmatch_lines(
        [
            "*test_scenario[[]restaurant__wrong_total[]] SUBPASSED[[]clean_exit[]]*",
            "*test_scenario[[]restaurant__wrong_total[]] SUBFAILED[[]action_match[]]*",
            "*reference.total_price: expected '12.49', found '11.49'*",
            "*= tau2 summary =*",
            "Success rate: 1/2 (50.0%) of 2 scenarios",
            "  Action match: 1/2 (50.0%)",
        ]
    )
    metrics = run.metrics("restaurant__wrong_total")
    assert metrics["is_successful"] is False and metrics["is_action_match"] is False
    assert metrics["success_breakdown"]["failed"] == ["is_action_match"]
    assert run.checks("restaurant__wrong_total")["action_match"]["message"] == (
        "reference.total_price: expected '12.49', found '11.49'"
    )
    properties = junit_cases(project.path / "junit.xml")["test_scenario[restaurant__wrong_total]"]["properties"]
    assert (properties["is_successful"], properties["is_action_match"], properties["clean_exit"]) == (
        "false",
        "false",
        "true",
    )


def test_junit_has_every_signal_is_successful_and_stop_reason_as_properties(project: Project) -> None:
    project.restaurant().run("-k", "party or menu", "--junitxml=junit.xml")
    cases = junit_cases(project.path / "junit.xml")
    assert sorted(cases) == ["test_scenario[restaurant__menu_question]", "test_scenario[restaurant__party_order]"]
    for case in cases.values():
        properties = case["properties"]
        for key in (*SIGNAL_PROPERTIES, "is_successful", "stop_reason", "stalled", "agent_turns", "tau2_scenario"):
            assert key in properties, key
        assert properties["is_successful"] == "true"
        assert properties["stop_reason"] == "exit"
        assert properties["nl_assertion_pass_rate"] == "N/A"
        assert case["outcome"] == "passed"


# ---- controlled outcomes with the lab domain ------------------------------------------------------------


def test_a_db_mismatch_shows_a_path_level_diff(project: Project) -> None:
    project.lab(
        """
        @register_eval_scenario
        class Eight(LabBase):
            name = "lab__eight"
            agent_script = WRONG_VALUE
        """
    )
    run = project.run()
    assert run.items() == {"lab__eight": "FAILED"}
    run.result.stdout.fnmatch_lines(
        [
            "*test_scenario[[]lab__eight[]] SUBPASSED[[]clean_exit[]]*",
            "*test_scenario[[]lab__eight[]] SUBFAILED[[]action_match[]]*",
            "*test_scenario[[]lab__eight[]] SUBFAILED[[]db_state_match[]]*",
        ]
    )
    run.result.stdout.fnmatch_lines(  # the item's failure text: every sub-result, the diff under its line
        [
            "  db_state_match: failed: DB hash * != expected *",
            "    diff (expected -> actual):",
            "    values_changed: root['values']['x']['value']: expected 7 but found 8",
        ]
    )
    assert run.checks("lab__eight")["action_match"]["message"] == "reference.value: expected 7, found 8"


def test_not_applicable_verdict_skips_the_test_with_the_reason(project: Project) -> None:
    project.lab(
        """
        @register_eval_scenario
        class NothingToCheck(LabBase):
            name = "lab__nothing_to_check"
            success_signals = (SuccessSignal.ACTION_MATCH,)
            reference_answer = None
        """
    )
    run = project.run("-rs")
    assert run.items() == {"lab__nothing_to_check": "SKIPPED"}
    run.result.stdout.fnmatch_lines(
        [
            "*test_scenario[[]lab__nothing_to_check[]] SUBSKIPPED[[]action_match[]]*",
            "Success rate: n/a of 1 scenarios; 1 N/A (skipped)",
            "*SKIPPED* *no applicable success signal: is_action_match",
        ]
    )
    assert run.metrics("lab__nothing_to_check")["is_successful"] == "N/A"


def test_signals_outside_the_whitelist_are_saved_as_excluded_and_never_fail(project: Project) -> None:
    project.lab(
        """
        @register_eval_scenario
        class ExitOnly(LabBase):
            name = "lab__exit_only"
            success_signals = (SuccessSignal.CLEAN_EXIT,)
            agent_script = WRONG_VALUE
        """
    )
    run = project.run()
    assert run.items() == {"lab__exit_only": "PASSED"}
    assert "SUBFAILED" not in run.stdout and "action_match" not in run.stdout
    metrics = run.metrics("lab__exit_only")
    assert metrics["is_successful"] is True
    assert metrics["success_breakdown"]["passed"] == ["clean_exit"]
    assert metrics["success_breakdown"]["excluded"]["is_action_match"] is False
    assert metrics["success_breakdown"]["excluded"]["db_state_match"] is False
    assert run.checks("lab__exit_only")["db_state_match"]["passed"] is False  # computed all the same


def test_too_few_agent_turns_fail_as_stalled_and_count_in_the_composite_only(project: Project) -> None:
    project.lab(
        """
        @register_eval_scenario
        class Hasty(LabBase):
            name = "lab__hasty"
            agent_script = [("call", "set_value", {"key": "x", "value": 7}), ("exit", "Done, bye.")]

        @register_eval_scenario
        class Thorough(LabBase):
            name = "lab__thorough"
            agent_script = RIGHT_VALUE
        """
    )
    run = project.run("--junitxml=junit.xml")
    assert run.items() == {"lab__hasty": "FAILED", "lab__thorough": "PASSED"}
    run.result.stdout.fnmatch_lines(
        [
            "*test_scenario[[]lab__hasty[]] SUBPASSED[[]action_match[]]*",
            "stalled: 1 agent turns, fewer than --tau2-min-agent-turns 3",
            "Success rate: 1/2 (50.0%) of 2 scenarios (1 stalled counted as not successful)",
            "  Action match: 1/1 (100.0%)",
        ]
    )
    metrics = run.metrics("lab__hasty")
    assert (metrics["stalled"], metrics["is_successful"], metrics["agent_turns"]) == (True, False, 1)
    assert metrics["success_breakdown"]["failed"] == []  # every signal passed; the stall failed it
    properties = junit_cases(project.path / "junit.xml")["test_scenario[lab__hasty]"]["properties"]
    assert (properties["stalled"], properties["is_successful"], properties["agent_turns"]) == ("true", "false", "1")


def test_min_agent_turns_zero_disables_the_stall_check_from_cli_or_ini(project: Project) -> None:
    project.lab(
        """
        @register_eval_scenario
        class Hasty(LabBase):
            name = "lab__hasty"
            agent_script = [("call", "set_value", {"key": "x", "value": 7}), ("exit", "Done, bye.")]
        """
    )
    assert project.run("--tau2-min-agent-turns", "0").items() == {"lab__hasty": "PASSED"}
    project.write("pytest.ini", "[pytest]\ntau2_min_agent_turns = 0\n")
    assert project.run().items() == {"lab__hasty": "PASSED"}
    assert project.run("--tau2-min-agent-turns", "2").items() == {"lab__hasty": "FAILED"}  # CLI beats ini


def test_an_infrastructure_error_is_a_test_error_not_a_failure(project: Project) -> None:
    project.lab(
        """
        @register_eval_scenario
        class Unreachable(LabBase):
            name = "lab__unreachable"
            agent_script = [("say", "Hello"), ("crash", "connection refused by ws://127.0.0.1:9")]
        """
    )
    run = project.run("--junitxml=junit.xml")
    assert run.items() == {"lab__unreachable": "ERROR"}
    run.result.stdout.fnmatch_lines(
        [
            "*InfrastructureError*connection refused by ws://127.0.0.1:9*",
            "Success rate: 0/1 (0.0%) of 1 scenarios (1 infrastructure errors counted as not successful)",
        ]
    )
    metrics = run.metrics("lab__unreachable")
    assert metrics["infrastructure_error"] == "connection refused by ws://127.0.0.1:9"
    assert (metrics["stop_reason"], metrics["is_successful"]) == ("error", False)
    case = junit_cases(project.path / "junit.xml")["test_scenario[lab__unreachable]"]
    assert case["outcome"] == "error"
    assert case["properties"]["infrastructure_error"] == "connection refused by ws://127.0.0.1:9"
    assert case["properties"]["stop_reason"] == "error"


def test_nl_assertions_without_a_judge_are_skipped_sub_results(project: Project) -> None:
    project.lab(
        """
        @register_eval_scenario
        class Polite(LabBase):
            name = "lab__polite"
            success_signals = (SuccessSignal.NL_ASSERTION, SuccessSignal.CLEAN_EXIT)
            nl_assertions = ["The agent greets the caller.", "The agent confirms the new value."]
        """
    )
    run = project.run("-rs")
    assert run.items() == {"lab__polite": "PASSED"}
    run.result.stdout.fnmatch_lines(  # each with its reason, under the item (-rs lists skipped tests: none)
        [
            "*SUBSKIPPED[[]nl_assertion[[]0[]][]] - no judge configured (--tau2-judge-model): The agent greets*",
            "*SUBSKIPPED[[]nl_assertion[[]1[]][]] - no judge configured (--tau2-judge-model): The agent confirms*",
            "*1 passed, 1 subtests passed, 2 subtests skipped*",
        ]
    )
    assert "SKIPPED [" not in run.stdout
    metrics = run.metrics("lab__polite")
    assert metrics["nl_assertion_pass_rate"] is None
    assert metrics["success_breakdown"]["not_applicable"] == ["nl_assertion_pass_rate"]


def test_db_state_assertions_are_one_sub_result_per_predicate(project: Project) -> None:
    project.lab(
        """
        @register_db_state_predicate("lab")
        def value_is(db, key, value):
            return db["values"][key]["value"] == value


        @register_eval_scenario
        class Predicates(LabBase):
            name = "lab__predicates"
            success_signals = (SuccessSignal.DB_STATE_ASSERTION,)
            db_state_assertions = [
                {"func_name": "value_is", "arguments": {"key": "x", "value": 7}, "side": "agent"},
                {"func_name": "value_is", "arguments": {"key": "x", "value": 9}, "side": "agent"},
            ]
        """
    )
    run = project.run()
    assert run.items() == {"lab__predicates": "FAILED"}
    run.result.stdout.fnmatch_lines(
        [
            "*SUBPASSED[[]db_state_assertion[[]0:value_is[]][]]*",
            "*SUBFAILED[[]db_state_assertion[[]1:value_is[]][]]*",
            "*value_is(key='x', value=9) on the agent DB returned False, expected True*",
            "  DB-state assertion pass: 1/2 (50.0%) predicates",
        ]
    )
    assert run.metrics("lab__predicates")["db_state_assertion_pass_rate"] == 0.5


def test_labels_reach_metrics_but_never_a_prompt(project: Project) -> None:
    project.lab(
        """
        @register_eval_scenario
        class Labelled(LabBase):
            name = "lab__labelled"

            @property
            def user_persona(self):
                return Persona(role="caller", name="Lou", behavior_config={"interrupts": "LABEL-B"},
                               voice_config={"accent": "LABEL-V"})
        """
    )
    run = project.run()
    assert run.metrics("lab__labelled")["labels"] == {
        "behavior_config": {"interrupts": "LABEL-B"},
        "voice_config": {"accent": "LABEL-V"},
    }
    config = run.results_dir / "lab__labelled" / "scenario_config"
    for prompt in ("agent_prompt.txt", "user_prompt.txt"):
        assert "LABEL-" not in (config / prompt).read_text()
    transcript = (run.results_dir / "lab__labelled" / "transcript.json").read_text()
    assert "LABEL-" not in transcript


# ---- data root ------------------------------------------------------------------------------------------------


def test_db_path_resolves_against_the_eval_data_root_option(project: Project) -> None:
    project.restaurant()
    (project.path / "data" / "restaurant" / "orders.json").unlink()
    project.write("fixtures/restaurant/orders.json", '{"orders": []}')
    missing = project.run("-k", "pizza_pepperoni")
    assert missing.items() == {"restaurant__pizza_pepperoni": "ERROR"}
    assert missing.summary().splitlines()[:2] == [
        "Success rate: 0/1 (0.0%) of 1 scenarios (1 errors without a result counted as not successful)",
        "  errors without a result: restaurant__pizza_pepperoni",
    ]
    run = project.run("-k", "pizza_pepperoni", "--tau2-eval-data-root", "fixtures")
    assert run.items() == {"restaurant__pizza_pepperoni": "PASSED"}


def test_a_missing_db_file_is_a_clear_error_naming_the_data_root_option(project: Project) -> None:
    project.restaurant()
    (project.path / "data" / "restaurant" / "orders.json").unlink()
    run = project.run("-k", "pizza_pepperoni")
    assert run.items() == {"restaurant__pizza_pepperoni": "ERROR"}
    assert "--tau2-eval-data-root" in run.stdout
    assert "FileNotFoundError" not in run.stdout


def test_a_db_path_escaping_the_data_root_is_refused(project: Project) -> None:
    project.write("secrets/orders.json", '{"orders": []}')
    project.restaurant(
        """

        @register_eval_scenario
        class Escapes(PizzaPepperoni):
            name = "restaurant__escapes"

            def setup_shared_state(self, state, side):
                state["db_path"] = "../secrets/orders.json"
        """
    )
    run = project.run("-k", "escapes")
    assert run.items() == {"restaurant__escapes": "ERROR"}
    run.result.stdout.fnmatch_lines(["*DataPathError*'../secrets/orders.json' escapes the data root*"])


def test_the_copied_worked_example_is_the_repositorys() -> None:
    assert "class PizzaPepperoni(RestaurantBaseScenario)" in RESTAURANT_SCENARIOS


# ---- the documentation's example project ---------------------------------------------------------------


def test_the_own_domain_example_of_the_authoring_guide_runs(project: Project) -> None:
    guide = (REPO / "docs" / "authoring-scenarios.md").read_text("utf-8")
    blocks = re.findall(r"```python\n(.*?)```", guide, re.S)
    tool = next(b for b in blocks if "class ReserveCakeTool" in b)
    scenarios = next(b for b in blocks if "class BakeryBase" in b)
    project.write("data/bakery/db.json", '{"reservations": []}')
    project.write("my_scenarios/__init__.py", "from my_scenarios import bakery  # noqa: F401\n")
    project.write("my_scenarios/bakery.py", tool + "\n\n" + scenarios)
    project.write("my_scenarios/test_scenarios.py", "from pytest_tau2 import test_scenario  # noqa: F401\n")
    project.write("conftest.py", "import my_scenarios  # noqa: F401\n")
    run = project.run("my_scenarios")
    assert run.items() == {"bakery__carrot_cake": "PASSED"}
    run.result.stdout.fnmatch_lines(
        ["*SUBPASSED[[]clean_exit[]]*", "*SUBPASSED[[]action_match[]]*", "*SUBPASSED[[]db_state_match[]]*"]
    )
