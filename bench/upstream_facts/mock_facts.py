"""Compute upstream facts (run in /tmp/upstream-venv with PYTHONPATH=/tmp/upstream-src/src).

For each task of DOMAIN: gold env hashes (agent, user) and the DB verdict of perturbed
trajectories (gold minus its last write; gold minus each single action), through upstream's
EnvironmentEvaluator. Output JSON on stdout.
"""
import json, sys, logging
from loguru import logger
logger.remove()
from tau2.registry import registry
from tau2.data_model.message import AssistantMessage, UserMessage, ToolMessage, ToolCall
from tau2.evaluator.evaluator_env import EnvironmentEvaluator
from tau2.runner.build import _derive_read_log_allowlist

domain = sys.argv[1]
tasks = registry.get_tasks_loader(domain)()
ctor = registry.get_env_constructor(domain)

def kwargs_for(task):
    return {"read_log_allowlist": _derive_read_log_allowlist(task)} if domain == "banking_knowledge" else {}

def init(env, task):
    st = task.initial_state
    env.set_state(st.initialization_data if st else None, st.initialization_actions if st else None,
                  (st.message_history or []) if st else [])

def trajectory(task, actions):
    """Messages of a run that makes exactly these calls (contents from a scratch env)."""
    env = ctor(**kwargs_for(task))
    init(env, task)
    msgs = list((task.initial_state.message_history or []) if task.initial_state else [])
    for i, (requestor, name, args) in enumerate(actions):
        tc = ToolCall(id=f"c{i}", name=name, arguments=args, requestor=requestor)
        cls = UserMessage if requestor == "user" else AssistantMessage
        msgs.append(cls(role=requestor, content=None, tool_calls=[tc]))
        msgs.append(env.get_response(tc))
    msgs.append(AssistantMessage(role="assistant", content="Goodbye."))
    return msgs

def verdict(task, actions):
    try:
        return _verdict(task, actions)
    except Exception as e:
        return {"raised": f"{type(e).__name__}: {e}"}

def _verdict(task, actions):
    info = EnvironmentEvaluator.calculate_reward(
        environment_constructor=ctor, task=task, full_trajectory=trajectory(task, actions),
        env_kwargs=kwargs_for(task))
    return {"db_match": info.db_check.db_match if info.db_check else None,
            "env": [c.met for c in (info.env_assertions or [])], "reward": info.reward}

def gold_hashes(task):
    env = ctor(**kwargs_for(task))
    init(env, task)
    errors = []
    for a in (task.evaluation_criteria.actions or []) if task.evaluation_criteria else []:
        try:
            env.make_tool_call(a.name, requestor=a.requestor, **a.arguments)
        except Exception as e:
            errors.append(f"{a.name}: {e}")
    env.sync_tools()
    return {"agent": env.get_db_hash(), "user": env.get_user_db_hash(), "errors": errors}

out = {}
for task in tasks:
    crit = task.evaluation_criteria
    gold = [(a.requestor, a.name, a.arguments) for a in (crit.actions or [])] if crit else []
    env0 = ctor(**kwargs_for(task))
    rec = {"gold": gold_hashes(task)}
    if domain != "banking_knowledge" or len(sys.argv) < 3:
        rec["initial"] = {"agent": env0.get_db_hash(), "user": env0.get_user_db_hash()}
    rec["full"] = verdict(task, gold)
    # perturbations: drop action k (each k), for every action
    rec["drop"] = [verdict(task, gold[:k] + gold[k + 1:]).get("db_match", "raised") for k in range(len(gold))]
    out[task.id] = rec
json.dump(out, sys.stdout, indent=1, sort_keys=True)
