"""The checks of a run's settings that are not about its participant kinds: each model's provider,
the domains' options, the verdict, the trials. ``participants.validate_settings`` runs them after
the kinds' own checks. Models and prices were parsed once, into ``settings.roles`` (settings/roles.py)."""

from __future__ import annotations

from pytest_tau2.errors import SettingsError
from pytest_tau2.settings import Settings, check_sections


def check_options(settings: Settings) -> None:
    """Refuse impossible settings up front, naming the option (:class:`SettingsError`)."""
    roles = settings.roles  # every --tau2-*-model/-args, parsed once (a SettingsError naming the option)
    if settings.review and not ((settings.review_model or "").strip() or roles.judges):
        raise SettingsError("--tau2-review needs a model: give --tau2-review-model MODEL (or a --tau2-judge-model)")
    for role in roles.all() if settings.recording != "none" else ():  # replay-only: no provider called
        from pytest_tau2.llm.providers import provider_problem

        problem = provider_problem(role.model, role.args, role.option)
        if problem is not None:
            raise SettingsError(problem)
    check_sections(settings)  # each domain's options, typed once (banking's retrieval, telecom's task set)
    if settings.verdict not in ("six-signal", "tau2-reward"):
        raise SettingsError(f"--tau2-verdict must be 'six-signal' or 'tau2-reward', got {settings.verdict!r}")
    if settings.trials < 1:
        raise SettingsError(f"--tau2-trials must be at least 1, got {settings.trials}")


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

    return any(route(role.model, role.args, []) is None or maybe_priced([role.model]) for role in settings.roles.all())
