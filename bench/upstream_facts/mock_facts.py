"""Upstream facts for a tau2 domain without retrieval (mock): see README.md.

For each task: the gold env hashes (agent, user), the initial hashes, and the DB verdict of
upstream's EnvironmentEvaluator on the gold trajectory and on the gold minus each action.
JSON on stdout. Usage: python mock_facts.py mock
"""

import json
import sys

from loguru import logger
from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage
from tau2.evaluator.evaluator_env import EnvironmentEvaluator
from tau2.registry import registry

logger.remove()
DOMAIN = sys.argv[1] if len(sys.argv) > 1 else "mock"
TASKS = registry.get_tasks_loader(DOMAIN)()
CTOR = registry.get_env_constructor(DOMAIN)


def init(env, task):
    st = task.initial_state
    env.set_state(
        st.initialization_data if st else None,
        st.initialization_actions if st else None,
        (st.message_history or []) if st else [],
    )


def trajectory(task, actions):
    """Messages of a run that makes exactly these calls (tool results from a scratch env)."""
    env = CTOR()
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
        info = EnvironmentEvaluator.calculate_reward(
            environment_constructor=CTOR, task=task, full_trajectory=trajectory(task, actions)
        )
    except Exception as e:  # an env assertion may raise upstream
        return {"raised": f"{type(e).__name__}: {e}"}
    return {
        "db_match": info.db_check.db_match if info.db_check else None,
        "env": [c.met for c in (info.env_assertions or [])],
        "reward": info.reward,
    }


def gold_hashes(task):
    env = CTOR()
    init(env, task)
    errors = []
    for a in (task.evaluation_criteria.actions or []) if task.evaluation_criteria else []:
        try:
            env.make_tool_call(a.name, requestor=a.requestor, **a.arguments)
        except Exception as e:
            errors.append(f"{a.name}: {e}")
    env.sync_tools()
    return {"agent": env.get_db_hash(), "user": env.get_user_db_hash(), "errors": errors}


def main():
    out = {}
    for task in TASKS:
        crit = task.evaluation_criteria
        gold = [(a.requestor, a.name, a.arguments) for a in (crit.actions or [])] if crit else []
        fresh = CTOR()
        out[task.id] = {
            "gold": gold_hashes(task),
            "initial": {"agent": fresh.get_db_hash(), "user": fresh.get_user_db_hash()},
            "full": verdict(task, gold),
            "drop": [verdict(task, gold[:k] + gold[k + 1 :]).get("db_match", "raised") for k in range(len(gold))],
        }
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
