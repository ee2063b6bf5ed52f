"""A pytest plugin (``-p flawed_agent``) adding the agent kind ``flawed:RATE:SEED``: the oracle,
except that a seeded share RATE of the trials is played by the do-nothing agent instead (the
flaw: the work is skipped). Which trials are flawed is decided by ``random.Random(f"{SEED}:
{scenario}:{trial}")``, so two runs with the same SEED have the same flaws and two with
different SEEDs independent ones. Used by bench/bench_calibration.py."""

from __future__ import annotations

import random

from pytest_tau2 import ParticipantKind, register_participant_kind
from pytest_tau2.conversation.null_agent import NullAgent
from pytest_tau2.conversation.offline import OracleAgent
from pytest_tau2.conversation.protocol import Participant
from pytest_tau2.errors import SettingsError
from pytest_tau2.run.participants import Context
from pytest_tau2.settings import Settings


def _parse(argument: str | None) -> tuple[float, int]:
    try:
        rate, seed = (argument or "").split(":")
        return float(rate), int(seed)
    except ValueError:
        raise SettingsError(f"--tau2-agent flawed:RATE:SEED, e.g. flawed:0.3:1; got {argument!r}") from None


def flawed(ctx: Context, argument: str | None) -> Participant:
    rate, seed = _parse(argument)
    turns = max(ctx.settings.min_agent_turns, 1)
    if random.Random(f"{seed}:{ctx.scenario.name}:{ctx.trial}").random() < rate:
        return NullAgent(min_turns=turns)
    return OracleAgent(ctx.plan, min_turns=turns)


def _validate(settings: Settings, argument: str | None) -> None:
    _parse(argument)


register_participant_kind(
    ParticipantKind(
        "flawed",
        "agent",
        flawed,
        "the oracle with a seeded share of trials skipped",
        argument="RATE:SEED",
        follows_plan=True,
        validate=_validate,
    )
)
