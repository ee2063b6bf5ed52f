"""The offline participants: the oracle agent and the scripted user.

With no model configured, the oracle performs the scenario's gold actions through the real
tool surface and states the facts the task says the agent must communicate; the scripted user
opens with the goal, confirms, and performs the user-side gold actions (telecom's phone).
Together they are the harness's end-to-end self-check: every scenario whose gold actions are
right must pass.

Both share one :class:`GoldPlan`, a cursor over the gold actions in upstream order, so
agent-side and user-side steps interleave exactly as in the reference trajectory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

from pytest_tau2.conversation.protocol import Reply, ToolCall, has_stop_token
from pytest_tau2.environment.jsontypes import JSONObject


@dataclass
class GoldPlan:
    """Gold actions ``{"name", "arguments", "requestor"}`` and how far the run has got."""

    actions: list[JSONObject]
    ending_tools: frozenset[str] = frozenset()
    """Agent tool names that end the conversation (held back until the oracle's last turn)."""
    communicate: tuple[str, ...] = ()
    """Facts the agent must tell the user (tau2's ``communicate_info``): the oracle states them."""
    cursor: int = 0
    said_goodbye: bool = False
    """The oracle has said its closing words without an exit tool (``--tau2-prompts upstream``):
    the scripted user then ends the conversation."""

    def __post_init__(self) -> None:
        # An ending action (a transfer) ends the conversation, so it can only come last: one that
        # the gold lists earlier (banking task_005 transfers first) waits until everything else is done.
        ending = [a for a in self.actions if a["name"] in self.ending_tools]
        if ending:
            self.actions = [a for a in self.actions if a["name"] not in self.ending_tools] + ending

    def take(self, side: str) -> list[JSONObject]:
        """Consecutive non-ending actions of ``side`` at the cursor (advancing past them)."""
        taken = []
        while self.cursor < len(self.actions):
            action = self.actions[self.cursor]
            if _side_of(action) != side or action["name"] in self.ending_tools:
                break
            taken.append(action)
            self.cursor += 1
        return taken

    def next_side(self) -> str | None:
        pending = [a for a in self.actions[self.cursor :] if a["name"] not in self.ending_tools]
        return _side_of(pending[0]) if pending else None

    def remaining_endings(self) -> list[JSONObject]:
        return [a for a in self.actions[self.cursor :] if a["name"] in self.ending_tools and _side_of(a) == "agent"]


def _side_of(action: JSONObject) -> str:
    return "user" if action.get("requestor") == "user" else "agent"


def _calls(actions: Sequence[JSONObject]) -> list[ToolCall]:
    # Gold actions are checked when the scenario's gold is read: a str name, an object of arguments.
    return [ToolCall(cast(str, a["name"]), dict(cast(JSONObject, a.get("arguments") or {}))) for a in actions]


@dataclass
class OracleAgent:
    """Performs the gold actions, speaks at least ``min_turns`` times, then ends the call."""

    plan: GoldPlan
    min_turns: int = 3
    exit_tool: str = "EndConversationTool"
    turns: int = 0
    _done: bool = field(default=False, repr=False)

    async def respond(self, messages: list[JSONObject], tools: list[JSONObject]) -> Reply:
        last_user = next((m for m in reversed(messages) if m["role"] == "user"), None)
        closing = last_user is not None and has_stop_token(
            cast("str | None", last_user.get("content"))
        )  # the loop's text
        if not closing:
            actions = self.plan.take("agent")
            if actions:
                return Reply(tool_calls=_calls(actions))
            if self.plan.next_side() == "user":
                return self._speak("Please do the next step on your device and tell me when it is done.")
            if self.turns + 1 < self.min_turns:
                return self._speak("Your request has been handled. Is there anything else I can help with?")
        offered = {str(f.get("name")) for t in tools if isinstance(f := t.get("function"), dict)}
        return self._finish(exit_offered=self.exit_tool in offered or not tools)

    def _speak(self, text: str) -> Reply:
        self.turns += 1
        return Reply(text=text)

    def _finish(self, *, exit_offered: bool = True) -> Reply:
        """The closing words, with the ending gold action or the exit tool (when offered: under
        ``--tau2-prompts upstream`` there is none, and the user's stop ends the conversation)."""
        endings = self.plan.remaining_endings()
        self.plan.cursor = len(self.plan.actions)
        self.turns += 1
        calls = _calls(endings[:1]) if endings else [ToolCall(self.exit_tool, {})] if exit_offered else []
        self.plan.said_goodbye = not calls
        return Reply(text=closing_message(self.plan.communicate), tool_calls=calls)


def closing_message(facts: Sequence[str]) -> str:
    """The oracle's last words: every fact it must communicate, verbatim, then goodbye.

    tau2 scores COMMUNICATE by finding each string in some agent message (airline's basis), so
    a perfect agent states them; the oracle says them all in its closing turn.
    """
    if not facts:
        return "Thank you for contacting us. Goodbye!"
    return f"To confirm: {'; '.join(facts)}. Thank you for contacting us. Goodbye!"


@dataclass
class ScriptedUser:
    """Opens with the goal, performs user-side gold actions, confirms, and eventually stops."""

    opening: str
    plan: GoldPlan | None = None
    patience: int = 3
    """Replies after the opening before the user sends ###STOP### (the oracle exits first)."""
    agent_follows_plan: bool = False
    """True when the agent works through the same plan (oracle, replay): wait for all of it.
    With any other agent only the user's own pending steps keep the user talking."""
    replies: int = 0

    async def respond(self, messages: list[JSONObject], tools: list[JSONObject]) -> Reply:
        if self.replies == 0:
            self.replies = 1
            return Reply(text=self.opening)
        if self.plan is not None:
            actions = self.plan.take("user")
            if actions:
                return Reply(tool_calls=_calls(actions))
        self.replies += 1
        pending = self.plan.next_side() if self.plan is not None else None
        waiting_on_me = pending == "user" or (pending is not None and self.agent_follows_plan)
        goodbye = self.plan is not None and self.plan.said_goodbye and self.agent_follows_plan
        if (goodbye or self.replies > self.patience + 1) and not waiting_on_me:
            return Reply(text="Thank you, that is all. ###STOP###")
        if self.replies == 2:
            return Reply(text="Yes, that is right. Please go ahead.")
        return Reply(text="Okay, thank you.")


def plan_follower(user: object) -> Callable[[str], None] | None:
    """Keep a scripted user's gold plan in step with an agent that runs elsewhere (a WebSocket bot,
    an MCP agent process): in process, the oracle and the scripted user share one plan cursor, so
    the user performs its own gold steps (telecom's phone) when the agent's are done; with the
    agent elsewhere, the runner's copy of the plan moves past each agent gold action it performs.
    None when ``user`` follows no gold plan."""
    plan = getattr(user, "plan", None)
    if not isinstance(plan, GoldPlan):
        return None

    def follow(name: str) -> None:
        if plan.cursor < len(plan.actions):
            action = plan.actions[plan.cursor]
            if action.get("requestor", "assistant") != "user" and action["name"] == name:
                plan.cursor += 1

    return follow
