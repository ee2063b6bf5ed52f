"""The generated tau2 scenarios: how many, how they are named, which markers they carry.

Counts and split ids are upstream's at the pin (reference sections 1.2 and 1.4).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import pytest_tau2.domains.tau2_sources as tau2_sources
from pytest_tau2.data.manifest import DOMAIN_FILES
from pytest_tau2.domains.tau2_common.base import Tau2BaseScenario
from pytest_tau2.scenario.base import check_success_signals, signals_vouched_for
from pytest_tau2.scenario.registry import all_scenarios
from pytest_tau2.scenario.selection import signal_errors
from pytest_tau2.settings import Settings

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
if not (DATA_DIR / "tau2" / "domains").is_dir():
    pytest.skip(f"no tau2 data under {DATA_DIR} (set TAU2_DATA_DIR)", allow_module_level=True)

VALID_CASE = re.compile(r"^[a-z0-9_]+$")
RETAIL_TEST_IDS = set(
    "5 9 12 17 18 26 27 32 33 36 38 39 40 42 45 49 51 53 55 56 60 61 62 64 65 68 70 71 74 77 79 86 "
    "90 94 97 100 101 102 108 111".split()
)
AIRLINE_TEST_IDS = set("2 6 8 13 16 18 19 22 24 25 26 29 30 31 32 35 37 44 45 48".split())


def _settings(tmp: Path, **overrides: Any) -> Settings:
    return Settings(data_dir=str(DATA_DIR), results_dir=str(tmp), **overrides)  # type: ignore[arg-type]


def _of_domain(scenarios: dict[str, type], domain: str) -> dict[str, type[Tau2BaseScenario]]:
    return {name: cls for name, cls in scenarios.items() if name.startswith(f"{domain}__")}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> dict[str, type]:
    return all_scenarios(_settings(tmp_path_factory.mktemp("results")))


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> dict[str, type]:
    return all_scenarios(_settings(tmp_path_factory.mktemp("results"), sections={"telecom_tasks": "full"}))


@pytest.mark.parametrize(("domain", "count"), [("tau2_retail", 114), ("tau2_airline", 50), ("tau2_telecom", 114)])
def test_base_split_counts(base: dict[str, type], domain: str, count: int) -> None:
    assert len(_of_domain(base, domain)) == count


def test_full_telecom_task_set(base: dict[str, type], full: dict[str, type]) -> None:
    telecom_full = _of_domain(full, "tau2_telecom")
    telecom_base = _of_domain(base, "tau2_telecom")
    assert len(telecom_full) == 2285
    assert set(telecom_base) <= set(telecom_full)
    outside = {name for name, cls in telecom_full.items() if "tau2_telecom_full" in cls.tags}
    assert outside == set(telecom_full) - set(telecom_base)
    assert len(outside) == 2285 - 114
    # the other domains do not change with the telecom option
    assert len(_of_domain(full, "tau2_retail")) == 114
    assert len(_of_domain(full, "tau2_airline")) == 50


@pytest.mark.parametrize("which", ["base", "full"])
def test_names_are_k_friendly_and_unique(base: dict[str, type], full: dict[str, type], which: str) -> None:
    scenarios = {"base": base, "full": full}[which]
    tau2 = {name: cls for name, cls in scenarios.items() if name.startswith("tau2_")}
    for name, cls in tau2.items():
        assert issubclass(cls, Tau2BaseScenario)
        domain, _, case = name.partition("__")
        assert domain in ("tau2_retail", "tau2_airline", "tau2_telecom", "tau2_mock", "tau2_banking_knowledge"), name
        assert VALID_CASE.match(case), name
        assert cls.name == name
    for domain in ("tau2_retail", "tau2_airline", "tau2_telecom"):
        ids = [cls.tau2_id for cls in _of_domain(tau2, domain).values()]
        assert len(ids) == len(set(ids)), f"{domain}: two scenarios share a tau2_id"
    assert list(scenarios) == sorted(scenarios), "all_scenarios must be sorted (xdist needs one order)"


def test_tau2_id_is_kept_and_names_derive_from_it(full: dict[str, type]) -> None:
    for domain, folder in (("tau2_retail", "retail"), ("tau2_airline", "airline"), ("tau2_telecom", "telecom")):
        tasks = json.loads((DATA_DIR / "tau2" / "domains" / folder / "tasks.json").read_text("utf-8"))
        task_ids = {str(t["id"]) for t in tasks}
        for name, cls in _of_domain(full, domain).items():
            assert cls.tau2_id in task_ids, name
            expected_case = cls.tau2_id if folder != "telecom" else tau2_sources.slug(cls.tau2_id)
            assert name == f"{domain}__{expected_case}"


def test_telecom_slug_example() -> None:
    upstream_id = "[mobile_data_issue]data_usage_exceeded|user_abroad_roaming_enabled_off[PERSONA:Easy]"
    assert (
        tau2_sources.slug(upstream_id)
        == "mobile_data_issue_data_usage_exceeded_user_abroad_roaming_enabled_off_persona_easy"
    )


def test_names_are_stable_across_calls_and_regeneration(
    tmp_path: Path, base: dict[str, type], monkeypatch: pytest.MonkeyPatch
) -> None:
    again = all_scenarios(_settings(tmp_path))
    assert list(again) == list(base)
    assert all(again[name] is base[name] for name in base), "the generated classes are cached per data root"
    # Regenerating from scratch (a new process) gives the same name -> task mapping.
    monkeypatch.setattr(tau2_sources, "_GENERATED", {})
    fresh = all_scenarios(_settings(tmp_path))
    assert {n: getattr(c, "tau2_id", None) for n, c in fresh.items()} == {
        n: getattr(c, "tau2_id", None) for n, c in base.items()
    }


def test_split_markers(base: dict[str, type]) -> None:
    retail = _of_domain(base, "tau2_retail")
    assert {cls.tau2_id for cls in retail.values() if "tau2_split_test" in cls.tags} == RETAIL_TEST_IDS
    assert all(("tau2_split_train" in cls.tags) != (cls.tau2_id in RETAIL_TEST_IDS) for cls in retail.values())
    airline = _of_domain(base, "tau2_airline")
    assert {cls.tau2_id for cls in airline.values() if "tau2_split_test" in cls.tags} == AIRLINE_TEST_IDS
    telecom = _of_domain(base, "tau2_telecom")
    assert sum("tau2_split_test" in cls.tags for cls in telecom.values()) == 40
    assert sum("tau2_split_train" in cls.tags for cls in telecom.values()) == 74
    assert not any("tau2_telecom_full" in cls.tags for cls in telecom.values())


def test_generated_classes_subclass_their_domain_base(base: dict[str, type]) -> None:
    from pytest_tau2.domains.tau2_airline.scenario import Tau2AirlineBaseScenario
    from pytest_tau2.domains.tau2_retail.scenario import Tau2RetailBaseScenario
    from pytest_tau2.domains.tau2_telecom.scenario import Tau2TelecomBaseScenario

    for domain, parent in (
        ("tau2_retail", Tau2RetailBaseScenario),
        ("tau2_airline", Tau2AirlineBaseScenario),
        ("tau2_telecom", Tau2TelecomBaseScenario),
    ):
        assert all(issubclass(cls, parent) for cls in _of_domain(base, domain).values())


def test_on_pinned_data_the_sources_vouch_for_signals_that_do_resolve(tmp_path: Path, full: dict[str, type]) -> None:
    """What collection no longer resolves per run (it parsed tasks.json for it) is resolved here, once."""
    settings = _settings(tmp_path, sections={"telecom_tasks": "full"})
    tau2 = {name: cls for name, cls in full.items() if name.startswith("tau2_")}
    assert len(tau2) == 114 + 50 + 2285 + 10 + 97
    for name, cls in tau2.items():
        assert signals_vouched_for(cls), name
        check_success_signals(cls().bind(settings))  # raises ScenarioDefinitionError naming the class otherwise
    assert signal_errors(list(tau2), tau2, settings) == {}
    assert not signals_vouched_for(type("Sub", (tau2["tau2_retail__1"],), {"name": "tau2_retail__sub"}))


def test_on_unpinned_data_collection_resolves_signals_and_names_a_missing_task(tmp_path: Path) -> None:
    root = tmp_path / "data"
    for relative in DOMAIN_FILES["retail"]:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DATA_DIR / relative, root / relative)
    tasks_file = root / "tau2" / "domains" / "retail" / "tasks.json"
    tasks_file.write_text(json.dumps([t for t in json.loads(tasks_file.read_text("utf-8")) if t["id"] != "7"]))
    settings = Settings(data_dir=str(root), results_dir=str(tmp_path / "out"), allow_unpinned_data=True)
    classes = {cls.name: cls for cls in tau2_sources.generate(_retail_base(), "tau2_retail", settings)}
    assert not any(signals_vouched_for(cls) for cls in classes.values())
    errors = signal_errors(list(classes), classes, settings)
    assert list(errors) == ["tau2_retail__7"]
    assert "no task with id '7' in the retail tasks.json" in str(errors["tau2_retail__7"])


def _retail_base() -> type[Tau2BaseScenario]:
    from pytest_tau2.domains.tau2_retail.scenario import Tau2RetailBaseScenario

    return Tau2RetailBaseScenario
