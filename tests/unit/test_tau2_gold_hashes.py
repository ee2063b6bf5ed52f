"""Gold replay through the runner reproduces upstream's published hashes (reference section 2.3).

``runner.gold_replay`` is what every scenario uses for its expected DB, so these hashes pin
the whole chain: data loading, the tools, the replay order, and the canonical hash.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import pytest_tau2.domains.tau2_sources as tau2_sources
from pytest_tau2.environment.db import db_hash
from pytest_tau2.run import seeding as runner
from pytest_tau2.scenario.registry import all_scenarios
from pytest_tau2.settings import Settings

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
if not (DATA_DIR / "tau2" / "domains").is_dir():
    pytest.skip(f"no tau2 data under {DATA_DIR} (set TAU2_DATA_DIR)", allow_module_level=True)

RETAIL_INITIAL = "b25c9cb211f5efcaee5dd646054a73c4a9f43f4f5acc32c10713cd9f9ac20e9c"
AIRLINE_INITIAL = "124e39a664b56402bcd09cb8a6a9cece6acb8462337c969799d5658e3250f263"
TELECOM_INITIAL = {
    "agent": "304cf5ef059852e117ea801ab9a5efc24c9713ec887679dc2e30acceb4b6742d",
    "user": "e1f3a8637388808221228ff3f87294444e6b64caf721f5eb243a85d0a9380b28",
}
RETAIL_GOLD = {
    "0": "a109be174767fde0ebb50fe3be37cdb2f1ce017fefd7bd29ea3e4d38bd3ac25a",
    "1": "eab1dde2ca84a093a334a25db9258213e882d849bb487a966d69c056a67c2846",
    "5": "9f1e45fc84a6995edead46216e4f7b07c27c4511524aedb38dc898ab9c52e866",
    "20": "d43fdfd87998ef6d749f84282c5211231d0877a98ae6ade7864ab2790ed0120f",
    "21": "079ef03ab35d99a940e5aded4318e11a97edf61ae6738ffc347057ab43812819",
    "64": "2e9d92ee0d0cdd9e1eb41bd72d3390e1bc442a9f8c1c878c7b542668ebf7da96",
    "105": RETAIL_INITIAL,
    "113": "4337c9b2595520e27dba1d78005bfae6735706c7f819d183ee530326f7ad61a3",
}
AIRLINE_GOLD = {
    "0": AIRLINE_INITIAL,
    "1": AIRLINE_INITIAL,
    "4": AIRLINE_INITIAL,
    "7": "0087f8266f0f2fc2091ee4fabd9c137ed8b6c8751df09ec4f650756e4ae0ccf7",
    "8": "00766aa3e0341b497a623f93983c8d951b8d48ad541a15123a1e2b902e644a82",
    "14": "b4ea8effd45eee77a90b96a2b298a5dbe4e7d7fff9452c952f481f9a447facdf",
    "23": "b46d1bed5ba2b9865240d1073bc143e93d59be2c363ed26e1a45523e929e6e11",
    "33": "735ba8f15206b7fbf570fe68bd92ea75d7dd5ea04c87d5a53296d70d103f7b74",
}
# Upstream's gold environment never runs the telecom sync (reference 4.2), so these are the
# hashes of an *unsynced* replay.
TELECOM_UPSTREAM_GOLD = {
    "[mobile_data_issue]data_usage_exceeded|user_abroad_roaming_enabled_off[PERSONA:Easy]": {
        "agent": "ed58804f463f2bd376b6b4ede4df00ac7213ddde567c29c2db998112193af23d",
        "user": "335858858a5676fb467e77d8cedd121b56d987851e3cd45cc4dd918d986214c3",
    },
    "[service_issue]airplane_mode_on|overdue_bill_suspension[PERSONA:None]": {
        "agent": "696ff759d03c2678069db9d64e7965eb5a215ff23ba8d88e8d1a5fbc637d98b4",
        "user": "f27c4a613fd74fd2a9695894dd0e994dbfac1d1188b6174b2b079925215863f4",
    },
}


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(data_dir=str(DATA_DIR), results_dir=str(tmp_path_factory.mktemp("results")))


@pytest.fixture(scope="module")
def scenarios(settings: Settings) -> dict[str, type]:
    return all_scenarios(settings)


def _scenario(scenarios: dict[str, type], name: str, settings: Settings) -> Any:
    return scenarios[name]().bind(settings)


def _telecom_name(task_id: str) -> str:
    return "tau2_telecom__" + tau2_sources.slug(task_id)


@pytest.mark.parametrize(("task_id", "expected"), [(k, RETAIL_GOLD[k]) for k in sorted(RETAIL_GOLD, key=int)])
def test_retail_gold_hash(scenarios: dict[str, type], settings: Settings, task_id: str, expected: str) -> None:
    gold = runner.gold_replay(_scenario(scenarios, f"tau2_retail__{task_id}", settings), settings)
    assert gold is not None
    assert gold.hashes == {"agent": expected}


@pytest.mark.parametrize(("task_id", "expected"), [(k, AIRLINE_GOLD[k]) for k in sorted(AIRLINE_GOLD, key=int)])
def test_airline_gold_hash(scenarios: dict[str, type], settings: Settings, task_id: str, expected: str) -> None:
    gold = runner.gold_replay(_scenario(scenarios, f"tau2_airline__{task_id}", settings), settings)
    assert gold is not None
    assert gold.hashes == {"agent": expected}
    assert gold.failures == [], "no airline gold action raises at the pin"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("tau2_retail__0", {"agent": RETAIL_INITIAL}),
        ("tau2_airline__0", {"agent": AIRLINE_INITIAL}),
        (_telecom_name(next(iter(TELECOM_UPSTREAM_GOLD))), TELECOM_INITIAL),
    ],
)
def test_seeded_state_hashes_to_upstream_initial_hash(
    scenarios: dict[str, type], settings: Settings, name: str, expected: dict[str, str]
) -> None:
    states = runner.seed_states(_scenario(scenarios, name, settings), settings)
    assert {side: db_hash(state["db"]) for side, state in states.items()} == expected


@pytest.mark.parametrize("task_id", ["24", "57"])
def test_tasks_without_actions_expect_the_seeded_db(
    scenarios: dict[str, type], settings: Settings, task_id: str
) -> None:
    scenario = _scenario(scenarios, f"tau2_retail__{task_id}", settings)
    assert scenario.gold_actions() == []
    gold = runner.gold_replay(scenario, settings)
    assert gold is not None, "actions: [] still gets a DB check (it is not None)"
    assert gold.hashes == {"agent": RETAIL_INITIAL}
    assert gold.actions == [] and gold.failures == []


@pytest.mark.parametrize(
    ("task_id", "index", "name", "message"),
    [
        ("64", 6, "exchange_delivered_order_items", "Non-delivered order cannot be exchanged"),
        ("105", 0, "exchange_delivered_order_items", "Insufficient gift card balance to pay for the price difference"),
    ],
)
def test_failing_gold_writes_are_kept_as_failed(
    scenarios: dict[str, type], settings: Settings, task_id: str, index: int, name: str, message: str
) -> None:
    gold = runner.gold_replay(_scenario(scenarios, f"tau2_retail__{task_id}", settings), settings)
    assert gold is not None
    assert [(f["index"], f["name"]) for f in gold.failures] == [(index, name)]
    assert message in gold.failures[0]["error"]
    assert name not in [a["name"] for a in gold.actions], "a failed write is not a recorded action"


def test_read_only_gold_failures_are_recorded_too(scenarios: dict[str, type], settings: Settings) -> None:
    gold = runner.gold_replay(_scenario(scenarios, "tau2_retail__67", settings), settings)
    assert gold is not None
    assert [(f["index"], f["name"]) for f in gold.failures] == [
        (0, "find_user_id_by_name_zip"),
        (1, "find_user_id_by_name_zip"),
    ]
    assert all("User not found" in f["error"] for f in gold.failures)


def test_gold_replay_is_cached_per_process(scenarios: dict[str, type], settings: Settings) -> None:
    first = runner.gold_replay(_scenario(scenarios, "tau2_airline__7", settings), settings)
    second = runner.gold_replay(_scenario(scenarios, "tau2_airline__7", settings), settings)
    assert first is second


@pytest.mark.parametrize("task_id", sorted(TELECOM_UPSTREAM_GOLD))
def test_telecom_unsynced_replay_reproduces_upstream_gold(
    scenarios: dict[str, type], settings: Settings, task_id: str
) -> None:
    """Our tools, replayed the way upstream's gold env does it (no sync), give upstream's hashes."""
    scenario = _scenario(scenarios, _telecom_name(task_id), settings)
    states = runner.seed_states(scenario, settings)
    runner.apply_initialization(scenario, states)
    envs = runner.build_environments(scenario, states)
    for env in envs.values():
        env.after_success = None
    for action in scenario.gold_actions():
        result = envs[runner.SIDE_NAMES[action["requestor"]]].call(action["name"], action["arguments"])
        assert not result.error, result.content
    assert {side: db_hash(state["db"]) for side, state in states.items()} == TELECOM_UPSTREAM_GOLD[task_id]


def test_telecom_gold_replay_syncs_so_its_hash_differs_from_upstream(
    scenarios: dict[str, type], settings: Settings
) -> None:
    """Our gold replay syncs after each call (as a live run does); upstream's gold does not."""
    task_id = "[service_issue]airplane_mode_on|overdue_bill_suspension[PERSONA:None]"
    gold = runner.gold_replay(_scenario(scenarios, _telecom_name(task_id), settings), settings)
    assert gold is not None
    assert gold.failures == []
    assert set(gold.hashes) == {"agent", "user"}
    assert gold.hashes != TELECOM_UPSTREAM_GOLD[task_id]


def _write_indices(scenario: Any) -> list[int]:
    from pytest_tau2.environment.tools import resolve_tool

    tools = [resolve_tool(scenario.namespace, name) for name in scenario.agent_resources.tools]
    writes = {tool.name for tool in tools if tool.mutates_state}
    return [i for i, action in enumerate(scenario.gold_actions() or []) if action["name"] in writes]


@pytest.mark.parametrize(
    ("domain", "with_writes", "unchanged"), [("tau2_retail", 104, ["105"]), ("tau2_airline", 26, [])]
)
def test_gold_minus_last_write_changes_the_expected_db(
    scenarios: dict[str, type], settings: Settings, domain: str, with_writes: int, unchanged: list[str]
) -> None:
    """Upstream's own perturbation check (reference 4.8): dropping the last write is always caught,
    except in retail 105 whose only write fails in gold anyway."""
    count, same = 0, []
    for name, cls in scenarios.items():
        if not name.startswith(f"{domain}__"):
            continue
        scenario = cls().bind(settings)
        writes = _write_indices(scenario)
        if not writes:
            continue
        count += 1
        gold = scenario.gold_actions()
        cut = gold[: writes[-1]] + gold[writes[-1] + 1 :]
        perturbed = type(f"{cls.__name__}_without_last_write", (cls,), {"gold_actions": lambda self, cut=cut: cut})
        expected, changed = (
            runner.gold_replay(scenario, settings),
            runner.gold_replay(perturbed().bind(settings), settings),
        )
        assert expected is not None and changed is not None
        if changed.hashes == expected.hashes:
            same.append(scenario.tau2_id)
    assert count == with_writes
    assert same == unchanged


@pytest.mark.parametrize("domain", ["tau2_retail", "tau2_airline"])
def test_every_gold_hash_equals_json_dumps_of_the_final_db(
    scenarios: dict[str, type], settings: Settings, domain: str
) -> None:
    """The copy-on-write hash (cached pristine text, remembered per change set) is the documented
    recipe applied to the whole final DB, for every task's gold replay."""
    import hashlib
    import json

    names = sorted(name for name in scenarios if name.startswith(f"{domain}__"))
    assert len(names) == {"tau2_retail": 114, "tau2_airline": 50}[domain]
    for name in names:
        scenario = _scenario(scenarios, name, settings)
        gold = runner.gold_replay(scenario, settings)
        assert gold is not None
        final = runner.gold_dbs(scenario, settings)["agent"]
        # dict(collection) reads the stored entities as they are (json.dumps of a working
        # collection would call its items() and take a private copy of every entity: slow).
        snapshot = {key: dict(value) if isinstance(value, dict) else value for key, value in final.items()}
        plain = hashlib.sha256(json.dumps(snapshot, sort_keys=True, default=str).encode()).hexdigest()
        assert gold.hashes == {"agent": plain}, name
        assert db_hash(final) == plain, name
