"""The shape of a tau2 task (``tasks.json``), as the ports read it.

Upstream's task files are JSON validated by its pydantic ``Task`` model; these TypedDicts name the
fields the ports read, with the types the pinned files hold (checked over the three domains'
tasks). Every key may be missing or null in a file we did not pin, so the readers keep their
``.get(...) or default`` guards; the types only say what a present value is.
"""

from __future__ import annotations

from typing import TypedDict

from pytest_tau2.environment.jsontypes import JSONObject


class Description(TypedDict, total=False):
    purpose: str | None
    relevant_policies: str | None
    notes: str | None


class Instructions(TypedDict, total=False):
    """The simulated user's structured instructions (``user_scenario.instructions``)."""

    domain: str
    reason_for_call: str
    known_info: str | None
    unknown_info: str | None
    task_instructions: str


class UserScenario(TypedDict, total=False):
    persona: str | None
    instructions: Instructions | str


class GoldAction(TypedDict, total=False):
    """One action of ``evaluation_criteria.actions``."""

    action_id: str
    name: str
    arguments: JSONObject | None
    requestor: str
    compare_args: list[str] | None
    info: str | None


class EnvCall(TypedDict, total=False):
    """A call of a side's function: an initialization action or an env assertion (telecom)."""

    env_type: str
    func_name: str
    arguments: JSONObject | None
    assert_value: bool
    message: str | None


class EvaluationCriteria(TypedDict, total=False):
    actions: list[GoldAction] | None
    env_assertions: list[EnvCall] | None
    communicate_info: list[str] | None
    nl_assertions: list[str] | None
    reward_basis: list[str]


class InitialState(TypedDict, total=False):
    initialization_data: JSONObject | None
    initialization_actions: list[EnvCall] | None
    message_history: list[JSONObject] | None


class Tau2Task(TypedDict, total=False):
    id: str
    description: Description | None
    user_scenario: UserScenario
    ticket: str
    evaluation_criteria: EvaluationCriteria | None
    initial_state: InitialState | None
