"""Broken data files are DataErrors naming the file and line; unpinned data is refused once when it does not parse."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_tau2.data.manifest import DOMAIN_FILES
from pytest_tau2.data.parsing import check_syntax, load_json_file, read_json, read_toml
from pytest_tau2.data.resolve import clear_verify_cache, verify
from pytest_tau2.domains.tau2_common.tasks import cached_db, load_split_ids
from pytest_tau2.errors import DataError
from pytest_tau2.scenario.base import read_db_file
from tests.support.tau2_data import DATA_DIR, requires_data

BROKEN_JSON = '{\n  "users": {\n    "u1": {"name": "Ann",}\n  }\n}\n'  # trailing comma on line 3


def test_read_json_names_the_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "db.json"
    path.write_text(BROKEN_JSON, "utf-8")
    with pytest.raises(DataError) as caught:
        read_json(path)
    assert str(caught.value).startswith(f"{path}:3:26: not valid JSON: Expecting property name")


@pytest.mark.parametrize(
    "text",
    [
        '{"big": 123456789012345678901234567890, "f": 0.1, "e": 1e400}',  # beyond 64 bits; inf
        '{"nan": NaN, "inf": -Infinity}',  # json's extensions
        '{"lone": "\\ud800", "pair": "\\ud83d\\ude00", "dup": 1, "dup": 2}',
        '{"plain": [1, 2.5, true, null, "caf\u00e9"]}',
    ],
    ids=["big-int", "nan", "surrogates-and-duplicates", "plain"],
)
def test_load_json_file_gives_what_json_load_gives(tmp_path: Path, text: str) -> None:
    """orjson parses the data files when it can; whatever it refuses, the json module parses, so
    the value is the json module's in every case."""
    path = tmp_path / "db.json"
    path.write_text(text, "utf-8")
    with path.open(encoding="utf-8") as handle:
        expected = json.load(handle)
    found = load_json_file(path)
    assert json.dumps(found, sort_keys=True) == json.dumps(expected, sort_keys=True)


def test_load_json_file_fails_like_json_load(tmp_path: Path) -> None:
    for raw in (BROKEN_JSON.encode(), "\ufeff{}".encode()):  # a syntax error; a byte order mark
        path = tmp_path / "db.json"
        path.write_bytes(raw)
        with pytest.raises(json.JSONDecodeError) as ours:
            load_json_file(path)
        with pytest.raises(json.JSONDecodeError) as theirs, path.open(encoding="utf-8") as handle:
            json.load(handle)
        assert (ours.value.msg, ours.value.lineno, ours.value.colno) == (
            theirs.value.msg,
            theirs.value.lineno,
            theirs.value.colno,
        )


@requires_data("retail", "airline", "mock", "banking_knowledge")
def test_the_shipped_dbs_parse_to_what_json_load_gives() -> None:
    paths = sorted(DATA_DIR.glob("tau2/domains/*/db.json"))
    assert len(paths) >= 4
    for path in paths:
        with path.open(encoding="utf-8") as handle:
            assert load_json_file(path) == json.load(handle), path


def test_read_toml_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "db.toml"
    path.write_text('[lines]\nphone = "555"\nphone = "556"\n', "utf-8")
    with pytest.raises(DataError, match=rf"^{path}:3:\d+: not valid TOML: Cannot overwrite a value"):
        read_toml(path)


def test_a_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_bytes(b'{"id": "\xff"}')
    with pytest.raises(DataError, match=rf"^{path} \(byte 8\): not UTF-8 text"):
        read_json(path)


def test_check_syntax_passes_valid_files_and_ignores_other_kinds(tmp_path: Path) -> None:
    (tmp_path / "ok.json").write_text('{"a": 1}', "utf-8")
    (tmp_path / "policy.md").write_text("{ not json, and that is fine", "utf-8")
    check_syntax(tmp_path / "ok.json")
    check_syntax(tmp_path / "policy.md")


def test_cached_db_and_read_db_file_raise_data_errors(tmp_path: Path) -> None:
    path = tmp_path / "db.json"
    path.write_text(BROKEN_JSON, "utf-8")
    with pytest.raises(DataError, match=r"db\.json:3:26: not valid JSON"):
        cached_db(path, lambda p: json.loads(p.read_text("utf-8")))
    with pytest.raises(DataError, match=r"db\.json:3:26: not valid JSON"):
        read_db_file(path)


def test_split_tasks_json_that_does_not_parse_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "tau2" / "domains" / "retail"
    folder.mkdir(parents=True)
    (folder / "split_tasks.json").write_text('{"base": ["0", "1",]}', "utf-8")
    with pytest.raises(DataError, match=r"split_tasks\.json:1:20: not valid JSON"):
        load_split_ids(tmp_path, "retail")


# ---- verify: an unpinned data set that does not parse ------------------------------------------------------


def _copy_domain(tmp_path: Path, domain: str) -> Path:
    root = tmp_path / "data"
    for relative in DOMAIN_FILES[domain]:
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DATA_DIR / relative, target)
    return root


@pytest.fixture(autouse=True)
def _fresh_verify_cache() -> None:
    clear_verify_cache()


@requires_data("retail")
def test_unpinned_data_that_does_not_parse_is_refused_naming_the_file(tmp_path: Path) -> None:
    root = _copy_domain(tmp_path, "retail")
    db = root / "tau2" / "domains" / "retail" / "db.json"
    db.write_text(BROKEN_JSON, "utf-8")
    with pytest.raises(DataError) as caught:
        verify(root, "retail", allow_unpinned=True)
    message = str(caught.value)
    assert message.startswith(f"{db.resolve()}:3:26: not valid JSON")
    assert "--tau2-allow-unpinned-data accepts changed data files, not unparseable ones" in message


@requires_data("retail")
def test_unpinned_data_that_parses_is_accepted_as_unpinned(tmp_path: Path) -> None:
    root = _copy_domain(tmp_path, "retail")
    tasks = root / "tau2" / "domains" / "retail" / "tasks.json"
    tasks.write_text(json.dumps(json.loads(tasks.read_text("utf-8"))[:3]), "utf-8")
    assert verify(root, "retail", allow_unpinned=True).pinned is False


@requires_data("retail")
def test_pinned_files_are_not_parsed_by_verify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _copy_domain(tmp_path, "retail")
    parsed: list[Path] = []
    monkeypatch.setattr("pytest_tau2.data.resolve.check_syntax", lambda path, hint="": parsed.append(path))
    assert verify(root, "retail", allow_unpinned=True).pinned is True
    assert parsed == []  # collection stays free of DB parsing when the data is the pinned set
