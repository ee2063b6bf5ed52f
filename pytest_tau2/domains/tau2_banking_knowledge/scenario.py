"""``Tau2BankingKnowledgeBaseScenario``: the 97 banking_knowledge tasks (tau2's τ-Knowledge).

Tasks come from the per-task files ``tasks/task_*.json`` (what upstream loads; the combined
``tasks.json`` disagrees with them on 13 tasks). One DB serves both sides, as upstream gives
its agent and user toolkits the same DB object; the customer's tools are the ones the task
lists in ``user_tools``. The retrieval configuration (``--tau2-retrieval``) decides the
agent's prompt and its search tools, and is recorded in every result's ``data_pin``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

from pytest_tau2.conversation.protocol import STOP_TOKENS
from pytest_tau2.domains.tau2_banking_knowledge import disc_accounts, disc_cards, disc_credit, disc_debit  # noqa: F401
from pytest_tau2.domains.tau2_banking_knowledge.agent_tools import ALLOWLIST, BASE_AGENT_TOOLS, NAMESPACE, UNLOCKED
from pytest_tau2.domains.tau2_banking_knowledge.db import BankDB, read_db
from pytest_tau2.domains.tau2_banking_knowledge.discoverable import TEXTS
from pytest_tau2.domains.tau2_banking_knowledge.options import BANKING
from pytest_tau2.domains.tau2_banking_knowledge.user_tools import USER_NAMESPACE, USER_TOOL_CLASSES
from pytest_tau2.domains.tau2_common import prompts, upstream_view
from pytest_tau2.domains.tau2_common.base import Tau2BaseScenario
from pytest_tau2.domains.tau2_common.task_types import Tau2Task
from pytest_tau2.domains.tau2_common.tasks import cached_db, read_text
from pytest_tau2.domains.tau2_mock.db import merge
from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.environment.tools import Tool
from pytest_tau2.errors import DataError, SettingsError
from pytest_tau2.scenario.model import Resources, SuccessSignal

if TYPE_CHECKING:
    from pytest_tau2.settings import Settings

DOMAIN_DIR = "tau2/domains/banking_knowledge"


def task_files(root: Path) -> list[Path]:
    return sorted((root / DOMAIN_DIR / "tasks").glob("task_*.json"))


@functools.cache
def load_bank_tasks(root: Path) -> dict[str, Tau2Task]:
    """Every task by id, from its own file, parsed once per process."""
    tasks: dict[str, Tau2Task] = {}
    for path in task_files(root):
        try:
            task = cast(Tau2Task, json.loads(path.read_text(encoding="utf-8")))
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
        tasks[str(task["id"])] = task
    return tasks


def read_allowlist(task: Tau2Task) -> frozenset[str]:
    """The discoverable tools the gold trajectory calls: reads of these are logged in the DB
    (upstream's per-task read allowlist; every other read stays out of the hashed state)."""
    actions = (task.get("evaluation_criteria") or {}).get("actions") or []
    return frozenset(
        str(name) for a in actions if a.get("name") == "call_discoverable_agent_tool"
        if (name := (a.get("arguments") or {}).get("agent_tool_name"))
    )  # fmt: skip


class Tau2BankingKnowledgeBaseScenario(Tau2BaseScenario):
    """banking_knowledge: the success signals follow the task's ``reward_basis``
    (``DB`` -> DB_STATE_MATCH, ``ACTION`` -> ACTION_MATCH, ``NL_ASSERTION`` -> NL_ASSERTION), and a
    clean exit."""

    tau2_domain = "banking_knowledge"
    tool_namespace = NAMESPACE
    user_tool_namespace = USER_NAMESPACE
    agent_tool_classes: ClassVar[tuple[type[Tool], ...]] = BASE_AGENT_TOOLS
    retrieval: str = "bm25"
    sides_share_db: ClassVar[bool] = True
    """Agent and customer work on one DB (a WebSocket bot can hold only the agent's)."""

    @classmethod
    def split_ids(cls, root: Path) -> dict[str, list[str]]:
        # No split file upstream: one split of every task, named by file (task_001.json holds task_001).
        return {"base": [path.stem for path in task_files(root)]}

    def bind(self, settings: Settings) -> Tau2BankingKnowledgeBaseScenario:
        super().bind(settings)
        # The retrieval configurations (BM25, dense, the sandbox shell) are imported by a banking
        # scenario that runs, not by collection, which every run does (~40 ms; issue 41).
        from pytest_tau2.domains.tau2_banking_knowledge.retrieval import CONFIGS
        from pytest_tau2.domains.tau2_banking_knowledge.retrieval_names import ALIASES, check_retrieval

        given = BANKING.of(settings).retrieval
        name = ALIASES.get(given, given)
        problem = check_retrieval(name)
        if problem is not None:
            raise SettingsError(problem)
        self.__dict__["retrieval"] = name
        self.__dict__["agent_tool_classes"] = BASE_AGENT_TOOLS + CONFIGS[name].tools
        if self.upstream_view is not None and self.discoverable_texts() is None:
            # Upstream's discoverable-tool texts live in its code, not its data: a view without them
            # (one not made by `pytest-tau2 data view`) leaves ours, and the results say so.
            self.__dict__["prompts_used"] = upstream_view.UPSTREAM_OWN_DISCOVERABLE
        return self

    def discoverable_texts(self) -> JSONObject | None:
        """Upstream's discoverable-tool descriptions and parameters, from the tau2 view (None: absent)."""
        domains = cast("Mapping[str, JSONObject]", (self.upstream_view or {}).get("domains") or {})
        texts = (domains.get(self.tau2_domain) or {}).get("discoverable_tools")
        return texts if isinstance(texts, dict) else None

    def data_pin(self, settings: Settings) -> JSONObject | None:
        pin = super().data_pin(settings) or {}
        return {**pin, "retrieval": BANKING.of(settings).retrieval}

    @cached_property
    def task(self) -> Tau2Task:
        try:
            return load_bank_tasks(self.root)[str(self.tau2_id)]
        except KeyError:
            raise KeyError(
                f"{self.name}: no task file for {self.tau2_id!r} in {self.root / DOMAIN_DIR / 'tasks'}"
            ) from None

    @cached_property
    def success_signals(self) -> tuple[SuccessSignal, ...]:  # type: ignore[override]
        basis = self.criteria.get("reward_basis") or ["DB", "COMMUNICATE"]
        signals = []
        if "DB" in basis and self.gold_actions() is not None:
            signals.append(SuccessSignal.DB_STATE_MATCH)
        if "ACTION" in basis and self.gold_actions():
            signals.append(SuccessSignal.ACTION_MATCH)
        if "NL_ASSERTION" in basis and self.nl_assertions:
            signals.append(SuccessSignal.NL_ASSERTION)
        signals.append(SuccessSignal.CLEAN_EXIT)
        return tuple(signals)

    # ---- tools and state ----------------------------------------------------------------------

    @property
    def user_tool_classes(self) -> tuple[type[Tool], ...]:  # type: ignore[override]
        wanted = set(self.task.get("user_tools") or [])  # type: ignore[call-overload]
        return tuple(cls for cls in USER_TOOL_CLASSES if cls.name in wanted)

    @property
    def user_resources(self) -> Resources:
        return Resources(tools={cls.__name__: {} for cls in self.user_tool_classes})

    def setup_shared_state(self, state: dict[str, object], side: str) -> None:
        if side == "agent":
            state["db_path"] = f"{DOMAIN_DIR}/db.json"
            state["documents_dir"] = str(self.root / DOMAIN_DIR / "documents")
            state[ALLOWLIST] = sorted(read_allowlist(self.task))  # JSON, so a bot's set-up frame can carry it
            state[UNLOCKED] = {}
            texts = self.discoverable_texts()
            if texts is not None:
                state[TEXTS] = texts

    def read_db(self, path: Path, side: str) -> BankDB:
        return cached_db(path, read_db)

    @property
    def initialization_actions(self) -> list[JSONObject] | None:  # type: ignore[override]
        steps: list[JSONObject] = []
        if "user" in self.sides:
            steps.append({"kind": "share_db", "env_type": "user"})
        state = self.task.get("initial_state") or {}
        data = state.get("initialization_data") or {}
        # Only agent_data / user_data count: upstream's model drops any other key (tasks 058, 059).
        for key in ("agent_data", "user_data"):
            if data.get(key):
                steps.append({"kind": "initialization_data", "env_type": "assistant", "arguments": data[key]})
        if state.get("initialization_actions") or state.get("message_history"):
            raise DataError(f"{self.name}: initialization actions and message histories are not used by banking tasks "
                            "at the pin; this task has some")  # fmt: skip
        return steps or None

    def run_initialization_action(
        self, action: Mapping[str, object], states: Mapping[str, Mapping[str, object]]
    ) -> object:
        agent = cast("dict[str, object]", states["agent"])
        if action.get("kind") == "share_db":
            cast("dict[str, object]", states["user"])["db"] = agent["db"]
            return None
        if action.get("kind") == "initialization_data":
            merge(cast("dict[str, object]", agent["db"]), cast(JSONObject, action.get("arguments") or {}))
            return None
        raise DataError(f"{self.name}: unknown initialization step {action!r}")

    # ---- prompts ------------------------------------------------------------------------------

    def user_opening(self) -> str:
        """The scripted user's first words: the instructions' first paragraph (the instructions
        themselves quote the stop tokens the simulated user may send later, which must not be
        said in the opening)."""
        text = str(self.instructions.get("reason_for_call") or self.description)
        first = text.strip().split("\n\n", 1)[0]
        for token in STOP_TOKENS:
            first = first.replace(token, "")
        return first.strip() or "Hello, I need help with my account."

    def policy_text(self) -> str:
        from pytest_tau2.domains.tau2_banking_knowledge.retrieval import CONFIGS, agent_prompt

        folder = self.root / DOMAIN_DIR
        return agent_prompt(CONFIGS[self.retrieval], folder / "prompts", folder / "documents",
                            list(cast("list[str]", self.task.get("required_documents") or [])))  # fmt: skip

    def get_user_prompt(self) -> str:
        if self.upstream_view is not None:
            return super().get_user_prompt()
        name = "simulation_guidelines_tools.md" if self.user_tool_classes else "simulation_guidelines.md"
        guidelines = read_text(self.root / "tau2" / "user_simulator" / name)
        return prompts.user_prompt(guidelines, self.task.get("user_scenario") or {})
