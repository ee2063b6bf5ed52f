"""metrics.json is described by the JSON Schema shipped in the package; real outputs match it.

(Every run made through the ``project`` fixture also validates each metrics.json it wrote.)
"""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import Any

import jsonschema
import pytest

from pytest_tau2.report.metrics import SCHEMA_VERSION, metrics_schema
from tests.plugin.conftest import Project


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = metrics_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_metrics_schema_loads_the_file_shipped_in_the_package() -> None:
    shipped = resources.files("pytest_tau2.report").joinpath("metrics.schema.json").read_text("utf-8")
    assert metrics_schema() == json.loads(shipped)
    assert metrics_schema()["properties"]["schema_version"]["const"] == SCHEMA_VERSION


def test_every_top_level_field_is_required_typed_and_described() -> None:
    schema = metrics_schema()
    assert schema["additionalProperties"] is False
    assert sorted(schema["required"]) == sorted(schema["properties"])
    for name, field in schema["properties"].items():
        assert field.get("description"), name
        assert {"type", "$ref", "anyOf"} & set(field), f"{name} has no type"


@pytest.fixture(scope="module")
def real_metrics(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """metrics.json of one real scenario run, produced in-process without pytest."""
    from tests.support.records import cola_record

    metrics = cola_record(tmp_path_factory.mktemp("data"), "schema_cola").document()
    return dict(json.loads(json.dumps(metrics, default=str)))


def test_the_schema_covers_exactly_the_fields_build_metrics_writes(real_metrics: dict[str, Any]) -> None:
    assert sorted(real_metrics) == sorted(metrics_schema()["properties"])
    jsonschema.validate(real_metrics, metrics_schema(), cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize(
    ("change", "value"),
    [
        ("surprise_field", 1),
        ("is_successful", "yes"),
        ("stop_reason", "gave_up"),
        ("agent_turns", -1),
        ("nl_assertion_pass_rate", 1.5),
        ("success_signals", ["action_match", "vibes"]),
        ("schema_version", 2),
        ("labels", {"behavior_config": None}),
    ],
)
def test_the_schema_rejects_malformed_documents(real_metrics: dict[str, Any], change: str, value: Any) -> None:
    document = copy.deepcopy(real_metrics)
    document[change] = value
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, metrics_schema(), cls=jsonschema.Draft202012Validator)


def test_real_outputs_of_every_kind_of_outcome_match_the_schema(project: Project) -> None:
    project.lab(
        """
        @register_eval_scenario
        class Passing(LabBase):
            name = "lab__passing"

        @register_eval_scenario
        class Wrong(LabBase):
            name = "lab__wrong"
            agent_script = WRONG_VALUE

        @register_eval_scenario
        class Stalled(LabBase):
            name = "lab__stalled"
            agent_script = [("exit", "Bye.")]

        @register_eval_scenario
        class Broken(LabBase):
            name = "lab__broken"
            agent_script = [("crash", "upstream 503")]

        @register_eval_scenario
        class Judged(LabBase):
            name = "lab__judged"
            success_signals = (SuccessSignal.NL_ASSERTION,)
            nl_assertions = ["The agent is polite."]

            @property
            def user_persona(self):
                return Persona(role="caller", name="Lou", behavior_config="impatient", voice_config={"speed": 1.2})
        """
    )
    run = project.run()
    assert run.items() == {
        "lab__broken": "ERROR",
        "lab__judged": "SKIPPED",
        "lab__passing": "PASSED",
        "lab__stalled": "FAILED",
        "lab__wrong": "FAILED",
    }
    # project.run() has validated each metrics.json against the schema; check a few values too.
    assert run.metrics("lab__judged")["is_successful"] == "N/A"
    assert run.metrics("lab__stalled")["stalled"] is True
    assert run.metrics("lab__broken")["infrastructure_error"] == "upstream 503"
