"""A pytest-tau2 results folder -> tau2-bench's files: one ``Results`` per domain, a draft ``submission.json``.

Data flow: ``report/merge.read_folder`` (run.json and every result record, read through the typed
record) + each trial's transcript.json + the pinned task objects of the data folder ->
:class:`~pytest_tau2.tau2_format.models.Results` (validated) -> files. docs/leaderboard.md
("Export to tau2's formats") says what each field holds and where our run differs from
``tau2 run``.

Upstream's submission rules are checked first (:func:`rule_problems`); a folder that breaks one is
refused with every problem named, unless the caller asks for a partial export (Results files
only, never a submission).
"""

from __future__ import annotations

import datetime
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pytest_tau2.report import leaderboard
from pytest_tau2.report.leaderboard import tau2_reward_trials
from pytest_tau2.report.merge import ShardFolder
from pytest_tau2.report.pass_k import pass_k
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.scoring.tau2_reward import upstream_ending
from pytest_tau2.tau2_format import models, submission

UPSTREAM_DOMAINS = models.UPSTREAM_DOMAINS
TERMINATION = {
    "exit": "agent_stop",  # the agent ended the call itself (EndConversationTool)
    "transfer": "agent_stop",  # the agent's transfer ends the call here; upstream waits for ###TRANSFER###
    "user_stop": "user_stop",
    "max_turns": "max_steps",
    "max_duration": "timeout",
    "timeout": "timeout",  # max_duration's name in results of earlier versions
    # Our per-scenario budgets (docs/campaigns.md) have no upstream name: the nearest is its step limit.
    "max_messages": "max_steps",
    "max_tokens": "max_steps",
    "max_cost": "max_steps",
    "too_many_tool_errors": "too_many_errors",
    "user_max_steps": "infrastructure_error",  # the simulator's doing: no reward here either
    "error": "infrastructure_error",
}
INVALID_ARGUMENTS_KEY = "__invalid_arguments__"
"""A call whose arguments were not a JSON object keeps its text under this key: upstream needs an
object, and no gold action has this key, so the call matches none (as here), and the tools refuse it."""
DEFAULT_MAX_STEPS = 100
"""The tau2 scenarios' own ``max_turns`` (agent steps) when the run did not set one."""


class ExportError(Exception):
    """The folder cannot be exported (unreadable, or it breaks upstream's submission rules)."""


@dataclass
class DomainRun:
    """What one domain of the folder exports from."""

    domain: str
    """Upstream's name (``retail``)."""
    records: list[ScenarioRecord] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    """Items of this domain that ended without a result (``errors_without_result``)."""


def split_domains(folder: ShardFolder) -> tuple[dict[str, DomainRun], list[str]]:
    """The folder's tau2 results by upstream domain, and the scenarios that are no tau2 task."""
    runs: dict[str, DomainRun] = {}
    other: list[str] = []
    for record in folder.metrics:
        domain = UPSTREAM_DOMAINS.get(record.domain)
        if domain is None or not record.tau2_id:
            other.append(record.folder)
            continue
        runs.setdefault(domain, DomainRun(domain)).records.append(record)
    for error in folder.errors:
        domain = UPSTREAM_DOMAINS.get(error.scenario.split("__", 1)[0])
        if domain is not None:
            runs.setdefault(domain, DomainRun(domain)).missing.append(error.scenario)
    return runs, other


# ---- the pinned tasks ---------------------------------------------------------------------------------


def pinned_tasks(root: Path, domain: str) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """The base split's task ids (upstream's ``tasks_loader("base")``) and every task object by id."""
    folder = root / "tau2" / "domains" / domain
    if domain == "banking_knowledge":  # one file per task; no split file: every task is in the base set
        tasks = [json.loads(path.read_text("utf-8")) for path in sorted((folder / "tasks").glob("task_*.json"))]
        by_id = {str(task["id"]): task for task in tasks}
        return list(by_id), by_id
    by_id = {str(task["id"]): task for task in json.loads((folder / "tasks.json").read_text("utf-8"))}
    splits = json.loads((folder / "split_tasks.json").read_text("utf-8"))
    return [str(task_id) for task_id in splits.get("base", list(by_id))], by_id


def policy_text(root: Path, domain: str) -> str:
    """The domain's policy as upstream's environment states it (telecom: both documents, tagged)."""
    folder = root / "tau2" / "domains" / domain
    if domain == "telecom":
        main, manual = (
            (folder / "main_policy.md").read_text("utf-8"),
            (folder / "tech_support_manual.md").read_text("utf-8"),
        )
        return f"<main_policy>\n{main}\n</main_policy>\n<tech_support_policy>\n{manual}\n</tech_support_policy>"
    policy = folder / "policy.md"
    return policy.read_text("utf-8") if policy.is_file() else ""


# ---- the rules -------------------------------------------------------------------------------------


def model_of(record: ScenarioRecord, side: str) -> tuple[str | None, dict[str, Any] | None]:
    """A side's model and its arguments as configured: the per-trial ``seed`` the harness adds is not
    part of the configuration (upstream keeps it out of ``llm_args`` too)."""
    entry = record.models.get(side)
    if isinstance(entry, list):  # the judges of a jury (run/judges.py); agent and user have one model
        entry = entry[0] if entry else None
    if not entry:
        return None, None
    raw_args = entry.get("args")
    args: dict[str, Any] = dict(raw_args) if isinstance(raw_args, dict) else {}
    if record.seed is not None and args.get("seed") == record.seed:
        args.pop("seed")
    return str(entry.get("model")), args


def rule_problems(runs: dict[str, DomainRun], root: Path, trials: int) -> list[str]:
    """Every way the folder breaks upstream's submission rules (empty: it follows them)."""
    problems: list[str] = []
    configs: dict[str, set[str]] = defaultdict(set)
    for domain, run in sorted(runs.items()):
        base, _ = pinned_tasks(root, domain)
        counts = Counter(str(record.tau2_id) for record in run.records)
        absent = [task for task in base if task not in counts]
        extra = sorted(set(counts) - set(base))
        if absent:
            problems.append(f"{domain}: {len(absent)} of {len(base)} base-split tasks have no result: {_some(absent)}")
        if extra:
            problems.append(f"{domain}: {len(extra)} tasks are not in the base split: {_some(extra)}")
        wrong = sorted(f"{task} ({n})" for task, n in counts.items() if n != trials and task in base)
        if wrong:
            problems.append(f"{domain}: tasks without exactly {trials} trials: {_some(wrong)}")
        if run.missing:
            problems.append(f"{domain}: {len(run.missing)} items ended without a result: {_some(run.missing)}")
        for record in run.records:
            for side in ("agent", "user"):
                model, args = model_of(record, side)
                configs[side].add(json.dumps({"model": model, "args": args}, sort_keys=True))
    for side in ("agent", "user"):
        if len(configs[side]) > 1:
            problems.append(
                f"the {side} model or its arguments differ between results (upstream wants one {side} model with "
                f"identical arguments across domains): {'; '.join(sorted(configs[side]))}"
            )
    return problems


def seed_prompted(runs: dict[str, DomainRun]) -> str:
    """Which results were made under other prompts than upstream's (empty: none)."""
    counts = Counter(
        prompts for run in runs.values() for record in run.records
        if (prompts := leaderboard.prompts_of(record)) not in (None, "upstream")
    )  # fmt: skip
    if not counts:
        return ""
    return "the run used " + ", ".join(f"{name} prompts in {n} results" for name, n in sorted(counts.items()))


def _some(names: Sequence[str], shown: int = 5) -> str:
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


# ---- one simulation ----------------------------------------------------------------------------------


def messages(transcript: Iterable[dict[str, Any]]) -> list[models.ParticipantMessage | models.ToolMessage]:
    """Our transcript entries as upstream's messages (``turn_idx`` as we numbered them: 0..n-1)."""
    out: list[models.ParticipantMessage | models.ToolMessage] = []
    for entry in transcript:
        role = entry.get("role")
        if role == "tool":
            out.append(
                models.ToolMessage(
                    role="tool",
                    id=str(entry.get("tool_call_id") or ""),
                    content=entry.get("content"),
                    requestor="user" if entry.get("requestor") == "user" else "assistant",
                    error=bool(entry.get("error")),
                    turn_idx=entry.get("turn_idx"),
                )
            )
            continue
        requestor: Literal["assistant", "user"] = "user" if role == "user" else "assistant"
        calls = [
            models.ToolCall(id=str(call.get("id") or ""), name=str(call["name"]),
                            arguments=_arguments(call.get("arguments")), requestor=requestor)
            for call in entry.get("tool_calls") or []
        ]  # fmt: skip
        out.append(
            models.ParticipantMessage(
                role="user" if role == "user" else "assistant",
                content=entry.get("content"),
                tool_calls=calls or None,
                turn_idx=entry.get("turn_idx"),
            )
        )
    return out


def _arguments(raw: object) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if raw in (None, ""):
        return {}
    return {INVALID_ARGUMENTS_KEY: raw}


def reward_info(record: ScenarioRecord) -> models.RewardInfo | None:
    """Our tau2 reward in upstream's shape (None for a trial without one: an infrastructure error)."""
    reward = record.signal("tau2_reward")
    if reward is None or record.infrastructure_error:
        return None
    info = record.detail("tau2_reward_info")
    info = dict(info) if isinstance(info, dict) else {}
    breakdown = record.detail("tau2_reward_breakdown")
    breakdown = dict(breakdown) if isinstance(breakdown, dict) else {}
    db = breakdown.get("DB")
    communicate = [
        models.CommunicateCheck(info=str(c.get("info")), met=bool(c.get("met")), justification=_said(c.get("turn_idx")))
        for c in info.get("communicate_checks") or [] if isinstance(c, dict)
    ]  # fmt: skip
    verdicts = record.detail("nl_assertion_verdicts")
    nl = [
        models.NLAssertionCheck(nl_assertion=str(v.get("assertion", "")), met=bool(v.get("passed")),
                                justification=str(v.get("reason") or ""))
        for v in (verdicts if isinstance(verdicts, list) else []) if isinstance(v, dict) and v.get("passed") is not None
    ]  # fmt: skip
    return models.RewardInfo(
        reward=float(reward),
        db_check=models.DBCheck(db_match=db == 1.0, db_reward=float(db)) if isinstance(db, int | float) else None,
        communicate_checks=communicate or None,
        nl_assertions=nl or None,
        reward_basis=None if info.get("terminated_early") else list(info.get("reward_basis") or []) or None,
        reward_breakdown={k: float(v) for k, v in breakdown.items() if isinstance(v, int | float)} or None,
        info={"pytest_tau2": info},
    )


def _said(turn: object) -> str:
    return "never said by the agent" if turn is None else f"said by the agent at turn {turn}"


def simulation(record: ScenarioRecord, transcript: list[dict[str, Any]], started: str) -> models.SimulationRun:
    """One trial as upstream's ``SimulationRun``. Per-trial clock times are not saved by this project:
    ``start_time`` is the run's start and ``end_time`` that plus the conversation's duration."""
    start = _when(started)
    end = start + datetime.timedelta(seconds=record.conversation_duration_s)
    # As upstream would have ended it: a user stop ends the trajectory (tau2_reward is scored on the same).
    stop_reason, ended = upstream_ending(record.stop_reason, transcript)
    transcript = [dict(message) for message in ended]
    termination = "infrastructure_error" if record.infrastructure_error else TERMINATION.get(stop_reason)
    usage = record.token_usage
    return models.SimulationRun(
        id=record.folder,
        task_id=str(record.tau2_id),
        timestamp=start.isoformat(),
        start_time=start.isoformat(),
        end_time=end.isoformat(),
        duration=record.conversation_duration_s,
        termination_reason=termination or "unexpected_error",
        agent_cost=_cost(usage.get("agent")),
        user_cost=_cost(usage.get("user")),
        reward_info=reward_info(record),
        messages=messages(transcript),
        trial=int(record.trial or 1) - 1,  # upstream numbers trials from 0
        seed=record.seed,
        info={"pytest_tau2": {"scenario": record.scenario, "stop_reason": record.stop_reason,
                              "is_successful": record.is_successful,
                              "infrastructure_error": record.infrastructure_error}},
    )  # fmt: skip


def _cost(usage: object) -> float | None:
    cost = getattr(usage, "cost_usd", None)
    return float(cost) if isinstance(cost, int | float) else None


def _when(started: str | None) -> datetime.datetime:
    try:
        return datetime.datetime.fromisoformat(started or "")
    except ValueError:
        return datetime.datetime.fromtimestamp(0, datetime.UTC)


# ---- one domain --------------------------------------------------------------------------------------


def results(run: DomainRun, folder: ShardFolder, root: Path, *, partial: bool) -> models.Results:
    """The domain's ``Results``: the pinned task objects of the base split (only those run, for a
    partial export), every trial's simulation, the run's configuration in ``info``."""
    base, by_id = pinned_tasks(root, run.domain)
    ran = {str(record.tau2_id) for record in run.records}
    unknown = sorted(ran - set(by_id))
    if unknown:
        raise ExportError(f"{run.domain}: task ids not in the data folder's tasks: {_some(unknown)}")
    task_ids = [task for task in base if task in ran] if partial else list(base)
    task_ids += sorted(ran - set(task_ids))
    first = run.records[0]
    agent_model, agent_args = model_of(first, "agent")
    user_model, user_args = model_of(first, "user")
    fingerprint = folder.fingerprint
    sims = []
    for record in sorted(run.records, key=lambda r: (task_ids.index(str(r.tau2_id)), r.trial or 1)):
        transcript = folder.path / record.folder / "transcript.json"
        try:
            messages_ = json.loads(transcript.read_text("utf-8")).get("messages") or []
        except (OSError, ValueError) as exc:
            raise ExportError(f"{transcript}: not readable ({exc})") from None
        sims.append(simulation(record, messages_, folder.started or ""))
    pin = first.data_pin.commit if first.data_pin is not None else None
    info = models.Info(
        git_commit=str(pin or ""),
        num_trials=int(fingerprint.get("trials") or first.trials or 1),
        max_steps=int(fingerprint.get("max_turns") or DEFAULT_MAX_STEPS),
        max_errors=int(fingerprint.get("max_tool_errors") or 10),
        user_info=models.UserInfo(implementation=f"pytest-tau2:{first.user}", llm=user_model, llm_args=user_args),
        agent_info=models.AgentInfo(implementation=f"pytest-tau2:{first.agent}", llm=agent_model, llm_args=agent_args),
        environment_info=models.EnvironmentInfo(domain_name=run.domain, policy=policy_text(root, run.domain)),
        seed=fingerprint.get("seed"),
        retrieval_config=fingerprint.get("retrieval") if run.domain == "banking_knowledge" else None,
    )  # fmt: skip
    info.pytest_tau2 = {  # upstream ignores keys it does not know
        "results_dir": str(folder.path), "fingerprint": fingerprint,
        "note": "made by pytest-tau2 export: git_commit is the tau2 data pin; max_steps counts agent steps, "
        "max_errors consecutive errors of one side (docs/leaderboard.md)",
    }  # fmt: skip
    document = models.Results(
        timestamp=folder.started, info=info, tasks=[by_id[task] for task in task_ids], simulations=sims
    )
    return models.Results.model_validate(document.document())  # what is written is what validates


# ---- the submission ----------------------------------------------------------------------------------


def domain_results(result: models.Results, records: Sequence[ScenarioRecord], trials: int) -> submission.DomainResults:
    """pass^1..4 (percent) of tau2's reward, and the average agent cost per trajectory."""
    found = pass_k(tau2_reward_trials(list(records)), max(trials, 1))
    values = {k: (None if v is None else round(v * 100, 4)) for k, v in found.values.items() if k <= 4}
    costs = [sim.agent_cost for sim in result.simulations if sim.agent_cost is not None]
    return submission.DomainResults(
        pass_1=values.get(1), pass_2=values.get(2), pass_3=values.get(3), pass_4=values.get(4),
        cost=sum(costs) / len(costs) if costs else None,
        retrieval_config=result.info.retrieval_config if result.domain == "banking_knowledge" else None,
    )  # fmt: skip


UPSTREAM_PROMPTS_NOTES = (
    "Run with pytest-tau2, not `tau2 run`: a custom submission. The tasks, the tools' behaviour, the data, tau2's "
    "reward and what the agent and the user simulator are shown (system prompts, greeting, tool schemas; "
    "--tau2-prompts upstream) are upstream's at the pin, and a user stop ends the conversation as upstream's does; "
    "the harness differs in that a transfer ends the call (upstream waits for ###TRANSFER###) and the loop's limits "
    "count agent steps and consecutive errors. See docs/leaderboard.md of pytest-tau2."
)
NOTES = (
    "Run with pytest-tau2, not `tau2 run`: a custom submission. The tasks, the tools' behaviour, the data and tau2's "
    "reward are upstream's at the pin; the harness differs: the agent's system prompt is the policy verbatim followed "
    "by a section of our own notes, the agent has one extra tool (EndConversationTool) and our tool descriptions, "
    "the conversation opens with the same fixed greeting but after the user's stop token the agent gets one closing "
    "turn (upstream ends at once), a transfer ends the call (upstream waits for ###TRANSFER###), and the loop's "
    "limits count agent steps and consecutive errors. See docs/leaderboard.md of pytest-tau2."
)


def draft_submission(
    exported: dict[str, models.Results], runs: dict[str, DomainRun], folder: ShardFolder, files: dict[str, str]
) -> submission.Submission:
    """A draft ``submission.json``: numbers from the exported runs, every field we cannot know marked."""
    first = next(iter(runs.values())).records[0]
    agent_model, _ = model_of(first, "agent")
    user_model, _ = model_of(first, "user")
    trials = int(folder.fingerprint.get("trials") or 1)
    table = {
        domain: domain_results(result, runs[domain].records, trials)
        for domain, result in exported.items()
        if domain in submission.LEADERBOARD_DOMAINS
    }
    started = _when(folder.started).date()
    pin = first.data_pin.commit if first.data_pin else None
    upstream = not seed_prompted(runs)
    return submission.Submission(
        model_name=agent_model or submission.PLACEHOLDER,
        model_organization=submission.PLACEHOLDER,
        submitting_organization=submission.PLACEHOLDER,
        submission_date=datetime.date.today(),
        submission_type="custom",
        contact_info=submission.ContactInfo(email=submission.PLACEHOLDER, name=submission.PLACEHOLDER),
        results=submission.DomainTable.model_validate(table),
        trajectories_available=False,
        trajectory_files={domain: files[domain] for domain in table},
        references=[submission.Reference(title="pytest-tau2 (the harness)", url=submission.PLACEHOLDER,
                                         type="github")],
        methodology=submission.Methodology(
            evaluation_date=started,
            tau2_bench_version=f"data pin {pin}" if pin else None,
            user_simulator=user_model or f"pytest-tau2 {first.user} user (no model)",
            notes=UPSTREAM_PROMPTS_NOTES if upstream else NOTES,
            verification=submission.Verification(
                modified_prompts=not upstream, omitted_questions=False,
                details="Agent and user prompts and tool schemas are upstream's (--tau2-prompts upstream); see notes."
                if upstream else "Agent prompt = upstream policy + pytest-tau2's notes; user prompt = upstream "
                "guidelines + our <scenario> block (--tau2-prompts seed); see notes.",
            ),
        ),
    )  # fmt: skip
