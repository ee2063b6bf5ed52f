"""The 14 base agent tools (the ones every banking scenario lists; retrieval adds its own).

Upstream's behaviour at the pin: lookups render the query helper's text, refusals are text
answers (``Error: ...``) rather than failed calls, the clock is fixed at 2025-11-14 03:40 EST,
and the three discoverable-tool doors keep their state (unlocked tools) for the run only.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pytest_tau2.domains.tau2_banking_knowledge import db as bank
from pytest_tau2.domains.tau2_banking_knowledge.discoverable import (
    AGENT_TOOLS,
    USER_TOOLS,
    parse_arguments,
    upstream_texts,
)
from pytest_tau2.domains.tau2_common.tools import Tau2Tool
from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
from pytest_tau2.environment.tools import Tool

NAMESPACE = "tau2_banking_knowledge"
TRANSFER_REASONS = (
    "fraud_or_security_concern", "account_closure_request", "deceased_account_holder",
    "legal_or_regulatory_matter", "account_ownership_dispute", "complex_billing_dispute",
    "abusive_customer_behavior", "third_party_inquiry", "technical_system_error",
    "unconfirmed_external_communication", "customer_demands_after_unavailable_offer_refusal",
    "kb_search_unsuccessful_customer_requests_transfer", "specialized_department_required",
    "accessibility_or_special_needs", "customer_frustrated_demands_human",
    "supervisor_request_service_complaint", "customer_requests_human_no_specific_reason",
    "request_completed_customer_wants_human_followup", "other",
)  # fmt: skip
UNLOCKED = "unlocked_agent_tools"
"""Key of the agent state that remembers unlocked tools (not part of the DB)."""
ALLOWLIST = "read_log_allowlist"
"""Key of the agent state holding the task's read allowlist (set by the scenario)."""


def schema(required: list[str], **properties: JSONObject) -> JSONObject:
    schemas: JSONObject = dict(properties)  # each a JSON Schema object
    return {
        "type": "object",
        "properties": schemas,
        "required": list[JSONValue](required),
        "additionalProperties": False,
    }


def text(description: str) -> JSONObject:
    return {"type": "string", "description": description}


class BankTool(Tau2Tool):
    abstract = True
    namespace = NAMESPACE

    if TYPE_CHECKING:

        @property
        def db(self) -> bank.BankDB: ...


class TransferToHumanAgentsTool(BankTool):
    name = "transfer_to_human_agents"
    action_name = "transfer_to_human_agents"
    ends_conversation = "transfer"
    description = (
        "Transfer the customer to a human agent, with a summary of the issue and what was tried. "
        "The reason code to use is given in the knowledge base: look it up first."
    )
    parameters = schema(
        ["summary"],
        summary=text("The customer's issue and what was attempted before the transfer."),
        reason={"type": "string", "enum": list(TRANSFER_REASONS), "description": "The reason code (default 'other')."},
    )

    def run(self, summary: str, reason: str = "other") -> str:
        if reason not in TRANSFER_REASONS:
            return f"Error: Invalid transfer reason '{reason}'. Must be one of: {', '.join(TRANSFER_REASONS)}"
        return f"Transfer successful (reason: {reason}). A human agent will assist you shortly."


class GetCurrentTimeTool(BankTool):
    name = "get_current_time"
    description = "The current time, e.g. for the time_verified field of a verification record."
    parameters = schema([])

    def run(self) -> str:
        return f"The current time is {bank.CURRENT_TIME}."


class _Lookup(BankTool):
    abstract = True
    table = ""
    field = ""

    def lookup(self, value: object) -> str:
        return bank.by_field(self.db, self.table, self.field, value)


class GetUserInformationByIdTool(_Lookup):
    name = "get_user_information_by_id"
    description = "A customer's record (date of birth, email, phone number, address) by user id."
    parameters = schema(["user_id"], user_id=text("The user's id."))
    table, field = "users", "user_id"

    def run(self, user_id: str) -> str:
        return self.lookup(user_id)


class GetUserInformationByNameTool(_Lookup):
    name = "get_user_information_by_name"
    description = "A customer's record by their full name (case sensitive)."
    parameters = schema(["customer_name"], customer_name=text("The customer's full name."))
    table, field = "users", "name"

    def run(self, customer_name: str) -> str:
        return self.lookup(customer_name)


class GetUserInformationByEmailTool(_Lookup):
    name = "get_user_information_by_email"
    description = "A customer's record by their email address."
    parameters = schema(["email"], email=text("The customer's email."))
    table, field = "users", "email"

    def run(self, email: str) -> str:
        return self.lookup(email)


class ChangeUserEmailTool(BankTool):
    name = "change_user_email"
    action_name = "change_user_email"
    mutates_state = True
    description = "Change a customer's email address."
    parameters = schema(["user_id", "new_email"], user_id=text("The user's id."), new_email=text("The new email."))

    def run(self, user_id: str, new_email: str) -> str:
        if bank.update(self.db, "users", user_id, {"email": new_email}) is None:
            return f"Error: User with ID '{user_id}' not found."
        return f"Email updated successfully.\n  - User ID: {user_id}\n  - New Email: {new_email}"


class GetReferralsByUserTool(_Lookup):
    name = "get_referrals_by_user"
    description = "Every referral a customer (the referrer) has made."
    parameters = schema(["user_id"], user_id=text("The referrer's user id."))
    table, field = "referrals", "referrer_id"

    def run(self, user_id: str) -> str:
        return self.lookup(user_id)


class GetCreditCardTransactionsByUserTool(_Lookup):
    name = "get_credit_card_transactions_by_user"
    description = "Every credit card transaction of a customer."
    parameters = schema(["user_id"], user_id=text("The user's id."))
    table, field = "credit_card_transaction_history", "user_id"

    def run(self, user_id: str) -> str:
        return self.lookup(user_id)


class GetCreditCardAccountsByUserTool(_Lookup):
    name = "get_credit_card_accounts_by_user"
    description = "Every credit card account of a customer: card type, opening date, balance, reward points."
    parameters = schema(["user_id"], user_id=text("The user's id."))
    table, field = "credit_card_accounts", "user_id"

    def run(self, user_id: str) -> str:
        return self.lookup(user_id)


VERIFICATION_FIELDS = ("name", "user_id", "address", "email", "phone_number", "date_of_birth", "time_verified")


class LogVerificationTool(BankTool):
    name = "log_verification"
    action_name = "log_verification"
    mutates_state = True
    description = (
        "Record that a customer's identity was verified (2 of the 4 fields date of birth, email, phone "
        "number, address confirmed). Call it once verification has succeeded."
    )
    parameters = schema(
        list(VERIFICATION_FIELDS),
        name=text("The verified customer's full name."),
        user_id=text("Their user id."),
        address=text("Their address."),
        email=text("Their email."),
        phone_number=text("Their phone number."),
        date_of_birth=text("Their date of birth, MM/DD/YYYY."),
        time_verified=text("When they were verified, e.g. '2025-11-14 03:40:00 EST' (see get_current_time)."),
    )

    def run(self, **fields: Any) -> str:
        user_id, when = fields["user_id"], fields["time_verified"]
        record_id = f"{user_id}_{when.replace(' ', '_').replace(':', '').replace('-', '')}"
        if not bank.add(self.db, "verification_history", record_id, {k: fields[k] for k in VERIFICATION_FIELDS}):
            return "Failed to log verification: Record may already exist."
        return f"Verification logged successfully.\n  - User: {fields['name']} (ID: {user_id})\n  - Verified at: {when}"


class GiveDiscoverableUserToolTool(BankTool):
    name = "give_discoverable_user_tool"
    action_name = "give_discoverable_user_tool"
    mutates_state = True
    description = (
        "Hand a tool to the customer so they can run it themselves, when the knowledge base says the "
        "customer performs an action. The customer then calls call_discoverable_user_tool with it."
    )
    parameters = schema(
        ["discoverable_tool_name"],
        discoverable_tool_name=text("The name of the customer's tool, as the knowledge base gives it."),
        arguments=text("A JSON object string of arguments to suggest, e.g. '{\"user_id\": \"abc\"}' (default '{}')."),
    )

    def run(self, discoverable_tool_name: str, arguments: str = "{}") -> str:
        tool = USER_TOOLS.get(discoverable_tool_name)
        if tool is None:
            return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
        try:
            given = json.loads(arguments)
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON in arguments: {exc}"
        for name in given:
            if not tool.accepts(name) and name != "self":
                return f"Error: Unexpected parameter: {name}"
        record_id = bank.tool_log_id("user_discoverable_tool", discoverable_tool_name)
        bank.add(
            self.db, "user_discoverable_tools", record_id, {"tool_name": discoverable_tool_name, "status": "GIVEN"}
        )
        shown = json.dumps(given, indent=2) if given else "(no arguments)"
        return (
            f"Tool given to user: {discoverable_tool_name}\n"
            f"Description: {tool.shown_description(upstream_texts(self.state, 'user', discoverable_tool_name))}\n"
            f"Arguments: {shown}\n\n"
            "The user can now execute this action by calling `call_discoverable_user_tool` "
            f"with discoverable_tool_name='{discoverable_tool_name}' and the same arguments."
        )


class UnlockDiscoverableAgentToolTool(BankTool):
    name = "unlock_discoverable_agent_tool"
    action_name = "unlock_discoverable_agent_tool"
    mutates_state = True
    description = (
        "Unlock an internal tool the knowledge base names, e.g. 'calculate_apr_adjustment_7842'; the answer "
        "describes its parameters. Then call it with call_discoverable_agent_tool."
    )
    parameters = schema(["agent_tool_name"], agent_tool_name=text("The tool's name as the knowledge base gives it."))

    def run(self, agent_tool_name: str) -> str:
        tool = AGENT_TOOLS.get(agent_tool_name)
        if tool is None:
            return f"Error: Unknown agent tool '{agent_tool_name}'. This tool is not available."
        unlocked: dict[str, str] = self.state.setdefault(UNLOCKED, {})  # type: ignore[assignment]
        unlocked[agent_tool_name] = bank.NOW.isoformat()
        texts = upstream_texts(self.state, "agent", agent_tool_name)
        return (
            f"Tool unlocked: {agent_tool_name}\nDescription: {tool.shown_description(texts)}\n\n{tool.card(texts)}\n\n"
            "You can now use this tool by calling `call_discoverable_agent_tool` with "
            f"agent_tool_name='{agent_tool_name}' and the required arguments."
        )


class CallDiscoverableAgentToolTool(BankTool):
    name = "call_discoverable_agent_tool"
    action_name = "call_discoverable_agent_tool"
    mutates_state = True
    description = "Call an internal tool unlocked before with unlock_discoverable_agent_tool."
    parameters = schema(
        ["agent_tool_name"],
        agent_tool_name=text("The unlocked tool's name."),
        arguments=text("A JSON object string of its arguments, e.g. '{\"user_id\": \"abc123\"}' (default '{}')."),
    )

    def run(self, agent_tool_name: str, arguments: str = "{}") -> str:
        tool = AGENT_TOOLS.get(agent_tool_name)
        if tool is None:
            return f"Error: Unknown agent tool '{agent_tool_name}'. This tool is not available."
        if agent_tool_name not in self.state.get(UNLOCKED, {}):  # type: ignore[operator]
            return (
                f"Error: Tool '{agent_tool_name}' has not been unlocked. You must first use "
                "`unlock_discoverable_agent_tool` to unlock this tool before calling it."
            )
        parsed = parse_arguments(arguments)
        if isinstance(parsed, str):
            return parsed
        try:
            result = tool.run(self.db, **parsed)
        except TypeError as exc:
            return f"Error: Invalid arguments: {exc}"
        if tool.mutates or agent_tool_name in self.state.get(ALLOWLIST, ()):  # type: ignore[operator]
            record_id = bank.tool_log_id("agent_discoverable_tool", agent_tool_name)
            bank.add(self.db, "agent_discoverable_tools", record_id, {"tool_name": agent_tool_name, "status": "CALLED"})
        return result


class ListDiscoverableAgentToolsTool(BankTool):
    name = "list_discoverable_agent_tools"
    description = "The internal tools you have called so far."
    parameters = schema([])

    def run(self) -> str:
        result = bank.query_text(self.db, "agent_discoverable_tools", "{}")
        if "No results found" in result:  # upstream's test: the query never says this, so the text passes
            return "No agent tools have been called yet. Search the knowledge base to discover available tools."
        return f"Your called agent tools:\n{result}"


BASE_AGENT_TOOLS: tuple[type[Tool], ...] = (
    TransferToHumanAgentsTool,
    GetCurrentTimeTool,
    GetUserInformationByIdTool,
    GetUserInformationByNameTool,
    GetUserInformationByEmailTool,
    ChangeUserEmailTool,
    GetReferralsByUserTool,
    GetCreditCardTransactionsByUserTool,
    GetCreditCardAccountsByUserTool,
    LogVerificationTool,
    GiveDiscoverableUserToolTool,
    UnlockDiscoverableAgentToolTool,
    CallDiscoverableAgentToolTool,
    ListDiscoverableAgentToolsTool,
)
"""Upstream's definition order."""
