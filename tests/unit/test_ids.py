"""Tolerant id lookup: the rules of ``ids.py`` and how the retail tools use them.

Ids spelled with other casing, spaces, hyphens, underscores or a missing/extra ``#`` must find
the stored record; a different character, a shorter zip or an id of the wrong kind must not.
Whatever the spelling, the DB ends in exactly the state the canonical spelling gives.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.domains.tau2_retail import TOOL_CLASSES, read_db
from pytest_tau2.environment import Environment, copy_db, db_hash
from pytest_tau2.environment.ids import email_key, find_key, id_key, lookup, match_ids, same_id

# --------------------------------------------------------------------------- ids.py rules


@pytest.mark.parametrize("spelling", ["#W2611340", "w2611340", "#w 261-1340", "W_2611340", " #W2611340 ", "##W2611340"])
def test_order_id_spellings_match(spelling: str) -> None:
    assert same_id(spelling, "#W2611340")
    assert id_key(spelling) == "w2611340"


@pytest.mark.parametrize("spelling", ["#W2611341", "#W261134", "#W26113400", "#V2611340"])
def test_different_characters_never_match(spelling: str) -> None:
    assert not same_id(spelling, "#W2611340")


def test_user_id_spellings() -> None:
    for spelling in ("Noah Brown 6181", "NOAH_BROWN_6181", "noah-brown-6181", "noahbrown6181"):
        assert same_id(spelling, "noah_brown_6181")
    assert not same_id("noah_brown_6180", "noah_brown_6181")


def test_email_key_ignores_case_and_spaces_but_keeps_punctuation() -> None:
    assert email_key("  Noah.Brown7922 @Example.COM ") == "noah.brown7922@example.com"
    assert email_key("noahbrown7922@example.com") != email_key("noah.brown7922@example.com")


def test_find_key_prefers_the_exact_key_and_rejects_empty_targets() -> None:
    mapping = {"a-b": 1, "ab": 2}
    assert find_key(mapping, "ab") == "ab"
    assert find_key(mapping, "A B") == "a-b"
    assert find_key(mapping, "# -") is None
    assert lookup(mapping, "ac") is None


def test_match_ids_maps_to_stored_spellings() -> None:
    assert match_ids(["12-34", "99"], ["1234", "5678"]) == ["1234", "99"]


# --------------------------------------------------------------------------- retail lookups, real DB

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
RETAIL_DIR = DATA_DIR / "tau2" / "domains" / "retail"
NOAH = "noah_brown_6181"
NOAH_ORDER = "#W7678072"  # delivered, paid with paypal_5727330


@pytest.fixture(scope="module")
def initial_db() -> dict[str, Any]:
    if not (RETAIL_DIR / "db.json").is_file():
        pytest.skip(f"no tau2 retail data under {DATA_DIR}")
    return read_db(RETAIL_DIR / "db.json")


@pytest.fixture(scope="module")
def tasks(initial_db: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {task["id"]: task for task in json.loads((RETAIL_DIR / "tasks.json").read_text(encoding="utf-8"))}


def make_env(db: dict[str, Any]) -> Environment:
    state = {"db": db}
    return Environment("agent", state, [cls(state) for cls in TOOL_CLASSES])


@pytest.fixture(scope="module")
def reader(initial_db: dict[str, Any]) -> Environment:
    """Read-only tools on the shared DB (nothing here writes)."""
    return make_env(initial_db)


def content(env: Environment, name: str, **arguments: Any) -> str:
    return env.call(name, arguments).content


@pytest.mark.parametrize("spelling", ["w2611340", "#w 261-1340", "W2611340", "#W-2611340"])
def test_order_lookup_is_tolerant(reader: Environment, spelling: str) -> None:
    assert content(reader, "get_order_details", order_id=spelling) == content(
        reader, "get_order_details", order_id="#W2611340"
    )


@pytest.mark.parametrize("spelling", ["#W2611349", "W261134", "2611340#W1"])
def test_order_lookup_rejects_other_ids(reader: Environment, spelling: str) -> None:
    assert content(reader, "get_order_details", order_id=spelling) == "Error: Order not found"


@pytest.mark.parametrize("spelling", ["Noah Brown 6181", "NOAH_BROWN_6181", "noah-brown-6181"])
def test_user_lookup_is_tolerant(reader: Environment, spelling: str) -> None:
    assert json.loads(content(reader, "get_user_details", user_id=spelling))["user_id"] == NOAH


def test_user_lookup_rejects_one_digit_off(reader: Environment) -> None:
    assert content(reader, "get_user_details", user_id="noah_brown_6180") == "Error: User not found"


@pytest.mark.parametrize(
    "email", ["NOAH.BROWN7922@EXAMPLE.COM", "  noah.brown7922@example.com ", "Noah.Brown 7922@example.com"]
)
def test_email_lookup_is_tolerant(reader: Environment, email: str) -> None:
    assert content(reader, "find_user_id_by_email", email=email) == NOAH


def test_email_lookup_keeps_punctuation(reader: Environment) -> None:
    assert content(reader, "find_user_id_by_email", email="noahbrown7922@example.com") == "Error: User not found"


def test_name_zip_lookup_names_any_case_zip_exact(reader: Environment) -> None:
    assert content(reader, "find_user_id_by_name_zip", first_name="NOAH", last_name="brown", zip="80279") == NOAH
    for zip_code in ("8027", " 80279", "80279-0000"):
        result = content(reader, "find_user_id_by_name_zip", first_name="Noah", last_name="Brown", zip=zip_code)
        assert result == "Error: User not found"


def test_zip_prefix_never_matches() -> None:
    user = {
        "user_id": "ana_lee_1234",
        "name": {"first_name": "Ana", "last_name": "Lee"},
        "address": {"zip": "80751"},
        "email": "ana@example.com",
        "payment_methods": {},
        "orders": [],
    }
    env = make_env({"products": {}, "orders": {}, "users": {"ana_lee_1234": user}})
    assert content(env, "find_user_id_by_name_zip", first_name="Ana", last_name="Lee", zip="8075") == (
        "Error: User not found"
    )
    assert content(env, "find_user_id_by_name_zip", first_name="Ana", last_name="Lee", zip="80751") == "ana_lee_1234"


def test_product_and_item_lookups_stay_apart(reader: Environment, initial_db: dict[str, Any]) -> None:
    product_id, product = next(iter(initial_db["products"].items()))
    item_id = next(iter(product["variants"]))
    hyphenated = f"{item_id[:3]}-{item_id[3:6]} {item_id[6:]}"
    assert json.loads(content(reader, "get_item_details", item_id=hyphenated))["item_id"] == item_id
    assert (
        json.loads(content(reader, "get_product_details", product_id=f" {product_id[:5]}-{product_id[5:]}"))[
            "product_id"
        ]
        == product_id
    )
    assert content(reader, "get_item_details", item_id=product_id) == "Error: Item not found"
    assert content(reader, "get_product_details", product_id=item_id) == "Error: Product not found"
    off_by_one = item_id[:-1] + str((int(item_id[-1]) + 1) % 10)
    assert off_by_one not in {v for p in initial_db["products"].values() for v in p["variants"]}
    assert content(reader, "get_item_details", item_id=off_by_one) == "Error: Item not found"


# --------------------------------------------------------------------------- written values keep the stored form


def test_return_with_odd_spellings_writes_stored_ids(initial_db: dict[str, Any]) -> None:
    env = make_env(copy_db(initial_db))
    result = env.call(
        "return_delivered_order_items",
        {"order_id": "w 767-8072", "item_ids": [" 3557711149", "2323-972008"], "payment_method_id": "PayPal 5727330"},
    )
    assert not result.error, result.content
    order = env.db["orders"][NOAH_ORDER]
    assert order["return_items"] == ["2323972008", "3557711149"]
    assert order["return_payment_method_id"] == "paypal_5727330"


def test_exchange_with_odd_spellings_writes_stored_ids(initial_db: dict[str, Any]) -> None:
    env = make_env(copy_db(initial_db))
    order = env.db["orders"][NOAH_ORDER]
    item = order["items"][0]
    variants = initial_db["products"][item["product_id"]]["variants"]
    new_id = next(key for key, v in variants.items() if v["available"] and key != item["item_id"])
    result = env.call(
        "exchange_delivered_order_items",
        {
            "order_id": NOAH_ORDER.lower(),
            "item_ids": [item["item_id"][:4] + "_" + item["item_id"][4:]],
            "new_item_ids": [" " + new_id[:2] + "-" + new_id[2:]],
            "payment_method_id": "CREDIT CARD 7815826",
        },
    )
    assert not result.error, result.content
    assert order["exchange_items"] == [item["item_id"]]
    assert order["exchange_new_items"] == [new_id]
    assert order["exchange_payment_method_id"] == "credit_card_7815826"


# One task per write tool, the last-variant quirk tasks, a failing exchange, two cancels.
MANGLED_TASKS = ["0", "2", "3", "16", "17", "20", "21", "22", "36", "37", "40", "64", "100", "105", "113"]


def _spell_id(value: str) -> str:
    """A voice-style spelling of an id: no '#', other case, a hyphen and a space inside."""
    bare = value.lstrip("#").replace("_", " ")
    middle = len(bare) // 2
    return f" {bare[:middle].swapcase()}-{bare[middle:]}"


def mangle(arguments: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        if key in ("order_id", "user_id", "product_id", "item_id", "payment_method_id"):
            out[key] = _spell_id(value)
        elif key in ("item_ids", "new_item_ids"):
            out[key] = [_spell_id(v) for v in value]
        elif key == "email":
            out[key] = f" {value.upper()} "
        elif key in ("first_name", "last_name"):
            out[key] = value.swapcase()
        else:
            out[key] = value
    return out


def _replay(initial: dict[str, Any], actions: list[dict[str, Any]]) -> tuple[str, list[str]]:
    env = make_env(copy_db(initial))
    errors = [env.call(a["name"], a["arguments"]).content for a in actions]
    return db_hash(env.db), [e for e in errors if e.startswith("Error: ")]


@pytest.mark.parametrize("task_id", MANGLED_TASKS)
def test_mangled_ids_end_in_the_canonical_state(
    initial_db: dict[str, Any], tasks: dict[str, dict[str, Any]], task_id: str
) -> None:
    actions = tasks[task_id]["evaluation_criteria"]["actions"]
    mangled = [{"name": a["name"], "arguments": mangle(a["arguments"])} for a in actions]
    assert mangled != actions
    canonical_hash, canonical_errors = _replay(initial_db, actions)
    mangled_hash, mangled_errors = _replay(initial_db, mangled)
    assert mangled_errors == canonical_errors
    assert mangled_hash == canonical_hash
