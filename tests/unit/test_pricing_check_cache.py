"""maybe_priced's answers are remembered across processes with the price file's identity, so that
a process whose models need no price never reads litellm's 3.5 MB price list (issue 41)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_tau2.llm import pricing


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("PYTEST_TAU2_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")

    def clear() -> None:
        for cached in (pricing._maybe_priced, pricing._price_file, pricing._priced_names):
            cached.cache_clear()

    clear()
    yield tmp_path / pricing.CHECK_CACHE
    clear()


def test_an_answer_is_remembered_and_reused_without_reading_the_price_file(fresh: Path) -> None:
    assert pricing.maybe_priced(["openai/agent"]) is False
    assert pricing.maybe_priced(["gpt-4o-mini"]) is True
    saved = json.loads(fresh.read_text("utf-8"))
    (entry,) = saved.values()
    assert entry["answers"] == {"openai/agent": False, "gpt-4o-mini": True}

    pricing._maybe_priced.cache_clear()  # as a new process
    pricing._price_file.cache_clear()
    assert pricing.maybe_priced(["openai/agent"]) is False
    assert pricing.maybe_priced(["gpt-4o-mini"]) is True
    assert pricing._price_file.cache_info().misses == 0  # the file was not read


def test_a_changed_price_file_is_checked_again(fresh: Path) -> None:
    assert pricing.maybe_priced(["openai/agent"]) is False
    saved = json.loads(fresh.read_text("utf-8"))
    for entry in saved.values():
        entry["identity"][2] += 1  # another size: another file
        entry["answers"]["openai/agent"] = True  # a wrong answer that must not be used
    fresh.write_text(json.dumps(saved), "utf-8")
    pricing._maybe_priced.cache_clear()
    pricing._price_file.cache_clear()
    assert pricing.maybe_priced(["openai/agent"]) is False
    assert pricing._price_file.cache_info().misses == 1


def test_a_corrupt_cache_is_ignored(fresh: Path) -> None:
    fresh.parent.mkdir(parents=True, exist_ok=True)
    fresh.write_text("{not json", "utf-8")
    assert pricing.maybe_priced(["openai/agent"]) is False
    assert json.loads(fresh.read_text("utf-8"))  # rewritten whole
