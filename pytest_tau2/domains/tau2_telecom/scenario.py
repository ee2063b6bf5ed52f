"""``Tau2TelecomBaseScenario``: dual-control telecom tasks (carrier DB + the customer's phone)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import ClassVar, cast

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
from pytest_tau2.domains.tau2_telecom.records import TelecomDB, TelecomUserDB
from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
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

    def setup_shared_state(self, state: dict[str, object], side: str) -> None:
        state["db_path"] = "tau2/domains/telecom/" + ("db.toml" if side == "agent" else "user_db.toml")

    def read_db(self, path: Path, side: str) -> TelecomDB | TelecomUserDB:
        if side == "agent":
            return cached_db(path, read_db)
        return cached_db(path, read_user_db)

    # The states are the runner's: "db" holds what read_db gave for that side (a fresh_db copy).
    def sync_state(self, agent_state: Mapping[str, object], user_state: Mapping[str, object] | None) -> None:
        if user_state is not None:
            sync_state(cast(TelecomDB, agent_state["db"]), cast(TelecomUserDB, user_state["db"]))

    def run_initialization_action(
        self, action: Mapping[str, object], states: Mapping[str, Mapping[str, object]]
    ) -> object:
        # ``action`` is an initialization record of the task: {"env_type", "func_name", "arguments"}.
        return run_function(
            cast(TelecomDB, states["agent"]["db"]),
            cast(TelecomUserDB, states["user"]["db"]),
            cast(JSONValue, action.get("env_type", "assistant")),
            cast(str, action["func_name"]),
            dict(cast(JSONObject, action.get("arguments") or {})),
        )

    def policy_text(self) -> str:
        folder = self.root / "tau2" / "domains" / "telecom"
        main, manual = (read_text(folder / name) for name in self.policy_files)
        return f"<main_policy>\n{main}\n</main_policy>\n<tech_support_policy>\n{manual}\n</tech_support_policy>"
