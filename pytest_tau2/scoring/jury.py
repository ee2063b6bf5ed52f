"""Several NL judges (``--tau2-judge-model A,B,C``): each judges every assertion, the majority decides.

**The rule.** An assertion is met when *more than half* of the judges say it is met. A tie (two
judges of four, one of two) is *not met*: a verdict that passes an agent must be carried by the
judges, and a split panel has not shown that the conversation satisfies the assertion. This is
the conservative reading of the verdict the single judge already follows ("passed is true only if
the transcript clearly shows the assertion holds", judge_prompt.md), and it makes a two-judge
panel the AND of both. Use an odd number of judges to avoid ties.

**What is kept.** Each verdict of the outcome carries ``judges``: every judge's ``passed`` and
``reason`` for that assertion, in the order of ``--tau2-judge-model`` (metrics.json's
``nl_assertion_verdicts``); the outcome's ``panel`` keeps each judge's verdicts and raw reply
(judge_result.json). The run's agreement statistics are computed from those (report/agreement.py).

**Failures.** The judges are asked at once (their calls overlap). A judge that cannot grade makes
the whole panel unable to grade, so the item is the same infrastructure error a single failing
judge gives (JudgeError naming the judge): a majority of the judges that happened to answer
would be another panel than the one asked for. A cassette miss is raised as it is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_tau2.errors import InfrastructureError
from pytest_tau2.scoring.judge import JudgeError, LLMJudge
from pytest_tau2.scoring.signals import JudgeOutcome


def majority(votes: Sequence[bool]) -> bool:
    """Met when more than half of the votes say met; a tie is not met (module doc)."""
    return sum(1 for vote in votes if vote) * 2 > len(votes)


def combine(assertions: list[str], labels: Sequence[str], outcomes: Sequence[JudgeOutcome]) -> list[dict[str, Any]]:
    """One verdict per assertion from every judge's verdicts (each judge gave one per assertion)."""
    verdicts = []
    for index, text in enumerate(assertions):
        votes = [(label, outcome.verdicts[index]) for label, outcome in zip(labels, outcomes, strict=True)]
        passed = majority([bool(v["passed"]) for _, v in votes])
        yes = sum(1 for _, v in votes if v["passed"])
        side_reason = next(str(v.get("reason") or "") for _, v in votes if bool(v["passed"]) == passed)
        if yes in (0, len(votes)):
            reason = side_reason
        else:
            tie = " (a tie is not met)" if yes * 2 == len(votes) else ""
            reason = f"{yes} of {len(votes)} judges found it met{tie}; {side_reason}"
        verdicts.append(
            {
                "index": index,
                "assertion": text,
                "passed": passed,
                "reason": reason,
                "judges": [
                    {"judge": label, "passed": v["passed"], "reason": v.get("reason", "")} for label, v in votes
                ],
            }
        )
    return verdicts


@dataclass
class Jury:
    judges: list[LLMJudge]
    labels: list[str]
    """How reports name each judge (run/judges.py:judge_labels)."""

    async def judge(self, assertions: list[str], transcript: Sequence[Mapping[str, object]]) -> JudgeOutcome:
        answers = await asyncio.gather(
            *(judge.judge(assertions, transcript) for judge in self.judges), return_exceptions=True
        )
        outcomes: list[JudgeOutcome] = []
        for label, answer in zip(self.labels, answers, strict=True):
            if isinstance(answer, BaseException):
                raise self._failed(label, answer)
            outcomes.append(answer)
        panel = [
            {"judge": label, "model": judge.config.model, "nl_assertion_verdicts": o.verdicts, "raw_reply": o.raw_reply}
            for label, judge, o in zip(self.labels, self.judges, outcomes, strict=True)
        ]
        return JudgeOutcome(
            combine(assertions, self.labels, outcomes),
            outcomes[0].judge_input,
            None,
            None,
            ", ".join(self.labels),
            panel,
        )

    def _failed(self, label: str, exc: BaseException) -> BaseException:
        from pytest_tau2.llm.cassette import CassetteMissError

        if isinstance(exc, CassetteMissError) or not isinstance(exc, InfrastructureError):
            return exc  # a stale recording is the run's error as the cassette names it; a bug stays a bug
        return JudgeError(
            f"judge {label} of {len(self.labels)} ({', '.join(self.labels)}) could not grade, so the panel "
            f"cannot: {exc}",
            judge_input=list(getattr(exc, "judge_input", None) or []),
            raw_reply=getattr(exc, "raw_reply", None),
            model=label,
            fatal=exc.fatal,
        )
