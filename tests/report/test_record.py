"""The result record: metrics.json read and written through one model, its signal fields taken from
the signal table (also for a signal registered at run time), files of other versions kept as they are.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from pydantic import ValidationError

from pytest_tau2.report import files
from pytest_tau2.report.metrics import metrics_schema
from pytest_tau2.report.record import HEAD, MIDDLE, TAIL, ScenarioRecord, record_type
from pytest_tau2.report.run_record import ErrorEntry, RunInfo, RunMetrics
from pytest_tau2.scoring.signals import (
    Check,
    ScoringInput,
    SignalResult,
    SignalSpec,
    register_signal,
    signal_specs,
    unregister_signal,
)
from tests.support.records import cola_record


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> ScenarioRecord:
    """The record of one real scenario run (the restaurant oracle), made in-process without pytest."""
    return cola_record(tmp_path_factory.mktemp("data"), "record_cola")


def test_the_document_has_every_field_in_the_files_order(record: ScenarioRecord) -> None:
    specs = list(signal_specs())
    document = record.document()
    values = [spec.metric for spec in specs]
    evidence = [spec.evidence_field for spec in specs if spec.evidence_field]
    details = [name for spec in specs for name in spec.details_schema or {}]
    assert list(document) == [*HEAD, *values, *MIDDLE, *evidence, *details, *TAIL]
    assert list(document) == list(metrics_schema()["properties"])
    jsonschema.validate(json.loads(files.dumps(document)), metrics_schema(), cls=jsonschema.Draft202012Validator)


def test_a_file_read_back_is_written_byte_for_byte(record: ScenarioRecord) -> None:
    text = files.dumps(record.document())
    again = ScenarioRecord.read(files.loads(text))
    assert files.dumps(again.document()) == text
    assert again == record
    assert ScenarioRecord.read(again) is again  # a record of the current table is taken as it is


def test_typed_access_to_the_signal_fields(record: ScenarioRecord) -> None:
    specs = {spec.key: spec for spec in signal_specs()}
    assert record.signal(specs["clean_exit"]) is True
    assert record.signal("is_action_match") is True
    assert record.evidence(specs["nl_assertion"]) == [] and record.evidence(specs["clean_exit"]) == []
    assert record.detail("tau2_reward_info") is None  # not a tau2 task
    assert record.folder == "restaurant__record_cola"
    assert [c.id for c in record.gating_checks()] == [c.id for c in record.checks if c.signal in record.success_signals]


def test_junit_properties_name_the_verdict_every_signal_and_the_gating_checks(record: ScenarioRecord) -> None:
    properties = dict(record.junit_properties())
    assert properties["is_successful"] == "true" and properties["stop_reason"] == "exit"
    assert properties["agent_turns"] == str(record.agent_turns)
    assert {spec.metric for spec in signal_specs()} <= set(properties)
    assert properties["judge_passed"] == "N/A"
    assert {f"check:{c.id}" for c in record.gating_checks()} == {k for k in properties if k.startswith("check:")}
    assert "resumed" not in properties
    assert dict(record.model_copy(update={"resumed": True}).junit_properties())["resumed"] == "true"


def test_a_file_of_another_version_keeps_exactly_its_keys() -> None:
    older = {"scenario": "shop__a", "is_successful": True, "token_usage": {"agent": {"calls": 1}}, "seed_used": 7}
    record = ScenarioRecord.read(older)
    assert record.model_extra == {"seed_used": 7}  # unknown: kept, apart from the table's fields
    assert record.document() == older
    assert record.written("scenario", "is_successful") and not record.written("stalled")
    assert (record.stalled, record.token_usage["agent"].cost_usd, record.signal("is_action_match")) == (
        False,
        None,
        None,
    )


def test_a_known_field_of_the_wrong_type_is_refused_naming_it() -> None:
    with pytest.raises(ValidationError, match="clean_exit"):
        ScenarioRecord.read({"scenario": "shop__a", "clean_exit": "sometimes"})
    with pytest.raises(ValidationError, match="agent_turns"):
        ScenarioRecord.read({"scenario": "shop__a", "agent_turns": "three"})


def _shouted(inp: ScoringInput) -> SignalResult:
    return SignalResult(0.5, [Check("shouted", "shouted", False, "half the turns")], details={"shouted_turns": [1]})


SHOUTED = SignalSpec(
    "shouted", "shout_rate", "Shouting", "rate", _shouted, "turns without capitals / turns", "never",
    details_schema={"shouted_turns": {"description": "Which turns shouted.", "type": ["array", "null"]}},
)  # fmt: skip


@pytest.fixture
def shouted() -> Iterator[SignalSpec]:
    register_signal(SHOUTED)
    yield SHOUTED
    unregister_signal(SHOUTED.key)


def test_a_signal_registered_at_run_time_is_a_typed_field(shouted: SignalSpec, record: ScenarioRecord) -> None:
    data = {**record.document(), "shout_rate": 0.5, "shouted_turns": [1]}
    with_it = ScenarioRecord.read(data)
    assert type(with_it) is record_type(ScenarioRecord) and type(with_it) is not type(record)
    assert with_it.signal(shouted) == 0.5 and with_it.detail("shouted_turns") == [1]
    assert with_it.model_extra == {}  # table fields, not unknown ones
    document = with_it.document()
    assert list(document).index("shout_rate") < list(document).index("judge_score")  # among the signal values
    assert list(document)[-len(TAIL) - 1] == "shouted_turns"  # the last details field
    assert ("shout_rate", "0.5") in with_it.junit_properties()
    schema = metrics_schema()
    assert schema["properties"]["shout_rate"] == shouted.value_schema()
    assert "shouted_turns" in schema["required"] and "shouted" in schema["$defs"]["signal"]["enum"]
    jsonschema.validate(json.loads(files.dumps(document)), schema, cls=jsonschema.Draft202012Validator)
    with pytest.raises(ValidationError, match="shout_rate"):
        ScenarioRecord.read({**data, "shout_rate": "loud"})
    # A record made before the signal existed gains its fields when read again.
    assert ScenarioRecord.read(record).signal(shouted) is None


def test_the_run_files_round_trip(record: ScenarioRecord, tmp_path: Path) -> None:
    errors = [ErrorEntry(scenario="shop__b", nodeid="t.py::test_scenario[shop__b]", reason="bad data")]
    document = RunMetrics.of([record], errors, {"trials_per_task": 1}).document()
    assert list(document) == ["scenarios", "errors_without_result", "pass_hat_k"]
    text = files.dumps(document)
    assert files.dumps(RunMetrics.read(files.loads(text)).document()) == text
    info = RunInfo(fingerprint={"seed": 3}, pytest_tau2="1.0", started=None, resumed=False, shard="1/2")
    assert RunInfo.model_validate(info.document()).document() == info.document()
    with pytest.raises(ValidationError):
        RunInfo.model_validate({"started": "now"})  # no fingerprint: not a pytest-tau2 run.json


def test_errors_without_result_in_the_spellings_of_hand_made_files() -> None:
    assert ErrorEntry.model_validate("shop__d").scenario == "shop__d"
    entry = ErrorEntry.model_validate({"name": "shop__e", "error": "killed"})
    assert (entry.scenario, entry.why) == ("shop__e", "killed")
    run = RunMetrics.read({"scenarios": [], "pass_k": {"1": 0.5}, "note": 1})
    assert run.pass_k_block() == {"1": 0.5} and run.other == {"pass_k": {"1": 0.5}, "note": 1}


def test_records_are_read_from_file_objects_by_every_reader(record: ScenarioRecord) -> None:
    """The summary and pass^k take records or metrics.json objects alike."""
    from pytest_tau2.report.leaderboard import pass_hat_k_document
    from pytest_tau2.report.summary import render

    assert render([record]) == render([record.document()])
    assert pass_hat_k_document([record]) == pass_hat_k_document([json.loads(files.dumps(record.document()))])
