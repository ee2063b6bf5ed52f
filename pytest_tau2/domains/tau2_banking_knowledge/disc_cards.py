"""Discoverable agent tools, part 4: debit card activation, closure, freezing, fraud alerts,
PINs, listing and temporary limits (upstream's behaviour and texts)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pytest_tau2.domains.tau2_banking_knowledge import db as bank
from pytest_tau2.domains.tau2_banking_knowledge.discoverable import agent_tool, i, s

DB = bank.BankDB

SEQUENTIAL_PINS = ("0123", "1234", "2345", "3456", "4567", "5678", "6789", "9876", "8765", "7654", "6543", "5432",
                   "4321", "3210")  # fmt: skip
ACTIVATOR = {
    "new_account": "activate_debit_card_8291", "first_card": "activate_debit_card_8291",
    "lost": "activate_debit_card_8292", "stolen": "activate_debit_card_8292", "fraud": "activate_debit_card_8292",
    "expired": "activate_debit_card_8293", "damaged": "activate_debit_card_8293", "upgrade": "activate_debit_card_8293",
    "bank_reissue": "activate_debit_card_8293",
}  # fmt: skip


def pin_problem(pin: Any) -> str | None:
    if not pin or not pin.isdigit() or len(pin) != 4:
        return "PIN must be exactly 4 digits."
    if pin in SEQUENTIAL_PINS:
        return "PIN cannot be sequential (e.g., 1234). Please choose a more secure PIN."
    if len(set(pin)) == 1:
        return "PIN cannot be all the same digit (e.g., 1111). Please choose a more secure PIN."
    return None


def _activation_card(db: DB, name: str, reasons: tuple[str, ...], card_id: Any, last_4: Any, expiration: Any,
                     cvv: Any, pin: Any) -> tuple[str | None, dict[str, Any] | None]:  # fmt: skip
    if not all([card_id, last_4, expiration, cvv, pin]):
        return "Error: Missing required parameters. Required: card_id, last_4_digits, expiration_date, cvv, pin.", None
    problem = pin_problem(pin)
    if problem:
        return f"Error: {problem}", None
    if not cvv.isdigit() or len(cvv) != 3:
        return "Error: CVV must be exactly 3 digits.", None
    if not last_4.isdigit() or len(last_4) != 4:
        return "Error: Last 4 digits must be exactly 4 digits.", None
    cards = bank.data(db, "debit_cards")
    if card_id not in cards:
        return f"Error: Debit card '{card_id}' not found.", None
    card = cards[card_id]
    reason = card.get("issue_reason", "new_account")
    if reason not in reasons:
        return (f"Error: Wrong activation tool. This card has issue_reason='{reason}'. Please use "
                f"{ACTIVATOR.get(reason, 'unknown')} instead of {name}."), None  # fmt: skip
    if card.get("status") == "ACTIVE":
        return f"Error: Debit card '{card_id}' is already active.", None
    if card.get("status") != "PENDING":
        return (f"Error: Debit card '{card_id}' cannot be activated. Current status: {card.get('status')}. Only "
                "PENDING cards can be activated."), None  # fmt: skip
    if card.get("last_4_digits") != last_4:
        return "Error: Card verification failed. The last 4 digits do not match our records.", None
    account_id = card.get("account_id")
    accounts = bank.data(db, "accounts")
    if account_id and account_id in accounts and accounts[account_id].get("status") != "OPEN":
        return (f"Error: The linked checking account '{account_id}' is no longer open. Card cannot be activated.",
                None)  # fmt: skip
    return None, card


def _others(db: DB, card_id: str, account_id: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(cid, c) for cid, c in bank.data(db, "debit_cards").items()
            if cid != card_id and c.get("account_id") == account_id and c.get("status") == "ACTIVE"]  # fmt: skip


ACTIVATION_PARAMS = (
    s("card_id", "The debit card to activate"), s("last_4_digits", "Last 4 digits of the card number"),
    s("expiration_date", "The card's expiration date, MM/YY"), s("cvv", "The 3-digit CVV"),
    s("pin", "The 4-digit PIN the customer chooses"),
)  # fmt: skip


@agent_tool(
    "Activate a NEW debit card: only a first card on a checking account (issue_reason 'new_account' or "
    "'first_card'); replacement and reissued cards have their own activation tools.",
    *ACTIVATION_PARAMS, mutates=True, result="New debit card activated successfully.",
)  # fmt: skip
def activate_debit_card_8291(db: DB, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str) -> str:
    error, card = _activation_card(db, "activate_debit_card_8291", ("new_account", "first_card"), card_id,
                                   last_4_digits, expiration_date, cvv, pin)  # fmt: skip
    if error or card is None:
        return error or ""
    card.update(status="ACTIVE", activated_date=bank.TODAY)
    gone = []
    for other_id, other in _others(db, card_id, card.get("account_id")):
        other.update(status="DEACTIVATED", deactivated_date=bank.TODAY, deactivation_reason="New card activated")
        gone.append(other_id)
    parts = ["New Debit Card Activation Successful", f"Card ID: {card_id}", "Status: ACTIVE",
             f"Activation Date: {bank.TODAY}", "",
             "Your card is now ready to use at any ATM or point of sale terminal.",
             "For security, please sign the back of your card."]  # fmt: skip
    if gone:
        parts.append(f"\nNote: Previous card(s) have been deactivated: {', '.join(gone)}")
    return "\n".join(parts)


@agent_tool(
    "Activate a REPLACEMENT debit card: only cards replacing lost, stolen or fraud-suspected cards (issue_reason "
    "'lost', 'stolen' or 'fraud').",
    *ACTIVATION_PARAMS, mutates=True, result="Replacement debit card activated successfully.",
)  # fmt: skip
def activate_debit_card_8292(db: DB, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str) -> str:
    error, card = _activation_card(db, "activate_debit_card_8292", ("lost", "stolen", "fraud"), card_id,
                                   last_4_digits, expiration_date, cvv, pin)  # fmt: skip
    if error or card is None:
        return error or ""
    reason = card.get("issue_reason", "lost")
    card.update(status="ACTIVE", activated_date=bank.TODAY)
    gone = []
    for other_id, other in _others(db, card_id, card.get("account_id")):
        other.update(status="DEACTIVATED", deactivated_date=bank.TODAY,
                     deactivation_reason=f"Replacement card activated ({reason})")  # fmt: skip
        gone.append(other_id)
    parts = ["Replacement Debit Card Activation Successful", f"Card ID: {card_id}",
             f"Replacement Reason: {bank.title(reason)}", "Status: ACTIVE", f"Activation Date: {bank.TODAY}", "",
             "Your replacement card is now ready to use.", "", "IMPORTANT SECURITY REMINDERS:",
             "- Please review your recent transactions for any unauthorized charges",
             "- Report any suspicious activity immediately"]  # fmt: skip
    if reason == "fraud":
        parts.append("- Since fraud was suspected, we recommend changing your online banking password")
    if gone:
        parts.append(f"\nPrevious card(s) have been deactivated for security: {', '.join(gone)}")
    return "\n".join(parts)


@agent_tool(
    "Activate a REISSUED debit card: only cards reissued for expiration, damage, a design upgrade or a bank "
    "reissue (issue_reason 'expired', 'damaged', 'upgrade' or 'bank_reissue').",
    *ACTIVATION_PARAMS, mutates=True, result="Reissued debit card activated successfully.",
)  # fmt: skip
def activate_debit_card_8293(db: DB, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str) -> str:
    error, card = _activation_card(db, "activate_debit_card_8293", ("expired", "damaged", "upgrade", "bank_reissue"),
                                   card_id, last_4_digits, expiration_date, cvv, pin)  # fmt: skip
    if error or card is None:
        return error or ""
    reason = card.get("issue_reason", "expired")
    card.update(status="ACTIVE", activated_date=bank.TODAY)
    grace = []
    for other_id, other in _others(db, card_id, card.get("account_id")):
        other.update(status="GRACE_PERIOD", grace_period_ends=bank.TODAY,
                     deactivation_reason=f"Reissued card activated ({reason})")  # fmt: skip
        grace.append(other_id)
    parts = [
        "Reissued Debit Card Activation Successful",
        f"Card ID: {card_id}",
        f"Reissue Reason: {bank.title(reason)}",
        "Status: ACTIVE",
        f"Activation Date: {bank.TODAY}",
        "",
        "Your reissued card is now ready to use.",
    ]
    if grace:
        parts.append(f"\nNote: Your previous card(s) ({', '.join(grace)}) will remain active for 24 hours as a grace "
                     "period.")  # fmt: skip
        parts.append("After 24 hours, the old card(s) will be automatically deactivated.")
    if reason in ("expired", "bank_reissue"):
        parts.append("\nReminder: If your card number changed, please update any recurring payments with your new card "
                     "details.")  # fmt: skip
    return "\n".join(parts)


CLOSE_REASONS = ["lost", "stolen", "fraud_suspected", "damaged", "no_longer_needed", "account_closing"]


@agent_tool(
    "Close (cancel) a debit card permanently.",
    s("card_id", "The debit card"), s("reason", "lost, stolen, fraud_suspected, damaged, no_longer_needed or "
                                                "account_closing"),
    mutates=True, result="Debit card closed successfully.",
)  # fmt: skip
def close_debit_card_4721(db: DB, card_id: str, reason: str) -> str:
    if not card_id or not reason:
        return "Error: Missing required parameters. Required: card_id, reason."
    if reason.lower() not in CLOSE_REASONS:
        return f"Error: Invalid reason. Must be one of: {CLOSE_REASONS}"
    reason = reason.lower()
    cards = bank.data(db, "debit_cards")
    if card_id not in cards:
        return f"Error: Debit card '{card_id}' not found."
    card = cards[card_id]
    if card.get("status") not in ("ACTIVE", "PENDING"):
        return (f"Error: Debit card '{card_id}' cannot be closed. Current status: {card.get('status')}. Only ACTIVE or "
                "PENDING cards can be closed.")  # fmt: skip
    before = card.get("status")
    card.update(status="CLOSED", closed_date=bank.TODAY, closure_reason=reason)
    parts = ["Debit Card Closed Successfully", f"Card ID: {card_id}", f"Previous Status: {before}",
             "New Status: CLOSED", f"Closure Reason: {bank.title(reason)}", f"Closure Date: {bank.TODAY}",
             ""]  # fmt: skip
    if reason in ("lost", "stolen", "fraud_suspected"):
        parts += ["IMPORTANT: This card has been immediately deactivated for security.",
                  "Any pending transactions may still be processed."]  # fmt: skip
        if reason == "fraud_suspected":
            parts += ["Please advise the customer to review recent transactions and file disputes for any "
                      "unauthorized charges.", "Also recommend changing their online banking password."]  # fmt: skip
    parts += ["", "Note: This card cannot be reactivated. If the customer needs a new card, they can order one through "
              "the standard ordering process.", "Any recurring payments linked to this card will need to be updated "
              "with new payment information."]  # fmt: skip
    return "\n".join(parts)


@agent_tool("Freeze a debit card for now (it can be unfrozen later).", s("card_id", "The debit card"), mutates=True,
            result="Debit card frozen successfully.")  # fmt: skip
def freeze_debit_card_3892(db: DB, card_id: str) -> str:
    if not card_id:
        return "Error: Missing required parameter: card_id."
    cards = bank.data(db, "debit_cards")
    if card_id not in cards:
        return f"Error: Debit card '{card_id}' not found."
    card = cards[card_id]
    if card.get("status") == "FROZEN":
        return f"Error: Debit card '{card_id}' is already frozen."
    if card.get("status") != "ACTIVE":
        return (f"Error: Debit card '{card_id}' cannot be frozen. Current status: {card.get('status')}. Only ACTIVE "
                "cards can be frozen.")  # fmt: skip
    card.update(status="FROZEN", frozen_date=bank.TODAY)
    return "\n".join(
        [
            "Debit Card Frozen Successfully",
            f"Card ID: {card_id}",
            "Status: FROZEN",
            f"Frozen Date: {bank.TODAY}",
            "",
            "While frozen:",
            "- All new purchase transactions will be declined",
            "- Recurring payments and subscriptions will be declined",
            "- Pending transactions already authorized may still process",
            "",
            "To unfreeze, the customer can call customer service or use the mobile app.",
            "If the card is confirmed lost or stolen, recommend closing the card permanently instead.",
        ]
    )


@agent_tool("Unfreeze a frozen debit card.", s("card_id", "The debit card"), mutates=True,
            result="Debit card unfrozen successfully.")  # fmt: skip
def unfreeze_debit_card_3893(db: DB, card_id: str) -> str:
    if not card_id:
        return "Error: Missing required parameter: card_id."
    cards = bank.data(db, "debit_cards")
    if card_id not in cards:
        return f"Error: Debit card '{card_id}' not found."
    card = cards[card_id]
    if card.get("status") == "ACTIVE":
        return f"Error: Debit card '{card_id}' is already active."
    if card.get("status") != "FROZEN":
        return (f"Error: Debit card '{card_id}' cannot be unfrozen. Current status: {card.get('status')}. Only FROZEN "
                "cards can be unfrozen.")  # fmt: skip
    account_id = card.get("account_id")
    accounts = bank.data(db, "accounts")
    if account_id and account_id in accounts and accounts[account_id].get("status") != "OPEN":
        return (f"Error: The linked checking account '{account_id}' is no longer open. Card cannot be "
                "unfrozen.")  # fmt: skip
    card.update(status="ACTIVE", unfrozen_date=bank.TODAY)
    return "\n".join(["Debit Card Unfrozen Successfully", f"Card ID: {card_id}", "Status: ACTIVE",
                      f"Unfrozen Date: {bank.TODAY}", "", "The card is now active and ready to use immediately.",
                      "All transactions will process normally."])  # fmt: skip


@agent_tool(
    "Clear a fraud alert or a velocity block on a debit card.",
    s("card_id", "The debit card"),
    s("reason", "'customer_verified' (a fraud alert, after verifying the customer) or 'velocity_clear' (a velocity "
      "block, after identity verification)"),
    mutates=True, result="Fraud alert/velocity block cleared successfully.",
)  # fmt: skip
def clear_debit_card_fraud_alert_4892(db: DB, card_id: str, reason: str) -> str:
    if not card_id:
        return "Error: Missing required parameter: card_id."
    if not reason:
        return "Error: Missing required parameter: reason."
    if reason not in ("customer_verified", "velocity_clear"):
        return f"Error: Invalid reason '{reason}'. Must be one of: customer_verified, velocity_clear"
    cards = bank.data(db, "debit_cards")
    if card_id not in cards:
        return f"Error: Debit card '{card_id}' not found."
    card = cards[card_id]
    if reason == "velocity_clear":
        if not card.get("velocity_blocked", False):
            return f"Error: Debit card '{card_id}' does not have an active velocity block."
        card.update(velocity_blocked=False, velocity_cleared_date=bank.TODAY)
        return "\n".join(["Velocity Block Cleared Successfully", f"Card ID: {card_id}", f"Cleared Date: {bank.TODAY}",
                          "", "The card is now unblocked and ready for normal use.",
                          "The velocity monitoring will continue - if the same unusual patterns recur,",
                          "the card may be blocked again automatically."])  # fmt: skip
    if not card.get("fraud_alert_active", False):
        return f"Error: Debit card '{card_id}' does not have an active fraud alert."
    if card.get("alert_source") == "bank_initiated":
        return ("Error: BANK_INITIATED_ALERT - This fraud alert was initiated by the bank's fraud detection system and "
                "cannot be cleared by customer service agents. Please transfer the customer to the security team using "
                "transfer_to_human_agents.")  # fmt: skip
    card.update(fraud_alert_active=False, alert_source=None, fraud_alert_cleared_date=bank.TODAY)
    return "\n".join(
        [
            "Fraud Alert Cleared Successfully",
            f"Card ID: {card_id}",
            f"Cleared Date: {bank.TODAY}",
            "",
            "The fraud alert has been removed from the card.",
            "All transactions will process normally.",
            "",
            "Remind the customer to review recent transactions and report any unauthorized charges.",
        ]
    )


PIN_DONE = ["", "The new PIN is effective immediately."]
PIN_TAIL = ["Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.", "",
            "Security reminder: Never share your PIN with anyone."]  # fmt: skip


@agent_tool(
    "Reset a debit card PIN the customer has forgotten.",
    s("card_id", "The debit card"), s("last_4_digits", "Last 4 digits of the card number"),
    s("new_pin", "The new 4-digit PIN"), mutates=True, result="Debit card PIN reset successfully.",
)  # fmt: skip
def reset_debit_card_pin_6284(db: DB, card_id: str, last_4_digits: str, new_pin: str) -> str:
    if not all([card_id, last_4_digits, new_pin]):
        return "Error: Missing required parameters. Required: card_id, last_4_digits, new_pin."
    if not last_4_digits.isdigit() or len(last_4_digits) != 4:
        return "Error: Last 4 digits must be exactly 4 digits."
    problem = pin_problem(new_pin)
    if problem:
        return f"Error: {problem}"
    cards = bank.data(db, "debit_cards")
    if card_id not in cards:
        return f"Error: Debit card '{card_id}' not found."
    card = cards[card_id]
    if card.get("last_4_digits") != last_4_digits:
        return "Error: Card verification failed. The last 4 digits do not match our records."
    if card.get("status") != "ACTIVE":
        return (f"Error: Cannot reset PIN. Card status is {card.get('status')}. Only ACTIVE cards can have their PIN "
                "reset.")  # fmt: skip
    card.update(pin_last_changed=bank.TODAY, pin_locked=False, pin_attempts_remaining=3)
    return "\n".join(["Debit Card PIN Reset Successfully", f"Card ID: {card_id}", f"PIN Changed: {bank.TODAY}",
                      *PIN_DONE, "Your card has been unlocked and is ready to use.", *PIN_TAIL])  # fmt: skip


@agent_tool(
    "Change a debit card PIN when the customer knows the current one.",
    s("card_id", "The debit card"), s("current_pin", "The current 4-digit PIN"), s("new_pin", "The new 4-digit PIN"),
    mutates=True, result="Debit card PIN changed successfully.",
)  # fmt: skip
def change_debit_card_pin_6285(db: DB, card_id: str, current_pin: str, new_pin: str) -> str:
    if not all([card_id, current_pin, new_pin]):
        return "Error: Missing required parameters. Required: card_id, current_pin, new_pin."
    if not current_pin.isdigit() or len(current_pin) != 4:
        return "Error: Current PIN must be exactly 4 digits."
    problem = pin_problem(new_pin)
    if problem:
        return f"Error: {problem}"
    if current_pin == new_pin:
        return "Error: New PIN must be different from current PIN."
    cards = bank.data(db, "debit_cards")
    if card_id not in cards:
        return f"Error: Debit card '{card_id}' not found."
    card = cards[card_id]
    if card.get("status") != "ACTIVE":
        return (f"Error: Cannot change PIN. Card status is {card.get('status')}. Only ACTIVE cards can have their PIN "
                "changed.")  # fmt: skip
    card["pin_last_changed"] = bank.TODAY
    return "\n".join(["Debit Card PIN Changed Successfully", f"Card ID: {card_id}", f"PIN Changed: {bank.TODAY}",
                      *PIN_DONE, *PIN_TAIL])  # fmt: skip


@agent_tool(
    "Every debit card of a checking account: status, issue reason, expiration date.",
    s("account_id", "The checking account"), mutates=False, result="Debit cards retrieved successfully.",
)  # fmt: skip
def get_debit_cards_by_account_id_7823(db: DB, account_id: str) -> str:
    if not account_id:
        return "Error: Missing required parameter 'account_id'."
    accounts = bank.data(db, "accounts")
    if account_id not in accounts:
        return f"Error: Account '{account_id}' not found."
    if accounts[account_id].get("class", "").lower() not in ("checking", "business_checking"):
        return (f"Error: Account '{account_id}' is not a checking account. Debit cards are only available for checking "
                "accounts.")  # fmt: skip
    found = []
    for card_id, card in bank.data(db, "debit_cards").items():
        if card.get("account_id") != account_id:
            continue
        info: dict[str, Any] = {"card_id": card_id, **card}
        if "last_4_digits" in info and "card_number_last_4" not in info:
            info["card_number_last_4"] = info.pop("last_4_digits")
        if "issue_date" in info and "date_issued" not in info:
            info["date_issued"] = info.pop("issue_date")
        elif "created_date" in info and "date_issued" not in info:
            info["date_issued"] = info.pop("created_date")
        found.append(info)
    if not found:
        return f"No debit cards found for account '{account_id}'."
    found.sort(key=lambda c: c.get("date_issued") or "", reverse=True)
    return json.dumps(found, indent=2)


ATM_DEFAULTS = {
    "blue account": 500, "green account": 600, "light blue account": 400, "green fee-free account": 500,
    "evergreen account": 750, "bluest account": 1500, "dark green account": 300, "gold years account": 600,
    "purple account": 1000,
}  # fmt: skip


@agent_tool(
    "Raise a debit card's daily ATM or purchase limit for 24 hours.",
    s("card_id", "The debit card"), s("limit_type", "'atm' (daily ATM withdrawals) or 'purchase' (daily purchases)"),
    i("new_limit", "The temporary limit in dollars"), mutates=True, result="Temporary limit increase granted "
    "successfully.",
)  # fmt: skip
def request_temporary_debit_card_limit_increase_8374(db: DB, card_id: str, limit_type: str, new_limit: Any) -> str:
    if not card_id:
        return "Error: Missing required parameter: card_id."
    if not limit_type:
        return "Error: Missing required parameter: limit_type."
    if limit_type not in ("atm", "purchase"):
        return f"Error: Invalid limit_type '{limit_type}'. Must be 'atm' or 'purchase'."
    if new_limit is None:
        return "Error: Missing required parameter: new_limit."
    try:
        wanted = float(new_limit)
    except (ValueError, TypeError):
        return f"Error: new_limit must be an integer, got '{new_limit}'."
    if not wanted.is_integer():
        return f"Error: new_limit must be an integer, got '{wanted}'."
    limit = int(wanted)
    if limit <= 0:
        return "Error: new_limit must be a positive amount."
    cards = bank.data(db, "debit_cards")
    if card_id not in cards:
        return f"Error: Debit card '{card_id}' not found."
    card = cards[card_id]
    if card.get("status") != "ACTIVE":
        return (f"Error: Debit card '{card_id}' is not active. Current status: {card.get('status')}. Only ACTIVE cards "
                "can have limit increases.")  # fmt: skip
    account_id = card.get("account_id")
    accounts = bank.data(db, "accounts")
    if not account_id or account_id not in accounts:
        return f"Error: Could not find linked account for debit card '{card_id}'."
    account = accounts[account_id]
    if account.get("status") != "OPEN":
        return (f"Error: The linked account '{account_id}' is not in good standing. Account status: "
                f"{account.get('status')}.")  # fmt: skip
    opened = account.get("date_opened")
    if opened:
        try:
            age = (datetime.strptime(bank.TODAY, "%m/%d/%Y") - datetime.strptime(opened, "%m/%d/%Y")).days
        except ValueError:
            age = None
        if age is not None and age < 60:
            return (f"Error: Account must be at least 60 days old for a temporary limit increase. Account age: {age} "
                    "days.")  # fmt: skip
    if limit_type == "atm":
        field, label = "daily_atm_limit", "Daily ATM Withdrawal Limit"
        current = card.get(field)
        if current is None:
            level = account.get("level", "").lower()
            if "light green" in level:
                return ("Error: Light Green Account (teen checking) cards have policy-based limits that cannot be "
                        "modified. The daily ATM withdrawal limit of $150 is fixed by account policy for safety "
                        "reasons. The customer may request the parent/guardian to withdraw cash from their own account "
                        "if needed.")  # fmt: skip
            current = ATM_DEFAULTS.get(level)
            if current is None:
                return (f"Error: Could not determine the default ATM limit for account type '{account.get('level')}'. "
                        "Please verify the account type.")  # fmt: skip
    else:
        field, label = "daily_purchase_limit", "Daily Purchase Limit"
        current = card.get(field)
    if current is None:
        return (f"Error: The card does not have a {label.lower()} configured. This may be a restricted account type "
                "where limits are set by account policy and cannot be modified.")  # fmt: skip
    ceiling = int(current * 1.5)
    if limit > ceiling:
        return (f"Error: Requested limit ${limit} exceeds the maximum allowed temporary increase. Maximum temporary "
                f"limit is ${ceiling} (150% of current ${current} limit).")  # fmt: skip
    if limit <= current:
        return f"Error: Requested limit ${limit} is not higher than the current limit of ${current}."
    card[field] = limit
    card[f"temporary_{limit_type}_limit_increase"] = True
    card[f"original_{limit_type}_limit"] = current
    card[f"temporary_{limit_type}_limit_expires"] = bank.TODAY
    return "\n".join([
        f"Temporary {label} Increase Granted Successfully", f"Card ID: {card_id}", f"Previous Limit: ${current}",
        f"New Temporary Limit: ${limit}", f"Increase Amount: ${limit - current}", "", "Important Information:",
        "- This temporary increase expires in 24 hours", f"- After expiration, the limit will revert to ${current}",
        "- Only one temporary increase is allowed per 24-hour period", "",
        "Note: If the customer is at a third-party (non-Rho-Bank) ATM, that ATM may have its own",
        "per-transaction or daily limits that Rho-Bank cannot override. The customer may need to",
        "use a Rho-Bank ATM or make multiple smaller withdrawals at third-party ATMs.",
    ])  # fmt: skip
