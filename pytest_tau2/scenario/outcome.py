"""The records one scenario run produces: the gold replay's result and the scenario's outcome."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_tau2.conversation.loop import ConversationResult
    from pytest_tau2.scenario.base import Scenario
    from pytest_tau2.scoring.divergence import Divergence
    from pytest_tau2.scoring.signals import Check, JudgeOutcome
    from pytest_tau2.scoring.verdict import Verdict


@dataclass
class GoldResult:
    """What replaying the reference actions on a fresh seeded state gives."""

    hashes: dict[str, str | None]
    actions: list[dict[str, Any]]
    """The write actions the replay recorded (the reference action list)."""
    failures: list[dict[str, Any]]
    """Gold actions that failed by design upstream, kept as failed: ``{index, name, error}``."""
    duration_s: float = 0.0


@dataclass(repr=False)  # holds whole DBs: a repr (asyncio reprs task results) would walk them
class ScenarioOutcome:
    """One finished scenario: the conversation, every signal and check, the verdict, the evidence."""

    scenario: Scenario
    conversation: ConversationResult
    signals: dict[str, Any]
    """Signal values by key (:class:`~pytest_tau2.scoring.signals.SuccessSignal` members index it too)."""
    checks: list[Check]
    verdict: Verdict
    stalled: bool
    final_dbs: dict[str, Any]
    gold: GoldResult | None
    tool_errors: int
    recorded_actions: list[dict[str, Any]]
    judge: JudgeOutcome | None
    duration_s: float
    judge_error: BaseException | None = None
    """Why the judge could not grade (its ``judge.error`` says the same); the conversation is untouched."""
    evidence: dict[str, Any] = field(default_factory=dict)
    """Per-item verdicts by metrics.json field (``db_state_assertion_verdicts``, ...), and the
    further fields of signals that add some (``tau2_reward_breakdown``, ...)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """``initialization`` (applied actions with results) and, for a remote agent, ``remote``."""
    first_divergence: Divergence | None = None
    """Where a failed conversation first left the gold trajectory (scoring/divergence.py)."""
    review: dict[str, Any] | None = None
    """A model's review of the conversation (``--tau2-review``: scoring/review.py), as metrics.json holds it."""

    @property
    def infrastructure_error(self) -> BaseException | None:
        """The item's infrastructure error: the conversation's, else the judge's."""
        return self.conversation.error or self.judge_error

    @property
    def is_successful(self) -> bool | str:
        if self.stalled:
            return False
        return self.verdict.is_successful
