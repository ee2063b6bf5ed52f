"""Upstream facts for banking_knowledge (run with the upstream venv). For each task:
gold hashes; verdicts of: gold, gold minus last state-changing action, gold plus an extra
read discoverable call outside the allowlist, gold with integers in discoverable JSON args
spelled as floats."""

import json
import re
import sys

from loguru import logger
from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage
from tau2.domains.banking_knowledge.environment import get_environment, get_tasks
from tau2.evaluator.evaluator_env import EnvironmentEvaluator
from tau2.runner.build import _derive_read_log_allowlist

logger.remove()

tasks = get_tasks()
READ_EXTRA = "get_all_user_accounts_by_user_id_3847"


def ctor_for(task):
    allow = _derive_read_log_allowlist(task)

    def ctor(solo_mode=False, **kw):
        return get_environment(retrieval_variant="no_knowledge", read_log_allowlist=allow)

    return ctor


def init(env, task):
    st = task.initial_state
    env.set_state(
        st.initialization_data if st else None,
        st.initialization_actions if st else None,
        (st.message_history or []) if st else [],
    )


def trajectory(task, actions):
    env = ctor_for(task)()
    init(env, task)
    msgs = list((task.initial_state.message_history or []) if task.initial_state else [])
    for i, (requestor, name, args) in enumerate(actions):
        tc = ToolCall(id=f"c{i}", name=name, arguments=args, requestor=requestor)
        cls = UserMessage if requestor == "user" else AssistantMessage
        msgs.append(cls(role=requestor, content=None, tool_calls=[tc]))
        msgs.append(env.get_response(tc))
    msgs.append(AssistantMessage(role="assistant", content="Goodbye."))
    return msgs, env


def verdict(task, actions):
    try:
        msgs, env = trajectory(task, actions)
        info = EnvironmentEvaluator.calculate_reward(
            environment_constructor=ctor_for(task), task=task, full_trajectory=msgs
        )
        return {
            "db_match": info.db_check.db_match if info.db_check else None,
            "reward": info.reward,
            "hash": env.get_db_hash(),
        }
    except Exception as e:
        return {"raised": f"{type(e).__name__}: {e}"}


def mutating(env, name):
    return env._is_mutating_tool(name)


out = {}
probe = ctor_for(tasks[0])()
for task in tasks:
    crit = task.evaluation_criteria
    gold = [(a.requestor, a.name, a.arguments) for a in (crit.actions or [])] if crit else []
    env = ctor_for(task)()
    init(env, task)
    initial = env.get_db_hash()
    errors = []
    for a in gold:
        try:
            env.make_tool_call(a[1], requestor=a[0], **a[2])
        except Exception as e:
            errors.append(f"{a[1]}: {e}")
    rec = {"initial": initial, "gold": env.get_db_hash(), "user": env.get_user_db_hash(), "errors": errors}
    rec["full"] = verdict(task, gold)
    writes = [k for k, a in enumerate(gold) if mutating(probe, a[1])]
    if writes:
        k = writes[-1]
        rec["minus_last_write"] = verdict(task, gold[:k] + gold[k + 1 :])
        rec["minus_last_write_index"] = k
    allow = _derive_read_log_allowlist(task)
    if READ_EXTRA not in allow:
        extra = [
            ("assistant", "unlock_discoverable_agent_tool", {"agent_tool_name": READ_EXTRA}),
            (
                "assistant",
                "call_discoverable_agent_tool",
                {"agent_tool_name": READ_EXTRA, "arguments": json.dumps({"user_id": "x"})},
            ),
        ]
        rec["extra_read"] = verdict(task, extra + gold)
    floats = []
    changed = False
    for r, n, a in gold:
        if n == "call_discoverable_agent_tool" and re.search(r":\s*-?\d+(?=[,}\s])", a.get("arguments", "")):
            a = dict(a)
            a["arguments"] = re.sub(r"(:\s*-?\d+)(?=[,}\s])", r"\1.0", a["arguments"])
            changed = True
        floats.append((r, n, a))
    if changed:
        rec["ints_as_floats"] = verdict(task, floats)
    out[task.id] = rec
    print(task.id, file=sys.stderr, flush=True)
json.dump(out, sys.stdout, indent=1, sort_keys=True)
