"""pytest-tau2: evaluate customer-service agents as pytest tests.

The public API. Everything not listed in ``__all__`` is internal.
"""

from pytest_tau2.conversation.protocol import Participant, Reply, ToolCall
from pytest_tau2.environment.tools import EndConversationTool, Tool
from pytest_tau2.errors import (
    DataError,
    InfrastructureError,
    ScenarioDefinitionError,
    Tau2Error,
    ToolDefinitionError,
    ToolError,
)
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


def __getattr__(name: str) -> object:
    # The scenario test function lives in the plugin module, which imports pytest; it is only
    # loaded when a test module asks for it (``from pytest_tau2 import test_scenario``).
    if name == "test_scenario":
        from pytest_tau2.plugin.item import test_scenario

        return test_scenario
    raise AttributeError(name)


__all__ = [
    "ALL_DB_STATE_PREDICATES",
    "Actions",
    "DataError",
    "EndConversationTool",
    "InfrastructureError",
    "Participant",
    "Persona",
    "Reply",
    "Resources",
    "Scenario",
    "ScenarioDefinitionError",
    "SuccessSignal",
    "Task",
    "Tau2Error",
    "Tool",
    "ToolCall",
    "ToolDefinitionError",
    "ToolError",
    "evaluate_db_state_assertion",
    "list_registered_predicates",
    "register_db_state_predicate",
    "register_eval_scenario",
    "register_scenario_source",
]
