"""A tiny rule-based phone agent for Pizza Palace, written against pytest-tau2's Participant protocol.

Any object with ``async def respond(messages, tools) -> Reply`` can be the agent under test:

- ``messages`` is the conversation from the agent's point of view, in OpenAI chat format: the
  system prompt first, the caller's words as ``user`` messages, the agent's own replies as
  ``assistant`` messages (with ``tool_calls``), and each tool result as a ``tool`` message;
- ``tools`` are the OpenAI function schemas of the tools the agent may call;
- the returned :class:`pytest_tau2.Reply` holds text for the caller, tool calls, or both.

After tool calls the agent is asked again (with the results appended) until it replies with
text only, which ends its turn. Calling ``EndConversationTool`` ends the conversation cleanly.
An optional ``async def aclose()`` is awaited when the conversation is over.

A real agent would call your model, your RAG stack or your voice pipeline's brain here; this
one uses keyword rules so that the example runs offline in a second.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_tau2 import Reply, ToolCall

STOP_TOKENS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
PHONE = re.compile(r"\b\d{3}[-. ]?\d{3}[-. ]?\d{4}\b")
NAME = re.compile(r"\b(?i:my name is|this is|i am|i'm)\s+([A-Z][a-z]+)")
GOODBYE = ("thank you", "thanks", "that is all", "that's all", "bye")
CATEGORIES = {"drink": "drink", "pizza": "pizza", "side": "side", "topping": "topping"}


class PizzaPhoneAgent:
    """Reads the menu, places the order the caller asked for, answers menu questions, hangs up."""

    def __init__(self) -> None:
        self.menu: list[dict[str, Any]] | None = None
        self.heard = ""  # what the caller asked for since the last order (name, phone, items)
        self.helped = False  # an order was placed or a question answered
        self.closed = False

    async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        last = messages[-1]
        if last["role"] == "tool":
            return self._after_tool(messages, last)
        said = str(last.get("content") or "")
        if any(token in said for token in STOP_TOKENS) or (self.helped and _is_goodbye(said)):
            return Reply("Thank you for calling Pizza Palace. Goodbye!", [ToolCall("EndConversationTool", {})])
        self.heard = f"{self.heard} {said}".strip()
        if self.menu is None:
            return Reply(tool_calls=[ToolCall("GetMenuTool", {})])
        return self._serve(self.heard)

    async def aclose(self) -> None:
        self.closed = True  # release connections, sessions, ... here

    # ---- the rules ------------------------------------------------------------------------------

    def _after_tool(self, messages: list[dict[str, Any]], result: dict[str, Any]) -> Reply:
        name = _called_tool(messages, result.get("tool_call_id"))
        content = str(result.get("content") or "")
        if name == "GetMenuTool":
            self.menu = json.loads(content)
            return self._serve(self.heard)
        if content.startswith("Error:"):
            return Reply(f"Sorry, I could not do that ({content[len('Error: ') :]}). Could you repeat your order?")
        placed = json.loads(content)
        self.helped, self.heard = True, ""
        return Reply(
            f"Your order {placed['order_id']} is placed, total ${placed['total_price']:.2f}. "
            "Is there anything else I can help you with?"
        )

    def _serve(self, said: str) -> Reply:
        items = self._items(said)
        if items:
            name, phone = NAME.search(said), PHONE.search(said)
            if name is None or phone is None:
                return Reply("Happy to take that order. May I have your name and phone number?")
            total = round(sum(item["unit_price"] * item["quantity"] for item in items), 2)
            order = {
                "items": items,
                "customer_name": name.group(1),
                "customer_phone": phone.group(0),
                "total_price": total,
            }
            return Reply(tool_calls=[ToolCall("PlaceOrderTool", order)])
        asked = [category for word, category in CATEGORIES.items() if word in said.lower()]
        if asked:
            self.helped, self.heard = True, ""
            listed = [f"{i['name']} (${i['price']:.2f})" for i in self.menu or [] if i["category"] in asked]
            return Reply(f"We have {', '.join(listed)}. Is there anything else I can help you with?")
        if self.helped:
            return Reply("Is there anything else I can help you with?")
        return Reply("Welcome to Pizza Palace! What would you like to order?")

    def _items(self, said: str) -> list[dict[str, Any]]:
        """Menu items named in ``said``, with the quantity word in front of each (default 1)."""
        items = []
        for entry in self.menu or []:
            found = re.search(rf"(?:\b(\w+)\s+)?{re.escape(entry['name'].lower())}", said.lower())
            if found:
                quantity = (
                    int(found.group(1))
                    if (found.group(1) or "").isdigit()
                    else NUMBER_WORDS.get(found.group(1) or "", 1)
                )
                items.append({"name": entry["name"], "unit_price": entry["price"], "quantity": quantity})
        return items


def _called_tool(messages: list[dict[str, Any]], call_id: str | None) -> str | None:
    for message in reversed(messages):
        for call in message.get("tool_calls") or []:
            if call.get("id") == call_id:
                return str(call["function"]["name"])
    return None


def _is_goodbye(said: str) -> bool:
    return any(phrase in said.lower() for phrase in GOODBYE)
