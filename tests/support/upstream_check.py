"""Run by UPSTREAM's interpreter (``$TAU2_UPSTREAM_PYTHON``), never imported by the test suite.

``python upstream_check.py FILE...`` checks each exported Results file with tau2-bench's own code
at the pin and prints one JSON object:

- ``format``: ``Results.load`` parses it (the leaderboard verifier's format check);
- ``tasks`` / ``trials``: the verifier's base-split and trial-count checks (``ok``, ``error``);
- ``simulations``: per simulation our stored reward and the reward of upstream's evaluator
  re-scoring the trajectory (``compute_simulation_rewards``, as ``tau2 evaluate-trajs`` does).
  A simulation whose task needs upstream's LLM judge (NL assertions in its reward basis) is not
  re-scored (``skipped``): no test reaches a model provider.
- with ``--judge``, tasks with NL assertions are re-scored too: upstream's judge model is then
  called, so the caller points litellm at a server of its own (``OPENAI_API_BASE``);
- with ``--strict`` (banking_knowledge): each simulation also replayed strictly, as upstream's live
  evaluation does (``strict_replay=True``: a state-changing call whose recorded result differs from
  the replayed one is an error); ``strict`` is null when it passed, else the tool that differed.

It imports only upstream's package, so it runs in upstream's own environment.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def check(path: str) -> dict[str, Any]:
    from tau2.data_model.tasks import RewardType
    from tau2.scripts.evaluate_trajectories import compute_simulation_rewards
    from tau2.scripts.leaderboard.verify_trajectories_public import check_format, check_num_trials, check_tasks

    results, ok, error = check_format(path)
    out: dict[str, Any] = {"file": path, "format": {"ok": ok, "error": error}}
    if results is None:
        return out
    tasks_ok, tasks_error = check_tasks(results)
    trials_ok, trials_error = check_num_trials(results)
    out["tasks"] = {"ok": tasks_ok, "error": tasks_error}
    out["trials"] = {"ok": trials_ok, "error": trials_error}
    by_id = {task.id: task for task in results.tasks}

    def needs_judge(task_id: str) -> bool:
        if JUDGE:
            return False
        criteria = by_id[task_id].evaluation_criteria
        return bool(criteria and criteria.nl_assertions and RewardType.NL_ASSERTION in (criteria.reward_basis or []))

    judged = [sim for sim in results.simulations if needs_judge(sim.task_id)]
    results.simulations = [sim for sim in results.simulations if not needs_judge(sim.task_id)]
    if results.info.environment_info.domain_name == "banking_knowledge":
        rescored = banking_rewards(results)
        strict = banking_strict(results) if STRICT else {}
    else:
        strict = {}
        rescored = compute_simulation_rewards(results)
    sims = []
    for before, after in zip(results.simulations, rescored.simulations, strict=True):
        sims.append(
            {
                "id": before.id,
                "task_id": before.task_id,
                "trial": before.trial,
                "termination": before.termination_reason.value,
                "ours": before.reward_info.reward if before.reward_info else None,
                "upstream": after.reward_info.reward if after.reward_info else None,
                "upstream_breakdown": {str(k.value): v for k, v in (after.reward_info.reward_breakdown or {}).items()}
                if after.reward_info
                else None,
                **({"strict": strict.get(before.id)} if strict or STRICT else {}),
            }
        )
    out["simulations"] = sims
    out["skipped"] = [{"id": sim.id, "why": "needs upstream's LLM judge (NL assertions)"} for sim in judged]
    return out


STRICT = "--strict" in sys.argv
JUDGE = "--judge" in sys.argv


def banking_strict(results: Any) -> dict[str, str | None]:
    """Per simulation id: None when upstream's strict replay accepts it, else the first tool whose
    replayed result differed (its name, then the recorded result's first line)."""
    from copy import deepcopy

    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.orchestrator.modes import CommunicationMode
    from tau2.scripts.evaluate_trajectories import _build_eval_env_kwargs

    tasks = {task.id: task for task in results.tasks}
    out: dict[str, str | None] = {}
    for sim in deepcopy(results.simulations):
        task = tasks[sim.task_id]
        env_kwargs = {**(_build_eval_env_kwargs("banking_knowledge", task) or {}),
                      "retrieval_variant": results.info.retrieval_config}  # fmt: skip
        try:
            evaluate_simulation(
                simulation=sim, task=task, evaluation_type=EvaluationType.ALL, solo_mode=False,
                domain="banking_knowledge", mode=CommunicationMode.HALF_DUPLEX, env_kwargs=env_kwargs,
                strict_replay=True,
            )  # fmt: skip
            out[sim.id] = None
        except ValueError as exc:
            text = str(exc)
            name = text.split("name='", 1)[1].split("'", 1)[0] if "name='" in text else "?"
            expected = text.split("Expected:\n", 1)[-1]
            out[sim.id] = f"{name}: {expected[:300]}"
    return out


def banking_rewards(results: Any) -> Any:
    """``compute_simulation_rewards`` builds banking's environment with its default retrieval (OpenAI
    embeddings: a provider call); here it is built with the run's own ``retrieval_config``, as
    upstream's runner builds it, and each simulation evaluated the same way otherwise."""
    from copy import deepcopy

    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.orchestrator.modes import CommunicationMode
    from tau2.scripts.evaluate_trajectories import _build_eval_env_kwargs

    results = deepcopy(results)
    tasks = {task.id: task for task in results.tasks}
    for sim in results.simulations:
        task = tasks[sim.task_id]
        env_kwargs = {**(_build_eval_env_kwargs("banking_knowledge", task) or {}),
                      "retrieval_variant": results.info.retrieval_config}  # fmt: skip
        sim.reward_info = evaluate_simulation(
            simulation=sim, task=task, evaluation_type=EvaluationType.ALL, solo_mode=False,
            domain="banking_knowledge", mode=CommunicationMode.HALF_DUPLEX, env_kwargs=env_kwargs,
            strict_replay=False,
        )  # fmt: skip
    return results


def main(paths: list[str]) -> None:
    from loguru import logger

    logger.remove()  # upstream logs every replayed call; only the JSON goes to stdout
    print(json.dumps([check(path) for path in paths if not path.startswith("--")]))


if __name__ == "__main__":
    main(sys.argv[1:])
