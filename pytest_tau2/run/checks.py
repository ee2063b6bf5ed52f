"""The checks of a run's settings that are not about its participant kinds: each model's provider,
the domains' options, the verdict, the trials, the prices. ``participants.validate_settings`` runs
them after the kinds' own checks (moved here from run/participants.py unchanged)."""

from __future__ import annotations

from pytest_tau2.errors import SettingsError
from pytest_tau2.run.models import all_model_configs
from pytest_tau2.settings import Settings


def check_options(settings: Settings) -> None:
    """Refuse impossible settings up front, naming the option (:class:`SettingsError`)."""
    for side in ("agent", "user", "judge"):
        try:
            configs = all_model_configs(settings, side)
        except ValueError as exc:
            raise SettingsError(str(exc)) from None
        for config in configs if settings.recording != "none" else ():  # a replay-only run calls no provider
            from pytest_tau2.llm.providers import provider_problem

            problem = provider_problem(config.model, config.args, f"--tau2-{side}-model")
            if problem is not None:
                raise SettingsError(problem)
    if settings.telecom_tasks not in ("base", "full"):
        raise SettingsError(f"--tau2-telecom-tasks must be 'base' or 'full', got {settings.telecom_tasks!r}")
    from pytest_tau2.domains.tau2_banking_knowledge.retrieval import check_retrieval

    problem = check_retrieval(settings.retrieval)
    if problem is not None:
        raise SettingsError(problem)
    if settings.verdict not in ("six-signal", "tau2-reward"):
        raise SettingsError(f"--tau2-verdict must be 'six-signal' or 'tau2-reward', got {settings.verdict!r}")
    if settings.trials < 1:
        raise SettingsError(f"--tau2-trials must be at least 1, got {settings.trials}")
    if settings.price:
        from pytest_tau2.llm.prices import parse_prices

        try:  # refused at start even when no model of this run is named in it
            parse_prices(settings.price)
        except ValueError as exc:
            raise SettingsError(str(exc)) from None


def litellm_needed_for(settings: Settings, uses_llm: bool) -> bool:
    """Whether this run's model calls (``uses_llm``: participants.uses_llm) need litellm: a model the
    OpenAI wire path cannot carry (another provider, ``--tau2-llm-transport litellm``), or one
    litellm may have to price."""
    if not uses_llm:
        return False
    if settings.llm_transport == "litellm":
        return True
    from pytest_tau2.llm.openai_wire import route
    from pytest_tau2.llm.pricing import maybe_priced

    for side in ("agent", "user", "judge"):
        for config in all_model_configs(settings, side):
            if route(config.model, config.args, []) is None or maybe_priced([config.model]):
                return True
    return False
