"""``--tau2-agent null``: the do-nothing baseline (conversation/null_agent.py), whose passes are
what the benchmark gives away (report/null_baseline.py, docs/statistics.md).

Registered when the extension registry loads (extension/registry.py, ``BUILTINS``), after the
other built-in agents: the order errors and docs list the kinds in.
"""

from __future__ import annotations

from pytest_tau2.conversation.null_agent import NullAgent
from pytest_tau2.conversation.protocol import Participant
from pytest_tau2.run.participants import ParticipantKind, register_participant_kind
from pytest_tau2.run.view import TrialView


def _null(view: TrialView, argument: str | None) -> Participant:
    return NullAgent(min_turns=max(view.settings.min_agent_turns, 1))


NULL = ParticipantKind("null", "agent", _null, "do-nothing baseline: polite, calls no domain tool, ends the call")
register_participant_kind(NULL)
