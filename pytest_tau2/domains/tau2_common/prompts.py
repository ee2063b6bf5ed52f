"""Prompt assembly for tau2 scenarios.

Agent: the upstream policy text verbatim (never spliced, so results stay comparable with
published tau2 numbers), then our own ``## Additional Notes to Follow`` section.
User: the upstream simulation-guidelines file verbatim, then a ``<scenario>`` block built from
the task's structured instructions.
"""

from __future__ import annotations

from pytest_tau2.domains.tau2_common.task_types import UserScenario

ADDITIONAL_NOTES_HEADING = "## Additional Notes to Follow"

GENERAL_GUIDANCE = (
    "You are speaking with the customer in real time, possibly over a voice channel. Keep each "
    "reply short and natural, ask one question at a time, and never read raw JSON or long lists "
    "aloud: summarise them. In each turn either send a message to the customer or make tool "
    "calls; the customer does not see tool calls or their results."
)

ALPHANUMERIC_RULE = (
    "Identifiers (order numbers, user ids, item ids, emails, zip codes) may reach you with odd "
    "spacing, casing or punctuation, because customers spell them out. Read them back character "
    "by character in groups when confirming, and pass them to tools in their canonical form "
    "(for example an order id starts with '#')."
)

ENDING_RULE = (
    "When every request is handled and the customer has nothing else, say goodbye and call the "
    "EndConversationTool tool. Call it as well if the customer ends the conversation. Never call "
    "it while a request is still open. Transferring to a human agent also ends the conversation."
)

HONESTY_RULE = (
    "Never claim that you did something (cancelled, exchanged, refunded, changed, booked) unless "
    "a tool call in this conversation actually did it and returned success. If a tool returns an "
    "error, tell the customer what failed instead of pretending it worked."
)


def agent_prompt(policy: str) -> str:
    notes = "\n\n".join(f"- {rule}" for rule in (GENERAL_GUIDANCE, ALPHANUMERIC_RULE, ENDING_RULE, HONESTY_RULE))
    return f"{policy.rstrip()}\n\n{ADDITIONAL_NOTES_HEADING}\n\n{notes}\n"


def scenario_block(user_scenario: UserScenario) -> str:
    """The simulated user's instructions, one labelled section per field."""
    instructions = user_scenario.get("instructions") or {}
    if isinstance(instructions, str):
        body = [instructions]
    else:
        body = []
        if instructions.get("domain"):
            body.append(f"Domain: {instructions['domain']}")
        body.append(f"Goal (why you are calling):\n{instructions.get('reason_for_call') or ''}")
        if instructions.get("known_info"):
            body.append(f"Things you know:\n{instructions['known_info']}")
        if instructions.get("unknown_info"):
            body.append(f"Things you don't know:\n{instructions['unknown_info']}")
        if instructions.get("task_instructions"):
            body.append(f"Personality and how to behave:\n{instructions['task_instructions']}")
    persona = user_scenario.get("persona")
    if persona:
        body.insert(0, f"Persona:\n{persona}")
    return "\n\n".join(body)


def user_prompt(guidelines: str, user_scenario: UserScenario) -> str:
    return f"{guidelines}\n\n<scenario>\n{scenario_block(user_scenario)}\n</scenario>"
