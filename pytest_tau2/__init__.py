"""pytest-tau2: evaluate customer-service agents as pytest tests.

The public API. Everything not listed in ``__all__`` is internal.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names below, for type checkers; at run time each is imported when first used
    from pytest_tau2.conversation.protocol import Participant, Reply, ToolCall
    from pytest_tau2.conversation.tool_agent import ToolCallingAgent
    from pytest_tau2.environment.tools import EndConversationTool, Tool
    from pytest_tau2.errors import (
        DataError,
        InfrastructureError,
        ScenarioDefinitionError,
        Tau2Error,
        ToolDefinitionError,
        ToolError,
    )
    from pytest_tau2.run.participants import ParticipantKind, register_participant_kind
    from pytest_tau2.run.view import TrialView
    from pytest_tau2.scenario import (
        Actions,
        Persona,
        Resources,
        Scenario,
        SuccessSignal,
        Task,
        register_eval_scenario,
        register_scenario_source,
    )
    from pytest_tau2.scoring.predicates import (
        ALL_DB_STATE_PREDICATES,
        evaluate_db_state_assertion,
        list_registered_predicates,
        register_db_state_predicate,
    )

__version__ = "0.1.0"


_LAZY = {
    # Loading the package imports nothing else: pytest loads this package's plugin in every
    # project of the environment, most of which have no scenario (docs/ci.md, "A project
    # without scenarios"). Each public name is imported when first used.
    "Participant": "pytest_tau2.conversation.protocol",
    "Reply": "pytest_tau2.conversation.protocol",
    "ToolCall": "pytest_tau2.conversation.protocol",
    "ToolCallingAgent": "pytest_tau2.conversation.tool_agent",
    "EndConversationTool": "pytest_tau2.environment.tools",
    "Tool": "pytest_tau2.environment.tools",
    "DataError": "pytest_tau2.errors",
    "InfrastructureError": "pytest_tau2.errors",
    "ScenarioDefinitionError": "pytest_tau2.errors",
    "Tau2Error": "pytest_tau2.errors",
    "ToolDefinitionError": "pytest_tau2.errors",
    "ToolError": "pytest_tau2.errors",
    "Actions": "pytest_tau2.scenario",
    "Persona": "pytest_tau2.scenario",
    "Resources": "pytest_tau2.scenario",
    "Scenario": "pytest_tau2.scenario",
    "SuccessSignal": "pytest_tau2.scenario",
    "Task": "pytest_tau2.scenario",
    "register_eval_scenario": "pytest_tau2.scenario",
    "register_scenario_source": "pytest_tau2.scenario",
    "ALL_DB_STATE_PREDICATES": "pytest_tau2.scoring.predicates",
    "evaluate_db_state_assertion": "pytest_tau2.scoring.predicates",
    "list_registered_predicates": "pytest_tau2.scoring.predicates",
    "register_db_state_predicate": "pytest_tau2.scoring.predicates",
    # The scenario test function lives in the pytest adapter; it is only loaded when a test module
    # asks for it (``from pytest_tau2 import test_scenario``).
    "test_scenario": "pytest_tau2.plugin.item",
    # Extension points (docs/architecture.md), loaded when first named: the signal table and the
    # participant kinds import more than a scenario module needs.
    "SignalSpec": "pytest_tau2.scoring.signals",
    "register_signal": "pytest_tau2.scoring.signals",
    "unregister_signal": "pytest_tau2.scoring.signals",
    "ParticipantKind": "pytest_tau2.run.participants",
    "register_participant_kind": "pytest_tau2.run.participants",
    "TrialView": "pytest_tau2.run.view",
    "Registry": "pytest_tau2.extension.registry",
    "RunView": "pytest_tau2.report.views",
    "register_report_view": "pytest_tau2.report.views",
    "Transport": "pytest_tau2.llm.transport",
    "register_transport": "pytest_tau2.llm.transport",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(name)
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once: the next lookup is a plain attribute
    return value


__all__ = [
    "ALL_DB_STATE_PREDICATES",
    "Actions",
    "DataError",
    "EndConversationTool",
    "InfrastructureError",
    "Participant",
    "ParticipantKind",
    "Persona",
    "Registry",
    "Reply",
    "Resources",
    "RunView",
    "Scenario",
    "ScenarioDefinitionError",
    "SignalSpec",
    "SuccessSignal",
    "Task",
    "Tau2Error",
    "Tool",
    "ToolCall",
    "ToolCallingAgent",
    "ToolDefinitionError",
    "ToolError",
    "Transport",
    "TrialView",
    "evaluate_db_state_assertion",
    "list_registered_predicates",
    "register_db_state_predicate",
    "register_eval_scenario",
    "register_participant_kind",
    "register_report_view",
    "register_scenario_source",
    "register_signal",
    "register_transport",
    "unregister_signal",
]
