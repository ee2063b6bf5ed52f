"""The customer's tools: six regular ones (a task lists which it hands out, in ``user_tools``)
and the four discoverable ones the agent must hand over first (``give_discoverable_user_tool``).

The customer works on the same DB as the agent (upstream gives both toolkits one DB object).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pytest_tau2.domains.tau2_banking_knowledge import db as bank
from pytest_tau2.domains.tau2_banking_knowledge.agent_tools import BankTool, schema, text
from pytest_tau2.domains.tau2_banking_knowledge.discoverable import USER_TOOLS, n, parse_arguments, s, user_tool
from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.environment.tools import Tool

USER_NAMESPACE = "tau2_banking_knowledge_user"

CARD_TYPES = (
    "Bronze Rewards Card", "Business Bronze Rewards Card", "Business Gold Rewards Card",
    "Business Platinum Rewards Card", "Business Silver Rewards Card", "Crypto-Cash Back", "Diamond Elite Card",
    "EcoCard", "Gold Rewards Card", "Green Rewards Card", "Platinum Rewards Card", "Silver Rewards Card",
    "Silver Zoom Card",
)  # fmt: skip
REWARD_RATES: dict[str, dict[str, float]] = {
    "Bronze Rewards Card": {"default": 1.0},
    "Silver Rewards Card": {"Travel": 4.0, "Software": 4.0, "default": 1.0},
    "Gold Rewards Card": {"default": 2.5},
    "Platinum Rewards Card": {"default": 10.0},
    "Business Bronze Rewards Card": {"default": 1.0},
    "Business Silver Rewards Card": {"Travel": 10.0, "Software": 10.0, "default": 1.0},
    "Green Rewards Card": {"Sustainable": 3.0, "default": 1.0},
    "Business Gold Rewards Card": {"Operations": 2.5, "default": 1.0},
    "Business Platinum Rewards Card": {"Travel": 4.0, "Software": 4.0, "Media": 4.0, "default": 1.5},
    "Silver Zoom Card": {"Transportation": 3.0, "default": 1.0},
    "Diamond Elite Card": {"default": 5.0},
    "EcoCard": {"Green": 5.0, "default": 1.0},
    "Crypto-Cash Back": {"default": 2.0},
}
"""Percent cash back per category (``default`` elsewhere), as upstream's transaction tool uses."""


class BankUserTool(BankTool):
    abstract = True
    namespace = USER_NAMESPACE


class ApplyForCreditCardTool(BankUserTool):
    name = "apply_for_credit_card"
    action_name = "apply_for_credit_card"
    mutates_state = True
    description = "Apply for a credit card."
    parameters = schema(
        ["card_type", "customer_name", "annual_income"],
        card_type={"type": "string", "enum": list(CARD_TYPES), "description": "The card to apply for."},
        customer_name=text("Your full legal name."),
        annual_income={"type": "number", "description": "Your annual income in USD."},
        rho_bank_subscription={"type": "boolean", "description": "Whether you have a Rho-Bank+ subscription."},
    )

    def run(self, card_type: str, customer_name: str, annual_income: Any, rho_bank_subscription: Any = False) -> str:
        if card_type not in CARD_TYPES:
            return f"Error: Invalid card_type '{card_type}'. Must be one of: {list(CARD_TYPES)}"
        try:
            income = float(annual_income)
        except (TypeError, ValueError):
            return "Error: Invalid annual_income. Must be a number."
        application_id = bank.hex_id(f"credit_card:{card_type}:{customer_name}:{income}:{rho_bank_subscription}")
        record: JSONObject = {
            "application_id": application_id, "card_type": card_type, "customer_name": customer_name,
            "annual_income": income, "rho_bank_subscription": rho_bank_subscription, "status": "PENDING",
            "date": bank.TODAY,
        }  # fmt: skip
        if not bank.add(self.db, "credit_card_applications", application_id, record):
            return f"Failed to submit application: Record ID '{application_id}' may already exist."
        return (
            "Credit card application submitted:\nYour application has been successfully submitted. "
            "You will receive a decision within 5-7 business days via email."
        )


class SubmitReferralTool(BankUserTool):
    name = "submit_referral"
    action_name = "submit_referral"
    mutates_state = True
    description = "Refer someone to open an account."
    parameters = schema(
        ["user_id", "account_type"], user_id=text("Your user id (the referrer)."),
        account_type=text("The type of account you refer them to."),
    )  # fmt: skip

    def run(self, user_id: str, account_type: str) -> str:
        referral_id = bank.hex_id(f"referral:{user_id}:{account_type}")
        record: JSONObject = {
            "referral_id": referral_id, "referrer_id": user_id, "referred_account_type": account_type,
            "referral_status": "NO_PROGRESS", "date": bank.TODAY,
        }  # fmt: skip
        if not bank.add(self.db, "referrals", referral_id, record):
            return f"Failed to submit referral: Record ID '{referral_id}' may already exist."
        return (
            f"Referral request submitted successfully!\n  - Referral ID: {referral_id}\n  - Referrer ID: {user_id}\n"
            f"  - Account Type: {account_type}\n  - Status: NO_PROGRESS\n  - Date: {bank.TODAY}\n\n"
            "Share your referral ID with the person you're referring. "
            "They will need to use this when applying for their account."
        )


class CallDiscoverableUserToolTool(BankUserTool):
    name = "call_discoverable_user_tool"
    action_name = "call_discoverable_user_tool"
    mutates_state = True
    description = "Run a tool the agent gave you, with the arguments the agent told you."
    parameters = schema(
        ["discoverable_tool_name"], discoverable_tool_name=text("The tool's name."),
        arguments=text("A JSON object string of its arguments (default '{}')."),
    )  # fmt: skip

    def run(self, discoverable_tool_name: str, arguments: str = "{}") -> str:
        tool = USER_TOOLS.get(discoverable_tool_name)
        if tool is None:
            return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
        parsed = parse_arguments(arguments)
        if isinstance(parsed, str):
            return parsed
        missing = tool.required_missing(parsed)
        if missing is not None:
            return f"Error: Missing required parameter: {missing}"
        for name in parsed:
            if not tool.accepts(name):
                return f"Error: Unexpected parameter: {name}"
        try:
            return tool.run(self.db, **parsed)
        except TypeError as exc:
            return f"Error: Invalid arguments for tool '{discoverable_tool_name}': {exc}"


class ListDiscoverableUserToolsTool(BankUserTool):
    name = "list_discoverable_user_tools"
    description = "The tools the agent has given you."
    parameters = schema([])

    def run(self) -> str:
        result = bank.query_text(self.db, "user_discoverable_tools", "{}")
        if "No results found" in result:
            return "No tools have been given to you yet by the agent."
        return f"Tools given to you by the agent:\n{result}"


class RequestHumanAgentTransferTool(BankUserTool):
    name = "request_human_agent_transfer"
    action_name = "request_human_agent_transfer"
    mutates_state = True
    description = "Ask to be transferred to a human agent (each request is logged)."
    parameters = schema([])

    def run(self) -> str:
        existing = bank.query_text(self.db, "human_transfer_requests", "{}")
        count = 1 if not bank.found(existing) else existing.count("request_id") + 1
        request_id = f"transfer_request_{count}"
        record: JSONObject = {"request_id": request_id, "request_number": count, "requested_at": bank.TODAY,
                              "status": "PENDING"}  # fmt: skip
        bank.add(self.db, "human_transfer_requests", request_id, record)
        return f"Transfer request #{count} submitted.\nThe agent will process your request."


class SubmitTransactionTool(BankUserTool):
    name = "submit_transaction"
    action_name = "submit_transaction"
    mutates_state = True
    description = "Make a credit card purchase."
    parameters = schema(
        ["user_id", "credit_card_type", "merchant_name", "amount", "category"],
        user_id=text("Your user id."),
        credit_card_type=text("The card used, e.g. 'Gold Rewards Card'."),
        merchant_name=text("The merchant."),
        amount={"type": "number", "description": "The amount in USD, e.g. 127.43."},
        category=text("The category, e.g. 'Groceries', 'Dining', 'Travel', 'Software'."),
    )

    def run(self, user_id: str, credit_card_type: str, merchant_name: str, amount: Any, category: str) -> str:
        rates = REWARD_RATES.get(credit_card_type)
        if rates is None:
            return f"Error: Unknown credit card type '{credit_card_type}'. Available types: {list(REWARD_RATES)}"
        txn = bank.transaction_id(user_id, credit_card_type, merchant_name, amount, category)
        rate = rates.get(category, rates["default"])
        points = int(amount * rate)
        record: JSONObject = {
            "transaction_id": txn, "user_id": user_id, "credit_card_type": credit_card_type,
            "merchant_name": merchant_name, "transaction_amount": f"${amount:.2f}", "transaction_date": bank.TODAY,
            "category": category, "status": "COMPLETED", "rewards_earned": f"{points} points",
        }  # fmt: skip
        if not bank.add(self.db, "credit_card_transaction_history", txn, record):
            return f"Failed to submit transaction: Record ID '{txn}' may already exist."
        return (
            f"Transaction submitted successfully!\n  - Transaction ID: {txn}\n  - User ID: {user_id}\n"
            f"  - Card Type: {credit_card_type}\n  - Merchant: {merchant_name}\n  - Amount: ${amount:.2f}\n"
            f"  - Category: {category}\n  - Date: {bank.TODAY}\n"
            f"  - Rewards Earned: {points} points ({rate}% cashback rate)\n"
        )


USER_TOOL_CLASSES: tuple[type[Tool], ...] = (
    ApplyForCreditCardTool,
    SubmitReferralTool,
    CallDiscoverableUserToolTool,
    ListDiscoverableUserToolsTool,
    RequestHumanAgentTransferTool,
    SubmitTransactionTool,
)


# ---- the four discoverable customer tools ---------------------------------------------------------


def _not_given(db: bank.BankDB, name: str) -> str | None:
    if not bank.found(bank.by_field(db, "user_discoverable_tools", "tool_name", name)):
        return (
            f"Error: Tool '{name}' has not been given to you by the agent. "
            "The agent must first use `give_discoverable_user_tool` to give this tool to you."
        )
    return None


def _log_call(db: bank.BankDB, name: str, arguments: JSONObject) -> None:
    record: JSONObject = {"tool_name": name, "arguments": arguments, "called_at": bank.TODAY, "status": "CALLED"}
    bank.add(db, "user_discoverable_tool_calls", bank.user_tool_call_id(name, arguments), record)


def _executed(message: str, name: str, arguments: JSONObject) -> str:
    return f"{message}\n\nExecuted: {name}\nArguments: {json.dumps(arguments, indent=2)}\n"


@user_tool(
    "Submit a cash back dispute for one transaction.",
    s("user_id", "Your user id"), s("transaction_id", "The transaction with the wrong cash back"),
    mutates=True, result="Cash back dispute submitted successfully. Your case has been queued for review.",
)  # fmt: skip
def submit_cash_back_dispute_0589(db: bank.BankDB, user_id: str, transaction_id: str) -> str:
    name = "submit_cash_back_dispute_0589"
    error = _not_given(db, name)
    if error:
        return error
    arguments: JSONObject = {"user_id": user_id, "transaction_id": transaction_id}
    _log_call(db, name, arguments)
    dispute_id = bank.prefixed("dsp", f"dispute:{user_id}:{transaction_id}")
    settings = bank.data(db, "task_config").get("dispute_settings", {})
    record: JSONObject = {"dispute_id": dispute_id, "user_id": user_id, "transaction_id": transaction_id,
                          "submitted_at": bank.TODAY, "status": "SUBMITTED"}  # fmt: skip
    status = "Status: SUBMITTED - Your dispute has been queued for review."
    if settings.get("auto_resolve_disputes", False):
        record.update(status="RESOLVED", resolution="APPROVED")
        status = (
            "Status: RESOLVED - The dispute has been reviewed and approved. The transaction rewards need to be updated."
        )
    added = bank.add(db, "cash_back_disputes", dispute_id, record)
    text = _executed("Cash back dispute submitted successfully. Your case has been queued for review.", name, arguments)
    if added:
        return text + f"Dispute ID: {dispute_id}\n{status}"
    return text + "Note: Dispute may have already been submitted for this transaction."


@user_tool(
    "Create a referral link for a credit card, to share with someone you refer.",
    s("user_id", "Your user id (the referrer)"), s("card_name", "The card, e.g. 'Gold Rewards Card'"),
    mutates=True, result="Referral link generated successfully. Share this link with the person you want to refer.",
)  # fmt: skip
def get_referral_link(db: bank.BankDB, user_id: str, card_name: str) -> str:
    name = "get_referral_link"
    error = _not_given(db, name)
    if error:
        return error
    arguments: JSONObject = {"user_id": user_id, "card_name": card_name}
    _log_call(db, name, arguments)
    referral_id = bank.hex_id(f"referral_link:{user_id}:{card_name}")
    record: JSONObject = {"referral_id": referral_id, "referrer_id": user_id, "referred_account_type": card_name,
                          "referral_status": "NO_PROGRESS", "date": bank.TODAY}  # fmt: skip
    added = bank.add(db, "referrals", referral_id, record)
    text = _executed(
        "Referral link generated successfully. Share this link with the person you want to refer.", name, arguments
    )
    if added:
        return text + f"Referral ID: {referral_id}\nReferral link: https://rhobank.com/refer/{referral_id}"
    return text + "Note: A referral link for this card may have already been generated."


@user_tool(
    "Look up the last 4 digits of one of your credit cards.",
    s("credit_card_account_id", "The credit card account id, e.g. 'cc_76ad9cc60e_gold'"),
    mutates=False, result="Card information retrieved successfully.",
)  # fmt: skip
def get_card_last_4_digits(db: bank.BankDB, credit_card_account_id: str) -> str:
    name = "get_card_last_4_digits"
    error = _not_given(db, name)
    if error:
        return error
    arguments: JSONObject = {"credit_card_account_id": credit_card_account_id}
    _log_call(db, name, arguments)
    if not bank.found(bank.by_field(db, "credit_card_accounts", "account_id", credit_card_account_id)):
        return f"Error: Credit card account '{credit_card_account_id}' not found."
    digest = hashlib.sha256(f"card_last4:{credit_card_account_id}".encode()).hexdigest()
    last_4 = "".join(c for c in digest if c.isdigit())[:4].ljust(4, "0")
    return _executed("Card information retrieved successfully.", name, arguments) + f"Last 4 digits of card: {last_4}"


@user_tool(
    "Deposit a check into a checking or savings account (a photo of the check in the mobile app).",
    s("account_id", "The account to deposit into"), n("check_amount", "The check's amount in USD"),
    mutates=True,
    result="Check deposited successfully. Funds will be available according to your account's deposit policy.",
)  # fmt: skip
def deposit_check_3847(db: bank.BankDB, account_id: str, check_amount: Any) -> str:
    name = "deposit_check_3847"
    error = _not_given(db, name)
    if error:
        return error
    arguments: JSONObject = {"account_id": account_id, "check_amount": check_amount}
    _log_call(db, name, arguments)
    try:
        amount = float(check_amount)
    except (ValueError, TypeError):
        return f"Error: Invalid check amount '{check_amount}'. Must be a number."
    if amount <= 0:
        return "Error: Check amount must be positive."
    accounts = bank.data(db, "accounts")
    if account_id not in accounts:
        return f"Error: Account '{account_id}' not found."
    account = accounts[account_id]
    if account.get("status") not in ("ACTIVE", "OPEN"):
        return f"Error: Account '{account_id}' is not active."
    before = bank.account_balance(account)
    after = before + amount
    account["current_holdings"] = f"${after:.2f}"
    return _executed(
        "Check deposited successfully. Funds will be available according to your account's deposit policy.",
        name, arguments,
    ) + (
        f"Check deposit processed!\n  - Account: {account_id}\n  - Check Amount: ${amount:.2f}\n"
        f"  - Previous Balance: ${before:.2f}\n  - New Balance: ${after:.2f}"
    )  # fmt: skip
