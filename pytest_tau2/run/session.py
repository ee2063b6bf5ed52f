"""What a run does once per process, around its scenarios: the model clients' libraries imported
before the first scenario's clock starts, their HTTP clients closed with each event loop, and the
run header's words for the agent, the user, the judge and the recording mode. No pytest here."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

from pytest_tau2.llm.secrets import redact, redactor
from pytest_tau2.report.terminal import escape_controls
from pytest_tau2.run import participants
from pytest_tau2.run.run_folder import endpoints
from pytest_tau2.settings import Settings


def shown(text: str, secrets: Sequence[str] = ()) -> str:
    """``text`` as it may be shown to the user (an option's message): credentials masked."""
    return redact(text, secrets)


def terminal_text(secrets: Sequence[str] = ()) -> Callable[[str], str]:
    """A function giving a text as pytest may print and report it (the terminal, JUnit XML):
    credentials masked and control characters escaped (report/terminal.py); result files keep
    the exact text. The credentials are looked up once, when it is made."""
    mask = redactor(secrets)
    return lambda text: escape_controls(mask(text))


def header_lines(
    settings: Settings, *, fixtures: Mapping[str, Sequence[str]] | None = None, notes: Sequence[str] = ()
) -> list[str]:
    """The ``tau2:`` lines of the run header: who talks, where results go, what decides, recording.

    ``fixtures``: the files that define a ``tau2_agent`` / ``tau2_user`` fixture of their own
    (known before collection): the header names the fixture, since its object, and so its
    ``python:<module>.<class>@<version>`` name, exists only once a scenario asks for it (the
    summary, metrics.json and run.json then name it). ``notes``: the results folder's (a model
    server that moved since the saved run).
    """
    s = settings
    fixtures = fixtures or {}
    agent = _fixture("tau2_agent", fixtures) or participants.describe_agent(s)
    user = _fixture("tau2_user", fixtures) or participants.describe_user(s)
    lines = [
        f"tau2: agent={agent} user={user} judge={_judge_words(s)}"
        + ("" if s.prompts == "upstream" else f" prompts={s.prompts} (not leaderboard-comparable)"),
        f"tau2: results={s.results_dir}",
        _verdict_line(s),
    ]
    servers = endpoints(s)
    if servers:
        shown_servers = " ".join(f"{side}={url}" for side, url in servers.items())
        lines.append(f"tau2: model servers: {shown_servers} (recorded in run.json, not part of its fingerprint)")
    campaign = _campaign_line(s)
    if campaign:
        lines.append(campaign)
    lines += [f"tau2: note: {note}" for note in notes]
    if s.recording is not None:
        from pytest_tau2.llm.cassette import describe_mode

        lines.append(f"tau2: {describe_mode(s.recording, s.cassette_dir, participants.uses_llm(s))}")
    return lines


def _campaign_line(s: Settings) -> str | None:
    """The campaign controls in force (docs/campaigns.md), when any is set."""
    parts = [
        f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}"
        for name in ("max_tokens", "max_cost", "max_messages")
        if (value := getattr(s, name)) is not None
    ]
    if s.budget is not None:
        parts.append(f"budget=${s.budget:g} (split evenly between xdist workers)")
    if s.price:
        parts.append(f"prices: {s.price}")
    return f"tau2: campaign: {', '.join(parts)}" if parts else None


def _fixture(name: str, fixtures: Mapping[str, Sequence[str]]) -> str | None:
    files = fixtures.get(name)
    return f"{name} fixture in {', '.join(files)}" if files else None


def _verdict_line(s: Settings) -> str:
    """Which verdict decides the items, and the trials (docs/leaderboard.md)."""
    if s.verdict == "tau2-reward":
        verdict = "tau2 reward (--tau2-verdict tau2-reward) decides tau2 items; the six signals are saved beside it"
    else:
        verdict = "six-signal decides; tau2 reward saved beside it"
    return f"tau2: verdict: {verdict}; trials={s.trials} per scenario, seed={s.seed}"


def preload_model_clients(settings: Settings) -> None:
    """Import the model client's libraries once per process, before collection and the first
    test's clock: litellm only when a model needs it (the OpenAI wire path alone never does),
    else the wire path's HTTP client. Not on a background thread: an import then competes for
    the GIL with collection and the conversations that wait for it (c32 sweep 21.4 s vs 18.6 s
    that way, bench/results/llm_speed.md)."""
    from pytest_tau2.llm.client import preload

    preload(litellm=participants.litellm_needed(settings))


def start_background_preload(settings: Settings) -> threading.Thread | None:
    """For a run whose models all take the OpenAI wire path: import its HTTP client (aiohttp,
    ~0.1 s) on a thread (llm/wire_import.py: the one plugin/__init__.py may have started before
    the conftest files loaded), while pytest collects on the main one (what that thread buys and
    what it does not: llm/wire_import.py; collection's wait for it, ~100 ms before, ~5-8 ms:
    bench/results/lean.md). litellm's import (seconds of Python, all under the GIL)
    stays on the main thread: :func:`preload_model_clients`. None when there is nothing to do
    here; otherwise join the thread before the first call."""
    if not wants_preload(settings) or participants.litellm_needed(settings):
        return None
    from pytest_tau2.llm import wire_import

    return wire_import.start()


def wants_preload(settings: Settings) -> bool:
    """Whether this run's scenarios will call a model (a replay-only recording mode never does)."""
    return participants.uses_llm(settings) and settings.recording not in ("none", "once")


async def close_model_clients(settings: Settings) -> None:
    """At the end of an event loop that made model calls: litellm caches one HTTP client per loop."""
    if participants.uses_llm(settings):
        from pytest_tau2.llm.client import aclose

        await aclose()


def _judge_words(settings: Settings) -> str:
    """The judge(s) and prompt as the header names them (one judge's words are as they always were)."""
    models = [role.model for role in settings.roles.judges]
    if not models:
        return "none (NL assertions skipped)"
    words = models[0] if len(models) == 1 else f"{','.join(models)} (majority of {len(models)}; a tie fails)"
    return words + (" prompt=upstream" if settings.judge_prompt == "upstream" else "")


def stop_model_calls(reason: str) -> None:
    """No model call starts in this process from now on (any thread): each raises ``reason`` as the
    run-stopping error (an xdist worker whose controller is gone, plugin/xdist_link.py)."""
    from pytest_tau2.llm.ratelimit import stop_all

    stop_all(reason)
