"""``Tau2TelecomBaseScenario``: dual-control telecom tasks (carrier DB + the customer's phone)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from pytest_tau2.domains.tau2_common.base import Tau2BaseScenario
from pytest_tau2.domains.tau2_common.tasks import cached_db, read_text
from pytest_tau2.domains.tau2_telecom import (
    AGENT_TOOL_CLASSES,
    USER_TOOL_CLASSES,
    read_db,
    read_user_db,
    run_function,
    sync_state,
)
from pytest_tau2.scenario.model import SuccessSignal


class Tau2TelecomBaseScenario(Tau2BaseScenario):
    """Telecom: scored on DB-state predicates (upstream's env assertions) and a clean exit.

    Both DB hashes and upstream's action check are computed and saved under ``excluded``:
    the solution space is open, and upstream's own gold DB never syncs the two sides.
    """

    tau2_domain = "telecom"
    agent_tool_classes = AGENT_TOOL_CLASSES
    user_tool_classes = USER_TOOL_CLASSES
    user_tool_namespace = "tau2_telecom_user"
    policy_files: ClassVar[tuple[str, ...]] = ("main_policy.md", "tech_support_manual.md")
    guidelines_file = "tau2/user_simulator/simulation_guidelines_tools.md"
    db_file = "db.toml"

    @cached_property
    def success_signals(self) -> tuple[SuccessSignal, ...]:  # type: ignore[override]
        signals = [SuccessSignal.DB_STATE_ASSERTION, SuccessSignal.CLEAN_EXIT]
        if self.nl_assertions:
            signals.insert(1, SuccessSignal.NL_ASSERTION)
        return tuple(signals)

    def setup_shared_state(self, state: dict[str, Any], side: str) -> None:
        state["db_path"] = "tau2/domains/telecom/" + ("db.toml" if side == "agent" else "user_db.toml")

    def read_db(self, path: Path, side: str) -> Any:
        return cached_db(path, read_db if side == "agent" else read_user_db)

    def sync_state(self, agent_state: dict[str, Any], user_state: dict[str, Any] | None) -> None:
        if user_state is not None:
            sync_state(agent_state["db"], user_state["db"])

    def run_initialization_action(self, action: Mapping[str, Any], states: Mapping[str, dict[str, Any]]) -> Any:
        return run_function(
            states["agent"]["db"],
            states["user"]["db"],
            action.get("env_type", "assistant"),
            action["func_name"],
            dict(action.get("arguments") or {}),
        )

    def policy_text(self) -> str:
        folder = self.root / "tau2" / "domains" / "telecom"
        main, manual = (read_text(folder / name) for name in self.policy_files)
        return f"<main_policy>\n{main}\n</main_policy>\n<tech_support_policy>\n{manual}\n</tech_support_policy>"
