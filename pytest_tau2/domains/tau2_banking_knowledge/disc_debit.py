"""Discoverable agent tools, part 3: debit card disputes, ATM deposit images, card orders and
activation (upstream's behaviour and texts)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_tau2.domains.tau2_banking_knowledge import db as bank
from pytest_tau2.domains.tau2_banking_knowledge.atm_images import ATM_IMAGES
from pytest_tau2.domains.tau2_banking_knowledge.discoverable import Param, agent_tool, b, n, s
from pytest_tau2.environment.jsontypes import JSONObject

DB = bank.BankDB

DEBIT_CATEGORIES = [
    "unauthorized_transaction", "atm_cash_discrepancy", "atm_deposit_not_credited", "duplicate_charge",
    "incorrect_amount", "goods_services_not_received", "recurring_charge_after_cancellation", "card_present_fraud",
    "card_not_present_fraud",
]  # fmt: skip
DEBIT_TRANSACTION_TYPES = [
    "pin_purchase", "signature_purchase", "online_purchase", "atm_withdrawal", "atm_deposit", "recurring_payment",
    "person_to_person",
]  # fmt: skip
PIN_STATUSES = ["yes_shared", "yes_observed", "no", "unknown"]
DEBIT_CARD_ACTIONS = ["keep_active", "freeze_pending_investigation", "close_and_reissue"]
FRAUD = ("unauthorized_transaction", "card_present_fraud", "card_not_present_fraud")


def _one_of(values: list[str]) -> str:
    return "One of " + ", ".join(f"'{v}'" for v in values)


@agent_tool(
    "File a formal debit card transaction dispute under Regulation E (bank funds; liability depends on when it "
    "is reported).",
    s("transaction_id", "The disputed transaction"), s("account_id", "The checking account of the card"),
    s("card_id", "The debit card"), s("user_id", "The user's id"), s("dispute_category", _one_of(DEBIT_CATEGORIES)),
    s("transaction_date", "When it happened, MM/DD/YYYY"), s("discovery_date", "When it was noticed, MM/DD/YYYY"),
    n("disputed_amount", "The disputed dollar amount"), s("transaction_type", _one_of(DEBIT_TRANSACTION_TYPES)),
    b("card_in_possession", "Whether the customer still has the card"),
    s("pin_compromised", _one_of(PIN_STATUSES)), b("contacted_merchant", "Whether the merchant was contacted first"),
    b("police_report_filed", "Whether a police report was filed (recommended for fraud over $500)"),
    b("written_statement_provided", "Whether a written statement was given (needed for Reg E provisional credit)"),
    b("provisional_credit_eligible", "Eligibility for provisional credit per the Debit Card Provisional Credit "
      "Guidelines"),
    n("customer_max_liability_amount", "The customer's maximum liability under Regulation E timing rules; -1 for "
      "unlimited"),
    s("card_action", _one_of(DEBIT_CARD_ACTIONS)),
    mutates=True,
    result="Debit card transaction dispute filed successfully. A case has been opened and provisional credit "
    "determination has been recorded.",
)  # fmt: skip
def file_debit_card_transaction_dispute_6281(
    db: DB, transaction_id: str, account_id: str, card_id: str, user_id: str, dispute_category: str,
    transaction_date: str, discovery_date: str, disputed_amount: Any, transaction_type: str, card_in_possession: Any,
    pin_compromised: str, contacted_merchant: Any, police_report_filed: Any, written_statement_provided: Any,
    provisional_credit_eligible: Any, customer_max_liability_amount: Any, card_action: str,
) -> str:  # fmt: skip
    required = [transaction_id, account_id, card_id, user_id, dispute_category, transaction_date, discovery_date,
                disputed_amount, transaction_type, pin_compromised, card_action]  # fmt: skip
    if not all(required):
        return "Error: Missing required parameters."
    if customer_max_liability_amount is None:
        return "Error: customer_max_liability_amount is required."
    if None in (card_in_possession, contacted_merchant, police_report_filed, written_statement_provided):
        return ("Error: card_in_possession, contacted_merchant, police_report_filed, and written_statement_provided "
                "are required boolean fields.")  # fmt: skip
    if dispute_category not in DEBIT_CATEGORIES:
        return f"Error: Invalid dispute_category. Must be one of: {DEBIT_CATEGORIES}"
    if transaction_type not in DEBIT_TRANSACTION_TYPES:
        return f"Error: Invalid transaction_type. Must be one of: {DEBIT_TRANSACTION_TYPES}"
    if pin_compromised not in PIN_STATUSES:
        return f"Error: Invalid pin_compromised. Must be one of: {PIN_STATUSES}"
    if card_action not in DEBIT_CARD_ACTIONS:
        return f"Error: Invalid card_action. Must be one of: {DEBIT_CARD_ACTIONS}"
    if disputed_amount <= 0:
        return "Error: disputed_amount must be a positive number."
    dispute_id = bank.prefixed("dsp", f"dispute:{user_id}:{transaction_id}")
    fraud = dispute_category in FRAUD
    shared = pin_compromised == "yes_shared"
    record: JSONObject = {
        "dispute_id": dispute_id, "transaction_id": transaction_id, "account_id": account_id, "card_id": card_id,
        "user_id": user_id, "dispute_category": dispute_category, "transaction_date": transaction_date,
        "discovery_date": discovery_date, "disputed_amount": disputed_amount, "transaction_type": transaction_type,
        "card_in_possession": card_in_possession, "pin_compromised": pin_compromised,
        "contacted_merchant": contacted_merchant, "police_report_filed": police_report_filed,
        "written_statement_provided": written_statement_provided,
        "provisional_credit_eligible": provisional_credit_eligible,
        "provisional_credit_issued": provisional_credit_eligible,
        "provisional_credit_amount": disputed_amount if provisional_credit_eligible else None,
        "customer_max_liability_amount": customer_max_liability_amount, "card_action": card_action,
        "is_fraud_category": fraud, "pin_shared_voluntarily": shared, "submitted_at": bank.TODAY, "status": "OPEN",
    }  # fmt: skip
    if not bank.add(db, "debit_card_disputes", dispute_id, record):
        return "Error: Dispute may have already been filed for this transaction."
    parts = [f"Dispute ID: {dispute_id}", f"Transaction: {transaction_id}", f"Account: {account_id}",
             f"Category: {bank.title(dispute_category)}", f"Disputed Amount: ${disputed_amount:.2f}",
             f"Card Action: {bank.title(card_action)}"]  # fmt: skip
    if provisional_credit_eligible:
        parts.append(f"Provisional Credit: ISSUED - ${disputed_amount:.2f} credited within 10 business days per "
                     "Regulation E.")  # fmt: skip
    else:
        parts.append("Provisional Credit: Not eligible - see Debit Card Provisional Credit Guidelines for details.")
    if shared:
        parts.append("WARNING: Customer indicated PIN was shared voluntarily. This may affect liability determination.")
    if fraud and not police_report_filed and disputed_amount > 500:
        parts.append("RECOMMENDATION: For fraud disputes over $500, filing a police report is recommended.")
    return "\n".join(parts)


@agent_tool(
    "Block or unblock every recurring (subscription) payment on a debit card; one-time purchases are unaffected.",
    s("card_id", "The debit card"), b("block_recurring", "True to block recurring payments, False to allow them"),
    mutates=True, result="Debit card recurring payment settings updated successfully.",
)  # fmt: skip
def set_debit_card_recurring_block_7382(db: DB, card_id: str, block_recurring: object) -> str:
    if not card_id:
        return "Error: Missing required parameter: card_id"
    card = bank.data(db, "debit_cards").get(card_id)
    if not card:
        return f"Error: Debit card '{card_id}' not found."
    status = card.get("status", "").upper()
    if status != "ACTIVE":
        return (f"Error: Cannot update recurring block settings for a card with status '{status}'. Card must be "
                "ACTIVE.")  # fmt: skip
    card["recurring_blocked"] = block_recurring
    if block_recurring:
        return (f"Recurring payments BLOCKED for debit card {card_id}.\nAll recurring/subscription charges will be "
                "declined.\nOne-time purchases are not affected.\n"
                "This change takes effect within 24 hours.")  # fmt: skip
    return (f"Recurring payments UNBLOCKED for debit card {card_id}.\nRecurring/subscription charges will now be "
            "allowed.\nThis change takes effect within 24 hours.")  # fmt: skip


@agent_tool(
    "A customer's debit card disputes (ids, categories, amounts, statuses, provisional credit).",
    s("user_id", "The user's id"), mutates=False, result="Debit card dispute history retrieved successfully.",
)  # fmt: skip
def get_debit_dispute_status_7483(db: DB, user_id: str) -> str:
    if not user_id:
        return "Error: Missing required parameter: user_id"
    found = bank.by_field(db, "debit_card_disputes", "user_id", user_id)
    return "\n".join(["Debit card dispute history retrieved successfully.", "",
                      "Executed: get_debit_dispute_status_7483",
                      f"Debit card dispute history for user {user_id}:",
                      found if bank.found(found) else "\nNo debit card disputes found for this user."])  # fmt: skip


@agent_tool(
    "The envelope and check images of a Rho-Bank ATM deposit.",
    s("transaction_id", "The ATM deposit transaction"), mutates=False,
    result="ATM deposit images retrieved successfully.",
)  # fmt: skip
def get_atm_deposit_images_8473(db: DB, transaction_id: str) -> str:
    if not transaction_id:
        return "Error: Missing required parameter: transaction_id"
    txns = bank.data(db, "bank_account_transaction_history")
    if transaction_id not in txns:
        return f"Error: Transaction '{transaction_id}' not found."
    txn = txns[transaction_id]
    if txn.get("type") != "atm_deposit":
        return (f"Error: Transaction '{transaction_id}' is not an ATM deposit. This tool only works for ATM deposit "
                "transactions.")  # fmt: skip
    description = txn.get("description", "")
    if "RHO-BANK" not in description.upper() and "RHOBANK" not in description.upper():
        return (f"Error: Transaction '{transaction_id}' is from a third-party ATM. Deposit images are only available "
                "for Rho-Bank ATM deposits. For third-party ATM disputes, a chargeback request must be submitted to "
                "the ATM network.")  # fmt: skip
    date = txn.get("date", "Unknown")
    head = f"ATM Deposit Image Retrieval Results\n{'=' * 37}\nTransaction ID: {transaction_id}\n"
    if transaction_id in ATM_IMAGES:
        atm, contents, notes = ATM_IMAGES[transaction_id]
        return f"{head}ATM: {atm}\nDeposit Date: {date}\n\n{contents}\n\n--- VERIFICATION NOTES ---\n{notes}\n"
    return (
        f"{head}ATM: {description}\nDeposit Date: {date}\nAmount Recorded: ${abs(txn.get('amount', 0)):.2f}\n\n"
        "--- IMAGE STATUS ---\nStatus: IMAGES NOT AVAILABLE\nReason: Deposit images for this transaction have either "
        "expired (older than 90 days) or were not captured by the ATM system.\n\nFor deposits without available "
        "images, the dispute will proceed based on customer statement and ATM journal records only. Investigation "
        "timeline may be extended.\n"
    )


DELIVERY = {"STANDARD": "7-10 business days", "EXPEDITED": "3-5 business days", "RUSH": "1-2 business days"}
DESIGNS = ["CLASSIC", "PREMIUM", "CUSTOM"]
LONG_MONTHS = ("01", "03", "05", "07", "08", "10", "12")


def _fee_parts(delivery_fee: float, design_fee: float, excess: float, sep: str) -> list[str]:
    parts = []
    if delivery_fee > 0:
        parts.append(f"Delivery{sep} ${delivery_fee}")
    if design_fee > 0:
        parts.append(f"Design{sep} ${design_fee}")
    if excess > 0:
        parts.append(f"Excess Replacement{sep} ${excess:.0f}")
    return parts


def _digits(seed: str, length: int, keep: int) -> str:
    return "".join(c for c in bank.hex_id(seed, length) if c.isdigit())[:keep].zfill(keep)


def _issue_reason(cards: Sequence[Mapping[str, object]]) -> str:
    closed = next((c for c in cards if c.get("status") == "CLOSED"), None)
    if closed:
        reason = closed.get("closure_reason", "first_card")
        if reason in ("lost", "stolen", "fraud", "fraud_suspected"):
            return "fraud" if reason == "fraud_suspected" else reason
        return "first_card"
    return "first_card" if cards else "new_account"


@agent_tool(
    "Order a new debit card for a customer's checking account (it arrives PENDING and must be activated).",
    s("account_id", "The checking account to link"), s("user_id", "The customer's id"),
    s("delivery_option", "STANDARD, EXPEDITED or RUSH"), n("delivery_fee", "The delivery fee in dollars"),
    s("card_design", "CLASSIC, PREMIUM or CUSTOM"), n("design_fee", "The design fee in dollars"),
    s("shipping_address", "Full shipping address"),
    Param("excess_replacement_fee", "number", "The fee for exceeding the replacement limit, if any", False),
    mutates=True, result="Debit card order placed successfully.",
)  # fmt: skip
def order_debit_card_5739(
    db: DB, account_id: str, user_id: str, delivery_option: str, delivery_fee: Any, card_design: str,
    design_fee: Any, shipping_address: str, excess_replacement_fee: Any = None,
) -> str:  # fmt: skip
    excess_replacement_fee = excess_replacement_fee or 0
    try:
        delivery_fee = float(delivery_fee) if delivery_fee is not None else None
    except (TypeError, ValueError):
        return "Error: delivery_fee must be a number."
    try:
        design_fee = float(design_fee) if design_fee is not None else None
    except (TypeError, ValueError):
        return "Error: design_fee must be a number."
    try:
        excess = float(excess_replacement_fee)
    except (TypeError, ValueError):
        excess = 0
    if not all([account_id, user_id, delivery_option, delivery_fee is not None, card_design, design_fee is not None,
                shipping_address]):  # fmt: skip
        return ("Error: Missing required parameters. Required: account_id, user_id, delivery_option, delivery_fee, "
                "card_design, design_fee, shipping_address.")  # fmt: skip
    if delivery_option.upper() not in DELIVERY:
        return f"Error: Invalid delivery_option. Must be one of: {list(DELIVERY)}"
    delivery_option = delivery_option.upper()
    if card_design.upper() not in DESIGNS:
        return f"Error: Invalid card_design. Must be one of: {DESIGNS}"
    card_design = card_design.upper()
    accounts = bank.data(db, "accounts")
    if account_id not in accounts:
        return f"Error: Account '{account_id}' not found."
    account = accounts[account_id]
    if account.get("class") != "checking":
        return (f"Error: Debit cards can only be ordered for checking accounts. Account '{account_id}' is a "
                f"{account.get('class')} account.")  # fmt: skip
    if account.get("status") != "OPEN":
        return f"Error: Account must be OPEN. Account '{account_id}' has status: {account.get('status')}"
    if account.get("user_id") != user_id:
        return f"Error: Account '{account_id}' does not belong to user '{user_id}'."
    try:
        holdings = float(str(account.get("current_holdings", "0")).replace(",", ""))
    except ValueError:
        holdings = 0.0
    if holdings < 25.0:
        return f"Error: Account must have a minimum balance of $25. Current balance: ${holdings:.2f}"
    if any(o.get("account_id") == account_id and o.get("status") == "PENDING"
           for o in bank.data(db, "debit_card_orders").values()):  # fmt: skip
        return f"Error: There is already a pending debit card order for account '{account_id}'."
    cards = bank.data(db, "debit_cards")
    if any(c.get("account_id") == account_id and c.get("status") == "ACTIVE" for c in cards.values()):
        return (f"Error: Account '{account_id}' already has an active debit card. Maximum 1 active card per checking "
                "account.")  # fmt: skip
    total = delivery_fee + design_fee + excess
    if total > 0 and holdings < total:
        return f"Error: Insufficient funds for fees. Total fees: ${total:.2f}. Current balance: ${holdings:.2f}"
    order_id = bank.prefixed("dcord", f"debit_card_order:{account_id}:{user_id}:{delivery_option}")
    order: JSONObject = {
        "order_id": order_id, "account_id": account_id, "user_id": user_id, "delivery_option": delivery_option,
        "card_design": card_design, "shipping_address": shipping_address, "delivery_fee": delivery_fee,
        "design_fee": design_fee, "excess_replacement_fee": excess, "total_fee": total, "order_date": bank.TODAY,
        "expected_delivery": DELIVERY[delivery_option], "status": "PENDING",
    }  # fmt: skip
    if not bank.add(db, "debit_card_orders", order_id, order):
        return "Error: Failed to create debit card order. Order may already exist."
    if total > 0:
        account["current_holdings"] = f"{holdings - total:.2f}"
        fee_id = f"btxn_dcfee_{order_id[-8:]}"
        fee: JSONObject = {
            "transaction_id": fee_id, "account_id": account_id, "date": bank.TODAY,
            "description": f"DEBIT CARD ORDER FEE - {', '.join(_fee_parts(delivery_fee, design_fee, excess, ''))}",
            "amount": -total, "type": "debit_card_fee", "status": "posted",
        }  # fmt: skip
        bank.add(db, "bank_account_transaction_history", fee_id, fee)
    card_id = bank.prefixed("dbc", f"debit_card:{account_id}:{user_id}:{bank.TODAY}")
    users = bank.data(db, "users")
    holder = users[user_id].get("name", "CARDHOLDER").upper() if user_id in users else "CARDHOLDER"
    month, _, year = bank.TODAY.split("/")
    day = "31" if month in LONG_MONTHS else "28" if month == "02" else "30"
    card: JSONObject = {
        "card_id": card_id, "account_id": account_id, "user_id": user_id, "cardholder_name": holder,
        "last_4_digits": _digits(f"card_details:{card_id}:last4", 8, 4),
        "cvv": _digits(f"card_details:{card_id}:cvv", 6, 3), "status": "PENDING", "issue_date": bank.TODAY,
        "expiration_date": f"{month}/{day}/{int(year) + 4}", "card_design": card_design,
        "issue_reason": _issue_reason([c for c in cards.values() if c.get("account_id") == account_id]),
    }  # fmt: skip
    bank.add(db, "debit_cards", card_id, card)
    parts = [
        "Debit Card Order Confirmed",
        f"Order ID: {order_id}",
        f"Card ID: {card_id}",
        f"Linked Account: {account_id}",
        f"Delivery Option: {delivery_option}",
        f"Card Design: {card_design}",
        f"Shipping Address: {shipping_address}",
        f"Expected Delivery: {DELIVERY[delivery_option]}",
        "",
        "Note: Card will arrive with status PENDING. Customer must call to activate after receiving the card.",
    ]
    if total > 0:
        details = ", ".join(_fee_parts(delivery_fee, design_fee, excess, ":"))
        parts.append(f"Total Fees: ${total:.2f} ({details}) - CHARGED to account {account_id}")
        parts.append(f"New Account Balance: ${holdings - total:.2f}")
    else:
        parts.append("Total Fees: $0 (No additional charges)")
    return "\n".join(parts)
