"""A scenario's result files: indented JSON (also from the cache of repeated values) and the payload writer."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.report import files

VALUES: dict[str, Any] = {
    "tool schemas": [
        {"type": "function", "function": {"name": "get_user", "parameters": {"type": "object", "required": ["id"]}}}
    ],
    "empty containers": {"a": [], "b": {}, "c": [[], {}]},
    "numbers": {"int": 1, "float": 1.0, "big": 1e16, "small": 1e-07, "neg": -0.0, "bool": True, "none": None},
    "non-ASCII and escapes": {"name": "Zoë \u2603 \U0001f600", "text": 'line\n"quoted"\t\\ \x7f'},
    "dates and tuples": {"when": dt.date(2025, 2, 25), "pair": (1, "two")},
    "non-str keys": {3: "int", 2.5: "float", True: "bool", None: "none"},
    "float subclass (numpy's float64 is one)": {"score": type("Float", (float,), {})(0.75)},
}


@pytest.mark.parametrize("value", VALUES.values(), ids=list(VALUES))
def test_dumps_repeated_is_dumps(value: Any) -> None:
    assert files.dumps_repeated(value) == files.dumps(value)


@pytest.mark.parametrize("value", VALUES.values(), ids=list(VALUES))
def test_dumps_holds_what_the_json_module_writes(value: Any) -> None:
    """orjson writes the files: the same values and layout as ``json.dumps(indent=2, default=str)``."""
    text = files.dumps(value)
    reference = json.dumps(value, indent=2, default=str) + "\n"
    assert json.loads(text) == json.loads(reference)
    assert text.endswith("\n") and text.count("\n") == reference.count("\n")  # one value per line, indented
    assert [len(line) - len(line.lstrip()) for line in text.splitlines()] == [
        len(line) - len(line.lstrip()) for line in reference.splitlines()
    ]


def test_dumps_writes_non_ascii_as_utf8() -> None:
    assert files.dumps({"name": "Zoë"}) == '{\n  "name": "Zoë"\n}\n'


def test_dumps_repeated_makes_the_text_once_per_distinct_value() -> None:
    first = files.dumps_repeated({"tools": ["a", "b"], "n": 1})
    assert files.dumps_repeated({"tools": ["a", "b"], "n": 1}) is first
    assert files.dumps_repeated({"tools": ["a", "b"], "n": 1.0}) != first  # 1 and 1.0 are different JSON


def test_write_payload_writes_every_file_and_metrics_last(tmp_path: Path) -> None:
    payload = {
        "folder": "scenario_a",
        "metrics": {"is_successful": True, "when": "2025-02-25"},
        "files": {
            "transcript.json": files.dumps({"messages": []}),
            "scenario_config/agent_prompt.txt": "policy\n",
            "scenario_config/tools.json": files.dumps_repeated([{"name": "t"}]),
        },
    }
    files.write_payload(tmp_path, payload)
    folder = tmp_path / "scenario_a"
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == [
        "metrics.json",
        "scenario_config/agent_prompt.txt",
        "scenario_config/tools.json",
        "transcript.json",
    ]
    assert (folder / "scenario_config" / "agent_prompt.txt").read_text() == "policy\n"
    assert json.loads((folder / "metrics.json").read_text()) == payload["metrics"]
    assert not [p for p in folder.rglob(".*")], "no temporary file is left behind"


def test_write_payload_overwrites_an_earlier_result(tmp_path: Path) -> None:
    first = {"folder": "s", "metrics": {"run": 1}, "files": {"transcript.json": "one\n"}}
    second = {"folder": "s", "metrics": {"run": 2}, "files": {"transcript.json": "two\n"}}
    files.write_payload(tmp_path, first)
    files.write_payload(tmp_path, second)
    assert (tmp_path / "s" / "transcript.json").read_text() == "two\n"
    assert json.loads((tmp_path / "s" / "metrics.json").read_text()) == {"run": 2}


def test_write_json_writes_indented_json_with_a_final_newline(tmp_path: Path) -> None:
    data = {"scenarios": [{"a": 1, "when": dt.date(2025, 2, 25)}], "errors_without_result": []}
    files.write_json(tmp_path / "sub" / "all_metrics.json", data)
    assert (tmp_path / "sub" / "all_metrics.json").read_text() == json.dumps(data, indent=2, default=str) + "\n"


@pytest.mark.parametrize("value", VALUES.values(), ids=list(VALUES))
def test_dumps_compact_and_loads_hold_what_the_json_module_does(value: Any) -> None:
    expected = json.loads(json.dumps(value, default=str))
    assert json.loads(files.dumps_compact(value)) == expected
    assert files.loads(json.dumps(value, default=str)) == expected
    assert files.loads(json.dumps(value, default=str).encode()) == expected


def test_loads_reads_the_json_modules_nan_and_raises_its_error() -> None:
    value = files.loads(b'{"rate": NaN, "cap": Infinity}')
    assert value["rate"] != value["rate"] and value["cap"] == float("inf")  # json writes these; orjson refuses them
    with pytest.raises(json.JSONDecodeError):
        files.loads(b'{"rate": ')


def test_write_payload_leaves_no_earlier_metrics_beside_a_half_written_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rerun that stops while writing (disk full, Ctrl-C) leaves a folder without metrics.json,
    which reads as unfinished, never the earlier metrics.json beside the new files."""
    files.write_payload(tmp_path, {"folder": "s", "metrics": {"run": 1}, "files": {"transcript.json": "one\\n"}})
    real_dumps = files.dumps

    def failing_dumps(data: Any) -> str:
        if data == {"run": 2}:
            raise OSError("No space left on device")
        return real_dumps(data)

    monkeypatch.setattr(files, "dumps", failing_dumps)
    second = {"folder": "s", "metrics": {"run": 2}, "files": {"transcript.json": "two\\n"}}
    with pytest.raises(OSError):
        files.write_payload(tmp_path, second)
    assert not (tmp_path / "s" / "metrics.json").exists()
