"""``--tau2-review``: each failed trial reviewed by a model as soon as it is scored (docs/review.md).

The reviewer is ``--tau2-review-model`` (one, or several: a jury), else the run's judge model(s).
Its calls go through the trial's usage meter (side ``review``), cassette and retries, like the
judge's. A review never changes the verdict, and a reviewer that fails never fails the item: the
record's ``review`` then says why there is none (``{"error": ...}``), and the summary counts it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_tau2.errors import SettingsError
from pytest_tau2.llm.config import ModelConfig, RetryPolicy
from pytest_tau2.llm.usage import UsageMeter
from pytest_tau2.run.judges import judge_configs, judge_labels
from pytest_tau2.scoring.review import Reviewer, ReviewError, ReviewInput, ReviewMode
from pytest_tau2.settings import Settings

if TYPE_CHECKING:
    from pytest_tau2.llm.cassette import Cassette
    from pytest_tau2.scenario.outcome import ScenarioOutcome


def configs_for(models: str, args: str | None) -> list[ModelConfig]:
    """One config per reviewing model (``A,B``: a jury); SettingsError naming the option when one is off."""
    configs = []
    for name in (part.strip() for part in models.split(",")):
        if not name:
            raise SettingsError(f"--tau2-review-model {models!r}: an empty model name between commas")
        try:
            config = ModelConfig.from_option(name, args, option_name="--tau2-review-args")
        except ValueError as exc:
            raise SettingsError(str(exc)) from None
        if config is not None:
            configs.append(config)
    return configs


def reviewer_configs(settings: Settings) -> list[ModelConfig]:
    """The reviewing models: --tau2-review-model, else the judge's; SettingsError when there is none."""
    if settings.review_model and settings.review_model.strip():
        return configs_for(settings.review_model, settings.review_args)
    configs = judge_configs(settings)
    if not configs:
        raise SettingsError("--tau2-review needs a model: give --tau2-review-model (or a --tau2-judge-model)")
    return configs


def review_wanted(settings: Settings, outcome: ScenarioOutcome) -> bool:
    """A failed trial of a run with --tau2-review (not an infrastructure error: nothing to review)."""
    return settings.review and outcome.infrastructure_error is None and outcome.is_successful is False


async def review_outcome(
    outcome: ScenarioOutcome,
    settings: Settings,
    *,
    usage: UsageMeter,
    retry: RetryPolicy,
    cassette: Cassette | None,
) -> None:
    """Review a scored trial in place (``outcome.review``)."""
    configs = reviewer_configs(settings)
    mode: ReviewMode = "user" if settings.review_mode == "user" else "full"
    scenario = outcome.scenario
    failed = ", ".join(outcome.verdict.failed) or "none"
    divergence = outcome.first_divergence.summary() if outcome.first_divergence is not None else None
    item = ReviewInput(
        policy=scenario.get_agent_prompt(),
        user_instructions=scenario.get_user_prompt(),
        gold_actions=list(scenario.gold_actions() or []),
        nl_assertions=list(scenario.nl_assertions or []),
        transcript=outcome.conversation.transcript,
        outcome=f"is_successful: {outcome.is_successful}; failed signals: {failed}; stop reason: "
        f"{outcome.conversation.stop_reason}" + (f"; first divergence from gold: {divergence}" if divergence else ""),
    )
    names = judge_labels(configs)
    reviewer = Reviewer(configs, names, retry, usage, mode, cassette)
    try:
        outcome.review = (await reviewer.review(item)).to_dict()
    except ReviewError as exc:
        outcome.review = {"mode": mode, "reviewers": names, "error": str(exc)}
