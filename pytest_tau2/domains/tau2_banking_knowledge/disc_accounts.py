"""Discoverable agent tools, part 2: payment history, credit limit decisions, bank accounts
(open, close, list, transfer, credits, interest reports, transactions)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pytest_tau2.domains.tau2_banking_knowledge import db as bank
from pytest_tau2.domains.tau2_banking_knowledge.discoverable import agent_tool, b, i, n, s
from pytest_tau2.environment.jsontypes import JSONObject

DB = bank.BankDB


def _money(value: object) -> float:
    try:
        return float(str(value).replace("$", "").replace(",", ""))
    except (ValueError, TypeError):
        return 0.0


@agent_tool(
    "A credit card account's payment history, most recent first.",
    s("credit_card_account_id", "The account"), i("months", "How many months of history"),
    mutates=False, result="Payment history retrieved.",
)  # fmt: skip
def get_payment_history_6183(db: DB, credit_card_account_id: str, months: Any) -> str:
    if not credit_card_account_id or months is None:
        return "Error: Missing required parameters (credit_card_account_id, months)."
    try:
        months = int(months)
        if months <= 0:
            return "Error: months must be a positive integer."
    except (ValueError, TypeError):
        return "Error: Invalid months value. Must be a positive integer."
    payments = [p for p in bank.data(db, "payment_history").values() if p.get("credit_card_account_id") ==
                credit_card_account_id]  # fmt: skip
    if not payments:
        return f"No payment history found for account '{credit_card_account_id}'."
    payments.sort(key=lambda p: p.get("payment_date") or "", reverse=True)
    payments = payments[:months]
    on_time = 0
    for payment in payments:
        if payment.get("status") != "ON_TIME":
            break
        on_time += 1
    parts = [f"Payment history for account '{credit_card_account_id}' (last {months} months):",
             f"Consecutive on-time payments: {on_time}"]  # fmt: skip
    parts.extend(
        f"\n  - Payment Date: {p.get('payment_date')}\n    Amount: {p.get('amount')}\n    Status: {p.get('status')}"
        for p in payments
    )
    return "\n".join(parts)


@agent_tool(
    "Approve and apply a credit limit increase.",
    s("credit_card_account_id", "The account"), s("user_id", "The customer's id"),
    i("new_credit_limit", "The new total limit in dollars, e.g. 7500"),
    mutates=True, result="Credit limit increase approved and applied successfully.",
)  # fmt: skip
def approve_credit_limit_increase_5847(db: DB, credit_card_account_id: str, user_id: str, new_credit_limit: Any) -> str:
    if not credit_card_account_id or not user_id or new_credit_limit is None:
        return "Error: Missing required parameters."
    cards = bank.data(db, "credit_card_accounts")
    if credit_card_account_id not in cards:
        return f"Error: Credit card account '{credit_card_account_id}' not found."
    card = cards[credit_card_account_id]
    if card.get("user_id") != user_id:
        return f"Error: Credit card account '{credit_card_account_id}' does not belong to user '{user_id}'."
    blocked = any(
        d.get("user_id") == user_id and d.get("status") in ("SUBMITTED", "UNDER_REVIEW", "PENDING")
        for d in bank.data(db, "transaction_disputes").values()
    ) or any(
        o.get("credit_card_account_id") == credit_card_account_id and o.get("status") in ("PENDING", "PROCESSING",
                                                                                          "SHIPPED")
        for o in bank.data(db, "credit_card_orders").values()
    ) or card.get("account_status", "").upper() in ("PAST_DUE", "DELINQUENT", "COLLECTIONS", "CLOSED")  # fmt: skip
    if blocked:
        return "Error: Credit limit increase request cannot be approved at this time."
    current = _money(card.get("credit_limit", "$0.00"))
    new = float(new_credit_limit)
    card["credit_limit"] = f"${new:.2f}"
    request_id = bank.prefixed("cli", f"cli_request:{credit_card_account_id}:{user_id}:{new - current:.2f}")
    record: JSONObject = {
        "request_id": request_id, "credit_card_account_id": credit_card_account_id, "user_id": user_id,
        "previous_limit": f"${current:.2f}", "new_limit": f"${new:.2f}", "increase_amount": f"${new - current:.2f}",
        "decision_date": bank.TODAY, "status": "APPROVED",
    }  # fmt: skip
    bank.add(db, "credit_limit_increase_requests", request_id, record)
    return (
        f"Credit limit increase approved!\n  - Account: {credit_card_account_id}\n  - Previous Limit: ${current:.2f}\n"
        f"  - New Limit: ${new:.2f}\n  - Increase: ${new - current:.2f}\n  - Effective Date: {bank.TODAY}\n"
        "The customer will receive a confirmation email."
    )


DENIAL_REASONS = [
    "insufficient_account_age", "cooldown_period_active", "pending_disputes", "pending_replacement_card",
    "past_due_balance", "high_utilization", "insufficient_payment_history", "requested_amount_exceeds_limit", "other",
]  # fmt: skip


@agent_tool(
    "Deny a credit limit increase request.",
    s("credit_card_account_id", "The account"), s("user_id", "The customer's id"),
    s("denial_reason", "One of " + ", ".join(f"'{r}'" for r in DENIAL_REASONS)),
    mutates=True, result="Credit limit increase request denied.",
)  # fmt: skip
def deny_credit_limit_increase_5848(db: DB, credit_card_account_id: str, user_id: str, denial_reason: str) -> str:
    if not credit_card_account_id or not user_id or not denial_reason:
        return "Error: Missing required parameters."
    if denial_reason not in DENIAL_REASONS:
        return f"Error: Invalid denial_reason. Must be one of: {', '.join(DENIAL_REASONS)}"
    if credit_card_account_id not in bank.data(db, "credit_card_accounts"):
        return f"Error: Credit card account '{credit_card_account_id}' not found."
    request_id = bank.prefixed("cli", f"cli_request:{credit_card_account_id}:{user_id}:{0.0:.2f}")
    record: JSONObject = {
        "request_id": request_id, "credit_card_account_id": credit_card_account_id, "user_id": user_id,
        "denial_reason": denial_reason, "decision_date": bank.TODAY, "status": "DENIED",
    }  # fmt: skip
    bank.add(db, "credit_limit_increase_requests", request_id, record)
    return (
        f"Credit limit increase request denied.\n  - Account: {credit_card_account_id}\n  - Denial Reason: "
        f"{denial_reason}\n  - Date: {bank.TODAY}\nThe customer will receive a notification explaining the denial."
    )


ACCOUNT_TYPES = ["checking", "savings", "business_checking", "business_savings"]


def _age_days(account: dict[str, Any]) -> int:
    try:
        return (bank.NOW - datetime.strptime(account.get("date_opened", ""), "%m/%d/%Y")).days
    except ValueError:
        return 0


def _kind(account: dict[str, Any]) -> Any:
    return account.get("account_type", account.get("class", ""))


def _eligible(accounts: list[dict[str, Any]], account_type: str) -> bool:
    live = ("OPEN", "ACTIVE")
    if account_type == "savings":
        return any(_kind(a) in ("checking", "personal_checking") and a.get("status", "") in live and _age_days(a) >= 14
                   for a in accounts)  # fmt: skip
    if account_type == "business_checking":
        if any(a.get("status") == "CLOSED" for a in accounts):
            return False
        return any(_kind(a) in ("checking", "personal_checking") and a.get("status", "") in live for a in accounts)
    if account_type == "business_savings":
        if any(bank.account_balance(a) < 0 for a in accounts):
            return False
        return any(_kind(a) == "business_checking" and a.get("status", "") in live and _age_days(a) >= 30
                   for a in accounts)  # fmt: skip
    return True


@agent_tool(
    "Open a new bank account for a customer.",
    s("user_id", "The customer's id"),
    s("account_type", "One of 'checking' (personal checking), 'savings' (personal savings), 'business_checking', "
      "'business_savings'"),
    s("account_class", "The account class's full official name"),
    mutates=True, result="Bank account opened successfully.",
)  # fmt: skip
def open_bank_account_4821(db: DB, user_id: str, account_type: str, account_class: str) -> str:
    if not user_id or not account_type or not account_class:
        return "Error: Missing required parameters."
    if account_type not in ACCOUNT_TYPES:
        return f"Error: Invalid account_type. Must be one of: {ACCOUNT_TYPES}"
    mine = [a for a in bank.data(db, "accounts").values() if a.get("user_id") == user_id]
    if not _eligible(mine, account_type):
        return "Error: Account eligibility requirements not met."
    account_id = bank.hex_id(f"account:{user_id}:{account_type}:{account_class}")
    record: JSONObject = {
        "account_id": account_id, "user_id": user_id, "account_type": account_type, "account_class": account_class,
        "current_holdings": "0.00", "status": "OPEN", "date_opened": bank.TODAY,
    }  # fmt: skip
    if not bank.add(db, "accounts", account_id, record):
        return f"Failed to open account: Account ID '{account_id}' may already exist."
    return (
        f"Bank account opened successfully!\n  - Account ID: {account_id}\n  - User ID: {user_id}\n"
        f"  - Account Type: {account_type}\n  - Account Class: {account_class}\n  - Status: OPEN\n"
        f"  - Initial Balance: $0.00\n  - Date Opened: {bank.TODAY}"
    )


EARLY_CLOSURE: dict[str, dict[str, tuple[int, int]]] = {
    "checking": {
        "Light Blue Account": (15, 30), "Light Green Account": (15, 30), "Green Fee-Free Account": (15, 30),
        "Blue Account": (25, 60), "Green Account": (25, 60), "Evergreen Account": (50, 90),
        "Bluest Account": (100, 180),
    },
    "savings": {
        "Bronze Account": (20, 60), "Silver Account": (35, 90), "Silver Plus Account": (35, 90),
        "Gold Account": (75, 180), "Gold Plus Account": (75, 180), "Gold Years Account": (75, 180),
        "Platinum Account": (150, 270), "Platinum Plus Account": (150, 270), "Diamond Elite Account": (150, 270),
    },
}  # fmt: skip
"""Account class -> level -> (early closure fee in dollars, window in days after opening)."""


@agent_tool(
    "Close a checking or savings account (its balance must come to $0.00, after any early closure fee).",
    s("account_id", "The account to close"), s("reason", "Why it is closed", required=False),
    b("waive_early_closure_fee", "Whether to waive an early closure fee", required=False),
    mutates=True, result="Bank account closed successfully.",
)  # fmt: skip
def close_bank_account_7392(
    db: DB, account_id: str, reason: str = "Customer requested closure", waive_early_closure_fee: object = False
) -> str:
    if not account_id:
        return "Error: Missing required parameter (account_id)."
    accounts = bank.data(db, "accounts")
    if account_id not in accounts:
        return f"Error: Account '{account_id}' not found."
    account = accounts[account_id]
    if account.get("status") == "CLOSED":
        return f"Error: Account '{account_id}' is already closed."
    balance = bank.account_balance(account)
    fee = 0.0
    if not waive_early_closure_fee:
        rule = EARLY_CLOSURE.get(account.get("class", ""), {}).get(account.get("level", ""))
        opened = account.get("date_opened", "")
        if rule and opened:
            try:
                age = (bank.NOW - datetime.strptime(opened, "%m/%d/%Y")).days
            except ValueError:
                age = None
            if age is not None and age < rule[1]:
                if balance < rule[0]:
                    return "Error: Account unable to be closed."
                fee = rule[0]
    if balance - fee != 0:
        return f"Error: Account balance must be $0.00 before closing. Current balance: ${balance:.2f}"
    account.update(status="CLOSED", date_closed=bank.TODAY, closure_reason=reason,
                   early_closure_fee_waived=waive_early_closure_fee)  # fmt: skip
    return (
        f"Bank account closed successfully!\n  - Account ID: {account_id}\n  - Account Type: "
        f"{account.get('account_type', 'N/A')}\n  - Account Class: {account.get('account_class', 'N/A')}\n"
        f"  - Status: CLOSED\n  - Date Closed: {bank.TODAY}\n  - Reason: {reason}\n"
        f"  - Early Closure Fee Waived: {'Yes' if waive_early_closure_fee else 'No'}"
    )


@agent_tool(
    "Every account of a customer: bank accounts and credit card accounts.",
    s("user_id", "The customer's id"), mutates=False, result="User accounts retrieved successfully.",
)  # fmt: skip
def get_all_user_accounts_by_user_id_3847(db: DB, user_id: str) -> str:
    if not user_id:
        return "Error: Missing required parameter: user_id"
    accounts = bank.by_field(db, "accounts", "user_id", user_id)
    cards = bank.by_field(db, "credit_card_accounts", "user_id", user_id)
    parts = ["User accounts retrieved successfully.", "", "Executed: get_all_user_accounts_by_user_id_3847",
             f"Accounts for user {user_id}:", "", "Bank Accounts:",
             accounts if bank.found(accounts) else "  No bank accounts found.", "\nCredit Card Accounts:",
             cards if bank.found(cards) else "  No credit card accounts found."]  # fmt: skip
    return "\n".join(parts)


@agent_tool(
    "Move money from one bank account to another.",
    s("source_account_id", "The account to take the money from"), s("destination_account_id", "The account to credit"),
    n("amount", "The amount in USD"), mutates=True, result="Funds transferred successfully.",
)  # fmt: skip
def transfer_funds_between_bank_accounts_7291(
    db: DB, source_account_id: str, destination_account_id: str, amount: Any
) -> str:
    if not source_account_id or not destination_account_id or amount is None:
        return "Error: Missing required parameters (source_account_id, destination_account_id, amount)."
    try:
        amount = float(amount)
    except (ValueError, TypeError):
        return f"Error: Invalid amount '{amount}'. Must be a number."
    if amount <= 0:
        return "Error: Transfer amount must be positive."
    if source_account_id == destination_account_id:
        return "Error: Source and destination accounts cannot be the same."
    accounts = bank.data(db, "accounts")
    if source_account_id not in accounts:
        return f"Error: Source account '{source_account_id}' not found."
    if destination_account_id not in accounts:
        return f"Error: Destination account '{destination_account_id}' not found."
    source, dest = accounts[source_account_id], accounts[destination_account_id]
    if source.get("status") not in ("ACTIVE", "OPEN"):
        return f"Error: Source account '{source_account_id}' is not active."
    if dest.get("status") not in ("ACTIVE", "OPEN"):
        return f"Error: Destination account '{destination_account_id}' is not active."
    have = bank.account_balance(source)
    if have < amount:
        return (f"Error: Insufficient funds. Source account balance is ${have:.2f}, but transfer amount is "
                f"${amount:.2f}.")  # fmt: skip
    new_source, new_dest = have - amount, bank.account_balance(dest) + amount
    source["current_holdings"] = f"${new_source:.2f}"
    dest["current_holdings"] = f"${new_dest:.2f}"
    return (
        f"Transfer completed successfully!\n  - Amount: ${amount:.2f}\n  - From: {source_account_id} (new balance: "
        f"${new_source:.2f})\n  - To: {destination_account_id} (new balance: ${new_dest:.2f})"
    )


def _credit(db: DB, account_id: str, amount: Any, credit_type: str, kinds: dict[str, str], savings: bool) -> str:
    if not account_id or amount is None or not credit_type:
        return "Error: Missing required parameters."
    try:
        amount = float(amount)
    except (TypeError, ValueError):
        return "Error: Invalid credit amount. Must be a number."
    if amount <= 0:
        return "Error: Credit amount must be positive."
    if credit_type not in kinds:
        return f"Error: Invalid credit_type. Must be one of: {list(kinds)}"
    accounts = bank.data(db, "accounts")
    if account_id not in accounts:
        return f"Error: Account '{account_id}' not found."
    account = accounts[account_id]
    kind = account.get("class", "").lower()
    if savings and kind not in ("saving", "savings"):
        return (f"Error: Account '{account_id}' is not a savings account. This tool only applies to savings "
                "accounts.")  # fmt: skip
    if not savings and kind != "checking":
        return (f"Error: Account '{account_id}' is not a checking account. Credits can only be applied to checking "
                "accounts.")  # fmt: skip
    if account.get("status") not in ("ACTIVE", "OPEN"):
        return f"Error: Account '{account_id}' is not active."
    before = bank.account_balance(account)
    after = before + amount
    account["current_holdings"] = f"{after:.2f}" if savings else f"${after:.2f}"
    seed = f"{'savings' if savings else 'checking'}_credit:{account_id}:{credit_type}:{amount}:{bank.TODAY}"
    txn = f"txn_{bank.hex_id(seed)}"
    bank.data(db, "bank_account_transaction_history")[txn] = {
        "transaction_id": txn, "account_id": account_id, "date": bank.TODAY, "description": kinds[credit_type],
        "amount": amount, "type": credit_type, "status": "posted",
    }  # fmt: skip
    return (
        f"\nCredit applied successfully!\n  - Transaction ID: {txn}\n  - Account: {account_id}\n  - Credit Type: "
        f"{credit_type}\n  - Amount: ${amount:.2f}\n  - Previous Balance: ${before:.2f}\n  - New Balance: ${after:.2f}"
    )


@agent_tool(
    "Credit a checking account.",
    s("account_id", "The checking account"), n("amount", "The credit in dollars (more than 0)"),
    s("credit_type", "'rebate_credit' for a missing rebate, 'fee_refund' for a fee charged in error"),
    mutates=True, result="Credit applied to checking account successfully.",
)  # fmt: skip
def apply_checking_account_credit_5829(db: DB, account_id: str, amount: object, credit_type: str) -> str:
    kinds = {"rebate_credit": "REBATE CREDIT - CUSTOMER SERVICE", "fee_refund": "FEE REFUND - CUSTOMER SERVICE"}
    return _credit(db, account_id, amount, credit_type, kinds, savings=False)


@agent_tool(
    "Credit a savings account (interest corrections, fee refunds, goodwill).",
    s("account_id", "The savings account"), n("amount", "The credit in dollars (more than 0)"),
    s("credit_type", "'interest_correction' for an APY or interest error, 'fee_refund' for a fee charged in error, "
      "'goodwill_credit' for a customer service gesture"),
    mutates=True, result="Credit applied to savings account successfully.",
)  # fmt: skip
def apply_savings_account_credit_6831(db: DB, account_id: str, amount: object, credit_type: str) -> str:
    kinds = {
        "interest_correction": "INTEREST CORRECTION - CUSTOMER SERVICE",
        "fee_refund": "FEE REFUND - CUSTOMER SERVICE",
        "goodwill_credit": "GOODWILL CREDIT - CUSTOMER SERVICE",
    }
    return _credit(db, account_id, amount, credit_type, kinds, savings=True)


@agent_tool(
    "Report an interest calculation discrepancy (credited interest not matching the expected APY) to the backend "
    "team.",
    s("account_id", "The savings account"), s("user_id", "The customer's id"),
    n("expected_apy", "The APY percentage due, e.g. 2.775"), n("actual_apy", "The APY percentage applied, e.g. 2.5"),
    n("amount_difference", "The dollar difference between expected and credited interest"),
    mutates=True, result="Interest discrepancy report submitted successfully. Backend team will investigate.",
)  # fmt: skip
def submit_interest_discrepancy_report_7294(
    db: DB, account_id: str, user_id: str, expected_apy: Any, actual_apy: Any, amount_difference: Any
) -> str:
    if not account_id or not user_id or expected_apy is None or actual_apy is None or amount_difference is None:
        return "Error: Missing required parameters."
    try:
        expected, actual, difference = float(expected_apy), float(actual_apy), float(amount_difference)
    except (ValueError, TypeError):
        return "Error: expected_apy, actual_apy, and amount_difference must be numbers."
    account = bank.data(db, "accounts").get(account_id)
    if account is None:
        return f"Error: Account '{account_id}' not found."
    user = bank.data(db, "users").get(user_id)
    if user is None:
        return f"Error: User '{user_id}' not found."
    report_id = f"IDR_{bank.hex_id(f'interest_report:{account_id}:{user_id}:{expected}:{actual}:{bank.TODAY}')}"
    # Upstream files the report into a table its DB does not have: nothing is stored (only the call is logged).
    level = account.get("level", "Unknown")
    return (
        f"\nInterest Discrepancy Report Submitted Successfully!\n  - Report ID: {report_id}\n  - Account: {account_id} "
        f"({level})\n  - Customer: {user.get('name', 'Unknown')}\n  - Expected APY: {expected}%\n  - Actual APY: "
        f"{actual}%\n  - APY Difference: {round(expected - actual, 4)}%\n  - Amount Difference: ${difference:.2f}\n"
        "  - Status: PENDING_REVIEW\n\nThe backend team will investigate this discrepancy and ensure correct APY "
        "calculations are applied going forward."
    )


def _when(record: Mapping[str, object]) -> datetime:
    text = str(record.get("date", ""))
    for layout in ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y"):
        try:
            return datetime.strptime(text, layout)
        except ValueError:
            continue
    return datetime.min


@agent_tool(
    "A bank account's transactions, most recent first.",
    s("account_id", "The bank account"), mutates=False, result="Bank account transactions retrieved successfully.",
)  # fmt: skip
def get_bank_account_transactions_9173(db: DB, account_id: str) -> str:
    if not account_id:
        return "Error: Missing required parameter: account_id"
    if account_id not in bank.data(db, "accounts"):
        return f"Error: Account '{account_id}' not found."
    found = sorted(bank.query(db, "bank_account_transaction_history", account_id=account_id),
                   key=lambda item: _when(item[1]), reverse=True)  # fmt: skip
    parts = ["Bank account transactions retrieved successfully.", "", "Executed: get_bank_account_transactions_9173",
             f"Transactions for account {account_id}:"]  # fmt: skip
    parts.append(bank.render("bank_account_transaction_history", found) if found else
                 "\nNo transactions found for this account.")  # fmt: skip
    return "\n".join(parts)
