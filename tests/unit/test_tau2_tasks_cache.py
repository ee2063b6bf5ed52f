"""``tau2_common.tasks``: ``tau2_pin`` verifies once per configured root, domain and allow_unpinned
(failures not remembered); ``load_tasks`` parses once and freezes the result like the DBs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.data.resolve import DataPin
from pytest_tau2.domains.tau2_common import tasks
from pytest_tau2.errors import DataError
from pytest_tau2.settings import Settings


@pytest.fixture
def verify_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Path | None, str, bool]]:
    """Every call that reaches ``verify``, which answers with a pin for the (unresolved) root."""
    calls: list[tuple[Path | None, str, bool]] = []

    def verify(root: Path | None, domain: str, *, allow_unpinned: bool = False) -> DataPin:
        calls.append((root, domain, allow_unpinned))
        if root is None or not root.name.startswith("ok"):
            raise DataError(f"{root}: not a tau2 data folder")
        return DataPin(root=root, commit="c", source="s", pinned=not allow_unpinned, files={})

    monkeypatch.setattr(tasks, "verify", verify)
    monkeypatch.setattr(tasks, "_PINS", {})
    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    return calls


def _settings(root: Path, **overrides: Any) -> Settings:
    return Settings(data_dir=str(root), **overrides)


def test_one_verification_per_root_and_domain(tmp_path: Path, verify_calls: list[Any]) -> None:
    settings = _settings(tmp_path / "ok")
    first = tasks.tau2_pin(settings, "telecom")
    assert all(tasks.tau2_pin(settings, "telecom") is first for _ in range(50))
    assert tasks.tau2_data_root(settings, "telecom") is first.root  # the pin's own Path
    tasks.tau2_pin(settings, "retail")
    tasks.tau2_pin(_settings(tmp_path / "ok", allow_unpinned_data=True), "telecom")
    tasks.tau2_pin(_settings(tmp_path / "ok-other"), "telecom")
    assert verify_calls == [
        (tmp_path / "ok", "telecom", False),
        (tmp_path / "ok", "retail", False),
        (tmp_path / "ok", "telecom", True),
        (tmp_path / "ok-other", "telecom", False),
    ]


def test_a_failed_verification_is_asked_again(tmp_path: Path, verify_calls: list[Any]) -> None:
    settings = _settings(tmp_path / "broken")
    for _ in range(2):
        with pytest.raises(DataError, match="not a tau2 data folder"):
            tasks.tau2_pin(settings, "telecom")
    assert len(verify_calls) == 2


def test_the_root_comes_from_the_environment_when_no_option_names_one(
    tmp_path: Path, verify_calls: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path / "ok-env"))
    assert tasks.tau2_data_root(Settings(), "airline") == tmp_path / "ok-env"
    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path / "ok-env2"))
    assert tasks.tau2_data_root(Settings(), "airline") == tmp_path / "ok-env2"  # a new root is verified anew
    assert [call[0] for call in verify_calls] == [tmp_path / "ok-env", tmp_path / "ok-env2"]


def test_load_tasks_parses_once_and_freezes_the_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "tau2" / "domains" / "lab"
    folder.mkdir(parents=True)
    (folder / "tasks.json").write_text('[{"id": 1, "x": [1]}, {"id": "b"}]', "utf-8")
    calls: list[str] = []
    monkeypatch.setattr(tasks.gc, "collect", lambda *a: calls.append("collect") or 0)
    monkeypatch.setattr(tasks.gc, "freeze", lambda: calls.append("freeze"))
    first = tasks.load_tasks(tmp_path, "lab")
    assert first == {"1": {"id": 1, "x": [1]}, "b": {"id": "b"}}
    assert tasks.load_tasks(tmp_path, "lab") is first
    assert calls == ["collect", "freeze"]
