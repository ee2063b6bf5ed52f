"""One trial (a scenario x a trial seed), described once: its participants built once, its run,
and its result as the results folder holds it.

Both the scenario item's fixtures (plugin/item.py) and ``--tau2-concurrency``'s prefetcher
(run/prefetch.py) go through :class:`Trial`: the prefetcher builds the trial of an item it
starts early, and that item's built-in fixtures then hand out the very same scenario, view and
participants. A participant kind's factory sees the trial through its :class:`TrialView`
(run/view.py), never the trial itself. An overridden participant fixture (a conftest's own Python agent) takes the place
of the built-in one, and the trial runs with it instead. No pytest here.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from pytest_tau2.conversation.protocol import Participant
from pytest_tau2.environment.tools import resolve_tool
from pytest_tau2.report import files
from pytest_tau2.report.identity import python_identity
from pytest_tau2.report.metrics import build_record
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.report.terminal import escape_controls
from pytest_tau2.run import participants, reviewing
from pytest_tau2.run.agent_side import ProvidesAgentSide
from pytest_tau2.run.pipeline import Judge, run_scenario
from pytest_tau2.run.seeding import gold_replay
from pytest_tau2.run.session import close_model_clients
from pytest_tau2.run.view import TrialView
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scenario.outcome import ScenarioOutcome
from pytest_tau2.scenario.trial_ids import split_trial_id
from pytest_tau2.settings import Settings

Agent = Participant | ProvidesAgentSide
_UNBUILT: Any = object()


@dataclass
class TrialResult:
    """A finished trial as the results folder and the JUnit properties will hold it."""

    metrics: ScenarioRecord
    payload: dict[str, Any]
    """``{"folder", "metrics", "files"}``: what report/files.py writes."""
    infra_text: str | None
    """The infrastructure error (redacted, control characters escaped: what the terminal shows),
    when the conversation could not be run to its end."""
    fatal: bool = False
    """That error would end every later trial the same way (no API key): the run stops."""


def parse_item_id(item_id: str, trials: int) -> tuple[str, int]:
    """``(scenario name, trial)`` of an item id: the name, or ``<name>-t<k>`` with several trials."""
    if trials <= 1:
        return item_id, 1
    name, trial = split_trial_id(item_id)
    return name, trial or 1


class Trial:
    """A scenario's trial: the view its built-in participants are built from, and each built-in
    participant built once, when first asked for (a kind that cannot serve the scenario, say a
    replay file without it, then fails where it is used, not where an override replaced it)."""

    def __init__(self, scenario: Scenario, settings: Settings, trial: int = 1) -> None:
        self.scenario = scenario
        self.settings = settings
        self.number = trial
        self.view = participants.trial_view(scenario, settings, trial)
        self._agent: Agent = _UNBUILT
        self._user: Participant = _UNBUILT
        self._judge: Judge | None = _UNBUILT

    @property
    def context(self) -> TrialView:
        """The trial's view (the ``tau2_context`` fixture hands it out)."""
        return self.view

    # ---- identity ------------------------------------------------------------------------------

    @property
    def seed(self) -> int:
        """This trial's seed (scenario/trial_ids.py), passed to the agent and user models."""
        return self.view.seed

    @property
    def result_name(self) -> str:
        """The item id and results folder: ``<scenario>-t<k>``, or the name alone for one trial."""
        return self.view.result_name

    def record(self) -> dict[str, Any]:
        """What metrics.json records about the trial."""
        return {"trial": self.number, "trials": self.settings.trials, "seed": self.seed}

    # ---- participants --------------------------------------------------------------------------

    @property
    def agent(self) -> Agent:
        if self._agent is _UNBUILT:
            self._agent = participants.make_agent(self.view)
        return self._agent

    @property
    def user(self) -> Participant:
        if self._user is _UNBUILT:
            self._user = participants.make_user(self.view)
        return self._user

    @property
    def judge(self) -> Judge | None:
        if self._judge is _UNBUILT:
            self._judge = make_judge(self.view)
        return self._judge

    def built_in(self, participant: object) -> bool:
        """Whether ``participant`` is one this trial built (not a conftest's override)."""
        return participant is not None and any(
            participant is built for built in (self._agent, self._user, self._judge) if built is not _UNBUILT
        )

    def all_built_in(self, agent: object, user: object, judge: object) -> bool:
        """The run uses this trial's own agent, user and judge (no fixture overrides one)."""
        judged_here = self._judge is not _UNBUILT and judge is self._judge  # the built-in fixture ran (None: no judge)
        return self.built_in(agent) and self.built_in(user) and judged_here

    def describe(self, side: str, participant: object) -> str:
        """How metrics, run.json and the summary name a side: its kind (``oracle``,
        ``litellm:MODEL``), or ``python:<module>.<class>@<version>`` for a participant no kind
        built (report/identity.py)."""
        replayed = getattr(participant, "replayed_identity", None)  # a saved side said again (run/rescore.py)
        if isinstance(replayed, str) and replayed:
            return replayed
        if participant is None or self.built_in(participant):
            return (
                participants.describe_agent(self.settings)
                if side == "agent"
                else participants.describe_user(self.settings)
            )
        return python_identity(participant)

    # ---- running -------------------------------------------------------------------------------

    async def run(
        self, agent: Agent | None = None, user: Participant | None = None, judge: Any = _UNBUILT
    ) -> ScenarioOutcome:
        """The conversation and its scoring, with the built-in participants unless others are given."""
        from pytest_tau2.llm.scope import SCOPE, ModelScope

        ctx = self.view
        # Tools that call models (banking's dense retrieval and reranker) find the cassette here.
        token = SCOPE.set(
            ModelScope(ctx.cassette, ctx.retry_policy(), ctx.usage, self.settings, asyncio.get_running_loop())
        )
        try:
            outcome = await run_scenario(
                self.scenario,
                agent=self.agent if agent is None else agent,
                user=self.user if user is None else user,
                settings=self.settings,
                judge=self.judge if judge is _UNBUILT else judge,
                usage=ctx.usage,
                seed=ctx.seed,
            )
            if reviewing.review_wanted(self.settings, outcome):  # --tau2-review (docs/review.md)
                await reviewing.review_outcome(
                    outcome, self.settings, usage=ctx.usage, retry=ctx.retry_policy(), cassette=ctx.cassette
                )
            return outcome
        finally:
            SCOPE.reset(token)

    def warm_gold(self) -> None:
        """Replay the scenario's gold actions now (cached for its scoring: run/seeding.py)."""
        gold_replay(self.scenario.bind(self.settings), self.settings)

    def run_alone(
        self, agent: Agent | None = None, user: Participant | None = None, judge: Any = _UNBUILT
    ) -> ScenarioOutcome:
        """:meth:`run` on an event loop of its own (one item at a time), its model clients closed after."""

        async def run_then_close() -> ScenarioOutcome:
            try:
                return await self.run(agent, user, judge)
            finally:
                await close_model_clients(self.settings)

        return asyncio.run(run_then_close())

    # ---- the result ----------------------------------------------------------------------------

    def result(self, outcome: ScenarioOutcome, agent: object, user: object) -> TrialResult:
        """Metrics and file texts of one outcome. No pytest in it: the prefetcher builds it on its
        loop thread as each conversation ends (the item's thread then has little left to do)."""
        ctx = self.view
        infra = outcome.infrastructure_error
        infra_text = ctx.redact(str(infra)) if infra is not None else None
        recording = self.save_cassette()
        metrics = build_record(
            outcome,
            models=ctx.models(),
            data_pin=self.scenario.data_pin(self.settings),
            token_usage=ctx.usage.to_dict(),
            agent_kind=self.describe("agent", agent),
            user_kind=self.describe("user", user),
            infrastructure_error=infra_text,
            trial=self.record(),
            recording=recording,
        )
        payload = files.scenario_payload(
            self.result_name,
            outcome,
            metrics,
            metadata=self.metadata(agent=metrics.agent, user=metrics.user),
            tool_schemas=self.tool_schemas(),
            save_db=self.settings.save_db,
            redact=ctx.redact_data,
        )
        shown = escape_controls(infra_text) if infra_text is not None else None  # metrics.json keeps it exact
        return TrialResult(metrics, payload, shown, fatal=bool(getattr(infra, "fatal", False)))

    def save_cassette(self) -> dict[str, Any] | None:
        """Write the cassette if this trial recorded calls; what metrics.json says about it (None: off,
        or never opened; with ``error`` when the cassette could not be written)."""
        cassette = self.view.opened_cassette
        if cassette is None:
            return None
        try:
            cassette.save()
        except OSError as exc:  # a full cassette folder loses the recording, never the scored result
            return {**cassette.stats(), "error": f"cassette {cassette.path}: {files.describe_os_error(exc)}"}
        return cassette.stats()

    def metadata(self, *, agent: str | None = None, user: str | None = None) -> dict[str, Any]:
        """metadata.json: what the scenario is, and who took part (``agent``/``user``: as
        :meth:`describe` names them; default: the configured kinds)."""
        s = self.scenario
        return {
            "scenario": s.name,
            "domain": s.domain,
            "class": f"{type(s).__module__}.{type(s).__qualname__}",
            "description": s.description,
            "success_signals": [str(sig) for sig in s.success_signals],
            "max_turns": s.max_turns,
            "max_duration": s.max_duration,
            "nl_assertions": s.nl_assertions,
            "db_state_assertions": s.db_state_assertions,
            "initialization_actions": s.initialization_actions,
            "reference_answer": s.reference_answer,
            "gold_actions": s.gold_actions(),
            "agent": agent or participants.describe_agent(self.settings),
            "user": user or participants.describe_user(self.settings),
            "models": self.view.models(),
            "labels": {"behavior_config": s.user_persona.behavior_config, "voice_config": s.user_persona.voice_config},
        }

    def tool_schemas(self) -> dict[str, list[dict[str, Any]]]:
        """tools.json: the tools each side was offered, as OpenAI function schemas."""
        from pytest_tau2.environment.env import offered_schemas

        s = self.scenario
        shown = getattr(s, "tool_schemas", None)  # tau2 domains: upstream's under --tau2-prompts upstream

        def offered(side: str, namespace: str, names: Any) -> list[dict[str, Any]]:
            classes = [resolve_tool(namespace, n) for n in names]
            return offered_schemas(classes, shown(side) if shown else {})

        out = {"agent": offered("agent", s.namespace, s.agent_resources.tools)}
        if "user" in s.sides:
            out["user"] = offered("user", s.user_namespace, s.user_resources.tools)
        return out


def make_judge(view: TrialView) -> Judge | None:
    """The judge of a trial: one LLM judge, or a jury of several (``--tau2-judge-model A,B,C``)."""
    configs = view.judges  # priced at --tau2-price
    if not configs:
        return None
    from pytest_tau2.run.judges import judge_labels
    from pytest_tau2.scoring.judge import LLMJudge

    judges = [
        LLMJudge(config, view.retry_policy(), view.usage, cassette=view.cassette, prompt=view.settings.judge_prompt)
        for config in configs
    ]
    if len(judges) == 1:
        return judges[0]
    from pytest_tau2.scoring.jury import Jury

    return Jury(judges, judge_labels(list(configs)))
