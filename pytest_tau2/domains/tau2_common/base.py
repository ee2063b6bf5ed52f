"""``Tau2BaseScenario``: everything a tau2 port derives from ``tau2_id`` alone.

A concrete tau2 scenario is two attributes (``name``, ``tau2_id``) on a domain base
(``Tau2RetailBaseScenario`` ...). Task content is read lazily from the pinned data the first
time a scenario runs, never at collection.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

from pytest_tau2.domains.tau2_common import prompts, upstream_view
from pytest_tau2.domains.tau2_common.task_types import EnvCall, EvaluationCriteria, GoldAction, Instructions, Tau2Task
from pytest_tau2.domains.tau2_common.tasks import load_split_ids, load_tasks, read_text, tau2_data_root, tau2_pin
from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.environment.tools import Tool
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scenario.model import Actions, Persona, Resources, Task
from pytest_tau2.scoring.action_match import MatchResult
from pytest_tau2.scoring.tau2_signal import TAU2_REWARD

if TYPE_CHECKING:
    from pytest_tau2.settings import Settings

TAU2_REWARD_VERDICT = "tau2-reward"
"""``--tau2-verdict`` value that makes tau2's reward decide each tau2 item."""

GREETING = "Hi! How can I help you today?"


class Tau2BaseScenario(Scenario):
    """Shared tau2 behaviour. Domain bases set ``tau2_domain``, ``agent_tool_classes`` and signals."""

    tau2_domain: ClassVar[str] = ""
    tau2_id: ClassVar[str] = ""
    agent_tool_classes: ClassVar[Sequence[type[Tool]]] = ()
    user_tool_classes: ClassVar[Sequence[type[Tool]]] = ()
    policy_files: ClassVar[Sequence[str]] = ("policy.md",)
    guidelines_file: ClassVar[str] = "tau2/user_simulator/simulation_guidelines.md"
    agent_greeting = GREETING
    prompts_used: str = upstream_view.SEED
    """The prompts this scenario's participants are shown (``--tau2-prompts``; set by :meth:`bind`)."""
    upstream_view: JSONObject | None = None
    """The tau2 view file's content under ``--tau2-prompts upstream`` (None: the seed prompts)."""
    max_turns = 100
    max_duration = 1800.0

    @classmethod
    def split_ids(cls, root: Path) -> dict[str, list[str]]:
        """``{split: [task ids]}`` (from ``split_tasks.json``; read at collection)."""
        return load_split_ids(root, cls.tau2_domain)

    @classmethod
    def task_tags(cls, task_id: str) -> tuple[str, ...]:
        """Extra markers of one task, known without reading its task file (collection)."""
        return ()

    # ---- data ---------------------------------------------------------------------------------

    def data_root(self, settings: Settings) -> Path:
        root = tau2_data_root(settings, self.tau2_domain)
        self._root = root
        return root

    def data_pin(self, settings: Settings) -> JSONObject | None:
        return {**tau2_pin(settings, self.tau2_domain).to_dict(), "prompts": self.prompts_used}

    @property
    def root(self) -> Path:
        root: Path | None = getattr(self, "_root", None)
        if root is None:
            raise RuntimeError(f"{self.name}: the tau2 data root is not resolved yet (call data_root(settings))")
        return root  # a Path already (data_root sets it)

    def bind(self, settings: Settings) -> Tau2BaseScenario:
        """Resolve the data root now (the runner does it on first use).

        Under ``--tau2-verdict tau2-reward`` the item's whitelist becomes tau2's reward alone:
        the six signals are still computed and saved, under ``excluded``.
        """
        root = self.data_root(settings)
        used, view = upstream_view.find_view(getattr(settings, "prompts", upstream_view.UPSTREAM), root)
        self.__dict__["prompts_used"], self.__dict__["upstream_view"] = used, view
        if getattr(settings, "verdict", None) == TAU2_REWARD_VERDICT:
            # An instance value shadows the domain's ClassVar or cached_property for this item only.
            self.__dict__["success_signals"] = (TAU2_REWARD.signal,)
        return self

    @cached_property
    def task(self) -> Tau2Task:
        tasks = load_tasks(self.root, self.tau2_domain)
        try:
            return tasks[str(self.tau2_id)]
        except KeyError:
            raise KeyError(
                f"{self.name}: no task with id {self.tau2_id!r} in the {self.tau2_domain} tasks.json"
            ) from None

    @property
    def criteria(self) -> EvaluationCriteria:
        return self.task.get("evaluation_criteria") or {}

    def tau2_evaluation_criteria(self) -> EvaluationCriteria | None:
        """The task's ``evaluation_criteria`` as upstream reads them (the tau2_reward signal's input)."""
        criteria = self.task.get("evaluation_criteria")
        return criteria.copy() if criteria is not None else None  # a plain shallow copy, like dict()

    @property
    def instructions(self) -> Instructions:
        instructions = (self.task.get("user_scenario") or {}).get("instructions") or {}
        return instructions if isinstance(instructions, dict) else {"reason_for_call": str(instructions)}

    # ---- scenario fields derived from the task ------------------------------------------------------

    @property
    def description(self) -> str:  # type: ignore[override]
        purpose = (self.task.get("description") or {}).get("purpose")
        return str(purpose or self.instructions.get("reason_for_call", ""))

    @property
    def nl_assertions(self) -> list[str] | None:  # type: ignore[override]
        return list(self.criteria.get("nl_assertions") or []) or None

    @property
    def communicate_info(self) -> tuple[str, ...]:
        """Facts the agent must tell the user (upstream's COMMUNICATE check; the oracle states them)."""
        return tuple(str(info) for info in self.criteria.get("communicate_info") or [])

    @property
    def db_state_assertions(self) -> list[EnvCall] | None:  # type: ignore[override]
        return list(self.criteria.get("env_assertions") or []) or None

    @property
    def initialization_actions(self) -> list[EnvCall] | None:  # type: ignore[override]
        state = self.task.get("initial_state") or {}
        return list(state.get("initialization_actions") or []) or None

    def gold_actions(self) -> list[JSONObject] | None:
        actions = self.criteria.get("actions")
        if actions is None:
            return None
        return [
            {"name": a["name"], "arguments": a.get("arguments") or {}, "requestor": a.get("requestor") or "assistant"}
            for a in actions
        ]

    # ---- sides and tools --------------------------------------------------------------------------

    def setup_shared_state(self, state: dict[str, object], side: str) -> None:
        if side == "agent":
            state["db_path"] = f"tau2/domains/{self.tau2_domain}/{self.db_file}"

    db_file: ClassVar[str] = "db.json"

    @property
    def agent_resources(self) -> Resources:
        tools: dict[str, JSONObject] = {cls.__name__: {} for cls in self.agent_tool_classes}
        if self.upstream_view is None:  # upstream's agent has no tool that ends the conversation
            tools["EndConversationTool"] = {}
        return Resources(tools=tools, information=[f"policy: tau2/domains/{self.tau2_domain}/{self.policy_files[0]}"])

    @property
    def user_resources(self) -> Resources:
        return Resources(tools={cls.__name__: {} for cls in self.user_tool_classes})

    # ---- prompts ----------------------------------------------------------------------------------

    def policy_text(self) -> str:
        return read_text(self.root / "tau2" / "domains" / self.tau2_domain / self.policy_files[0])

    def get_agent_prompt(self) -> str:
        if self.upstream_view is not None:
            return upstream_view.agent_system_prompt(self.upstream_view, self.policy_text())
        return prompts.agent_prompt(self.policy_text())

    def get_user_prompt(self) -> str:
        if self.upstream_view is not None:
            scenario = self.task.get("user_scenario") or {}
            return upstream_view.user_system_prompt(
                self.upstream_view, scenario, with_tools=bool(self.user_tool_classes)
            )
        guidelines = read_text(self.root / self.guidelines_file)
        return prompts.user_prompt(guidelines, self.task.get("user_scenario") or {})

    def get_call_user_prompt(self, guidelines: str) -> str:
        """On a phone call the voice guidelines take the text guidelines' place; the scenario is
        rendered as for text (upstream's template under ``--tau2-prompts upstream``)."""
        scenario = self.task.get("user_scenario") or {}
        if self.upstream_view is not None:
            return upstream_view.user_prompt_around(self.upstream_view, guidelines, scenario)
        return prompts.user_prompt(guidelines, scenario)

    def tool_schemas(self, side: str) -> dict[str, JSONObject]:
        """Upstream's schemas of ``side``'s tools by name under ``--tau2-prompts upstream`` (else
        none: each tool describes itself); a tool upstream's view lacks keeps its own."""
        if self.upstream_view is None:
            return {}
        return upstream_view.tool_schemas(self.upstream_view, self.tau2_domain, side)

    def user_opening(self) -> str:
        return str(self.instructions.get("reason_for_call") or self.description)

    @property
    def user_persona(self) -> Persona:
        return Persona(
            role="customer",
            name="Customer",
            background=str(self.instructions.get("known_info") or ""),
            personality=str(self.instructions.get("task_instructions") or ""),
        )

    @property
    def user_task(self) -> Task:
        return Task(
            goal=str(self.instructions.get("reason_for_call") or ""),
            background=str(self.instructions.get("unknown_info") or ""),
        )

    @property
    def agent_persona(self) -> Persona:
        return Persona(role="customer service agent", name=f"{self.tau2_domain} agent")

    @property
    def agent_actions(self) -> Actions:
        return Actions(guidelines=[f"Follow the upstream {self.tau2_domain} policy verbatim."])

    # ---- scoring ----------------------------------------------------------------------------------

    def action_match(self, recorded_actions: list[JSONObject], transcript: list[JSONObject]) -> MatchResult:
        """Upstream's action check: every gold action matched by some tool call of the run."""
        return upstream_action_match(self.gold_actions() or [], transcript, self.criteria.get("actions") or [])


def upstream_action_match(
    gold: list[JSONObject], transcript: list[JSONObject], raw_gold: list[GoldAction]
) -> MatchResult:
    """tau2's rule: names equal; compare ``compare_args`` if set, else the *predicted* call's keys.

    Order, multiplicity and requestor are ignored; one call may satisfy several gold actions.
    """
    # A transcript entry's "tool_calls" is the loop's list of {"id", "name", "arguments"} objects.
    calls = [c for m in transcript for c in cast("list[JSONObject]", m.get("tool_calls") or [])]
    for index, action in enumerate(gold):
        compare_args = raw_gold[index].get("compare_args") if index < len(raw_gold) else None
        if not any(_call_matches(action, call, compare_args) for call in calls):
            return MatchResult(False, f"gold action {index} {action['name']}({action['arguments']}) was never called")
    return MatchResult(True)


def _call_matches(action: JSONObject, call: JSONObject, compare_args: list[str] | None) -> bool:
    if call.get("name") != action["name"]:
        return False
    arguments = call.get("arguments")
    if isinstance(arguments, str):
        import json

        try:
            arguments = json.loads(arguments)
        except (json.JSONDecodeError, RecursionError):  # RecursionError: nested too deeply (a tool error already)
            return False
    if not isinstance(arguments, dict):
        return False
    keys = compare_args if compare_args is not None else list(arguments)
    if not keys:
        return True
    gold_args = cast(JSONObject, action["arguments"])  # gold_actions() makes it an object
    # Restrict both sides to the keys, without inventing values for absent ones.
    return {k: v for k, v in gold_args.items() if k in keys} == {k: v for k, v in arguments.items() if k in keys}
