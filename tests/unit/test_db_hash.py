"""Canonical DB hashing, the copy-on-write working DB (``fresh_db``/``CowDict``) and the DB diff."""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from pytest_tau2.environment import canonical
from pytest_tau2.environment.db import (
    CowDict,
    canonical_json,
    copy_db,
    db_diff,
    db_hash,
    fresh_db,
    peek,
    peek_items,
    peek_values,
)


def reference_hash(db: Any) -> str:
    """The documented recipe, spelled out independently of the implementation."""
    return hashlib.sha256(json.dumps(db, sort_keys=True, default=str).encode()).hexdigest()


def pristine() -> dict[str, Any]:
    """A small DB with the shapes real domains have: entity collections, lists, scalars."""
    return {
        "users": {
            "u1": {"name": "Ada", "orders": ["o1"], "address": {"city": "Austin", "zip": "78701"}},
            "u2": {"name": "Bo", "orders": [], "address": {"city": "Boston", "zip": "02108"}},
        },
        "orders": {
            "o1": {"user": "u1", "items": [{"sku": "A", "price": 9.99}], "status": "pending", "total": 9.99},
        },
        "menu": [{"name": "Cola", "price": 1.99}],
        "version": 3,
        "settings": {"currency": "USD", "tax": 0.0},
    }


# ---- canonical JSON and hash --------------------------------------------------------------------


def test_hash_is_sha256_of_sorted_json_with_default_separators() -> None:
    db = {"b": [1, 2], "a": {"y": 1.5, "x": None}}
    assert canonical_json(db) == '{"a": {"x": null, "y": 1.5}, "b": [1, 2]}'
    assert db_hash(db) == hashlib.sha256(canonical_json(db).encode()).hexdigest()
    assert db_hash(db) == reference_hash(db)


def test_key_order_does_not_change_the_hash() -> None:
    assert db_hash({"a": 1, "b": {"c": 2, "d": 3}}) == db_hash({"b": {"d": 3, "c": 2}, "a": 1})


def test_list_order_changes_the_hash() -> None:
    assert db_hash({"a": [1, 2]}) != db_hash({"a": [2, 1]})


def test_int_and_float_zero_hash_differently() -> None:
    assert db_hash({"credit": 0}) != db_hash({"credit": 0.0})


def test_non_json_values_hash_through_str() -> None:
    db = {"date": dt.date(2025, 2, 25)}
    assert canonical_json(db) == '{"date": "2025-02-25"}'
    assert db_hash(db) == reference_hash(db)


def test_non_ascii_text_is_escaped_like_json_dumps() -> None:
    db = {"name": "Zoë", "city": "Köln"}
    assert "\\u00eb" in canonical_json(db)
    assert db_hash(db) == reference_hash(db)


def test_hash_of_a_plain_db_is_stable_across_copies() -> None:
    assert db_hash(pristine()) == db_hash(copy_db(pristine()))


# ---- copy_db ----------------------------------------------------------------------------------------


def test_copy_db_is_deep() -> None:
    original = pristine()
    copied = copy_db(original)
    copied["users"]["u1"]["address"]["city"] = "Dallas"
    copied["menu"].append({"name": "Tea"})
    assert original == pristine()
    assert copied != original


# ---- fresh_db: the pristine DB is never touched -------------------------------------------------------


def test_fresh_db_wraps_entity_collections_and_copies_the_rest() -> None:
    working = fresh_db(pristine())
    assert isinstance(working["users"], CowDict)
    assert isinstance(working["orders"], CowDict)
    assert type(working["menu"]) is list
    assert type(working["settings"]) is dict  # values are not all dicts: deep-copied, not wrapped
    assert working == pristine()


def test_fresh_db_of_a_non_dict_is_a_deep_copy() -> None:
    original = [{"a": [1]}]
    copied = fresh_db(original)
    copied[0]["a"].append(2)
    assert original == [{"a": [1]}]


MUTATIONS: dict[str, Callable[[dict[str, Any]], None]] = {
    "nested field via []": lambda db: db["users"]["u1"]["address"].__setitem__("city", "Dallas"),
    "nested list append": lambda db: db["users"]["u1"]["orders"].append("o2"),
    "nested list of dicts": lambda db: db["orders"]["o1"]["items"][0].__setitem__("price", 8.99),
    "via get()": lambda db: db["users"].get("u2")["orders"].append("o9"),
    "via values()": lambda db: [u.__setitem__("name", u["name"].upper()) for u in db["users"].values()],
    "via items()": lambda db: [o.__setitem__("status", "cancelled") for _, o in db["orders"].items()],
    "via setdefault() of an existing key": lambda db: db["users"].setdefault("u1", {}).__setitem__("name", "X"),
    "add an entity": lambda db: db["orders"].__setitem__("o2", {"user": "u2", "items": [], "total": 0}),
    "add then mutate an entity": lambda db: (
        db["orders"].__setitem__("o2", {"items": []}),
        db["orders"]["o2"]["items"].append(1),
    ),
    "setdefault() of a new key": lambda db: db["orders"].setdefault("o3", {"items": []})["items"].append(2),
    "remove an entity with del": lambda db: db["users"].__delitem__("u2"),
    "remove an entity with pop": lambda db: db["orders"].pop("o1")["items"].clear(),
    "remove, then re-add under the same key": lambda db: (
        db["users"].pop("u1"),
        db["users"].__setitem__("u1", {"name": "New"}),
    ),
    "replace a whole collection": lambda db: db.__setitem__("orders", {}),
    "top-level list": lambda db: db["menu"][0].__setitem__("price", 2.49),
    "top-level scalar": lambda db: db.__setitem__("version", 4),
    "update() with new and existing keys": lambda db: db["users"].update({"u3": {"name": "Cy"}}, u2={"name": "B"}),
    "|= on a collection": lambda db: db["users"].__ior__({"u1": {"name": "Or"}}),
    "clear() a collection": lambda db: db["orders"].clear(),
    "clear() then add": lambda db: (db["users"].clear(), db["users"].__setitem__("u9", {"name": "Z"})),
    "popitem()": lambda db: db["users"].popitem(),
    "new top-level key": lambda db: db.__setitem__("audit", [{"event": "x"}]),
    "int becomes float": lambda db: db["users"]["u1"].__setitem__("credit", 0.0),
}


@pytest.mark.parametrize("mutate", MUTATIONS.values(), ids=list(MUTATIONS))
def test_mutation_through_a_working_copy_never_touches_the_pristine_db(
    mutate: Callable[[dict[str, Any]], None],
) -> None:
    original = pristine()
    working = fresh_db(original)
    mutate(working)
    assert original == pristine()
    assert working != pristine()


@pytest.mark.parametrize("mutate", MUTATIONS.values(), ids=list(MUTATIONS))
def test_working_copy_hash_equals_the_plain_json_hash_before_and_after_mutation(
    mutate: Callable[[dict[str, Any]], None],
) -> None:
    working = fresh_db(pristine())
    assert db_hash(working) == reference_hash(working) == reference_hash(pristine())
    mutate(working)
    assert db_hash(working) == reference_hash(working)
    # The same values as a plain dict (no copy-on-write) hash the same.
    assert db_hash(working) == db_hash(json.loads(json.dumps(working)))


@pytest.mark.parametrize("mutate", MUTATIONS.values(), ids=list(MUTATIONS))
def test_equality_and_json_dump_see_the_mutated_values(mutate: Callable[[dict[str, Any]], None]) -> None:
    expected = pristine()
    mutate(expected)  # the same mutation on a plain dict
    working = fresh_db(pristine())
    mutate(working)
    assert working == expected
    assert json.loads(json.dumps(working)) == json.loads(json.dumps(expected))
    assert json.loads(json.dumps(working, indent=2, sort_keys=True)) == expected


def test_hash_follows_repeated_mutations_of_the_same_entity() -> None:
    working = fresh_db(pristine())
    hashes = set()
    for total in (1, 2, 3):
        working["orders"]["o1"]["total"] = total
        assert db_hash(working) == reference_hash(working)
        hashes.add(db_hash(working))
    assert len(hashes) == 3


def test_hash_after_undoing_a_mutation_equals_the_original_hash() -> None:
    working = fresh_db(pristine())
    before = db_hash(working)
    working["users"]["u1"]["name"] = "Changed"
    assert db_hash(working) != before
    working["users"]["u1"]["name"] = "Ada"
    assert db_hash(working) == before


def test_many_working_copies_of_one_pristine_db_are_independent() -> None:
    original = pristine()
    first, second = fresh_db(original), fresh_db(original)
    first["users"]["u1"]["name"] = "First"
    assert second["users"]["u1"]["name"] == "Ada"
    assert db_hash(second) == reference_hash(original)
    assert db_hash(first) != db_hash(second)


def test_reading_an_entity_hands_out_a_private_copy() -> None:
    original = pristine()
    working = fresh_db(original)
    assert working["users"]["u1"] is not original["users"]["u1"]
    assert working["users"]["u1"] is working["users"]["u1"]  # copied once, then owned


def test_pop_with_a_default_and_a_missing_key() -> None:
    working = fresh_db(pristine())
    assert working["users"].pop("nobody", None) is None
    assert working["users"].pop("nobody", 0) == 0
    with pytest.raises(KeyError):
        working["users"].pop("nobody")


def test_copy_module_and_pickle_give_independent_plain_dicts() -> None:
    original = pristine()
    working = fresh_db(original)
    for clone in (
        copy.copy(working["users"]),
        copy.deepcopy(working["users"]),
        pickle.loads(pickle.dumps(working["users"])),
    ):
        assert type(clone) is dict
        clone["u1"]["name"] = "Clone"
    assert original == pristine()


def test_copy_method_of_a_collection_does_not_leak_into_the_pristine_db() -> None:
    original = pristine()
    fresh_db(original)["users"].copy()["u1"]["name"] = "Leaked"
    assert original == pristine()


def test_popitem_does_not_leak_into_the_pristine_db() -> None:
    original = pristine()
    _, user = fresh_db(original)["users"].popitem()
    user["name"] = "Leaked"
    assert original == pristine()


def test_non_string_keys_hash_like_json_dumps() -> None:
    db = {"tables": {1: {"seats": 4}, 2: {"seats": 2}}}
    assert db_hash(fresh_db(db)) == reference_hash(db)


def test_canonical_json_of_a_working_copy_is_byte_identical_to_json_dumps() -> None:
    working = fresh_db(pristine())
    assert canonical_json(working) == json.dumps(pristine(), sort_keys=True, default=str)
    working["orders"]["o1"]["status"] = "shipped"
    working["users"]["u3"] = {"name": "Zoë", "orders": []}
    del working["users"]["u2"]
    assert canonical_json(working) == json.dumps(working, sort_keys=True, default=str)


def test_same_changes_on_two_working_copies_give_the_same_hash() -> None:
    original = pristine()
    gold, agent = fresh_db(original), fresh_db(original)
    gold["orders"]["o1"]["status"] = "cancelled"
    agent["users"]["u2"]["name"]  # read (a private copy), not changed
    agent["orders"]["o1"]["status"] = "cancelled"
    assert db_hash(agent) == db_hash(gold) == reference_hash(agent)
    agent["orders"]["o1"]["total"] = 10  # int where the gold has a float: a different text
    assert db_hash(agent) != db_hash(gold)
    assert db_hash(agent) == reference_hash(agent)


def test_an_entity_read_but_unchanged_keeps_the_pristine_hash() -> None:
    original = pristine()
    working = fresh_db(original)
    for user in working["users"].values():
        assert user["name"]
    assert db_hash(working) == reference_hash(original)


def test_changing_the_pristine_value_types_is_seen_in_an_entity_copy() -> None:
    working = fresh_db(pristine())
    working["orders"]["o1"]["total"] = 9.99  # the same value and type: no change
    assert db_hash(working) == reference_hash(pristine())
    working["users"]["u1"]["orders"] = ("o1",)  # a tuple dumps as a list: no change either
    assert db_hash(working) == reference_hash(pristine())


def test_storing_behind_the_collection_s_back_falls_back_to_json_dumps() -> None:
    working = fresh_db(pristine())
    dict.__setitem__(working["users"], "u3", {"name": "Sneaky"})  # bypasses the tracking
    assert db_hash(working) == reference_hash(working)


def test_non_string_keys_in_a_working_collection_hash_like_json_dumps() -> None:
    working = fresh_db({"tables": {1: {"seats": 4}, 2: {"seats": 2}}, "rooms": {"a": {"size": 1}}})
    working["tables"][2]["seats"] = 3
    working["rooms"]["a"]["size"] = 2
    assert db_hash(working) == reference_hash(working)


def big_pristine() -> dict[str, Any]:
    return {
        "orders": {f"o{i:03}": {"total": i, "items": [i, i + 0.5], "note": "Zoë"} for i in range(200)},
        "users": {f"u{i:02}": {"name": f"N{i}", "orders": [f"o{i:03}"]} for i in range(50)},
        "version": 1,
    }


CHANGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "first entity": lambda db: db["orders"]["o000"].__setitem__("total", -1),
    "middle entity": lambda db: db["orders"]["o117"]["items"].append(3),
    "last entity of the first collection": lambda db: db["orders"]["o199"].__setitem__("total", 0.0),
    "last entity of the DB": lambda db: db["users"]["u49"].__setitem__("name", "Z"),
    "two collections": lambda db: (db["orders"]["o050"].clear(), db["users"]["u10"].clear()),
    "several entities, one longer": lambda db: [db["orders"][f"o{i:03}"].__setitem__("x" * i, i) for i in (3, 90, 150)],
    "removed entity": lambda db: db["orders"].__delitem__("o120"),
    "added entity": lambda db: db["users"].__setitem__("u25b", {"name": "New"}),
    "nothing (read only)": lambda db: db["orders"]["o010"],
}


@pytest.mark.parametrize("step", [1, 7, 4096, 10**7])
@pytest.mark.parametrize("change", CHANGES.values(), ids=list(CHANGES))
def test_hash_from_checkpoints_equals_json_dumps_wherever_the_change_is(
    monkeypatch: pytest.MonkeyPatch, step: int, change: Callable[[dict[str, Any]], None]
) -> None:
    monkeypatch.setattr(canonical, "CHECKPOINT_BYTES", step)
    original = big_pristine()  # a new pristine DB: its checkpoints are built with this step
    working = fresh_db(original)
    change(working)
    assert db_hash(working) == reference_hash(working)
    assert canonical_json(working) == json.dumps(working, sort_keys=True, default=str)
    assert db_hash(fresh_db(original)) == reference_hash(original)


def test_threads_hashing_working_copies_of_one_new_pristine_db_agree() -> None:
    from concurrent.futures import ThreadPoolExecutor

    original = big_pristine()  # caches are built by whichever thread comes first

    def changed_hash(index: int) -> tuple[str, str]:
        working = fresh_db(original)
        working["orders"][f"o{index:03}"]["total"] = -index
        return db_hash(working), reference_hash(working)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(changed_hash, range(0, 200, 5)))
    assert all(ours == reference for ours, reference in results)


# ---- peek: reading without a private copy --------------------------------------------------------------


def test_peek_reads_the_stored_entity_without_copying_it() -> None:
    original = pristine()
    working = fresh_db(original)
    assert peek(working["users"], "u1") is original["users"]["u1"]
    assert [user for _, user in peek_items(working["users"])] == list(original["users"].values())
    assert all(a is b for a, b in zip(peek_values(working["users"]), original["users"].values(), strict=True))
    assert db_hash(working) == reference_hash(original)
    working["users"]["u1"]["name"] = "Changed"  # a private copy now; peek sees it
    assert peek(working["users"], "u1")["name"] == "Changed"
    assert original["users"]["u1"]["name"] == "Ada"


def test_peek_works_on_plain_mappings() -> None:
    plain = {"u1": {"name": "Ada"}}
    assert peek(plain, "u1") is plain["u1"]
    assert list(peek_items(plain)) == list(plain.items())
    assert list(peek_values(plain)) == list(plain.values())


# ---- diff --------------------------------------------------------------------------------------------
# The runner diffs two working copies (the gold replay's and the conversation's), both made by fresh_db.


def working(mutate: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    db = fresh_db(pristine())
    if mutate is not None:
        mutate(db)
    return db


def test_diff_of_equal_dbs() -> None:
    assert db_diff(working(), working()) == "no difference"
    assert db_diff(pristine(), pristine()) == "no difference"


def test_diff_names_the_path_and_both_values() -> None:
    actual = working(lambda db: db["orders"]["o1"].__setitem__("status", "cancelled"))
    text = db_diff(working(), actual)
    assert text == "values_changed: root['orders']['o1']['status']: expected 'pending' but found 'cancelled'"


def test_diff_reports_int_versus_float_as_a_type_change() -> None:
    text = db_diff({"credit": 0}, {"credit": 0.0})
    assert text.startswith("type_changes: root['credit']: expected 0 but found 0.0")
    assert "int -> float" in text


def test_diff_reports_added_and_removed_entities_and_list_reordering() -> None:
    def change(db: dict[str, Any]) -> None:
        del db["users"]["u2"]
        db["orders"]["o2"] = {"user": "u1"}
        db["users"]["u1"]["orders"] = ["o2", "o1"]

    text = db_diff(working(), working(change))
    assert "dictionary_item_removed: root['users']['u2']" in text
    assert "dictionary_item_added: root['orders']['o2']" in text
    assert "root['users']['u1']['orders'][0]" in text


def test_diff_of_a_working_copy_against_a_plain_dict_is_path_level() -> None:
    actual = working(lambda db: db["orders"]["o1"].__setitem__("status", "cancelled"))
    text = db_diff(pristine(), actual)
    assert text == "values_changed: root['orders']['o1']['status']: expected 'pending' but found 'cancelled'"


def test_diff_of_two_working_copies_takes_no_private_copy_of_an_untouched_entity() -> None:
    """The diff of a failed DB check runs on the event loop all conversations share: it must not
    read a collection the way ``json.dumps`` reads a dict subclass (``items()``, a copy of every
    entity), only compare the entities a run changed."""
    users = {f"u{i}": {"name": f"user {i}", "orders": [f"o{i}"]} for i in range(500)}
    base = {"users": users, "orders": {"o1": {"status": "pending"}}, "version": 3}
    expected, actual = fresh_db(base), fresh_db(base)
    actual["orders"]["o1"]["status"] = "cancelled"
    text = db_diff(expected, actual)
    assert text == "values_changed: root['orders']['o1']['status']: expected 'pending' but found 'cancelled'"
    for db in (expected, actual):
        assert all(peek(db["users"], key) is users[key] for key in users), "an untouched entity was copied"
    assert db_diff(expected, fresh_db(base)) == "no difference"
    one_changed_each = fresh_db(base)
    one_changed_each["users"]["u7"]["name"] = "Seven"
    assert db_diff(actual, one_changed_each) == (
        "values_changed: root['orders']['o1']['status']: expected 'cancelled' but found 'pending'\n"
        "values_changed: root['users']['u7']['name']: expected 'user 7' but found 'Seven'"
    )


def test_diff_keeps_full_paths_below_pruned_levels() -> None:
    expected = {"users": {"u1": {"address": {"city": "Austin", "lines": ["1 Main St"]}}, "u2": {"name": "Bo"}}}
    actual = copy_db(expected)
    actual["users"]["u1"]["address"]["lines"].append("Apt 2")
    assert db_diff(expected, actual) == "iterable_item_added: root['users']['u1']['address']['lines'][1]: 'Apt 2'"


def test_diff_is_truncated_with_a_count_of_hidden_lines() -> None:
    expected = {"rows": {str(i): {"v": i} for i in range(100)}}
    actual = {"rows": {str(i): {"v": i + 1} for i in range(100)}}
    lines = db_diff(expected, actual, max_lines=10).splitlines()
    assert len(lines) == 11
    assert lines[-1] == "... and 90 more differences"
