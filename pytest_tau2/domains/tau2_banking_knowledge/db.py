"""The banking DB (one transactional DB both sides share), its queries and its record ids.

Upstream validates ``db.json`` into a pydantic model of 23 tables, each ``{"data": {id:
record}, "notes": str}``, and hashes the dump, which lists every table (an absent one as
``{"data": {}, "notes": ""}``): :func:`read_db` adds the absent ones, so
:func:`pytest_tau2.environment.db.db_hash` equals upstream's hash. The query helper and the
deterministic ids behave as upstream's (same seeds, same output text), so records the tools
write, and therefore final DB hashes, are upstream's.
"""

from __future__ import annotations

import hashlib
import json
import operator
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from pytest_tau2.data.parsing import load_json_file
from pytest_tau2.environment.jsontypes import JSONObject

TABLES = (
    "users", "accounts", "debit_cards", "referrals", "credit_card_applications",
    "user_discoverable_tools", "user_discoverable_tool_calls", "verification_history",
    "credit_card_transaction_history", "cash_back_disputes", "bank_account_transaction_history",
    "credit_card_accounts", "agent_discoverable_tools", "task_config", "human_transfer_requests",
    "transaction_disputes", "credit_card_orders", "debit_card_orders", "credit_card_closure_reasons",
    "credit_card_account_flags", "credit_limit_increase_requests", "payment_history", "debit_card_disputes",
)  # fmt: skip
"""The tables in upstream's model order."""
QUERYABLE = (
    "users", "accounts", "referrals", "credit_card_applications", "user_discoverable_tools",
    "user_discoverable_tool_calls", "agent_discoverable_tools", "task_config", "verification_history",
    "credit_card_transaction_history", "cash_back_disputes", "bank_account_transaction_history",
    "credit_card_accounts", "human_transfer_requests", "transaction_disputes", "credit_card_orders",
    "credit_card_closure_reasons", "credit_card_account_flags", "debit_cards", "debit_card_orders",
    "debit_card_disputes", "credit_limit_increase_requests", "payment_history",
)  # fmt: skip
"""The tables the query helper knows, in the order its error message lists them."""

TODAY = "11/14/2025"
"""The fixed date of every banking scenario (upstream's locked clock)."""
NOW = datetime(2025, 11, 14, 3, 40, 0)
CURRENT_TIME = "2025-11-14 03:40:00 EST"

BankDB = dict[str, JSONObject]
"""Table name -> ``{"data": {record id: record}, "notes": str}``."""


def read_db(path: str | Path) -> BankDB:
    """Parse ``db.json`` and add the tables it omits (no caching: the scenario caches)."""
    db = cast(BankDB, load_json_file(path))
    complete(db)
    return db


def complete(db: dict[str, Any]) -> None:
    unknown = [name for name in db if name not in TABLES]
    if unknown:
        raise ValueError(f"unknown banking table(s) {unknown}; known: {', '.join(TABLES)}")
    for name in TABLES:
        table = db.setdefault(name, {"data": {}, "notes": ""})
        table.setdefault("data", {})
        table.setdefault("notes", "")


def data(db: Mapping[str, Any], table: str) -> dict[str, dict[str, Any]]:
    """The records of ``table`` (a private, writable copy on a working DB). Records are free-form
    (upstream types them ``Dict[str, Any]``), hence ``Any``: the tools read them as upstream does."""
    return cast("dict[str, dict[str, Any]]", db[table]["data"])


# ---- queries ------------------------------------------------------------------------------------

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "gt": operator.gt,
    "gte": operator.ge,
    "lt": operator.lt,
    "lte": operator.le,
    "contains": lambda a, b: b in a if a is not None else False,
    "startswith": lambda a, b: str(a).startswith(str(b)) if a is not None else False,
    "endswith": lambda a, b: str(a).endswith(str(b)) if a is not None else False,
    "in": lambda a, b: a in b,
    "nin": lambda a, b: a not in b,
}


def _matches(record: Mapping[str, object], constraints: Mapping[str, object]) -> bool:
    for key, expected in constraints.items():
        field, _, op = key.rpartition("__") if "__" in key else (key, "", "eq")
        compare: Callable[[Any, Any], bool] = _OPS.get(op, operator.eq)
        try:
            if not compare(record.get(field), expected):
                return False
        except (TypeError, ValueError):
            return False
    return True


def query(db: Mapping[str, object], table: str, **constraints: object) -> list[tuple[str, JSONObject]]:
    """``(record id, record)`` of every record of ``table`` matching ``field[__op]=value``."""
    if table not in QUERYABLE:
        return []
    return [(rid, rec) for rid, rec in data(db, table).items() if _matches(rec, constraints)]


def render(table: str, found: list[tuple[str, JSONObject]]) -> str:
    lines = [f"Found {len(found)} record(s) in '{table}':\n"]
    for index, (record_id, record) in enumerate(found, 1):
        lines.append(f"{index}. Record ID: {record_id}")
        lines.extend(f"   {field}: {value}" for field, value in record.items())
        lines.append("")
    return "\n".join(lines)


def query_text(db: Mapping[str, object], table: str, constraints: str = "{}") -> str:
    """Upstream's text rendering of a query (what the lookup tools return)."""
    try:
        if table not in QUERYABLE:
            return f"Error: Database '{table}' not found. Available: {list(QUERYABLE)}"
        try:
            wanted = json.loads(constraints) if constraints else {}
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON: {exc}"
        found = query(db, table, **wanted)
        if not found:
            return f"No records found in '{table}'."
        return render(table, found)
    except Exception as exc:  # upstream's catch-all
        return f"Error querying database: {exc}"


def by_field(db: Mapping[str, object], table: str, field: str, value: object) -> str:
    """A lookup by one field, with the constraint JSON spliced together as upstream does (a
    value with a quote in it makes the JSON invalid, and the answer says so)."""
    return query_text(db, table, f'{{"{field}": "{value}"}}')


def found(text: str) -> bool:
    return "No records found" not in text and "No results found" not in text


def add(db: Mapping[str, object], table: str, record_id: str, record: JSONObject) -> bool:
    """Insert unless the id is taken or the table does not exist (upstream's ``add_to_db``)."""
    if table not in db:
        return False
    records = data(db, table)
    if record_id in records:
        return False
    records[record_id] = record
    return True


def update(db: Mapping[str, object], table: str, record_id: str, updates: JSONObject) -> JSONObject | None:
    records = data(db, table)
    if record_id not in records:
        return None
    records[record_id].update(updates)
    return records[record_id]


# ---- deterministic ids (upstream's seeds) ----------------------------------------------------------


def hex_id(seed: str, length: int = 16) -> str:
    return hashlib.sha256(seed.encode()).digest()[: length // 2].hex()


def transaction_id(user_id: str, card_type: str, merchant: str, amount: float, category: str) -> str:
    return "txn_" + hex_id(f"transaction:{user_id}:{card_type}:{merchant}:{amount:.2f}:{category}", 12)


def bank_transaction_id(account_id: str, date: str, description: str, amount: float, kind: str) -> str:
    return "btxn_" + hex_id(f"bank_txn:{account_id}:{date}:{description}:{amount:.2f}:{kind}", 12)


def tool_log_id(kind: str, name: str) -> str:
    """``kind`` is ``agent_discoverable_tool`` or ``user_discoverable_tool`` (the name alone counts)."""
    return hex_id(f"{kind}:{name}")


def user_tool_call_id(name: str, arguments: Mapping[str, object]) -> str:
    return hex_id(f"user_discoverable_tool_call:{name}:{json.dumps(arguments, sort_keys=True)}")


def prefixed(prefix: str, seed: str) -> str:
    return f"{prefix}_{hex_id(seed, 12)}"


def parse_balance(value: object) -> float:
    """A balance that may be a number or a string like ``'$2,850.00'``."""
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return float(value.replace("$", "").replace(",", ""))
    return 0.0


def account_balance(account: Mapping[str, object]) -> float:
    return parse_balance(account.get("current_holdings", account.get("balance", 0)))


def title(text: str) -> str:
    """``'goods_not_received'`` -> ``'Goods Not Received'`` (upstream's display of a code)."""
    return text.replace("_", " ").title()


def dumps(arguments: Mapping[str, object]) -> str:
    return json.dumps(arguments, indent=2)
